"""A public benchmark's data file -> runner work items (`scroll bench run --data FILE`).

    prep = prepare("longmemeval_s.json", "var/bench/lme/histories", judge=FormatJudge("longmemeval"))
    run_tasks(prep.refs, make_llm, cfg, out_dir, ...)   # scroll.runner: one record per question

Formats (detected from the content, or named): `longmemeval` (a JSON list of instances, one
haystack each), `locomo` (locomo10.json: conversations with `qa`), `beam` (a chat.json; its
probing questions are found beside it, BEAM's `probing_questions/probing_questions.json`, or
named with `probing=`; a BEAM chat folder works too) and `oolong` (scroll.bench.oolong's file or
a list of OOLONG-synth rows). See docs/stack-notes.md for the fields.

Each history gets its own EventLog under `import_dir` (questions that share a history share
its log: a LoCoMo conversation, a BEAM chat, an OOLONG context window; LongMemEval has one
haystack per question), imported as the formats' importers do: events carry turns only
(neutral session names s001.., the date, the turn index); answers, evidence, categories and the
data set's own ids go to the log's label sidecar (scroll.labels), which `ms` never reads and
the runner's per-task snapshots do not copy. A `DataTask` carries the question (plus, for
LongMemEval, the question's date), its category (`kind`: LongMemEval question_type, LoCoMo
category, BEAM ability, OOLONG task) and where its label lives; its `judge(answer)` reads the
label host-side and scores it (scroll.bench.data_judges).

Resumable: `import_dir/data.json` names the data file (path, size, sha256); a rerun on the
same file reuses every history whose labels were written (the last step of an import), and
refuses another file. Malformed files raise BadInputError `file: place: reason`.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..events import EventLog
from ..importers import BadInputError, locomo, longmemeval_instance, read_json_file, type_name, write_labels
from ..importers.locomo import CATEGORY
from ..importers.strict_json import loads_line
from ..labels import LabelStore
from ..tasks.splits import TaskRef
from .beam import import_beam, load_beam
from .data_judges import FORMATS, FormatJudge
from .data_task import DataTask, safe_name
from .oolong import import_oolong, load_oolong
from .qa_file import qa_refs

MANIFEST = "data.json"
PROBING_NAMES = ("probing_questions/probing_questions.json", "probing_questions.json", "probing.json")


@dataclass
class Prepared:
    format: str
    refs: list[TaskRef]
    histories: int
    questions_in_file: int
    imported: int                    # histories imported by this call (the rest were reused)


# ---------------------------------------------------------------- format detection
def detect_format(path: Path, doc: Any) -> str:
    """The format of an already-read document (a BEAM chat folder is detected by the caller)."""
    first = doc[0] if isinstance(doc, list) and doc else doc
    if isinstance(first, dict):
        if "haystack_sessions" in first:
            return "longmemeval"
        if "conversation" in first and "qa" in first:
            return "locomo"
        if "turns" in first and isinstance(doc, list):
            return "beam"
        if "context_window_id" in first or ("windows" in first and "rows" in first):
            return "oolong"
        if first is doc and doc and all(isinstance(v, list) for v in doc.values()):
            raise BadInputError(f"{path}: looks like BEAM probing questions: pass the chat.json as --data "
                                "(and this file with --probing)")
    raise BadInputError(f"{path}: cannot tell the format (expected LongMemEval instances, LoCoMo conversations, a "
                        f"BEAM chat.json or OOLONG rows; got {type_name(doc)}): give --format "
                        f"{'|'.join(FORMATS)}")


# ---------------------------------------------------------------- history logs
def _complete(db: Path, marker: str) -> bool:
    """An import is complete once its labels are written (its last step)."""
    try:
        return db.exists() and LabelStore(db).get(marker) is not None
    except ValueError:
        return False


def _fresh(db: Path) -> None:
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}.labels.json")):
        p.unlink(missing_ok=True)
    for d in (Path(f"{db}.payloads"), Path(f"{db}.index")):
        shutil.rmtree(d, ignore_errors=True)


def _import(db: Path, marker: str, write: Callable[[Any], Any], counter: list[int]) -> None:
    """Run `write(log)` on a fresh EventLog at `db` unless an earlier import completed there."""
    if _complete(db, marker):
        return

    _fresh(db)
    with EventLog(db) as log:
        write(log)
    counter[0] += 1


def _check_manifest(import_dir: Path, fmt: str, files: list[Path]) -> None:
    digest = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    me = {"format": fmt, "files": [str(f.resolve()) for f in files], "sha256": digest.hexdigest()}
    path = import_dir / MANIFEST
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError:
            old = {}
        if old.get("sha256") != me["sha256"] or old.get("format") != fmt:
            raise BadInputError(f"{import_dir} holds histories of another data file ({', '.join(old.get('files', []))}, "
                                f"{old.get('format')}); pick a new --out")
        return
    import_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(me, indent=2))


# ---------------------------------------------------------------- per format
_LME_DONE = "longmemeval"   # the record an LME history's import writes last


def haystack_digest(inst: dict) -> str:
    """sha256 of a LongMemEval instance's haystack (ids, dates, and each turn's role and content;
    not the per-question `has_answer` marks): instances that repeat one haystack, one per
    question, share it, hence one log and one history."""
    turns = [[[t.get("role"), t.get("content")] if isinstance(t, dict) else t for t in s] if isinstance(s, list) else s
             for s in inst.get("haystack_sessions") or []]
    blob = json.dumps([inst.get("haystack_session_ids"), inst.get("haystack_dates"), turns], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def _check_lme(path: Path, doc: Any) -> list:
    items = doc if isinstance(doc, list) else [doc]
    seen: dict[str, int] = {}
    for i, inst in enumerate(items):
        qid = inst.get("question_id") if isinstance(inst, dict) else None
        if not isinstance(inst, dict) or not isinstance(inst.get("haystack_sessions"), list):
            raise BadInputError(f"{path}: [{i}]: not a LongMemEval instance (no 'haystack_sessions' list)")
        if isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == "":
            raise BadInputError(f"{path}: [{i}].question_id: expected a non-empty string, got {type_name(qid)}")
        if str(qid) in seen:
            raise BadInputError(f"{path}: [{i}].question_id: duplicate {str(qid)!r} (first at [{seen[str(qid)]}])")
        seen[str(qid)] = i
        if not isinstance(inst.get("question"), str) or not inst["question"].strip():
            raise BadInputError(f"{path}: [{i}].question: expected a non-empty string")
        if inst.get("answer") is None or inst.get("answer") == "":
            raise BadInputError(f"{path}: [{i}].answer: missing (every question is judged against its reference "
                                "answer)")
        if not isinstance(inst.get("question_type", ""), str):
            raise BadInputError(f"{path}: [{i}].question_type: expected a string")
    if not items:
        raise BadInputError(f"{path}: no LongMemEval instances")
    return items


def _longmemeval(path: Path, items: list, hist: Path, judger: FormatJudge, limit: int | None, n: list[int]):
    digests = [haystack_digest(inst) for inst in items]
    groups: dict[str, list[int]] = {}   # haystack digest -> instances (a file may repeat one haystack per question)
    for idx, digest in enumerate(digests):
        groups.setdefault(digest, []).append(idx)
    refs = []
    for idx, inst in enumerate(items[:limit]):
        qid = str(inst["question_id"])
        digest = digests[idx]
        db, key = hist / f"lme-{digest[:16]}.db", f"longmemeval/{qid}"

        def write(log, members=groups[digest], db=db):
            parsed = [longmemeval_instance(path, items[i], i, len(items)) for i in members]
            seqs = log.append_many(parsed[0].rows)   # one haystack, every member's labels
            for p in parsed:
                write_labels(db, p, seqs)
            LabelStore(db).put(_LME_DONE, {"questions": [str(items[i]["question_id"]) for i in members]})

        _import(db, _LME_DONE, write, n)
        sessions = sorted(LabelStore(db).get(key)["sessions"])
        date = inst.get("question_date")
        q = inst["question"] + (f"\n(The question is asked on {date}.)" if isinstance(date, str) and date else "")
        refs.append(TaskRef(safe_name(qid), "longmemeval", db, DataTask(qid, q, inst.get("question_type") or "unknown",
                                                                    "longmemeval", str(db), key, judger,
                                                                    history=f"lme-{digest[:16]}"), sessions))
    return refs, len(items), len({r.db for r in refs})


def _locomo(path: Path, samples: list, hist: Path, judger: FormatJudge, limit: int | None, n: list[int]):
    qas = [(si, locomo.sample_id(s, si), qi, qa) for si, s in enumerate(samples) for qi, qa in enumerate(s["qa"])]
    refs: list[TaskRef] = []
    for si, sid, qi, qa in qas[:limit]:
        db = hist / f"locomo-{safe_name(sid)}.db"

        def write(log, si=si, db=db):
            parsed = locomo.sample(path, samples[si], si)
            write_labels(db, parsed, log.append_many(parsed.rows))

        _import(db, "locomo", write, n)
        sessions = LabelStore(db).get("locomo")["sessions"]
        qid = f"{sid}-q{qi}"
        refs.append(TaskRef(safe_name(qid), "locomo", db, DataTask(qid, qa["question"], CATEGORY[int(qa["category"])],
                                                               "locomo", str(db), f"locomo/{qid}", judger,
                                                               history=f"locomo-{sid}"), sessions))
    return refs, len(qas), len({r.db for r in refs})


def _beam_paths(data: Path, probing: Path | None) -> tuple[Path, Path]:
    chat = data / "chat.json" if data.is_dir() else data
    if probing is None:
        found = [chat.parent / p for p in PROBING_NAMES if (chat.parent / p).is_file()]
        if not found:
            raise BadInputError(f"{chat}: no BEAM probing questions beside it ({', '.join(PROBING_NAMES)}): "
                                "name the file with --probing")
        probing = found[0]
    return chat, probing


def _beam(beam, hist: Path, judger: FormatJudge, limit: int | None, n: list[int]):
    db = hist / "beam.db"
    _import(db, "beam", lambda log: import_beam(beam, log), n)
    sessions = sorted(LabelStore(db).get("beam")["sessions"])
    refs = [TaskRef(safe_name(f"beam-{q.qid}"), "beam", db, DataTask(q.qid, q.question, q.ability, "beam", str(db),
                                                                 f"beam/{q.qid}", judger, history="beam"), sessions)
            for q in beam.questions[:limit]]
    return refs, len(beam.questions), 1 if refs else 0


def _oolong(data, hist: Path, judger: FormatJudge, limit: int | None, n: list[int]):
    refs = []
    for q in data.questions[:limit]:
        w, db = data.windows[q.window_id], hist / f"oolong-w{q.window_id}.db"
        _import(db, "oolong", lambda log, wid=q.window_id: import_oolong(data, log, window_id=wid), n)
        text = (f"{w.instructions}\n\n" if w.instructions else "") + q.question  # as import_oolong's probes
        kind = q.task.removeprefix("TASK_TYPE.").lower() or "unknown"
        refs.append(TaskRef(safe_name(f"oolong-{q.qid}"), "oolong", db, DataTask(q.qid, text, kind, "oolong", str(db),
                                                                             f"oolong/{q.qid}", judger,
                                                                             history=f"oolong-w{q.window_id}"),
                                 ["s001"]))
    return refs, len(data.questions), len({r.db for r in refs})


def _sniff_qa(path: Path) -> bool:
    """A JSONL file whose first line is a jsonl-qa question."""
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.strip():
                try:
                    obj = loads_line(raw)
                except ValueError:
                    return False
                return isinstance(obj, dict) and "question" in obj and "sessions" in obj
    return False


def prepare(data: str | Path, import_dir: str | Path, *, fmt: str | None = None, judge: FormatJudge | None = None,
            llm_judge=None, probing: str | Path | None = None, limit: int | None = None,
            db: str | Path | None = None) -> Prepared:
    """Read `data`, import its histories under `import_dir` (reusing complete ones), and return
    the work items (the first `limit` questions in file order). `judge` (or a FormatJudge built
    for the detected format with `llm_judge`) scores the answers. `db`: the event log a jsonl-qa
    file asks about. The whole file is checked before anything is written."""
    data, hist = Path(data), Path(import_dir)
    if fmt is not None and fmt not in FORMATS:
        raise BadInputError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if not data.exists():
        raise BadInputError(f"{data}: no such file")
    loaded: Any = None
    if data.is_dir():
        if fmt not in (None, "beam") or not (data / "chat.json").is_file():
            raise BadInputError(f"{data}: is a directory (only a BEAM chat folder, holding chat.json, can be one)")
        fmt = "beam"
    elif fmt == "jsonl-qa" or fmt is None and _sniff_qa(data):
        fmt = "jsonl-qa"
    elif fmt in (None, "longmemeval", "locomo"):
        doc = read_json_file(data)
        fmt = fmt or detect_format(data, doc)
        if fmt in ("longmemeval", "locomo"):
            loaded = _check_lme(data, doc) if fmt == "longmemeval" else locomo.check_samples(data, doc)
    if (fmt == "jsonl-qa") != (db is not None):
        raise BadInputError("a jsonl-qa file asks about an imported log: give it with --db" if db is None
                            else f"--db goes with a jsonl-qa file, not {fmt}")
    files = list(_beam_paths(data, Path(probing) if probing else None)) if fmt == "beam" else [data]
    if fmt == "beam":
        loaded = load_beam(*files)
    elif fmt == "oolong":
        loaded = load_oolong(data)
    judger = judge or FormatJudge(fmt, llm_judge)
    n = [0]
    if fmt == "jsonl-qa":
        refs, total, hists = qa_refs(data, Path(db), hist, judger, limit, before_write=lambda: _check_manifest(
            hist, fmt, files))
    else:
        _check_manifest(hist, fmt, files)   # the first write: after the whole file was checked
        run = {"longmemeval": _longmemeval, "locomo": _locomo, "beam": _beam, "oolong": _oolong}[fmt]
        refs, total, hists = run(data, loaded, hist, judger, limit, n) if fmt in ("longmemeval", "locomo") \
            else run(loaded, hist, judger, limit, n)
    if not refs:
        raise BadInputError(f"{data}: no questions")
    ids = [r.task_id for r in refs]
    if len(set(ids)) != len(ids):
        raise BadInputError(f"{data}: question ids repeat: {sorted({i for i in ids if ids.count(i) > 1})[:5]}")
    return Prepared(fmt, refs, hists, total, n[0])
