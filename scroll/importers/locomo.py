"""LoCoMo JSON (`locomo10.json`: a list of samples, or one) -> event rows + label records.

One sample (conversation) per log: its `session_N` lists become sessions `s001`, `s002`, ...
in N order, one event per turn (role = the speaker's name, an image's BLIP caption appended as
`[image: ...]`, time from `session_N_date_time`), origin `history`, meta `{"turn", "date"}`.
The questions, answers, categories and evidence go to label records: `locomo` (the sample id
and its session names) and `locomo/<sample_id>-q<j>` per question (evidence dia ids and, once
appended, their seqs)."""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from .rows import BadInputError, Parsed, check_labels, history_row, type_name

CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D\d+:\d+")


def parse_date(s: str | None) -> str | None:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00' (None if it does not parse)."""
    if not s:
        return None
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return dt.datetime.strptime(s.strip(), fmt).isoformat(timespec="seconds")
        except ValueError:
            pass
    return None


def sample_id(sample: dict, si: int) -> str:
    return str(sample.get("sample_id") or f"conv-{si}")


def check_samples(path: Path, doc: Any) -> list[dict]:
    """The samples of a LoCoMo document, each question checked (BadInputError `file: [i].qa[j]...`)."""
    samples = doc if isinstance(doc, list) else [doc]
    if not samples:
        raise BadInputError(f"{path}: no LoCoMo conversations")
    for si, s in enumerate(samples):
        if not isinstance(s, dict) or not isinstance(s.get("qa"), list) or "conversation" not in s:
            raise BadInputError(f"{path}: [{si}]: not a LoCoMo conversation ({{sample_id, conversation, qa: [...]}})")
        for qi, qa in enumerate(s["qa"]):
            w = f"[{si}].qa[{qi}]"
            if not isinstance(qa, dict) or not isinstance(qa.get("question"), str) or not qa["question"].strip():
                raise BadInputError(f"{path}: {w}.question: expected a non-empty string")
            cat = qa.get("category")
            if isinstance(cat, bool) or cat not in CATEGORY and str(cat) not in {str(c) for c in CATEGORY}:
                raise BadInputError(f"{path}: {w}.category: expected 1..5, got {cat!r}")
            if int(cat) != 5 and "answer" not in qa:
                raise BadInputError(f"{path}: {w}.answer: missing")
    return samples


def sample_rows(path: Path, conv: Any, where: str) -> tuple[list[dict], dict[str, int], list[str]]:
    """(rows, dia id -> row index, session names) of one sample's `conversation`."""
    if not isinstance(conv, dict):
        raise BadInputError(f"{path}: {where}.conversation: expected an object, got {type_name(conv)}")
    keys = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION.match(k)))
    rows, dia, names = [], {}, []
    for n, (_, key) in enumerate(keys, start=1):
        turns, date = conv[key], conv.get(f"{key}_date_time")
        if not isinstance(turns, list):
            raise BadInputError(f"{path}: {where}.conversation.{key}: expected a list of turns, got {type_name(turns)}")
        name = f"s{n:03d}"
        names.append(name)
        for j, t in enumerate(turns):
            tw = f"{where}.conversation.{key}[{j}]"
            if not isinstance(t, dict) or not isinstance(t.get("speaker"), str) or not t["speaker"] \
                    or not isinstance(t.get("text", ""), str):
                raise BadInputError(f"{path}: {tw}: expected {{speaker, text}} strings")
            text = t.get("text", "") + (f" [image: {t['blip_caption']}]" if t.get("blip_caption") else "")
            if isinstance(t.get("dia_id"), str):
                dia[t["dia_id"]] = len(rows)
            try:
                rows.append(history_row(name, t["speaker"], text, time=parse_date(date if isinstance(date, str)
                                                                                  else None),
                                        meta={"turn": j, "date": date}))
            except ValueError as e:
                raise BadInputError(f"{path}: {tw}: {e}") from None
    if not rows:
        raise BadInputError(f"{path}: {where}.conversation: no session_N turns")
    return rows, dia, names


def sample(path: Path, s: dict, si: int) -> Parsed:
    """One checked sample -> its rows and label records."""
    sid = sample_id(s, si)
    rows, dia, names = sample_rows(path, s["conversation"], f"[{si}]")
    labels: dict[str, dict] = {"locomo": {"source": "locomo", "file": str(path), "sample_id": sid,
                                          "sessions": names}}
    for qj, q in enumerate(s["qa"]):
        ev = [d for e in q.get("evidence") or [] for d in _DIA.findall(str(e))]
        labels[f"locomo/{sid}-q{qj}"] = {
            "source": "locomo", "sample_id": sid, "question": q["question"], "category": int(q["category"]),
            "answer": q.get("answer", q.get("adversarial_answer")), "adversarial_answer": q.get("adversarial_answer"),
            "evidence": ev, "evidence_rows": [dia[d] for d in ev if d in dia]}
    check_labels(f"{path}: [{si}]", labels)
    return Parsed(rows, "locomo", [], {"sample_id": sid, "sessions": len(names), "questions": len(s["qa"])},
                  labels=labels)


def parse(path: Path, doc: Any, instance: str | None) -> Parsed:
    """A LoCoMo document's one sample (or the one named by `instance`, a sample_id)."""
    samples = check_samples(path, doc)
    if instance is None:
        if len(samples) > 1:
            ids = ", ".join(sample_id(s, i) for i, s in enumerate(samples[:5]))
            raise BadInputError(f"{path}: {len(samples)} conversations; choose one with --instance SAMPLE_ID "
                                f"(e.g. {ids})")
        return sample(path, samples[0], 0)
    for i, s in enumerate(samples):
        if sample_id(s, i) == instance:
            return sample(path, s, i)
    raise BadInputError(f"{path}: no conversation with sample_id {instance!r}")
