"""Parts of a data file, by history: `train` and `dev` for `scroll collect --data`, `held_out`
for `scroll distill eval --data`, so that a student is never evaluated on a history it was
trained on.

Every question knows its history (`DataTask.history`: a LongMemEval haystack's digest, a
LoCoMo sample, a BEAM chat, an OOLONG window, a jsonl-qa group of questions that share
sessions). The histories are ordered by the sha256 of their key (not by file order, not by a
seed), and the first HELD_OUT of them (at least one when there are two or more) are held
out, the next DEV (at least one when two or more remain) are dev, the rest train. The rule
has no knob on purpose: collect and eval compute the same parts from the same file, and a
result records the rule and its counts."""
from __future__ import annotations

import hashlib
from dataclasses import replace

from ..tasks.splits import TaskRef

PARTS = ("train", "dev", "held_out")
HELD_OUT = 0.2
DEV = 0.1
RULE = (f"histories ordered by sha256 of their key; the first {HELD_OUT:.0%} (>= 1 of >= 2) held_out, "
        f"the next {DEV:.0%} (>= 1 of >= 2 left) dev, the rest train")


def _order(histories: list[str]) -> list[str]:
    return sorted(dict.fromkeys(histories), key=lambda h: (hashlib.sha256(h.encode("utf-8")).hexdigest(), h))


def assign(histories: list[str]) -> dict[str, str]:
    """history key -> part."""
    order = _order(histories)
    n = len(order)
    n_held = max(1, round(HELD_OUT * n)) if n >= 2 else 0
    rest = n - n_held
    n_dev = max(1, round(DEV * n)) if rest >= 2 else 0
    parts = ["held_out"] * n_held + ["dev"] * n_dev + ["train"] * (rest - n_dev)
    return dict(zip(order, parts))


def check_parts(parts: list[str]) -> None:
    """ValueError unless `parts` names at least one part, and only known ones."""
    bad = [p for p in parts if p not in PARTS]
    if bad or not parts:
        raise ValueError(f"unknown part(s) {bad or parts}; the parts are {', '.join(PARTS)}")


def split(refs: list[TaskRef], parts: list[str]) -> tuple[list[TaskRef], dict]:
    """The refs in `parts`, each with its part as its split, and what was chosen (for the records)."""
    check_parts(parts)
    of = assign([r.task.history for r in refs])
    chosen = [replace(r, split=of[r.task.history]) for r in refs if of[r.task.history] in parts]
    counts = {p: {"histories": sum(v == p for v in of.values()),
                  "questions": sum(of[r.task.history] == p for r in refs)} for p in PARTS}
    if not chosen:
        have = ", ".join(f"{p}: {c['histories']}" for p, c in counts.items())
        raise ValueError(f"no questions in part(s) {', '.join(parts)} ({len(of)} histories; {have}): "
                         "a held-out part needs at least two histories")
    return chosen, {"rule": RULE, "parts": list(parts), "counts": counts}
