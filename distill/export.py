"""Runs -> SFT data: TRL prompt-completion JSONL (one line per step), notebooks, and the filter record.

    python -c "from distill.export import export_runs; print(export_runs(['var/runs/teacher'], 'var/sft'))"
    scroll distill export --runs var/runs/teacher --out var/sft            # same, from the CLI

Input: run folders written by `scroll.runner.run_tasks` (`runs.jsonl`: one RunRecord per
task; each names its log `db` and `session`). Output in `out/`:

* `<split>.jsonl` (train, dev, ... from the records' splits): per exported step one line
  `{"prompt": [the exact messages the model saw at that step], "completion":
  [{"role": "assistant", "content": reply}]}`: TRL's conversational prompt-completion
  format, so the loss falls on that step's reply only. The messages are rebuilt from the
  log with `scroll.agent.step_prompts` and checked against the prompt sha256 the loop
  logged; a step whose rebuilt prompt does not hash to the logged one is NOT exported
  (counted as a mismatch, listed in filters.json).
* `<split>.meta.jsonl`: line for line beside it: task_id, split, label, session, db, step,
  reply seq, prompt sha256, prompt/completion token counts and which counter made them
  (the student's tokenizer with `tokenizer=DIR`, else chars/4, said so).
* `notebooks/<split>/<task_id>.<label>.ipynb`: one notebook per exported session
  (`scroll.kernel.notebook.export_notebook`, plus a `final` stub cell so nbclient can
  replay the last cell; `ms` is served read-only from the log in the notebook's process).
* `filters.json`: the filters in order with counts before/after each (trajectories and
  steps), the mismatches, the source runs (their runs.meta.json) with what each contributed,
  files written, git SHA.

Several run folders make one data set: the teacher's trajectories and the accepted samples
of self-improvement rounds (`scroll collect --samples K`), e.g.
`--runs teacher --runs samples-r1 --runs samples-r2`. A trajectory found in two folders (the
same folder given twice) counts once, under the first. `source_runs` in filters.json says,
per folder in the order given: its records, how many the checker accepted (`accepted`) and
rejected (`rejected`), `check_errors` (the checker itself raised: an error, never a success,
never exported; listed in `check_errors`), other `runner_errors`, `duplicates` (a trajectory
identical to one already kept), `capped` (over `max_per_task`), and `exported_trajectories` /
`exported_steps`.

Filters, in order: the runner finished (no runner_error: a checker that raised is one);
`success_only` (the host-side judge said correct); `max_steps` (trajectories with more steps
dropped); `dedup_trajectories` (a trajectory whose every prompt and reply equal an earlier
one's kept once, first folder first: K samples that wrote the same program, or a sample that
repeats the teacher); `max_per_task` (at most N trajectories per task from each folder, in
record order); prompt match (the logged sha256); `max_tokens` (steps whose prompt +
completion exceed it dropped); `dedup` (identical prompt + completion kept once).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

from scroll.prompts import TOOLKIT_SOURCE
from scroll.provenance import git_sha
from scroll.records import estimate_tokens
from scroll.runner import RUNNER_ERROR, RunRecord, load_records

FINAL_STUB = ("# scroll export: `final` ended the task in the agent's kernel; here it only records the answer\n"
              "FINAL_ANSWER = None\n"
              "def final(answer):\n"
              "    global FINAL_ANSWER\n"
              "    FINAL_ANSWER = str(answer)\n")
# the rest of the loop's kernel prelude: the helpers a cell may call (scroll/toolkit.py), plus the
# run's task pack's (scroll.packs), added per notebook
PRELUDE_STUB = FINAL_STUB + "\n" + TOOLKIT_SOURCE


def _prelude_stub(pack: str | None) -> str:
    if not pack:
        return PRELUDE_STUB
    try:
        from scroll.packs import get_pack
    except ImportError:  # pragma: no cover - a checkout without task packs
        return PRELUDE_STUB
    return PRELUDE_STUB + "\n" + get_pack(pack).prelude


def _session_pack(log, session: str) -> str | None:
    """The task pack the run had: its task event's meta says (None: no pack, or an older log)."""
    for e in log.events(session=session):
        if e.kind == "task":
            return (e.meta or {}).get("pack")
    return None


