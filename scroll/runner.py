"""Run many tasks through the real agent loop, in parallel, judged host-side, into resumable JSONL.

    from scroll.runner import run_tasks, load_records
    recs = run_tasks(refs, make_llm=lambda: ReferencePolicy(), cfg=LoopConfig.load(),
                     out_dir=Path("var/runs/teacher"), concurrency=2, label="teacher")

One runner for `scroll collect`, `scroll distill eval` and the benchmark harness. Each task
(a `TaskRef`: task_id, split, db, task, sessions; see scroll.tasks.splits) runs the real loop:
`Agent.open(EventLog(<snapshot of ref.db>), llm, cfg, session="run-<uuid8>").run(ref.task.question,
sessions=ref.sessions)` with the kernel the loop config asks for (sandboxed by default).
Each task gets its own snapshot of its history log (out_dir/logs/<task_id>.db), Agent and
kernel, so the task set's logs stay as built and reruns see the same rankings. Only the question and the granted sessions reach the
agent; the answer is judged here, host-side, with `ref.task.check(answer)` (the answer key
lives in the label sidecar, never in the log). A task with a `judge(answer)` method (the public
benchmarks' tasks, scroll.bench.datasets) is scored by it instead: its Verdict's `score`, `judge`
and `detail` go into the record too (`correct` = the verdict's; a judge that fails, e.g. a judge
model's server, makes the record a runner error, retried on resume).

`out_dir/runs.jsonl` gets one `RunRecord` per line, appended (one write, flushed and
fsynced) as each task finishes, so a killed run loses at most its in-flight tasks. A rerun
with `resume=True` skips the (label, task_id) pairs already recorded, except records whose
runner crashed (`reason == "runner_error"`), which are retried; readers keep the last
record per pair (`load_records`). `out_dir/runs.meta.json` says who produced the records
(label, backend, loop config, git SHA, each invocation's times).

`make_llm()` is called once per worker thread (at most `concurrency` backends), unless
it returns the same object each time (a thread-safe shared backend); every distinct
backend is closed at the end.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

from .agent import Agent
from .config import LoopConfig
from .events import EventLog
from .provenance import git_sha, machine

RUNS_FILE = "runs.jsonl"
META_FILE = "runs.meta.json"
RUNNER_ERROR = "runner_error"


@dataclass
class RunRecord:
    task_id: str
    split: str
    kind: str
    family: str
    label: str                       # who answered: "teacher", "untrained", "trained", ...
    backend: dict                    # the backend's describe()
    model: str | None
    answer: str | None
    correct: bool                    # judged host-side: ref.task.check(answer)
    reason: str                      # the loop's stop reason, or "runner_error"
    steps: int                       # model replies
    code_cells: int                  # replies with a ```python block (a cell ran)
    executable_cells: int            # ... whose cell ran without an exception
    executable_cell_rate: float | None  # executable_cells / steps (None without steps)
    exposure_tokens: int
    prompt_tokens: int | None        # summed backend counts (None when the backend gave none)
    completion_tokens: int | None
    wall_s: float
    db: str
    session: str
    error: str | None = None
    started: float = 0.0             # epoch seconds (overlap checks, throughput)
    finished: float = 0.0
    question: str = ""
    manager: str = "scroll"          # the context manager that answered (scroll.managers)
    score: float | None = None       # partial credit in [0, 1] (F1, rubric mean, 0.75^|diff|); None: pass/fail only
    judge: str = "check"             # who judged: "check" (the task's checker) or a scroll.bench.judges name
    judge_detail: dict | None = None  # what the judge saw (normalised forms, model replies), for audits
    pack: str | None = None          # the task pack the loop ran with (scroll.packs); None: the core only

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RunRecord":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def neutral_session() -> str:
    """A fresh session name that says nothing about the task (no ids, no labels)."""
    return f"run-{uuid.uuid4().hex[:8]}"


# ---------------------------------------------------------------------------- the JSONL file
def read_jsonl(path: Path) -> list[dict]:
    """The parseable lines of a JSONL file (a torn last line from a killed writer is skipped)."""
    out: list[dict] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    out.append(obj)
    except FileNotFoundError:
        pass
    return out


def load_records(run_dir: str | os.PathLike, *, keep_runner_errors: bool = True) -> list[RunRecord]:
    """The records of `run_dir/runs.jsonl` (or of that file itself), the last one per
    (label, task_id), in first-seen order."""
    p = Path(run_dir)
    path = p / RUNS_FILE if p.is_dir() else p
    last: dict[tuple[str, str], RunRecord] = {}
    for d in read_jsonl(path):
        if "task_id" not in d or "label" not in d:
            continue
        r = RunRecord.from_dict(d)
        last[(r.label, r.task_id)] = r
    return [r for r in last.values() if keep_runner_errors or r.reason != RUNNER_ERROR]


class JsonlAppender:
    """Thread-safe appends of one JSON object per line: one write per record, flushed and
    fsynced; a torn last line (a killed writer) is closed off before the next append."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def append(self, obj: dict) -> None:
        line = json.dumps(obj, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                if size:
                    with open(self.path, "rb") as fh:
                        fh.seek(size - 1)
                        if fh.read(1) != b"\n":
                            line = "\n" + line
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)


