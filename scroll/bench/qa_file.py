"""`jsonl-qa`: a user's own questions over a log that was already imported (`scroll import`).

One question a line:

    {"id": "q1", "question": "Where did I move to?", "answer": "Lisbon", "sessions": ["conv-7"],
     "type": "location", "date": "2024-05-02"}

`question`, `answer` (a string, or a list of accepted answers) and `sessions` (the log's
sessions the question is about; the kernel sees only these) are required; `id` (default
`line-<N>`), `type` (the category the table groups by; default `qa`) and `date` (when the
question is asked; said in the task text) are optional. Questions whose session sets share a
session are about one history (held out together, scroll.bench.data_parts).

Labels: the answers are never written into the log or its sidecar. They go to a label store of
their own in the import folder (`<import_dir>/jsonl-qa.labels.json`), which the runner's
per-task snapshots do not copy and `ms` never reads. Everything is checked before any model
call: the log exists, every session is in it, every line has an answer."""
from __future__ import annotations

from pathlib import Path

from ..events import EventLog
from ..importers import BadInputError
from ..importers.strict_json import loads_line
from ..labels import LabelStore
from ..tasks.splits import TaskRef
from .data_task import DataTask, safe_name

_KEYS = {"id", "question", "answer", "sessions", "type", "date"}


def _line(obj, lineno: int) -> dict:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    unknown = set(obj) - _KEYS
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}")
    if not isinstance(obj.get("question"), str) or not obj["question"].strip():
        raise ValueError("'question': expected a non-empty string")
    ans = obj.get("answer")
    if ans is None or ans == "" or ans == [] or not (isinstance(ans, str) or isinstance(ans, list) and all(
            isinstance(a, str) and a for a in ans)):
        raise ValueError("'answer': missing or empty (collect and eval judge against a reference answer: "
                         "a string or a list of strings)")
    ss = obj.get("sessions")
    if not isinstance(ss, list) or not ss or not all(isinstance(s, str) and s for s in ss):
        raise ValueError("'sessions': expected a non-empty list of the log's session names")
    qid = obj.get("id", f"line-{lineno}")
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or str(qid) == "":
        raise ValueError("'id': expected a non-empty string or an integer")
    for key in ("type", "date"):
        if key in obj and not isinstance(obj[key], str):
            raise ValueError(f"{key!r}: expected a string")
    return {"id": str(qid), "question": obj["question"].strip(), "answer": ans, "sessions": list(dict.fromkeys(ss)),
            "type": obj.get("type") or "qa", "date": obj.get("date")}


def read_qa(path: Path) -> list[dict]:
    """The file's questions, checked (BadInputError `file:line: reason`)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise BadInputError(f"{path}: cannot read: {e.strerror or e}") from None
    out, seen = [], {}
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            q = _line(loads_line(raw), lineno)
        except ValueError as e:
            raise BadInputError(f"{path}:{lineno}: {e}") from None
        if q["id"] in seen:
            raise BadInputError(f"{path}:{lineno}: id {q['id']!r} repeats line {seen[q['id']]}")
        seen[q["id"]] = lineno
        out.append(q)
    if not out:
        raise BadInputError(f"{path}: no questions")
    return out


def _histories(qs: list[dict]) -> list[str]:
    """Each question's history: the smallest session of its connected group (questions that
    share a session are about one history)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for q in qs:
        for s in q["sessions"][1:]:
            a, b = find(q["sessions"][0]), find(s)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return [find(q["sessions"][0]) for q in qs]


def qa_refs(path: Path, db: Path, import_dir: Path, judger, limit: int | None,
            before_write=lambda: None) -> tuple[list[TaskRef], int, int]:
    """(refs, questions in the file, histories) for a jsonl-qa file over the log `db`; every
    check passes before `before_write()` and the label write."""
    qs = read_qa(path)
    if not db.is_file():
        raise BadInputError(f"{db}: no event log (import the history first: scroll import FILE --db {db})")
    with EventLog(db, readonly=True) as log:
        have = {s["session"] for s in log.sessions()}
    for i, q in enumerate(qs):
        missing = [s for s in q["sessions"] if s not in have]
        if missing:
            raise BadInputError(f"{path}: question {q['id']!r}: session(s) {missing[:5]} are not in {db} "
                                f"(it has {len(have)} sessions)")
    before_write()
    store_path = import_dir / "jsonl-qa"
    store = LabelStore(store_path)
    store.put_many({f"jsonl-qa/{q['id']}": {"source": "jsonl-qa", "file": str(path), "question_id": q["id"],
                                            "question": q["question"], "answer": q["answer"],
                                            "question_type": q["type"], "sessions": q["sessions"]} for q in qs})
    hist = _histories(qs)
    refs = []
    for q, h in list(zip(qs, hist))[:limit]:
        text = q["question"] + (f"\n(The question is asked on {q['date']}.)" if q["date"] else "")
        task = DataTask(q["id"], text, q["type"], "jsonl-qa", str(store_path), f"jsonl-qa/{q['id']}", judger,
                        history=f"qa-{h}")
        refs.append(TaskRef(safe_name(f"qa-{q['id']}"), "jsonl-qa", db, task, q["sessions"]))
    return refs, len(qs), len(set(hist))