class TokenCounter:
    """Token counts for the meta file: the student's tokenizer, else characters / 4."""

    def __init__(self, tokenizer_dir: str | os.PathLike | None = None):
        self.name = "chars/4 (approximate: no --tokenizer given)"
        self._tok = None
        if tokenizer_dir is not None:
            try:
                from transformers import AutoTokenizer
            except ImportError as e:  # pragma: no cover
                raise RuntimeError("token counts with a tokenizer need transformers: "
                                   "pip install 'scroll-agent[model]'") from e
            self._tok = AutoTokenizer.from_pretrained(str(tokenizer_dir), local_files_only=True)
            self.name = f"tokenizer:{Path(tokenizer_dir).resolve()}"

    @property
    def exact(self) -> bool:
        return self._tok is not None

    def prompt(self, messages: list[dict]) -> int:
        if self._tok is None:
            return sum(estimate_tokens(m["content"]) for m in messages)
        ids = self._tok.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return len(ids)

    def text(self, text: str) -> int:
        if self._tok is None:
            return estimate_tokens(text)
        return len(self._tok(text, add_special_tokens=False)["input_ids"])


class _Filter:
    def __init__(self, name: str, rule: str, unit: str):
        self.name, self.rule, self.unit = name, rule, unit
        self.before = self.after = 0

    def apply(self, items: list, keep: Callable[[Any], bool]) -> list:
        self.before = len(items)
        kept = [x for x in items if keep(x)]
        self.after = len(kept)
        return kept

    def to_dict(self) -> dict:
        return {"name": self.name, "rule": self.rule, "unit": self.unit, "before": self.before,
                "after": self.after, "dropped": self.before - self.after}


JUDGE_FAILED = "judge failed"   # scroll.runner's error prefix when task.check / judge raised


def is_check_error(r: RunRecord) -> bool:
    """The checker (task.check, or a judge) raised on this record: an error, never a success."""
    return r.reason == RUNNER_ERROR and (r.error or "").startswith(JUDGE_FAILED)


def chain_rows(steps: list[dict]) -> list[list[dict]]:
    """Group exported steps (in trajectory order) into chains: step k+1 joins step k's row when
    its prompt is exactly step k's prompt + step k's reply + more messages (the view only grew),
    so one multi-turn row holds them and its last prompt carries every earlier reply. A view that
    was rebuilt (eviction, folding) starts a new row. Every reply in a row is one of the same
    accepted trajectory's steps."""
    rows: list[list[dict]] = []
    for s in steps:
        prev = rows[-1][-1] if rows else None
        if prev is not None and prev["record"] is s["record"] and _extends(prev, s):
            rows[-1].append(s)
        else:
            rows.append([s])
    return rows


def _extends(prev: dict, s: dict) -> bool:
    n = len(prev["messages"])
    return (len(s["messages"]) > n + 1 and s["messages"][:n] == prev["messages"]
            and s["messages"][n] == {"role": "assistant", "content": prev["reply"]})


def _row_meta(row: list[dict], trajectories: bool) -> dict:
    if not trajectories:
        s = row[0]
        return {"step": s["step"], "reply_seq": s["reply_seq"], "prompt_sha256": s["sha"]}
    return {"steps": [s["step"] for s in row], "reply_seqs": [s["reply_seq"] for s in row],
            "prompt_sha256s": [s["sha"] for s in row]}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:120] or "task"


def _source_runs(run_dirs: Iterable[Path]) -> list[dict]:
    out = []
    for d in run_dirs:
        meta = None
        try:
            meta = json.loads((Path(d) / "runs.meta.json").read_text())
        except (OSError, ValueError):
            pass
        samples = {}
        for inv in (meta or {}).get("invocations", []):
            if isinstance(inv, dict) and isinstance(inv.get("sample"), dict):
                samples[inv.get("label")] = inv["sample"]
        out.append({"name": Path(d).name, "path": str(Path(d).resolve()), "label": (meta or {}).get("label"),
                    "backend": (meta or {}).get("backend"), "git_sha": (meta or {}).get("git_sha"),
                    "loop_config": (meta or {}).get("loop_config"),
                    **({"samples": dict(sorted(samples.items()))} if samples else {})})
    return out