# ---------------------------------------------------------------------------- one task
def _sum_or_none(values: Iterable[int | None]) -> int | None:
    vals = [v for v in values if v is not None]
    return sum(vals) if vals else None


def run_one(ref, llm, cfg: LoopConfig, *, label: str, session: str | None = None,
            snapshot_dir: Path | None = None, manager=None, budget=None, loop_name: str = "scroll") -> RunRecord:
    """Run one task through the real loop on its own EventLog handle and kernel; judge it here.

    With `snapshot_dir`, the task runs on a fresh snapshot of its history log there
    (`<task_id>.db`), so the shared task-set logs never change: BM25 statistics, and so
    every later run's rankings, stay what they were (reruns are reproducible). The record's
    `db` names the log the run was written to. `manager` (a scroll.managers manager other
    than the loop, with its `budget`) answers instead of the loop: same snapshot, same judge."""
    task = ref.task
    session = session or neutral_session()
    try:
        backend = llm.describe() if hasattr(llm, "describe") else {"backend": type(llm).__name__}
    except Exception as e:  # noqa: BLE001 - a broken backend is this task's error, not the run's
        backend = {"backend": type(llm).__name__, "describe_error": str(e)}
    db = Path(ref.db).resolve()
    if snapshot_dir is not None:
        db = Path(snapshot_dir).resolve() / f"{ref.task_id}.db"
    base = dict(task_id=ref.task_id, split=ref.split, kind=getattr(task, "kind", ""),
                family=getattr(task, "family", ""), label=label, backend=backend,
                model=backend.get("model"), db=str(db), session=session, question=task.question,
                manager=loop_name)
    started = time.time()
    t0 = time.perf_counter()
    try:
        if snapshot_dir is not None:
            _fresh_snapshot(Path(ref.db), db)
        with EventLog(db) as log:
            if manager is not None:
                # the question and the granted history only: no ids, no labels, no meta
                ans = manager.answer(log, task.question, sessions=list(ref.sessions), llm=llm, budget=budget)
                return _manager_record(base, task, ans, started, t0)
            with Agent.open(log, llm, cfg, session=session) as agent:
                # the question and the granted history only: no ids, no labels, no meta
                res = agent.run(task.question, sessions=list(ref.sessions))
    except Exception as e:  # noqa: BLE001 - the sandbox refused, the log is locked, the backend failed, ...
        return RunRecord(**base, answer=None, correct=False, reason=RUNNER_ERROR, steps=0, code_cells=0,
                         executable_cells=0, executable_cell_rate=None, exposure_tokens=0, prompt_tokens=None,
                         completion_tokens=None, wall_s=round(time.perf_counter() - t0, 4),
                         error=f"{type(e).__name__}: {e}", started=started, finished=time.time())
    steps = res.steps
    code_cells = sum(1 for s in steps if s.had_code)
    executable = sum(1 for s in steps if s.had_code and not s.error)
    try:
        verdict = judge_answer(task, res.answer)
    except Exception as e:  # noqa: BLE001 - a judge that cannot judge is not a wrong answer
        return _judge_failed(base, res.answer, e, started, t0)
    return RunRecord(
        **base, answer=res.answer, **verdict, reason=res.reason, steps=len(steps), code_cells=code_cells,
        executable_cells=executable, executable_cell_rate=round(executable / len(steps), 6) if steps else None,
        exposure_tokens=sum(s.exposure_tokens for s in steps),
        prompt_tokens=_sum_or_none(s.prompt_tokens for s in steps),
        completion_tokens=_sum_or_none(s.completion_tokens for s in steps),
        wall_s=round(time.perf_counter() - t0, 4), error=res.error, started=started, finished=time.time(),
        pack=res.pack)


