"""The machine-stall probe of the search benchmark (scroll/bench/stallprobe.py)."""
from __future__ import annotations

import os
import signal
import time

from scroll.bench.stallprobe import StallProbe


def test_probe_sees_a_stopped_machine_and_places_it(tmp_path):
    """The probe process is frozen for 300 ms (what a hypervisor stall looks like from inside): it
    reports a reading of about that length overlapping the window (a late wake-up, or a slow
    write if the stop came during one: its readings have no gaps), and nothing after it."""
    with StallProbe(tmp_path) as probe:
        time.sleep(0.2)
        os.kill(probe._proc.pid, signal.SIGSTOP)
        t0 = time.perf_counter()
        time.sleep(0.3)
        os.kill(probe._proc.pid, signal.SIGCONT)
        t1 = time.perf_counter()
        time.sleep(0.2)
    r = probe.result
    assert r is not None and r["wakeups"] > 50 and r["fsyncs"] > 5
    assert 250 <= max(r["worst_late_ms"], r["worst_fsync_ms"]) <= 2000
    both = ("late", "fsync")
    assert probe.stalled([(t0 + 0.1, t0 + 0.2), (t1 + 0.15, t1 + 0.16)], kinds=both) == [True, False]
    hit = probe.worst_overlap(t0 + 0.1, t0 + 0.2)
    assert hit is not None and hit["ms"] >= 250
    assert probe.worst_overlap(t1 + 0.15, t1 + 0.16) is None      # after it: the machine ran freely
    assert not list(tmp_path.iterdir())                           # its file and result are removed


def test_overlap_picks_the_worst_reading_in_the_window():
    p = StallProbe(".")
    assert p.worst_overlap(0, 1) is None                           # no probe result: no claim
    p.result = {"slow": [[1.0, 1.01, "late"], [1.005, 1.09, "fsync"], [2.0, 2.5, "late"]]}
    hit = p.worst_overlap(1.02, 1.03)
    assert hit["kind"] == "fsync" and abs(hit["ms"] - 85) < 1e-6
    assert p.worst_overlap(0.5, 0.999) is None
    assert p.worst_overlap(1.0, 3.0)["kind"] == "late"            # the 500 ms one
    spans = [(0.5, 0.999), (0.999, 1.001), (1.02, 1.03), (1.09, 1.5), (1.5, 2.0), (2.4, 2.6), (3, 4)]
    assert p.stalled(spans, kinds=("fsync", "late")) == [False, True, True, False, False, True, False]
    assert p.stalled(spans, kinds=("fsync", "late")) == [p.worst_overlap(a, b) is not None for a, b in spans]
    assert p.stalled(spans) == [False, False, True, False, False, False, False]   # fsyncs only