def _add_final_stub(path: Path, pack: str | None = None) -> None:
    """Insert the prelude (the `final` stub + the toolkit + the run's task pack's helpers) after
    the setup cell (the loop's prelude is not logged as a cell)."""
    import nbformat
    import nbformat.v4 as nbf

    nb = nbformat.read(str(path), as_version=4)
    at = 1 if nb.cells and "scroll-setup" in (nb.cells[0].metadata.get("tags") or []) else 0
    nb.cells.insert(at, nbf.new_code_cell(_prelude_stub(pack), metadata={"tags": ["scroll-final-stub"]}))
    nbformat.validate(nb)
    nbformat.write(nb, str(path))


def export_runs(run_dirs: list[str | os.PathLike], out: str | os.PathLike, *, success_only: bool = True,
                max_steps: int | None = None, max_tokens: int | None = None, dedup: bool = False,
                tokenizer: str | os.PathLike | None = None, notebooks: bool = True,
                dedup_trajectories: bool = False, max_per_task: int | None = None,
                trajectories: bool = False, seen: list[str | os.PathLike] = ()) -> dict:
    """Export the steps of the runs in `run_dirs` into `out` (see the module docstring);
    returns the filters.json object. `trajectories`: one multi-turn row per chain of steps
    instead of one row per step. `seen`: run folders read first, for `dedup_trajectories`
    only: their trajectories are not written (the data a previous round already trained on)."""
    from scroll.agent import step_prompts
    from scroll.events import EventLog
    from scroll.llm.base import approx_count

    if not run_dirs:
        raise ValueError("give at least one run folder")
    if max_per_task is not None and max_per_task < 1:
        raise ValueError("max_per_task must be >= 1 (or None: no cap)")
    if seen and not dedup_trajectories:
        raise ValueError("seen folders only serve dedup_trajectories: pass both")
    if dedup and trajectories:
        raise ValueError("dedup (per step) does not apply to trajectory rows: use dedup_trajectories")
    n_seen = len(seen)
    run_dirs = [Path(d) for d in [*seen, *run_dirs]]
    for d in run_dirs:
        if not (d / "runs.jsonl").is_file():
            raise FileNotFoundError(f"{d}: no runs.jsonl (not a run folder written by `scroll collect`/the runner)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    counter = TokenCounter(tokenizer)

    records: list[RunRecord] = []
    source_of: dict[tuple[str, str, str], int] = {}   # (db, session, task_id) -> index in run_dirs
    for i, d in enumerate(run_dirs):
        for r in load_records(d):
            key = (r.db, r.session, r.task_id)
            if key not in source_of:  # the same run folder given twice counts once
                source_of[key] = i
                records.append(r)

    def src(r: RunRecord) -> int:
        return source_of[(r.db, r.session, r.task_id)]

    counts = [dict(records=0, labels=set(), accepted=0, rejected=0, check_errors=0, runner_errors=0,
                   duplicates=0, capped=0, exported_trajectories=0, exported_steps=0) for _ in run_dirs]
    check_errors: list[dict] = []
    for r in records:
        c = counts[src(r)]
        c["records"] += 1
        c["labels"].add(r.label)
        if is_check_error(r):
            c["check_errors"] += 1
            check_errors.append({"task_id": r.task_id, "label": r.label, "source": run_dirs[src(r)].name,
                                 "error": r.error})
        elif r.reason == RUNNER_ERROR:
            c["runner_errors"] += 1
        elif r.correct:
            c["accepted"] += 1
        else:
            c["rejected"] += 1

    filters: list[_Filter] = []

    def filt(name, rule, unit, items, keep):
        f = _Filter(name, rule, unit)
        filters.append(f)
        return f.apply(items, keep)

    trajs = filt("runner_ok", f"the runner finished the task (reason != {RUNNER_ERROR!r}; a checker that raised "
                 "is one: see check_errors)", "trajectories",
                 records, lambda r: r.reason != RUNNER_ERROR)
    if success_only:
        trajs = filt("success", "the host-side judge said correct (task.check(answer))", "trajectories",
                     trajs, lambda r: r.correct)
    if max_steps is not None:
        trajs = filt("max_steps", f"steps <= {max_steps}", "trajectories", trajs, lambda r: r.steps <= max_steps)

    # rebuild every step's prompt from the log; the logged sha256 decides
    per_traj: list[tuple[RunRecord, list[dict]]] = []
    missing: list[dict] = []
    logs: dict[str, Any] = {}
    try:
        for r in trajs:
            log = logs.get(r.db)
            if log is None:
                try:
                    log = logs[r.db] = EventLog(r.db, readonly=True)
                except Exception as e:  # noqa: BLE001 - a vanished or unreadable log is reported
                    missing.append({"task_id": r.task_id, "db": r.db, "error": f"{type(e).__name__}: {e}"})
                    continue
            prompts = step_prompts(log, r.session, count=approx_count)
            if not prompts:
                missing.append({"task_id": r.task_id, "db": r.db, "session": r.session, "error": "no steps in the log"})
                continue
            items = []
            for sp in prompts:
                items.append({"record": r, "step": (sp.reply.meta or {}).get("step"), "reply_seq": sp.reply.seq,
                              "messages": sp.messages, "reply": sp.reply.text, "sha": sp.logged_sha256,
                              "matches": sp.matches})
            per_traj.append((r, items))
    finally:
        for lg in logs.values():
            lg.close()

    if dedup_trajectories:
        traj_keys: set[str] = set()

        def first_traj(t):
            k = hashlib.sha256(json.dumps([t[0].task_id, [[s["messages"], s["reply"]] for s in t[1]]],
                                          sort_keys=True).encode()).hexdigest()
            if k in traj_keys:
                counts[src(t[0])]["duplicates"] += 1
                return False
            traj_keys.add(k)
            return True
        per_traj = filt("dedup_trajectories", "a trajectory whose every prompt and reply equal an earlier one's "
                        "kept once (first folder first)", "trajectories", per_traj, first_traj)
    if max_per_task is not None:
        per_task: dict[tuple[int, str], int] = {}

        def under_cap(t):
            k = (src(t[0]), t[0].task_id)
            per_task[k] = per_task.get(k, 0) + 1
            if per_task[k] > max_per_task:
                counts[src(t[0])]["capped"] += 1
                return False
            return True
        per_traj = filt("max_per_task", f"at most {max_per_task} trajectories per task from each run folder",
                        "trajectories", per_traj, under_cap)
    if n_seen:
        per_traj = filt("seen", "trajectories of the --seen folders (already trained on) are not written",
                        "trajectories", per_traj, lambda t: src(t[0]) >= n_seen)

    steps = [s for _, items in per_traj for s in items]
    mismatches = [{"task_id": s["record"].task_id, "label": s["record"].label, "session": s["record"].session,
                   "db": s["record"].db, "step": s["step"], "reply_seq": s["reply_seq"], "logged_sha256": s["sha"]}
                  for s in steps if not s["matches"]]

    steps = filt("prompt_match", "the prompt rebuilt from the log hashes to the sha256 the loop logged", "steps",
                 steps, lambda s: s["matches"])
    for s in steps:
        s["prompt_tokens"] = counter.prompt(s["messages"])
        s["completion_tokens"] = counter.text(s["reply"])
    if max_tokens is not None:
        steps = filt("max_tokens", f"prompt_tokens + completion_tokens <= {max_tokens} ({counter.name})", "steps",
                     steps, lambda s: s["prompt_tokens"] + s["completion_tokens"] <= max_tokens)
    if dedup:
        keys: set[str] = set()

        def first(s):
            k = hashlib.sha256(json.dumps([s["messages"], s["reply"]], sort_keys=True).encode()).hexdigest()
            if k in keys:
                return False
            keys.add(k)
            return True
        steps = filt("dedup", "identical prompt + completion kept once (first seen)", "steps", steps, first)

    # write: per split, data and meta line for line
    rows = chain_rows(steps) if trajectories else [[s] for s in steps]
    files: dict[str, dict] = {}
    by_split: dict[str, list[list[dict]]] = {}
    for row in rows:
        by_split.setdefault(row[0]["record"].split, []).append(row)
    for old in list(out.glob("*.jsonl")):  # a re-export replaces what an earlier one wrote
        old.unlink()
    for split, items in sorted(by_split.items()):
        data_path, meta_path = out / f"{_safe(split)}.jsonl", out / f"{_safe(split)}.meta.jsonl"
        with open(data_path, "w", encoding="utf-8") as fd, open(meta_path, "w", encoding="utf-8") as fm:
            for row in items:
                last, r = row[-1], row[-1]["record"]
                reply = {"role": "assistant", "content": last["reply"]}
                line = ({"messages": [*last["messages"], reply]} if trajectories
                        else {"prompt": last["messages"], "completion": [reply]})
                fd.write(json.dumps(line, ensure_ascii=False) + "\n")
                fm.write(json.dumps({"task_id": r.task_id, "split": r.split, "kind": r.kind, "family": r.family,
                                     "label": r.label, "source": run_dirs[src(r)].name, "session": r.session,
                                     "db": r.db, **_row_meta(row, trajectories),
                                     "prompt_tokens": sum(s["prompt_tokens"] for s in row),
                                     "completion_tokens": sum(s["completion_tokens"] for s in row),
                                     "token_counter": counter.name}, ensure_ascii=False) + "\n")
        steps_here = [s for row in items for s in row]
        files[split] = {"data": str(data_path), "meta": str(meta_path), "lines": len(items),
                        "steps": len(steps_here),
                        "trajectories": len({(s["record"].db, s["record"].session) for s in steps_here}),
                        "prompt_tokens": sum(s["prompt_tokens"] for s in steps_here),
                        "completion_tokens": sum(s["completion_tokens"] for s in steps_here)}

    nb_info = []
    if notebooks:
        from scroll.kernel.notebook import export_notebook

        exported = {}
        for s in steps:
            r = s["record"]
            exported.setdefault((r.db, r.session), r)
        used: set[Path] = set()
        for (db, session), r in exported.items():
            path = out / "notebooks" / _safe(r.split) / f"{_safe(r.task_id)}.{_safe(r.label)}.ipynb"
            if path in used:  # the same label and task in two folders (two rounds' samples)
                path = path.with_name(f"{_safe(r.task_id)}.{_safe(r.label)}.{_safe(session)}.ipynb")
            used.add(path)
            try:
                with EventLog(db, readonly=True) as log:
                    info = export_notebook(log, session, path)
                    pack = _session_pack(log, session)
                _add_final_stub(path, pack)
                nb_info.append({"task_id": r.task_id, "session": session, "path": str(path),
                                "cells": info["cells"], "skipped": info["skipped"]})
            except (KeyError, OSError, ValueError) as e:
                nb_info.append({"task_id": r.task_id, "session": session, "path": None, "error": str(e)})

    for s in steps:
        counts[src(s["record"])]["exported_steps"] += 1
    for db, session, task_id in {(s["record"].db, s["record"].session, s["record"].task_id) for s in steps}:
        counts[source_of[(db, session, task_id)]]["exported_trajectories"] += 1
    sources = _source_runs(run_dirs)
    for entry, c in zip(sources, counts):
        entry.update({**c, "labels": sorted(c["labels"])})

    report = {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git_sha": git_sha(),
        "format": ("TRL conversational language-modeling JSONL, one row per chain of steps (loss on every "
                   "assistant reply: train with assistant_only_loss)" if trajectories else
                   "TRL conversational prompt-completion JSONL (loss on the completion: that step's reply only)"),
        "options": {"success_only": success_only, "max_steps": max_steps, "max_tokens": max_tokens,
                    "dedup": dedup, "dedup_trajectories": dedup_trajectories, "max_per_task": max_per_task,
                    "tokenizer": str(tokenizer) if tokenizer else None, "trajectories": trajectories,
                    "seen": [str(d) for d in seen]},
        "token_counter": counter.name,
        "source_runs": sources,
        "records": len(records),
        "check_errors": check_errors,
        "filters": [f.to_dict() for f in filters],
        "mismatches": len(mismatches),
        "mismatched_steps": mismatches,
        "unreadable": missing,
        "files": files,
        "notebooks": nb_info,
        "exported_steps": len(steps),
        "rows": len(rows),
        "exported_trajectories": len({(s["record"].db, s["record"].session) for s in steps}),
    }
    (out / "filters.json").write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    return report