def judge_answer(task, answer: str | None) -> dict:
    """{correct, score, judge, judge_detail} for `answer`: the task's `judge(answer)` Verdict
    when it has one (no answer: score 0, the judge not asked), else `task.check(answer)`."""
    judge = getattr(task, "judge", None)
    if judge is None:
        return {"correct": bool(answer and task.check(answer)), "score": None, "judge": "check", "judge_detail": None}
    if not answer or not str(answer).strip():
        return {"correct": False, "score": 0.0, "judge": getattr(task, "judge_name", "judge"),
                "judge_detail": {"empty_answer": True}}
    v = judge(answer)
    return {"correct": bool(v.correct), "score": float(v.score), "judge": v.judge, "judge_detail": dict(v.detail)}


def _judge_failed(base: dict, answer, e: Exception, started: float, t0: float) -> RunRecord:
    return RunRecord(**base, answer=answer, correct=False, reason=RUNNER_ERROR, steps=0, code_cells=0,
                     executable_cells=0, executable_cell_rate=None, exposure_tokens=0, prompt_tokens=None,
                     completion_tokens=None, wall_s=round(time.perf_counter() - t0, 4),
                     error=f"judge failed: {type(e).__name__}: {e}", started=started, finished=time.time())


def _manager_record(base: dict, task, ans, started: float, t0: float) -> RunRecord:
    """A record for a manager's Answer: calls count as steps; tool cells as code cells."""
    d = ans.detail or {}
    cells, errors = int(d.get("code_cells", 0)), int(d.get("cell_errors", 0))
    base = {**base, "session": d.get("session", base["session"]), "manager": ans.manager}
    try:
        verdict = judge_answer(task, ans.text)
    except Exception as e:  # noqa: BLE001
        return _judge_failed(base, ans.text, e, started, t0)
    return RunRecord(**base, answer=ans.text, **verdict,
                     reason=str(d.get("reason", "answered")), steps=ans.calls, code_cells=cells,
                     executable_cells=cells - errors,
                     executable_cell_rate=round((cells - errors) / ans.calls, 6) if ans.calls and cells else None,
                     exposure_tokens=0, prompt_tokens=ans.prompt_tokens, completion_tokens=ans.completion_tokens,
                     wall_s=round(time.perf_counter() - t0, 4), error=d.get("error"), started=started,
                     finished=time.time())


def _fresh_snapshot(src: Path, dest: Path) -> None:
    """A snapshot of `src` at `dest`, replacing what an interrupted earlier attempt left there."""
    import shutil

    for p in (dest, Path(f"{dest}-wal"), Path(f"{dest}-shm")):
        p.unlink(missing_ok=True)
    for d in (Path(f"{dest}.payloads"), Path(f"{dest}.index")):
        shutil.rmtree(d, ignore_errors=True)
    with EventLog(src, readonly=True) as log:
        log.snapshot(dest)


