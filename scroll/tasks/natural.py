"""Natural questions: hand-written questions over generated histories, for evaluation only.

    refs = natural_refs("var/tasksets/natural-v1", "natural-v1")   # or a path to the .jsonl
    run_tasks(refs, ...)        # scroll.runner: judged host-side with ref.task.check(answer)

A questions file is JSONL, one question a line (blank lines and `#` lines are skipped):

    {"id": "nat-0001", "history": 0, "question": "...", "qtype": "which_first",
     "families": ["date_adopt", "date_race"], "value_type": "entity", "value": "...",
     "distractors": [...], "answer": "...", "derive": {...}}

`history` is the index n of a history in the task set's one split (`split=` picks one when
the set has several). `value_type` is one of scroll.tasks.check's (entity, number, date,
set, abstain, yesno). `derive` says how the answer follows from that history's label
sidecar (the generated tasks): `natural_refs` evaluates it and refuses a file whose
`value` differs, so every answer is checked against the history it is asked about.
Expressions (a non-mapping is a constant):

    {"op": "value", "family": F}                       the family's task value
    {"op": "param", "family": F, "key": K, "at": [i]}  task params[K] (then [i] ...)
    {"op": "distractors", "family": F}                 the family's task distractors
    {"op": "entities", "family": F, "kind": "pets", "exclude": [..]}
                                                       the family's entities of that pool field
    {"op": "only", "of": E}                            the single item of a list
    {"op": "at", "of": E, "index": i} / {"op": "len" | "max" | "min", "of": E}
    {"op": "minus", "of": E, "items": E}, {"op": "union", "args": [E, ...]}
    {"op": "sum", "args": [E, ...]} (lists are summed), {"op": "diff", "a": E, "b": E}
    {"op": "days", "from": E, "to": E}                 days from one ISO date to another
    {"op": "earlier" | "later", "options": {"label": E_date, ...}}   the label (no ties)
    {"op": "before", "a": E, "b": E}, {"op": "gt", "a": E, "b": E},
    {"op": "contains", "of": E, "item": E}             "yes" / "no"
    {"op": "absent", "terms": [...]}                   "unknown"; no term occurs in the
                                                       history's events or labels
    {"op": "literal", "value": V, "why": "..."}        abstain questions only

A top-level derive may also carry `"about": [E, ...]`: values the question must name (so
a question naming the wrong pet or city is caught). Tasks come back with split "natural",
task_id the record id, kind the qtype and family "natural:<qtype>".
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

from .. import env
from ..events import EventLog
from .pools import get_pool
from .splits import TaskRef, TaskSet
from .task import Task

VALUE_TYPES = ("entity", "number", "date", "set", "abstain", "yesno")
FIELDS = ("id", "history", "question", "qtype", "families", "value_type", "value", "distractors", "answer",
          "derive")


class NaturalError(ValueError):
    """A questions file that is malformed or does not match its task set's labels."""


def questions_path(name_or_path: str | os.PathLike) -> Path:
    """A file path, or a name found as `tasks/<name>.questions.jsonl` on the config search path."""
    p = Path(name_or_path)
    found = p if p.is_file() else env.config_file(f"tasks/{name_or_path}.questions.jsonl")
    if found is None:
        raise NaturalError(f"no questions file {str(name_or_path)!r}: not a file, and no "
                           f"tasks/{name_or_path}.questions.jsonl on the config search path")
    return found


