"""The search benchmark: Scroll's EventLog search against the SQLite FTS5 peer, same run.

For each corpus size the parent generates a seeded chat-like corpus (`corpus.generate`,
30 % long pasted passages) and writes it to a work dir: the bulk events, a tail of events
for the append phase, and the queries. Then each system runs in its OWN subprocess (so
each peak RSS is its own) and measures:

- ingest: bulk import in transactions of `batch` events, until the first search answers;
- (then an `os.sync()`, for every system: the import's writeback finishes before the timed
  phases below)
- search p50/p95 (k=10) over `queries` seeded queries, without and with a session filter;
- appends one at a time (each committed, index kept up to date) with one search after
  every `every` appends (interleaved p50/p95), plus a freshness probe each time: an event
  with a unique word is appended and must be the top hit of the very next search; the five
  slowest appends are kept with their CPU time and what a machine-stall probe (a separate
  process, `stallprobe.py`) saw meanwhile: a slow append is the engine's, or the machine's;
- reopen (open the log again + first search), then the queries again in the reopened log
  (what a fresh process sees), index size on disk, peak RSS.

Retrieval quality (recall@10 with a session filter) is measured in the same run on a
LoCoMo-scale generated set, and on real LoCoMo JSON when `locomo` is given.
"""
from __future__ import annotations

import datetime as dt
import gc
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from scroll.bench import corpus as C, locomo, recall as R, report
from scroll.bench.fts5 import Fts5Config, Fts5Log
from scroll.bench.shapes import generate_shape
from scroll.bench.stallprobe import StallProbe
from scroll.events import EventLog
from scroll.search.documents import DEFAULT_MODEL
from scroll.stats import latency_ms

SYSTEMS = ("ours", "fts5", "fts5-fields", "bm25s")
# ours: EventLog (segments + live tail, BM25F doc model, MaxScore); fts5: the OR of the raw
# question (what the public Scroll code does); fts5-fields: FTS5 with our query cleaning and
# our fields as weighted columns (its best configuration); bm25s: a static bm25s index over the
# raw text, built once (no appends: the speed reference for top-k BM25).


@dataclass
class BenchConfig:
    sizes: list[int] = field(default_factory=lambda: [1_000_000, 10_000_000, 18_000_000])
    seed: int = 0
    queries: int = 300
    tail: int = 20_000           # events appended one by one in the interleaved phase
    every: int = 500             # one search after every `every` appends
    batch: int = 5_000           # events per append_many transaction during ingest
    long_share: float = 0.3
    shape: str = "chat"          # chat (corpus.generate, long_share of pasted passages) | long | tool
    durability: str = "full"     # both systems: synchronous=FULL (EventLog's default) or normal
    settle: bool = True          # os.sync() after each system's import, before its timed phases
    ingest_only: bool = False    # the worker stops after the import (scripts/bench_ingest.py)
    systems: tuple[str, ...] = SYSTEMS
    quality: bool = True
    quality_words: int = 60_000  # LoCoMo-scale: ~10 conversations of 400 turns
    quality_seed: int = 1001     # held out: tuning used seeds < 1000
    locomo: str | None = None
    workdir: str | None = None
    keep: bool = False
    timeout_s: int = 3600
    flush_docs: int | None = None  # ours: the index's flush_docs (None: its default, 5,000)


