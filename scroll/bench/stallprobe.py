"""A machine-stall probe for the timed appends: is a slow append the engine's, or the machine's?

A durable commit waits for an fsync, and this VM's disk now and then stops for tens to hundreds of
milliseconds; every engine in the same run meets it (results/bench/search-13m-long.json at
5896779: ours 222.9 ms, FTS5 929.5 ms, the probe's own fdatasync 204 / 908 ms at those moments,
each append with ~2 ms of CPU). The probe is a separate process that, while one system runs its
appends, does two small things on its own and keeps the times of the slow ones:

- sleeps 2 ms at a time: a wake-up much later than asked means this machine did not run a
  ready process (the hypervisor took the CPU, or both cores were busy);
- every 20 ms overwrites 4 KiB in place in a preallocated file on the same disk and fdatasyncs
  it (in place: no size change, so no journal commit of its own): a slow one means the disk
  made every durable write wait then.

Its load is small and the same for every system (~500 wake-ups and 50 4-KiB writes a second).
The worker then states, for each of its slowest appends, the worst probe reading that overlapped
it (`worst_overlap`). Times are `time.perf_counter()` (CLOCK_MONOTONIC: one clock for both
processes on Linux).

    python -m scroll.bench.stallprobe DIR     # runs until its stdin closes; then writes
                                              # DIR/stallprobe.json and exits
"""
from __future__ import annotations

import bisect
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

SLEEP_S = 0.002
FSYNC_EVERY_S = 0.020
REPORT_OVER_S = 0.005      # kept: a wake-up this late, an fsync this slow
_BLOCK = 4096
_SLOTS = 256               # the file: 1 MiB, overwritten round-robin


def probe(directory: Path, stop: threading.Event, ready: threading.Event | None = None) -> dict:
    """Run until `stop` is set (`ready` is set once its file is written and synced). Returns the
    slow readings as [start, end, kind] ("late": a wake-up, from when it was due; "fsync": a
    4 KiB pwrite + fdatasync) and how many readings of each kind there were."""
    path = Path(directory) / "stallprobe.bin"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    slow: list[list] = []
    n_sleep = n_sync = 0
    worst = {"late": 0.0, "fsync": 0.0}
    try:
        block = os.urandom(_BLOCK)
        os.pwrite(fd, block * _SLOTS, 0)
        os.fsync(fd)                          # allocated and on disk before the first reading
        if ready is not None:
            ready.set()
        # gapless: each reading starts where the last one ended, so a stall at any moment shows up
        # in one of them (in the write's reading if it came during pwrite + fdatasync)
        prev = next_sync = time.perf_counter()
        slot = 0
        while not stop.is_set():
            time.sleep(SLEEP_S)
            woke = time.perf_counter()
            n_sleep += 1
            late = woke - (prev + SLEEP_S)
            worst["late"] = max(worst["late"], late)
            if late > REPORT_OVER_S:
                slow.append([prev + SLEEP_S, woke, "late"])
            prev = woke
            if woke >= next_sync:
                os.pwrite(fd, block, slot * _BLOCK)
                slot = (slot + 1) % _SLOTS
                os.fdatasync(fd)
                e = time.perf_counter()
                n_sync += 1
                worst["fsync"] = max(worst["fsync"], e - woke)
                if e - woke > REPORT_OVER_S:
                    slow.append([woke, e, "fsync"])
                prev = e
                next_sync = e + FSYNC_EVERY_S
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    return {"slow": slow, "wakeups": n_sleep, "fsyncs": n_sync,
            "worst_late_ms": worst["late"] * 1e3, "worst_fsync_ms": worst["fsync"] * 1e3}


class StallProbe:
    """`with StallProbe(dir) as p: ...timed work...`; then `p.result` (probe's dict, or None when
    the probe could not run: the measurement goes on without it) and `p.worst_overlap(s, e)`."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.result: dict | None = None
        self._proc: subprocess.Popen | None = None

    def __enter__(self) -> "StallProbe":
        self._proc = subprocess.Popen([sys.executable, "-m", "scroll.bench.stallprobe", str(self.directory)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self._proc.stdout.readline()   # the probe's file is written and synced: start timing
        if ready.strip() != "ready":
            self._proc.kill()
            self._proc.wait()
            self._proc = None
        return self

    def __exit__(self, *exc) -> None:
        if self._proc is None:
            return
        self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
            return
        out = self.directory / "stallprobe.json"
        if self._proc.returncode == 0 and out.exists():
            self.result = json.loads(out.read_text())
            out.unlink()

    def stalled(self, spans: list[tuple[float, float]], kinds: tuple[str, ...] = ("fsync",)) -> list[bool] | None:
        """For each (start, end): did a slow probe reading of one of `kinds` overlap it? By default
        only the probe's slow fdatasyncs (the disk stopped); a late wake-up may be the measured
        system's own threads using both cores. None: no probe result."""
        if self.result is None:
            return None
        slow = sorted((s, e) for s, e, kind in self.result["slow"] if kind in kinds)
        starts = [s for s, _ in slow]
        reach, best = [], float("-inf")      # reach[i]: the latest end among the first i + 1 readings
        for _, e in slow:
            best = max(best, e)
            reach.append(best)
        out = []
        for a, b in spans:                   # some reading has s < b and e > a
            i = bisect.bisect_left(starts, b)
            out.append(i > 0 and reach[i - 1] > a)
        return out

    def worst_overlap(self, start: float, end: float) -> dict | None:
        """The probe's slowest reading overlapping [start, end] (perf_counter seconds), or None."""
        if self.result is None:
            return None
        best = None
        for s, e, kind in self.result["slow"]:
            if s < end and e > start and (best is None or e - s > best[1] - best[0]):
                best = (s, e, kind)
        return None if best is None else {"kind": best[2], "ms": (best[1] - best[0]) * 1e3}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    directory = Path(argv[0])
    stop, ready = threading.Event(), threading.Event()
    box: dict = {}
    th = threading.Thread(target=lambda: box.update(probe(directory, stop, ready)), daemon=True)
    th.start()
    while not ready.wait(0.05):
        if not th.is_alive():
            return 1
    print("ready", flush=True)
    sys.stdin.read()                         # until the parent closes our stdin
    stop.set()
    th.join()
    if not box:                              # the probe failed: no file, the worker goes on without
        return 1
    (directory / "stallprobe.json").write_text(json.dumps(box))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