def load_questions(path: str | os.PathLike) -> list[dict]:
    """Parse and shape-check a questions file (a path or a name) -> records (each with `_line`)."""
    path = questions_path(path)
    out, seen = [], {}
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{no}"
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise NaturalError(f"{where}: not valid JSON ({e})") from None
        if not isinstance(rec, dict):
            raise NaturalError(f"{where}: a question is a JSON object")
        missing = [k for k in FIELDS if k not in rec]
        unknown = sorted(set(rec) - set(FIELDS))
        if missing or unknown:
            raise NaturalError(f"{where}: missing keys {missing}, unknown keys {unknown}")
        checks = [(isinstance(rec["id"], str) and rec["id"], "id must be a non-empty string"),
                  (isinstance(rec["history"], int) and rec["history"] >= 0, "history must be an integer >= 0"),
                  (isinstance(rec["question"], str) and rec["question"].strip(), "question must be text"),
                  (isinstance(rec["qtype"], str) and rec["qtype"], "qtype must be a non-empty string"),
                  (isinstance(rec["families"], list) and rec["families"], "families must be a non-empty list"),
                  (rec["value_type"] in VALUE_TYPES, f"value_type must be one of {VALUE_TYPES}"),
                  (isinstance(rec["distractors"], list), "distractors must be a list"),
                  (isinstance(rec["answer"], str) and rec["answer"].strip(), "answer must be text"),
                  (isinstance(rec["derive"], dict) and "op" in rec["derive"], "derive must be {op: ...}")]
        bad = [msg for ok, msg in checks if not ok]
        if bad:
            raise NaturalError(f"{where}: {'; '.join(bad)}")
        if rec["id"] in seen:
            raise NaturalError(f"{where}: id {rec['id']!r} already used on line {seen[rec['id']]}")
        seen[rec["id"]] = no
        rec["_line"] = no
        out.append(rec)
    if not out:
        raise NaturalError(f"{path}: no questions")
    return out


class Facts:
    """One history's labels: the generated tasks by family, its pool, its events' text."""

    def __init__(self, db: Path, refs: list[TaskRef], pool: str):
        self.db, self.pool = Path(db), get_pool(pool)
        self.tasks = {r.task.family: r.task for r in refs}
        self.sessions = list(refs[0].sessions) if refs else []
        self.question_date = refs[0].task.question_date if refs else ""
        self._text: str | None = None

    def task(self, family: str) -> Task:
        if family not in self.tasks:
            raise NaturalError(f"family {family!r} is not planted in {self.db.name} (has {sorted(self.tasks)})")
        return self.tasks[family]

    def text(self) -> str:
        if self._text is None:
            with EventLog(self.db, readonly=True) as log:
                parts = [e.text or "" for e in log.events()]
            parts += [json.dumps(t.to_dict(), ensure_ascii=False) for t in self.tasks.values()]
            self._text = "\n".join(parts)
        return self._text


def _date(v) -> dt.date:
    try:
        return dt.date.fromisoformat(str(v))
    except ValueError:
        raise NaturalError(f"not an ISO date: {v!r}") from None


def _list(v) -> list:
    if not isinstance(v, list):
        raise NaturalError(f"expected a list, got {v!r}")
    return v


def evaluate(expr: Any, facts: Facts, value_type: str | None = None) -> Any:
    """The value of a derive expression over one history's labels (see the module docstring)."""
    if not isinstance(expr, dict):
        return expr
    op = expr.get("op")
    ev = lambda key: evaluate(expr[key], facts)  # noqa: E731
    try:
        if op == "value":
            return facts.task(expr["family"]).value
        if op == "param":
            v = facts.task(expr["family"]).params[expr["key"]]
            for i in expr.get("at", []):
                v = v[i]
            return v
        if op == "distractors":
            return list(facts.task(expr["family"]).distractors)
        if op == "entities":
            kind = set(getattr(facts.pool, expr["kind"]))
            drop = {str(evaluate(x, facts)) for x in expr.get("exclude", [])}
            return sorted(e for e in facts.task(expr["family"]).params["entities"] if e in kind and e not in drop)
        if op == "only":
            items = _list(ev("of"))
            if len(items) != 1:
                raise NaturalError(f"`only` needs exactly one item, got {items}")
            return items[0]
        if op == "at":
            return _list(ev("of"))[expr["index"]]
        if op in ("len", "max", "min"):
            return {"len": len, "max": max, "min": min}[op](_list(ev("of")))
        if op == "minus":
            drop = ev("items")
            drop = set(drop) if isinstance(drop, list) else {drop}
            return [x for x in _list(ev("of")) if x not in drop]
        if op == "union":
            out: list = []
            for a in expr["args"]:
                v = evaluate(a, facts)
                out += [x for x in (v if isinstance(v, list) else [v]) if x not in out]
            return out
        if op == "sum":
            total = 0
            for a in expr["args"]:
                v = evaluate(a, facts)
                total += sum(v) if isinstance(v, list) else v
            return total
        if op == "diff":
            return ev("a") - ev("b")
        if op == "days":
            return (_date(ev("to")) - _date(ev("from"))).days
        if op in ("earlier", "later"):
            opts = {label: _date(evaluate(e, facts)) for label, e in expr["options"].items()}
            pick = (min if op == "earlier" else max)(opts.values())
            hits = [label for label, d in opts.items() if d == pick]
            if len(hits) != 1:
                raise NaturalError(f"`{op}`: a tie between {hits}")
            return hits[0]
        if op == "before":
            a, b = _date(ev("a")), _date(ev("b"))
            if a == b:
                raise NaturalError(f"`before`: both dates are {a}")
            return "yes" if a < b else "no"
        if op == "gt":
            return "yes" if ev("a") > ev("b") else "no"
        if op == "contains":
            return "yes" if ev("item") in _list(ev("of")) else "no"
        if op == "absent":
            text = facts.text()
            for term in expr["terms"]:
                if re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.I):
                    raise NaturalError(f"`absent`: {term!r} occurs in {facts.db.name}")
            return "unknown"
        if op == "literal":
            if value_type != "abstain":
                raise NaturalError("`literal` is for abstain questions only")
            return expr["value"]
    except KeyError as e:
        raise NaturalError(f"derive {op!r}: missing or unknown key {e}") from None
    except (IndexError, TypeError) as e:
        raise NaturalError(f"derive {op!r}: {e}") from None
    raise NaturalError(f"unknown derive op {op!r}")