# ---------------------------------------------------------------------------- many tasks
class _Backends:
    """At most one backend per worker thread, made on first use; all closed at the end."""

    def __init__(self, make_llm: Callable[[], Any]):
        self.make_llm = make_llm
        self.local = threading.local()
        self.made: list[Any] = []
        self.lock = threading.Lock()

    def get(self):
        llm = getattr(self.local, "llm", None)
        if llm is None:
            llm = self.make_llm()
            self.local.llm = llm
            with self.lock:
                if not any(m is llm for m in self.made):
                    self.made.append(llm)
        return llm

    def describe(self) -> dict | None:
        with self.lock:
            first = self.made[0] if self.made else None
        try:
            return first.describe() if first is not None and hasattr(first, "describe") else None
        except Exception:  # noqa: BLE001
            return None

    def close(self) -> None:
        for m in self.made:
            try:
                m.close()
            except Exception:  # noqa: BLE001
                pass


def _write_meta(out_dir: Path, entry: dict) -> None:
    path = out_dir / META_FILE
    try:
        meta = json.loads(path.read_text())
        if not isinstance(meta, dict):
            meta = {}
    except (OSError, ValueError):
        meta = {}
    meta.setdefault("invocations", [])
    inv = meta["invocations"]
    if inv and inv[-1].get("id") == entry["id"]:
        inv[-1] = entry
    else:
        inv.append(entry)
    meta.update({k: entry[k] for k in ("label", "backend", "loop_config", "git_sha")})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(meta, indent=2, default=str))
    os.replace(tmp, path)


def interleave_histories(refs: list) -> list:
    """`refs` reordered round-robin over their history logs (first task of each history, then
    the second of each, ...), keeping the order within a history. Parallel workers then start
    on different histories: per-history work (LCM's DAG build, behind one lock per history)
    runs side by side instead of queueing."""
    by_db: dict[str, list] = {}
    for r in refs:
        by_db.setdefault(str(getattr(r, "db", "")), []).append(r)
    queues = list(by_db.values())
    return [q[i] for i in range(max((len(q) for q in queues), default=0)) for q in queues if i < len(q)]