def run(cfg: BenchConfig, progress=None) -> dict:
    say = progress or (lambda msg: None)
    root = Path(cfg.workdir or tempfile.mkdtemp(prefix="scroll-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    result = {"bench": "search", "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "command": " ".join(sys.argv), "config": asdict(cfg), **report.run_provenance(),
              "calibration": calibration(root), "runs": []}
    try:
        for n in cfg.sizes:
            d = root / f"w{n}"
            say(f"{n:,} words: generating corpus")
            meta = prepare(d, n, cfg)
            run_res = {"words": meta["words"], **meta, "systems": {}}
            for system in cfg.systems:
                say(f"{n:,} words: {system}")
                run_res["systems"][system] = _spawn(system, d, cfg)
                shutil.rmtree(d / system, ignore_errors=True)
            result["runs"].append(run_res)
            if not cfg.keep:
                shutil.rmtree(d, ignore_errors=True)
        if cfg.quality:
            say("retrieval quality (generated)")
            result["quality"] = quality_generated(root / "q", cfg)
        if cfg.locomo:
            say("retrieval quality (LoCoMo)")
            result["quality_locomo"] = quality_locomo(root / "locomo", cfg.locomo)
    finally:
        if not cfg.keep and not cfg.workdir:
            shutil.rmtree(root, ignore_errors=True)
    return result


def calibration(workdir: Path | None = None) -> dict:
    """How fast this machine runs plain Python right now (the same VM type varies by 3x between
    days here): seconds for a 10 M-iteration integer loop, best of 3. Absolute timings in the
    result scale with it; the ratios between systems of one run do not. With `workdir`: also the
    disk's own fsync latency there (`fsync_probe`), what a synchronous=FULL commit waits for."""
    def loop() -> float:
        t0 = time.perf_counter()
        s = 0
        for i in range(10_000_000):
            s += i
        return time.perf_counter() - t0
    out = {"python_loop_10m_s": round(min(loop() for _ in range(3)), 3)}
    if workdir is not None:
        out["fsync_probe"] = fsync_probe(workdir)
    return out


def fsync_probe(workdir: Path, n: int = 2000) -> dict:
    """Append 4 KiB to a file and fsync it, `n` times, on the disk the systems write to: the
    latency floor (and the stalls) of any durable commit there, whatever the engine."""
    path = Path(workdir) / "fsync-probe.bin"
    block = os.urandom(4096)
    out = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for _ in range(n):
            t = time.perf_counter()
            os.write(fd, block)
            os.fsync(fd)
            out.append(time.perf_counter() - t)
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    return latency_ms(out)


def prepare(d: Path, n_words: int, cfg: BenchConfig) -> dict:
    d.mkdir(parents=True, exist_ok=True)
    if cfg.shape == "chat":
        c = C.generate(n_words, seed=cfg.seed, long_share=cfg.long_share)
    else:
        c = generate_shape(cfg.shape, n_words, cfg.seed)
    ev = c.events
    tail = min(cfg.tail, len(ev) // 2)
    with open(d / "bulk.jsonl", "w") as fh:
        for e in ev[: len(ev) - tail]:
            fh.write(json.dumps(e) + "\n")
    with open(d / "tail.jsonl", "w") as fh:
        for e in ev[len(ev) - tail:]:
            fh.write(json.dumps(e) + "\n")
    if cfg.shape == "chat":
        qs = C.queries(c, cfg.queries, seed=cfg.seed)
    else:   # the set's own questions; evidence in the bulk part gives recall@10 in the same run
        rng = random.Random(cfg.seed)
        pick = rng.sample(c.questions, min(cfg.queries, len(c.questions)))
        qs = [{"query": q.text, "session": q.session,
               "evidence": [i for i in q.evidence if i < len(ev) - tail]} for q in pick]
    (d / "queries.json").write_text(json.dumps(qs))
    return {"words": c.n_words, "events": len(ev), "events_bulk": len(ev) - tail, "events_tail": tail,
            "sessions": len({e["session"] for e in ev}), "queries": len(qs), "shape": cfg.shape}


def _spawn(system: str, d: Path, cfg: BenchConfig) -> dict:
    out = d / f"result-{system}.json"
    cmd = [sys.executable, "-m", "scroll.bench.search_bench", system, str(d), json.dumps(asdict(cfg))]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=cfg.timeout_s)
    if p.returncode != 0 or not out.exists():
        return {"error": f"exit {p.returncode}: {p.stderr[-2000:]}"}
    return json.loads(out.read_text())


# ------------------------------------------------------------------ worker side
class _Ours:
    def __init__(self, path: str, durability: str, flush_docs: int | None = None):
        self.path = path
        self.options = {"flush_docs": flush_docs} if flush_docs else None
        self.log = EventLog(path, durability=durability, index_options=self.options)
        self.log.index  # live index: appends keep it up to date

    def reopen(self, durability):
        self.log.close()
        self.log = EventLog(self.path, durability=durability, index_options=self.options)

    def index_bytes(self) -> int:
        return self.log.index.disk_bytes()

    def background_busy(self) -> bool:
        """A background flush or merge of the index is in flight."""
        job = self.log._index._job if self.log._index is not None else None
        return job is not None and not job.done.is_set()

    def index_writes(self) -> int:
        """Manifest generations so far: one per installed segment flush (with the merges it set off)."""
        return self.log.index.generation

    def db_bytes(self) -> int:
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))


