"""`Job`: one map (llm_map or agent_map) running in a host worker pool.

The pool is the job's own `concurrency` threads; each takes the next item index, runs
the item's work and stores its record at that index, so results are in item order
whatever the completion order. Nothing runs on the thread that answers `ms`: it only
starts jobs and reads their state (`wait` blocks at most the time it is given).

Every item ends with a record; nothing is dropped:

    {"index": i, "ok": true,  "value": ..., "attempts": n, ...}
    {"index": i, "ok": false, "error": "...", "attempts": n, ...}   # failed after retries,
                                                                      # cancelled, budget spent
When the last item is done the records are written as one JSONL payload (one line per
item, in order) and `on_finish(job)` runs (the engine logs the end record and returns the
unused budget). `in_flight` / `max_in_flight` measure how many items ran at once.
"""
from __future__ import annotations

import json
import threading
import time
from enum import Enum
from typing import Any, Callable

Work = Callable[["Job", int, Any], dict]


class JobState(str, Enum):
    RUNNING = "running"
    DONE = "done"            # every item has a record (some may have failed)
    CANCELLED = "cancelled"  # stopped early: items not run carry error "cancelled"

    def __str__(self) -> str:
        return self.value


CANCELLED_ERROR = "cancelled before it ran"


class Job:
    def __init__(self, job_id: int, op: str, items: list, *, concurrency: int, key: str,
                 cell_bound: bool, payloads: Any, on_finish: Callable[["Job", JobState], None] | None = None):
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.id, self.op, self.items, self.key = job_id, op, items, key
        self.total = len(items)
        self.concurrency = max(1, min(concurrency, self.total or 1))
        self.cell_bound = cell_bound     # a blocking map: cancelled when its cell ends
        self.payloads, self.on_finish = payloads, on_finish
        self.results: list[dict | None] = [None] * self.total
        self.state = JobState.RUNNING
        self.cancelled = threading.Event()
        self.finished = threading.Event()
        self.handle: str | None = None
        self.error: str | None = None    # the job itself failed (e.g. writing the payload)
        self.lock = threading.Lock()
        self._next = 0
        self._live = 0
        self.done = self.ok = self.failed = 0
        self.in_flight = self.max_in_flight = 0
        self.started = time.monotonic()
        self.seconds: float | None = None
        self.threads: list[threading.Thread] = []

    @classmethod
    def restored(cls, job_id: int, op: str, total: int, key: str, handle: str, ok: int, failed: int,
                 state: str, payloads: Any) -> "Job":
        """A finished job rebuilt from its logged end record (replay after a restart)."""
        job = cls(job_id, op, [None] * total, concurrency=1, key=key, cell_bound=False, payloads=payloads)
        job.items, job.results = [], []
        job.handle, job.ok, job.failed, job.done = handle, ok, failed, total
        job.state, job.seconds = JobState(state), 0.0
        job.finished.set()
        return job

    # ---- running --------------------------------------------------------------------------
    def start(self, work: Work, name: str = "scroll-map") -> "Job":
        if not self.total:
            self._finish()
            return self
        self._live = self.concurrency
        for w in range(self.concurrency):
            t = threading.Thread(target=self._worker, args=(work,), name=f"{name}-{self.id}-{w}", daemon=True)
            self.threads.append(t)
            t.start()
        return self

    def _take(self) -> int | None:
        with self.lock:
            if self._next >= self.total:
                return None
            i, self._next = self._next, self._next + 1
            return i

    def _worker(self, work: Work) -> None:
        try:
            while (i := self._take()) is not None:
                if self.cancelled.is_set():
                    self._store(i, {"index": i, "ok": False, "error": CANCELLED_ERROR, "attempts": 0})
                    continue
                with self.lock:
                    self.in_flight += 1
                    self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    rec = work(self, i, self.items[i])
                except Exception as e:  # noqa: BLE001 - an item's failure is its record, never lost
                    rec = {"index": i, "ok": False, "error": f"{type(e).__name__}: {e}", "attempts": 0}
                finally:
                    with self.lock:
                        self.in_flight -= 1
                self._store(i, rec)
        finally:
            with self.lock:
                self._live -= 1
                last = self._live == 0
            if last:
                self._finish()

    def _store(self, i: int, rec: dict) -> None:
        rec["index"] = i
        with self.lock:
            self.results[i] = rec
            self.done += 1
            if rec.get("ok"):
                self.ok += 1
            else:
                self.failed += 1

    def _finish(self) -> None:
        try:
            lines = [json.dumps(r, ensure_ascii=False, default=str) for r in self.results]
            self.handle = self.payloads.put(("\n".join(lines) + "\n" if lines else "").encode("utf-8"))
        except Exception as e:  # noqa: BLE001
            self.error = f"writing the results payload failed: {type(e).__name__}: {e}"
        final = JobState.CANCELLED if self.cancelled.is_set() else JobState.DONE
        self.seconds = time.monotonic() - self.started
        try:
            if self.on_finish is not None:
                self.on_finish(self, final)
        finally:
            self.items = []  # the payload holds the results; the inputs are no longer needed
            # The state turns final only now, with `finished`: a caller that saw it ended could
            # otherwise ask for the results while on_finish (a log append) still ran, and be
            # told the job is still running (seen: a reference program's llm_map ran twice).
            with self.lock:
                self.state = final
                self.finished.set()

    # ---- control --------------------------------------------------------------------------
    def cancel(self) -> None:
        """Items not yet started end as cancelled; running ones finish their current call."""
        self.cancelled.set()

    def wait(self, timeout: float | None) -> bool:
        return self.finished.wait(timeout)

    def status(self) -> dict:
        with self.lock:
            return {"job": self.id, "op": self.op, "state": str(self.state), "total": self.total,
                    "done": self.done, "ok": self.ok, "failed": self.failed, "handle": self.handle,
                    "error": self.error, "concurrency": self.concurrency,
                    "max_in_flight": self.max_in_flight,
                    "seconds": round(self.seconds if self.seconds is not None
                                     else time.monotonic() - self.started, 3)}