def run_tasks(refs: list, make_llm: Callable[[], Any], cfg: LoopConfig, out_dir: str | os.PathLike, *,
              concurrency: int = 2, label: str, resume: bool = True, progress: bool = True,
              snapshot: bool = True, manager=None, budget=None, loop_name: str = "scroll",
              on_record: Callable[[RunRecord], None] | None = None,
              logs_dir: str | os.PathLike | None = None, meta: dict | None = None) -> list[RunRecord]:
    """Run `refs` (TaskRefs) through the loop, `concurrency` at a time; append each record to
    `out_dir/runs.jsonl` as it finishes. Returns one record per ref, in the order of `refs`
    (records from an earlier run for the skipped ones when `resume`). `snapshot` (default):
    every task runs on its own copy of its history log under `out_dir/logs/`, so the
    task set's logs are never written. `manager` + `budget`: a baseline context manager
    (scroll.managers) answers each task instead of the loop; `loop_name` names the loop's
    variant in the records (scroll, or an ablation: `cfg` carries its switches). `logs_dir`:
    where the snapshots go instead of `out_dir/logs` (several labels in one folder that run the
    same tasks, e.g. `scroll collect --samples K`, each need their own); `meta`: extra keys for
    this invocation's entry in runs.meta.json (a sample's index, seed and temperature)."""
    if (manager is None) != (budget is None):
        raise ValueError("a manager needs its budget (scroll.managers.base.Budget), and only a manager does")
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    if manager is not None and getattr(manager, "store_dir", False) is None:
        # LCM's summary DAG: one per history (snapshots share the log id), built once, shared
        import dataclasses

        manager = dataclasses.replace(manager, store_dir=str(Path(out_dir) / "dags"))
    if not label or not label.strip():
        raise ValueError("label must name who answers (teacher, untrained, trained, ...)")
    ids = [r.task_id for r in refs]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"duplicate task ids: {dup[:5]}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done: dict[str, RunRecord] = {}
    if resume:
        done = {r.task_id: r for r in load_records(out) if r.label == label and r.reason != RUNNER_ERROR}
    elif (out / RUNS_FILE).exists() and (out / RUNS_FILE).stat().st_size:
        raise FileExistsError(f"{out / RUNS_FILE} already holds records; resume, or pick a new --out")
    todo = interleave_histories([r for r in refs if r.task_id not in done])
    appender = JsonlAppender(out / RUNS_FILE)
    snap_dir = Path(logs_dir) if logs_dir is not None else out / "logs"
    backends = _Backends(make_llm)
    inv = {"id": uuid.uuid4().hex[:12], "label": label, "backend": None, "loop_config": cfg.to_dict(),
           "manager": getattr(manager, "name", loop_name), "budget": asdict(budget) if budget is not None else None,
           "git_sha": git_sha(), "machine": machine(),
           "started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "finished": None, "tasks": len(refs), "skipped": len(refs) - len(todo), "ran": 0,
           "concurrency": concurrency, **(meta or {})}
    _write_meta(out, inv)
    results: dict[str, RunRecord] = dict(done)
    stats = {"done": 0, "correct": 0}
    lock = threading.Lock()
    bar = _Progress(label, len(todo), enabled=progress)

    def work(ref) -> RunRecord:
        rec = run_one(ref, backends.get(), cfg, label=label, snapshot_dir=snap_dir if snapshot else None,
                      manager=manager, budget=budget, loop_name=loop_name)
        appender.append(rec.to_dict())
        with lock:
            results[ref.task_id] = rec
            stats["done"] += 1
            stats["correct"] += rec.correct
            bar.advance(stats["done"], stats["correct"])
        if on_record is not None:
            on_record(rec)
        return rec

    t0 = time.perf_counter()
    try:
        with bar:
            if concurrency == 1 or len(todo) <= 1:
                for ref in todo:
                    work(ref)
            else:
                with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="scroll-run") as pool:
                    for f in [pool.submit(work, ref) for ref in todo]:
                        f.result()
    finally:
        inv.update(backend=backends.describe(), ran=stats["done"], correct=stats["correct"],
                   wall_s=round(time.perf_counter() - t0, 3),
                   finished=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        _write_meta(out, inv)
        backends.close()
    return [results[r.task_id] for r in refs if r.task_id in results]


class _Progress:
    """Progress on stderr: a rich bar (done/total, correct so far, ETA) on a terminal; plain
    lines every 30 s and at the end otherwise (a log file, a parent that tees it)."""

    def __init__(self, label: str, total: int, enabled: bool):
        self.enabled = enabled and total > 0
        self.label, self.total = label, total
        self._p = None
        self._t0 = self._last = time.monotonic()
        self._plain = self.enabled and not sys.stderr.isatty()
        if self.enabled and not self._plain:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self._p = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                               TextColumn("correct {task.fields[correct]}"), TimeElapsedColumn(),
                               TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True))
            self._task = self._p.add_task(label, total=total, correct="0")

    def __enter__(self):
        if self._p is not None:
            self._p.start()
        return self

    def __exit__(self, *exc):
        if self._p is not None:
            self._p.stop()

    def advance(self, done: int, correct: int) -> None:
        if self._p is not None:
            self._p.update(self._task, completed=done, correct=f"{correct}/{done}")
        elif self._plain and (done >= self.total or time.monotonic() - self._last >= 30):
            self._last = now = time.monotonic()
            el = now - self._t0
            eta = el / done * (self.total - done) if done else 0.0
            print(f"{self.label}: {done}/{self.total} done, correct {correct}/{done}, {el:.0f} s elapsed, "
                  f"ETA {eta:.0f} s", file=sys.stderr, flush=True)


class Serialized:
    """One backend shared by every worker, one call at a time (a local model that is not
    thread-safe, or too big to load twice): the kernels and the log still overlap."""

    def __init__(self, llm):
        self._llm = llm
        self._lock = threading.RLock()

    def complete(self, *args, **kw):
        with self._lock:
            return self._llm.complete(*args, **kw)

    def count_tokens(self, text_or_messages):
        with self._lock:
            return self._llm.count_tokens(text_or_messages)

    @property
    def token_counter_exact(self) -> bool:
        return bool(getattr(self._llm, "token_counter_exact", False))

    def describe(self) -> dict:
        return self._llm.describe()

    def close(self) -> None:
        self._llm.close()