class _Fts:
    def __init__(self, path: str, durability: str, fields: bool = False):
        self.path = path
        self.config = Fts5Config.like(DEFAULT_MODEL) if fields else Fts5Config.raw()
        self.log = Fts5Log(path, synchronous=durability, config=self.config)

    def reopen(self, durability):
        self.log.close()
        self.log = Fts5Log(self.path, synchronous=durability, config=self.config)

    def index_bytes(self) -> int:
        return self.log.disk_bytes()

    def background_busy(self) -> None:
        return None   # no background work: FTS5 merges inside the commits

    def index_writes(self) -> None:
        return None   # FTS5 merges its segments inside the commits; SQLite does not count them

    def db_bytes(self) -> int:
        return self.log.file_bytes()


class _Bm25sStatic:
    """bm25s over the raw bulk texts, built once: search only (it cannot append)."""

    def __init__(self, texts: list[str], sessions: list[str]):
        import bm25s
        import Stemmer
        self.stem = Stemmer.Stemmer("english")
        self.bm = bm25s.BM25()
        self.bm.index(bm25s.tokenize(texts, stopwords="en", stemmer=self.stem, show_progress=False),
                      show_progress=False)
        self.n = len(texts)

    def search(self, query: str, k: int = 10, **_) -> list:
        import bm25s
        q = bm25s.tokenize([query], stopwords="en", stemmer=self.stem, show_progress=False, return_ids=False)[0]
        q = [t for t in q if t in self.bm.vocab_dict]
        if not q:
            return []
        docs, _scores = self.bm.retrieve([q], k=min(k, self.n), show_progress=False, n_threads=1)
        return [_Pos(int(i)) for i in docs[0]]


@dataclass
class _Pos:
    seq: int      # bulk position + 1 (the seq a fresh log would give it)


