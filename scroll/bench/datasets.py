"""A public benchmark's data file -> runner work items (`scroll bench run --data FILE`).

    prep = prepare("longmemeval_s.json", "var/bench/lme/histories", judge=FormatJudge("longmemeval"))
    run_tasks(prep.refs, make_llm, cfg, out_dir, ...)   # scroll.runner: one record per question

Formats (detected from the content, or named): `longmemeval` (a JSON list of instances, one
haystack each), `locomo` (locomo10.json: conversations with `qa`), `beam` (a chat.json; its
probing questions are found beside it, BEAM's `probing_questions/probing_questions.json`, or
named with `probing=`; a BEAM chat folder works too) and `oolong` (scroll.bench.oolong's file or
a list of OOLONG-synth rows). See shared/notes/stack-facts.md for the fields.

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
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..importers import BadInputError, check_row, longmemeval_instance, read_json_file, write_labels
from ..labels import LabelStore
from ..origin import Origin
from ..tasks.splits import TaskRef
from .data_judges import FORMATS, FormatJudge
from .locomo import CATEGORY, parse_date

MANIFEST = "data.json"
PROBING_NAMES = ("probing_questions/probing_questions.json", "probing_questions.json", "probing.json")


@dataclass
class DataTask:
    """One question of a public benchmark, as the runner sees it. No answer in here: `judge`
    reads it from the label sidecar of `labels_db` under `label_key`, host-side."""

    question_id: str
    question: str
    kind: str                        # the category the table groups by
    family: str                      # the format
    labels_db: str
    label_key: str
    judger: FormatJudge = field(repr=False)

    @property
    def judge_name(self) -> str:
        return self.judger.name

    def label(self) -> dict:
        lab = LabelStore(self.labels_db).get(self.label_key)
        if not isinstance(lab, dict):
            raise LookupError(f"no label {self.label_key!r} next to {self.labels_db}")
        return lab

    def judge(self, answer: Any):
        return self.judger.judge(self.label(), answer)

    def check(self, answer: Any) -> bool:
        return self.judge(answer).correct


@dataclass
class Prepared:
    format: str
    refs: list[TaskRef]
    histories: int
    questions_in_file: int
    imported: int                    # histories imported by this call (the rest were reused)


# ---------------------------------------------------------------- format detection
def _kind(v: Any) -> str:
    return "null" if v is None else type(v).__name__


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
                        f"BEAM chat.json or OOLONG rows; got {_kind(doc)}): give --format "
                        f"{'|'.join(FORMATS)}")


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", s)[:120] or "_"


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
    from ..events import EventLog

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
def _longmemeval(path: Path, doc: Any, hist: Path, judger: FormatJudge, limit: int | None, n: list[int]):
    items = doc if isinstance(doc, list) else [doc]
    for i, inst in enumerate(items):
        qid = inst.get("question_id") if isinstance(inst, dict) else None
        if not isinstance(inst, dict) or not isinstance(inst.get("haystack_sessions"), list):
            raise BadInputError(f"{path}: [{i}]: not a LongMemEval instance (no 'haystack_sessions' list)")
        if isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == "":
            raise BadInputError(f"{path}: [{i}].question_id: expected a non-empty string, got {_kind(qid)}")
        if not isinstance(inst.get("question"), str) or not inst["question"].strip():
            raise BadInputError(f"{path}: [{i}].question: expected a non-empty string")
        if not isinstance(inst.get("question_type", ""), str):
            raise BadInputError(f"{path}: [{i}].question_type: expected a string")
    refs, seen = [], set()
    for idx, inst in enumerate(items[:limit]):
        qid = str(inst["question_id"])
        if qid in seen:
            raise BadInputError(f"{path}: [{idx}].question_id: duplicate {qid!r}")
        seen.add(qid)
        db, key = hist / f"lme-{_safe(qid)}.db", f"longmemeval/{qid}"

        def write(log, inst=inst, idx=idx, db=db):
            parsed = longmemeval_instance(path, inst, idx, len(items))
            write_labels(db, parsed, log.append_many(parsed.rows))

        _import(db, key, write, n)
        sessions = sorted(LabelStore(db).get(key)["sessions"])
        date = inst.get("question_date")
        q = inst["question"] + (f"\n(The question is asked on {date}.)" if isinstance(date, str) and date else "")
        refs.append(TaskRef(_safe(qid), "longmemeval", db, DataTask(qid, q, inst.get("question_type") or "unknown",
                                                                    "longmemeval", str(db), key, judger), sessions))
    return refs, len(items), len(refs)


def _locomo_rows(path: Path, sid: str, conv: Any, where: str) -> tuple[list[dict], dict[str, int], list[str]]:
    if not isinstance(conv, dict):
        raise BadInputError(f"{path}: {where}.conversation: expected an object, got {_kind(conv)}")
    keys = sorted((int(m.group(1)), k) for k in conv if (m := re.match(r"^session_(\d+)$", k)))
    rows, dia, names = [], {}, []
    for n, (_, key) in enumerate(keys, start=1):
        turns, date = conv[key], conv.get(f"{key}_date_time")
        if not isinstance(turns, list):
            raise BadInputError(f"{path}: {where}.conversation.{key}: expected a list of turns, got {_kind(turns)}")
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
                rows.append(check_row({"session": name, "role": t["speaker"], "text": text, "kind": "message",
                                       "time": parse_date(date if isinstance(date, str) else None),
                                       "meta": {"turn": j, "date": date}, "origin": Origin.HISTORY}))
            except ValueError as e:
                raise BadInputError(f"{path}: {tw}: {e}") from None
    if not rows:
        raise BadInputError(f"{path}: {where}.conversation: no session_N turns")
    return rows, dia, names


def _locomo(path: Path, doc: Any, hist: Path, judger: FormatJudge, limit: int | None, n: list[int]):
    samples = doc if isinstance(doc, list) else [doc]
    qas = []
    for si, s in enumerate(samples):
        if not isinstance(s, dict) or not isinstance(s.get("qa"), list) or "conversation" not in s:
            raise BadInputError(f"{path}: [{si}]: not a LoCoMo conversation ({{sample_id, conversation, qa: [...]}})")
        sid = str(s.get("sample_id") or f"conv-{si}")
        for qi, qa in enumerate(s["qa"]):
            w = f"[{si}].qa[{qi}]"
            if not isinstance(qa, dict) or not isinstance(qa.get("question"), str) or not qa["question"].strip():
                raise BadInputError(f"{path}: {w}.question: expected a non-empty string")
            cat = qa.get("category")
            if isinstance(cat, bool) or cat not in CATEGORY and str(cat) not in {str(c) for c in CATEGORY}:
                raise BadInputError(f"{path}: {w}.category: expected 1..5, got {cat!r}")
            if int(cat) != 5 and "answer" not in qa:
                raise BadInputError(f"{path}: {w}.answer: missing")
            qas.append((si, sid, qi, qa))
    total = len(qas)
    refs: list[TaskRef] = []
    for si, sid, qi, qa in qas[:limit]:
        db = hist / f"locomo-{_safe(sid)}.db"

        def write(log, si=si, sid=sid, db=db):
            rows, dia, names = _locomo_rows(path, sid, samples[si]["conversation"], f"[{si}]")
            seqs = log.append_many(rows)
            recs: dict[str, Any] = {"locomo": {"source": "locomo", "file": str(path), "sample_id": sid,
                                               "sessions": names, "dia_seqs": {d: seqs[r] for d, r in dia.items()}}}
            for qj, q in enumerate(samples[si]["qa"]):
                ev = [d for e in q.get("evidence") or [] for d in re.findall(r"D\d+:\d+", str(e))]
                recs[f"locomo/{sid}-q{qj}"] = {
                    "source": "locomo", "sample_id": sid, "question": q["question"], "category": int(q["category"]),
                    "answer": q.get("answer", q.get("adversarial_answer")),
                    "adversarial_answer": q.get("adversarial_answer"), "evidence": ev,
                    "evidence_seqs": [seqs[dia[d]] for d in ev if d in dia]}
            LabelStore(db).put_many(recs)

        _import(db, "locomo", write, n)
        sessions = LabelStore(db).get("locomo")["sessions"]
        qid = f"{sid}-q{qi}"
        refs.append(TaskRef(_safe(qid), "locomo", db, DataTask(qid, qa["question"], CATEGORY[int(qa["category"])],
                                                               "locomo", str(db), f"locomo/{qid}", judger), sessions))
    return refs, total, len({r.db for r in refs})


def _beam_paths(data: Path, probing: Path | None) -> tuple[Path, Path]:
    chat = data / "chat.json" if data.is_dir() else data
    if probing is None:
        found = [chat.parent / p for p in PROBING_NAMES if (chat.parent / p).is_file()]
        if not found:
            raise BadInputError(f"{chat}: no BEAM probing questions beside it ({', '.join(PROBING_NAMES)}): "
                                "name the file with --probing")
        probing = found[0]
    return chat, probing


def _beam(chat: Path, probing: Path, hist: Path, judger: FormatJudge, limit: int | None, n: list[int]):
    from .beam import import_beam, load_beam

    beam = load_beam(chat, probing)
    db = hist / "beam.db"
    _import(db, "beam", lambda log: import_beam(beam, log), n)
    sessions = sorted(LabelStore(db).get("beam")["sessions"])
    refs = [TaskRef(_safe(f"beam-{q.qid}"), "beam", db, DataTask(q.qid, q.question, q.ability, "beam", str(db),
                                                                 f"beam/{q.qid}", judger), sessions)
            for q in beam.questions[:limit]]
    return refs, len(beam.questions), 1 if refs else 0


def _oolong(path: Path, hist: Path, judger: FormatJudge, limit: int | None, n: list[int]):
    from .oolong import import_oolong, load_oolong

    data = load_oolong(path)
    refs = []
    for q in data.questions[:limit]:
        w, db = data.windows[q.window_id], hist / f"oolong-w{q.window_id}.db"
        _import(db, "oolong", lambda log, wid=q.window_id: import_oolong(data, log, window_id=wid), n)
        text = (f"{w.instructions}\n\n" if w.instructions else "") + q.question  # as import_oolong's probes
        kind = q.task.removeprefix("TASK_TYPE.").lower() or "unknown"
        refs.append(TaskRef(_safe(f"oolong-{q.qid}"), "oolong", db, DataTask(q.qid, text, kind, "oolong", str(db),
                                                                             f"oolong/{q.qid}", judger), ["s001"]))
    return refs, len(data.questions), len({r.db for r in refs})


def prepare(data: str | Path, import_dir: str | Path, *, fmt: str | None = None, judge: FormatJudge | None = None,
            llm_judge=None, probing: str | Path | None = None, limit: int | None = None) -> Prepared:
    """Read `data`, import its histories under `import_dir` (reusing complete ones), and return
    the work items (the first `limit` questions in file order). `judge` (or a FormatJudge built
    for the detected format with `llm_judge`) scores the answers."""
    data, hist = Path(data), Path(import_dir)
    if fmt is not None and fmt not in FORMATS:
        raise BadInputError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if not data.exists():
        raise BadInputError(f"{data}: no such file")
    doc = None
    if data.is_dir():
        if fmt not in (None, "beam") or not (data / "chat.json").is_file():
            raise BadInputError(f"{data}: is a directory (only a BEAM chat folder, holding chat.json, can be one)")
        fmt = "beam"
    elif fmt in (None, "longmemeval", "locomo"):
        doc = read_json_file(data)
        fmt = fmt or detect_format(data, doc)
    files = list(_beam_paths(data, Path(probing) if probing else None)) if fmt == "beam" else [data]
    _check_manifest(hist, fmt, files)
    judger = judge or FormatJudge(fmt, llm_judge)
    n = [0]
    if fmt == "longmemeval":
        refs, total, hists = _longmemeval(data, doc, hist, judger, limit, n)
    elif fmt == "locomo":
        refs, total, hists = _locomo(data, doc, hist, judger, limit, n)
    elif fmt == "beam":
        refs, total, hists = _beam(*files, hist, judger, limit, n)
    else:
        refs, total, hists = _oolong(data, hist, judger, limit, n)
    if not refs:
        raise BadInputError(f"{data}: no questions")
    ids = [r.task_id for r in refs]
    if len(set(ids)) != len(ids):
        raise BadInputError(f"{data}: question ids repeat: {sorted({i for i in ids if ids.count(i) > 1})[:5]}")
    return Prepared(fmt, refs, hists, total, n[0])