def _same(a, b, value_type: str) -> bool:
    if value_type == "set":
        return isinstance(a, list) and isinstance(b, list) and sorted(map(str, a)) == sorted(map(str, b))
    if value_type == "number":
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) < 1e-9
    return a == b


def check_record(rec: dict, facts: Facts) -> Any:
    """Evaluate a record's derive against its history; NaturalError unless it equals `value`
    and the question names every `about` value."""
    derive = rec["derive"]
    got = evaluate(derive, facts, rec["value_type"])
    if not _same(got, rec["value"], rec["value_type"]):
        raise NaturalError(f"derive gives {got!r}, the record says {rec['value']!r}")
    for e in derive.get("about", []):
        name = str(evaluate(e, facts))
        if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", rec["question"], re.I):
            raise NaturalError(f"the question does not name {name!r} (its `about`)")
    for f in rec["families"]:
        facts.task(f)
    return got


def history_facts(taskset_dir: str | os.PathLike, split: str | None = None) -> dict[int, Facts]:
    """{history index n: Facts} for the task set's one split (or `split`)."""
    ts = TaskSet.load(taskset_dir)
    names = list(ts.manifest["splits"])
    if split is None:
        if len(names) != 1:
            raise NaturalError(f"{taskset_dir} has splits {names}; pass split=")
        split = names[0]
    if split not in names:
        raise NaturalError(f"{taskset_dir} has no split {split!r} (has {names})")
    pool = ts.manifest["spec"]["splits"][split]["pool"]
    by_db: dict[str, list[TaskRef]] = {}
    for r in ts.splits[split]:
        by_db.setdefault(str(r.db), []).append(r)
    return {h["n"]: Facts(ts.root / h["db"], by_db.get(str(ts.root / h["db"]), []), pool)
            for h in ts.manifest["histories"] if h["split"] == split}


def natural_refs(taskset_dir: str | os.PathLike, questions_file: str | os.PathLike,
                 split: str | None = None) -> list[TaskRef]:
    """The questions as runner TaskRefs over the built task set (every derive checked)."""
    facts = history_facts(taskset_dir, split)
    path, refs = questions_path(questions_file), []
    for rec in load_questions(path):
        where = f"{path}:{rec['_line']} ({rec['id']})"
        if rec["history"] not in facts:
            raise NaturalError(f"{where}: no history {rec['history']} in {taskset_dir} (has 0..{len(facts) - 1})")
        f = facts[rec["history"]]
        try:
            check_record(rec, f)
        except NaturalError as e:
            raise NaturalError(f"{where}: {e}") from None
        task = Task(question_id=rec["id"], question=rec["question"], answer=rec["answer"], kind=rec["qtype"],
                    value=rec["value"], value_type=rec["value_type"], distractors=list(rec["distractors"]),
                    question_date=f.question_date, family="natural:" + rec["qtype"],
                    params={"families": list(rec["families"]), "derive": rec["derive"]})
        refs.append(TaskRef(task_id=rec["id"], split="natural", db=f.db, task=task, sessions=list(f.sessions)))
    return refs