def worker(system: str, d: Path, cfg: BenchConfig) -> dict:
    rss_start = report.peak_rss()
    load_start = os.getloadavg()
    wd = d / system
    shutil.rmtree(wd, ignore_errors=True)
    wd.mkdir(parents=True)
    path = str(wd / "log.db")
    qs = json.loads((d / "queries.json").read_text())
    tail = [json.loads(x) for x in open(d / "tail.jsonl")]
    # The harness's own objects (the queries, the events it will append one by one) go to the
    # garbage collector's permanent generation, for every system alike: otherwise a full
    # collection inside some system's append walks them too (measured: ~100 ms for 20 k events).
    gc.collect()
    gc.freeze()
    res: dict = {"system": system}
    if system == "bm25s":
        return _worker_static(d, qs, res, rss_start, load_start)
    sysobj = (_Ours(path, cfg.durability, cfg.flush_docs) if system == "ours"
              else _Fts(path, cfg.durability, system == "fts5-fields"))

    t0 = time.perf_counter()
    n_bulk = 0
    seqs: list[int] = []
    with open(d / "bulk.jsonl") as fh:
        batch = []
        for line in fh:
            batch.append(json.loads(line))
            if len(batch) >= cfg.batch:
                seqs += sysobj.log.append_many(batch)
                n_bulk += len(batch)
                batch = []
        if batch:
            seqs += sysobj.log.append_many(batch)
            n_bulk += len(batch)
    sysobj.log.search(qs[0]["query"], k=10)
    res["ingest_s"] = time.perf_counter() - t0
    if system == "ours":       # a merge may still run in the background: when it ends, apart
        sysobj.log.index.settle()
        res["ingest_settled_s"] = time.perf_counter() - t0
    res["events_bulk"] = n_bulk
    if cfg.ingest_only:
        sysobj.log.close()
        os.sync()   # the next system's import does not meet this one's writeback
        return res
    if cfg.settle:
        # the import just wrote hundreds of MB that the kernel is still writing back: the first
        # fsyncs after it wait for that (measured here: 100-200 ms, ours and FTS5's alike), and the
        # writeback competes with the searches for the 2 cores. Every system's timed phases start
        # on a settled disk; how long that took is kept (it is not part of ingest_s).
        t = time.perf_counter()
        os.sync()
        res["settle_s"] = time.perf_counter() - t

    for q in qs[:10]:  # warm-up
        sysobj.log.search(q["query"], k=10)
    res["search"] = latency_ms(_time_searches(sysobj.log, qs, session=False))
    res["search_session"] = latency_ms(_time_searches(sysobj.log, qs, session=True))
    res["recall_at_10"] = _recall(sysobj.log, qs, seqs)

    app, inter = [], []
    marks: list[tuple[float, float, float, bool | None]] = []   # per append: start, end, cpu, background
    # (background: the system's background index work was in flight at its start or end; None:
    # a system without any)
    fresh_ok = fresh_n = 0
    writes_before = sysobj.index_writes()
    rng = random.Random(cfg.seed)
    with StallProbe(wd) as probe:
        for i, e in enumerate(tail, 1):
            bg = sysobj.background_busy()
            c = time.thread_time()
            t = time.perf_counter()
            sysobj.log.append(session=e["session"], role=e["role"], text=e["text"], kind=e.get("kind", "message"),
                              time=e.get("time"), meta=e.get("meta"))
            t1 = time.perf_counter()
            cpu = time.thread_time() - c
            app.append(t1 - t)
            after = sysobj.background_busy()
            marks.append((t, t1, cpu, None if bg is None else bg or after))
            if i % cfg.every == 0:
                q = qs[(i // cfg.every) % len(qs)]
                t = time.perf_counter()
                sysobj.log.search(q["query"], k=10, **_session_kw(sysobj.log, q["session"] if (i // cfg.every) % 2 else None))
                inter.append(time.perf_counter() - t)
                word = f"zqfresh{i}x{rng.randrange(10**9)}"
                seq = sysobj.log.append(session=e["session"], role="probe", text=f"freshness probe {word}")
                hits = sysobj.log.search(word, k=1)
                fresh_n += 1
                fresh_ok += bool(hits) and hits[0].seq == seq
    res["append"] = latency_ms(app)
    res["append_slowest"] = _slowest(marks, probe)
    if any(bg is not None for *_, bg in marks):
        # the issue's own measure: the appends while a flush or merge of ours was in flight
        res["append_during_background"] = latency_ms([t1 - t for t, t1, _, bg in marks if bg])
    stalled = probe.stalled([(t, t1) for t, t1, _, _ in marks])
    if stalled is not None:
        # the appends left out: the probe's own 4 KiB fdatasync stalled meanwhile (the disk stopped)
        # while the system had no background work of its own in flight (whose writes could be
        # what the disk was busy with)
        quiet = [t1 - t for (t, t1, _, bg), st in zip(marks, stalled) if not st or bg]
        res["append_machine_quiet"] = {**latency_ms(quiet), "left_out": len(marks) - len(quiet)}
        res["stall_probe"] = {k: probe.result[k] for k in ("wakeups", "fsyncs", "worst_late_ms", "worst_fsync_ms")}
    if writes_before is not None:   # the appends' p99 / max include this many background flushes
        res["index_flushes_during_appends"] = sysobj.index_writes() - writes_before
    res["interleaved"] = latency_ms(inter)
    res["fresh_found"], res["fresh_total"] = fresh_ok, fresh_n
    res["events_tail"] = len(tail) + fresh_n

    t = time.perf_counter()
    sysobj.reopen(cfg.durability)
    sysobj.log.search(qs[1]["query"], k=10)
    res["reopen_s"] = time.perf_counter() - t
    # what an agent that opens an existing log sees: the same queries in the reopened log (the
    # first search above excepted), no warm-up beyond it
    res["search_reopened"] = latency_ms(_time_searches(sysobj.log, qs, session=False))
    res["index_bytes"] = sysobj.index_bytes()
    res["db_bytes"] = sysobj.db_bytes()
    sysobj.log.close()
    res["rss"] = report.peak_rss()
    res["rss_at_start"] = rss_start
    # other work on this machine inflates every timing: keep the evidence with the numbers
    res["loadavg_1m_start_end"] = [load_start[0], os.getloadavg()[0]]
    return res


def _worker_static(d: Path, qs: list, res: dict, rss_start: dict, load_start) -> dict:
    import bm25s  # noqa: F401 - imported (numba compiled) before the clock starts: the peer at its best
    rows = [json.loads(x) for x in open(d / "bulk.jsonl")]
    t0 = time.perf_counter()
    st = _Bm25sStatic([r["text"] for r in rows], [r["session"] for r in rows])
    res["ingest_s"] = time.perf_counter() - t0
    res["events_bulk"] = len(rows)
    del rows
    for q in qs[:10]:
        st.search(q["query"], k=10)
    res["search"] = latency_ms(_time_searches(st, qs, session=False))
    # whole-log queries only (a static index has no session filter)
    res["recall_at_10"] = _recall(st, [dict(q, session=None) for q in qs], list(range(st.n)))
    res["rss"] = report.peak_rss()
    res["rss_at_start"] = rss_start
    res["loadavg_1m_start_end"] = [load_start[0], os.getloadavg()[0]]
    return res


def _slowest(marks: list, probe: StallProbe, n: int = 5) -> list[dict]:
    """The `n` slowest appends: which one (1-based), wall and CPU ms of the appending thread (CPU
    far below wall: it waited, for a lock, the disk or the CPU), whether the system had background
    index work in flight at its start or end (ours; None for a system without any), and the probe's
    worst reading during it (a slow fsync of its own: the disk stalled everyone)."""
    order = sorted(range(len(marks)), key=lambda j: marks[j][1] - marks[j][0], reverse=True)[:n]
    return [{"append": j + 1, "ms": (marks[j][1] - marks[j][0]) * 1e3, "cpu_ms": marks[j][2] * 1e3,
             "background": marks[j][3], "probe": probe.worst_overlap(marks[j][0], marks[j][1])} for j in order]


def _recall(log, qs: list, seqs: list[int]) -> dict | None:
    """Evidence recall@10 of the timed queries that carry evidence (bulk positions -> seqs)."""
    rs = []
    for q in qs:
        ev = q.get("evidence")
        if not ev:
            continue
        got = {h.seq for h in log.search(q["query"], k=10, **_session_kw(log, q["session"]))}
        rs.append(len(got & {seqs[i] for i in ev}) / len(ev))
    return {"recall": sum(rs) / len(rs), "n": len(rs)} if rs else None


def _session_kw(log, session: str | None) -> dict:
    """EventLog.search takes an allowed set `sessions`; the FTS5 peer takes one `session`."""
    if isinstance(log, EventLog):
        return {"sessions": None if session is None else {session}}
    if isinstance(log, _Bm25sStatic):
        return {}
    return {"session": session}


def _time_searches(log, qs, session: bool) -> list[float]:
    out = []
    for q in qs:
        t = time.perf_counter()
        log.search(q["query"], k=10, **_session_kw(log, q["session"] if session else None))
        out.append(time.perf_counter() - t)
    return out


# ------------------------------------------------------------------ quality
def quality(cfg: BenchConfig) -> dict:
    """Only the retrieval-quality part (generated, and LoCoMo when given)."""
    root = Path(tempfile.mkdtemp(prefix="scroll-recall-"))
    try:
        out = {"quality": quality_generated(root / "q", cfg)}
        if cfg.locomo:
            out["quality_locomo"] = quality_locomo(root / "locomo", cfg.locomo)
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def quality_generated(d: Path, cfg: BenchConfig) -> dict:
    c = C.generate(cfg.quality_words, seed=cfg.quality_seed)
    return _quality(d, c.events, c.questions, f"generated seed={cfg.quality_seed}, {c.params['words']:,} words")


def quality_locomo(d: Path, path: str) -> dict:
    events, questions = locomo.load(path)
    return _quality(d, events, questions, f"LoCoMo {Path(path).name}")


def _quality(d: Path, events, questions, name: str, k: int = 10) -> dict:
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    systems = {"ours": R.scroll_searcher(events, d / "ours.db", k=k),
               "fts5": R.fts5_searcher(events, d / "fts5.db", k=k),
               "bm25s recommended (reference)": R.Bm25Searcher(events, R.RECOMMENDED)}
    out = {"dataset": name, "k": k, "events": len(events),
           "questions": sum(1 for q in questions if q.evidence), "systems": {}}
    for sname, fn in systems.items():
        out["systems"][sname] = R.recall_at_k(events, questions, fn, k=k)
    out["reference_config"] = R.RECOMMENDED.label()
    out["ours_minus_fts5_points"] = 100 * (out["systems"]["ours"]["recall"] - out["systems"]["fts5"]["recall"])
    return out


def _main(argv: list[str]) -> None:
    system, d, cfg_json = argv
    raw = json.loads(cfg_json)
    raw["systems"] = tuple(raw["systems"])
    cfg = BenchConfig(**raw)
    res = worker(system, Path(d), cfg)
    (Path(d) / f"result-{system}.json").write_text(json.dumps(res))


if __name__ == "__main__":
    _main(sys.argv[1:])
