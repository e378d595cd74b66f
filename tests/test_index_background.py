"""Background flushes and bulk imports: appends do not wait for segment writes and merges, the
frozen tail stays searchable, and a SIGKILL during either loses nothing acknowledged."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from scroll import EventLog
from scroll.search import tail as tail_mod   # where tail flushes write their segments


def test_a_full_tail_is_written_in_the_background_while_appends_and_searches_go_on(tmp_path, monkeypatch):
    real = tail_mod.write_segment
    started, release = threading.Event(), threading.Event()

    def slow_write(*a, **k):
        started.set()
        release.wait(10)                      # the writer is stuck until the test lets it go
        return real(*a, **k)
    monkeypatch.setattr(tail_mod, "write_segment", slow_write)
    log = EventLog(tmp_path / "b.db", index_options={"flush_docs": 50, "max_segments": 2})
    log.search("warm")
    for i in range(50):
        log.append(session=f"s{i}", role="user", text=f"apple{i} common")
    assert started.wait(5), "the full tail should be handed to the background writer"
    idx = log.index
    assert idx._job is not None and idx._frozen is not None and idx._frozen.n == 50
    t0 = time.perf_counter()
    for i in range(50, 80):                    # appends go on without waiting for the writer
        log.append(session=f"s{i}", role="user", text=f"apple{i} common")
    assert time.perf_counter() - t0 < 2.0
    hits = log.search("apple3", k=5)           # frozen + live tail are both searched, exactly
    assert [h.seq for h in hits] == [4]
    assert len(log.search("common", k=100)) == 80
    exhaustive = idx.search("common apple7 apple70", k=10, exhaustive=True)
    assert idx.search("common apple7 apple70", k=10) == exhaustive
    release.set()
    idx._install(wait=True)
    assert idx._job is None and idx._frozen is None and len(idx.segments) == 1 and idx.n_tail == 30
    assert len(log.search("common", k=100)) == 80 and [h.seq for h in log.search("apple75")] == [76]
    log.close()
    with EventLog(tmp_path / "b.db", index_options={"flush_docs": 50, "max_segments": 2}) as again:
        assert again.index.n_docs == 80 and [h.seq for h in again.search("apple3")] == [4]


def test_a_failed_background_write_keeps_the_frozen_tail_and_retries(tmp_path, monkeypatch):
    real, calls = tail_mod.write_segment, []

    def flaky(*a, **k):
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk full")
        return real(*a, **k)
    monkeypatch.setattr(tail_mod, "write_segment", flaky)
    log = EventLog(tmp_path / "f.db", index_options={"flush_docs": 20, "max_segments": 4})
    log.search("warm")
    for i in range(20):
        log.append(session=f"s{i}", role="user", text=f"pear{i}")
    log.index._install(wait=True)
    assert log.index._frozen is not None and log.index._frozen.n == 20 and not log.index.segments
    assert [h.seq for h in log.search("pear5")] == [6]
    for i in range(20, 45):                    # after another flush_docs events: retried, then succeeds
        log.append(session=f"s{i}", role="user", text=f"pear{i}")
    log.index._install(wait=True)
    assert len(calls) >= 2 and log.index.segments and log.index.n_docs == 45
    assert [h.seq for h in log.search("pear44")] == [45]


IMPORTER = r"""
import sys
from scroll import EventLog
path, start = sys.argv[1], int(sys.argv[2])
log = EventLog(path, index_options={"flush_docs": 700, "max_segments": 3})
log.search("warm")
print("ready", flush=True)
b = start
while True:
    rows = [{"session": "s%d" % (b % 4), "role": "user", "text": "batch%d row%d filler words here" % (b, j)}
            for j in range(1200)]
    seqs = log.append_many(rows)       # a bulk segment per batch, merges along the way
    log.append(session="t", role="user", text="single%d" % b)   # and the per-event path in between
    print(b, seqs[0], flush=True)
    b += 1
"""


@pytest.mark.slow
def test_sigkill_during_bulk_imports_and_merges_loses_nothing_acknowledged(tmp_path):
    path = tmp_path / "imp.db"
    rng = random.Random(7)
    confirmed: dict[int, int] = {}
    nxt = 0
    for trial in range(12):
        proc = subprocess.Popen([sys.executable, "-c", IMPORTER, str(path), str(nxt)],
                                stdout=subprocess.PIPE, text=True, bufsize=1)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.3, 2.0))
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        lines = out.splitlines()
        if lines and (not out.endswith("\n") or len(lines[-1].split()) != 2):
            lines.pop()
        for line in lines:
            b, first = map(int, line.split())
            confirmed[b] = first
            nxt = max(nxt, b + 1)
    assert len(confirmed) >= 5, "the importer should have made progress"
    with EventLog(path, index_options={"flush_docs": 700, "max_segments": 3}) as log:
        for b, first in confirmed.items():               # every acknowledged batch, whole
            assert log.expand(first).text == f"batch{b} row0 filler words here"
            assert log.expand(first + 1199).text == f"batch{b} row1199 filler words here"
        for b in rng.sample(sorted(confirmed), min(6, len(confirmed))):
            # row17 itself, or row18 (which indexes row17 as its previous turn), first
            assert confirmed[b] + 17 in [h.seq for h in log.search(f"batch{b} row17", k=2)]
        assert log.index.n_docs == log.max_seq()         # the index caught up with everything
        assert log.verify()["ok"]
        log.index.flush()                                # a manifest write sweeps what crashes left
        names = {p.name for p in (tmp_path / "imp.db.index").iterdir()}
        assert not any(n.startswith(".tmp-") for n in names)
        assert {n for n in names if n.startswith("seg-")} == {s.path.name for s in log.index.segments}


def test_appends_do_not_wait_for_a_flush_that_has_written_its_manifest(tmp_path, monkeypatch):
    """Between our flush's manifest write and its end (it deletes the merged-away segments then),
    an append that sees the new manifest recognises it as our own and goes on; the flush is
    installed by a later call."""
    import shutil

    from scroll.search import store as store_mod

    real_rmtree, in_delete, release = shutil.rmtree, threading.Event(), threading.Event()

    def slow_rmtree(path, *a, **k):
        if threading.current_thread().name == "scroll-index-flush":
            in_delete.set()
            release.wait(10)
        return real_rmtree(path, *a, **k)
    monkeypatch.setattr(store_mod.shutil, "rmtree", slow_rmtree)
    log = EventLog(tmp_path / "w.db", index_options={"flush_docs": 20, "max_segments": 1})
    log.search("warm")
    for i in range(20):                        # the first flush: one segment, nothing merged away
        log.append(session="s", role="user", text=f"pear{i} common")
    log.index._install(wait=True)
    for i in range(20, 40):                    # the second: merged with the first, which is deleted
        log.append(session="s", role="user", text=f"pear{i} common")
    assert in_delete.wait(5), "the second flush should merge and delete the merged-away segments"
    idx = log.index
    job = idx._job
    assert job is not None and not job.done.is_set() and job.stamp == idx._stamp()
    t0 = time.perf_counter()
    for i in range(40, 45):
        log.append(session="s", role="user", text=f"pear{i} common")
    assert time.perf_counter() - t0 < 2.0 and idx._job is job and not job.done.is_set()
    assert len(log.search("common", k=100)) == 45 and [h.seq for h in log.search("pear7")] == [8]
    release.set()
    job.done.wait(5)
    log.append(session="s", role="user", text="pear45 common")   # installs the finished flush
    assert idx._job is None and len(idx.segments) == 1 and idx.segments[0].n_docs == 40
    assert [h.seq for h in log.search("pear41")] == [42] and len(log.search("common", k=100)) == 46
    log.close()


def test_an_append_right_after_the_manifest_rename_knows_the_flush_as_its_own(tmp_path, monkeypatch):
    """The flush learns its manifest's stamp before the rename: an append that sees the new
    manifest at once (before the flush thread runs on) never waits for the rest of the job.
    Here the flush thread stops right after its rename until three appends are done (or 3 s)."""
    from scroll.search import store as store_mod

    real_replace, renamed, appended = os.replace, threading.Event(), threading.Event()

    def replace_then_pause(src, dst, *a, **k):
        real_replace(src, dst, *a, **k)
        if threading.current_thread().name == "scroll-index-flush" and str(dst).endswith(store_mod.MANIFEST):
            renamed.set()
            appended.wait(3)
    monkeypatch.setattr(store_mod.os, "replace", replace_then_pause)
    log = EventLog(tmp_path / "r.db", index_options={"flush_docs": 20, "max_segments": 1})
    log.search("warm")
    for i in range(20):
        log.append(session="s", role="user", text=f"plum{i} common")
    assert renamed.wait(5), "the tail flush should write its manifest"
    idx, job = log.index, log.index._job
    assert job is not None and not job.done.is_set() and job.stamp == idx._stamp()
    t0 = time.perf_counter()
    for i in range(20, 23):
        log.append(session="s", role="user", text=f"plum{i} common")
    waited = time.perf_counter() - t0
    appended.set()
    assert waited < 1.0 and idx._job is job, f"the appends waited {waited:.2f} s for their own flush"
    job.done.wait(5)
    assert len(log.search("common", k=100)) == 23 and idx._job is None and idx.segments[0].n_docs == 20
    log.close()


def test_a_bulk_write_returns_before_its_merge_and_the_next_one_waits_for_it(tmp_path, monkeypatch):
    """A bulk append leaves more than max_segments segments: they are merged in a background
    thread; searches meanwhile read the unmerged segments, exactly; the next bulk write computes
    its postings and then waits for the merge; close waits for it too."""
    from scroll.search import upkeep

    real = upkeep.merge_segments
    started, release = threading.Event(), threading.Event()

    def slow_merge(*a, **k):
        started.set()
        release.wait(10)
        return real(*a, **k)
    monkeypatch.setattr(upkeep, "merge_segments", slow_merge)
    opts = {"flush_docs": 1000, "max_segments": 2}

    def rows(b):
        return [{"session": f"s{b}", "role": "user", "text": f"batch{b} row{i} common"} for i in range(1000)]
    log = EventLog(tmp_path / "m.db", index_options=opts)
    log.search("warm")
    for b in range(2):
        log.append_many(rows(b))
    idx = log.index
    assert not started.is_set() and len(idx.segments) == 2
    t0 = time.perf_counter()
    log.append_many(rows(2))                              # a third segment: over max_segments
    assert started.wait(5) and time.perf_counter() - t0 < 5
    assert idx._job is not None and idx._job.frozen is None
    assert [h.seq for h in log.search("batch2 row7", k=1)] == [2008]
    assert len(idx.segments) == 3
    assert idx.search("common batch1 row5", k=10) == idx.search("common batch1 row5", k=10, exhaustive=True)
    done = threading.Event()
    writer = threading.Thread(target=lambda: (log.append_many(rows(3)), done.set()))
    writer.start()
    assert not done.wait(0.5), "the next bulk write waits for the merge in flight"
    release.set()
    writer.join(10)
    assert done.is_set()
    log.close()                                           # waits for the last merge
    assert idx._job is None and len(idx.segments) <= 2
    with EventLog(tmp_path / "m.db", index_options=opts) as again:
        assert again.index.n_docs == 4000 and len(again.index.segments) <= 2
        assert [h.seq for h in again.search("batch3 row999", k=1)] == [4000]
        names = {p.name for p in (tmp_path / "m.db.index").iterdir() if p.name.startswith("seg-")}
        assert names == {s.path.name for s in again.index.segments}


class _FreedWhere:
    """Records the thread that frees it (a stand-in for one of a tail's posting arrays)."""
    where: list[str] = []

    def __del__(self):
        _FreedWhere.where.append(threading.current_thread().name)


def test_the_append_that_takes_a_flushed_segment_into_use_does_not_free_the_frozen_tail(tmp_path):
    """A frozen tail holds tens of thousands of small arrays; freed by the append that installs
    its segment, they cost that append 28-48 ms of CPU (10 M chat words). They are freed in a
    background thread instead, and the frozen tail's maps end up empty."""
    log = EventLog(tmp_path / "r.db", index_options={"flush_docs": 50, "max_segments": 4})
    log.search("warm")
    for i in range(50):
        log.append(session="s", role="user", text=f"pear{i} common")
    idx = log.index
    frozen = idx._frozen
    assert idx._job is not None and frozen is not None
    _FreedWhere.where = []
    for s in range(len(frozen.post)):           # one marker per shard, next to the real arrays
        frozen.post[s][-1] = _FreedWhere()
    idx._job.done.wait(10)
    log.append(session="s", role="user", text="pear50 common")   # installs the segment
    assert idx._frozen is None and idx._job is None and len(idx.segments) == 1
    deadline = time.time() + 10
    while len(_FreedWhere.where) < len(frozen.post) and time.time() < deadline:
        time.sleep(0.01)
    assert _FreedWhere.where == ["scroll-index-release"] * len(frozen.post)
    assert not any(frozen.post) and not any(frozen.n_post)
    assert [h.seq for h in log.search("pear7")] == [8] and len(log.search("common", k=100)) == 51
    log.close()


@pytest.mark.parametrize("arr", [
    np.arange(300_000, dtype="uint32"), np.arange(70_000, dtype="int64"), np.random.default_rng(0).random(200_000),
    np.array([f"2024-05-{i % 28 + 1:02d}T10:00:00" for i in range(20_000)], dtype="<U64"),
    np.zeros(0, dtype="uint32"), np.arange(10, dtype="uint32")])
def test_a_paced_array_write_is_np_save_byte_for_byte_synced_a_mib_at_a_time(tmp_path, monkeypatch, arr):
    from scroll.search import segment
    syncs = []
    real = os.fdatasync
    monkeypatch.setattr(segment.os, "fdatasync", lambda fd: (syncs.append(fd), real(fd)))
    segment.save_array(tmp_path / "paced.npy", arr, paced=True)
    np.save(tmp_path / "plain.npy", arr, allow_pickle=False)
    assert (tmp_path / "paced.npy").read_bytes() == (tmp_path / "plain.npy").read_bytes()
    assert np.array_equal(np.load(tmp_path / "paced.npy"), arr)
    pieces = -(-arr.nbytes // segment.PACE_BYTES)
    assert len(syncs) == (pieces if arr.nbytes > segment.PACE_BYTES else 0)


def test_background_flushes_and_merges_write_paced_and_bulk_imports_do_not(tmp_path, monkeypatch):
    """Through EventLog: the segments a background flush or merge writes are synced piece by
    piece from the flush thread (the append path's commits then never wait behind a whole
    segment's writeback); an import's own segment writes are not paced (its ingest time)."""
    from scroll.search import segment
    monkeypatch.setattr(segment, "PACE_BYTES", 4096)
    paced_threads = []
    real = segment.save_array

    def spy(path, arr, paced=False):
        if paced:
            paced_threads.append(threading.current_thread().name)
        return real(path, arr, paced)
    monkeypatch.setattr(segment, "save_array", spy)
    log = EventLog(tmp_path / "p.db", index_options={"flush_docs": 300, "max_segments": 2})
    log.append_many([{"session": f"s{i % 7}", "role": "user", "text": f"bulk{i} word{i % 50} " * 20}
                     for i in range(3000)])
    log.index.settle()
    assert paced_threads.count("MainThread") == 0
    before = len(paced_threads)
    for i in range(1300):                       # four tail flushes, each with merges
        log.append(session=f"s{i % 5}", role="user", text=f"live{i} word{i % 40} " * 30)
    log.index.settle()
    assert len(paced_threads) > before and set(paced_threads[before:]) <= {"scroll-index-flush", "scroll-index-merge"}
    fresh = EventLog(tmp_path / "p.db", readonly=True)
    assert [h.seq for h in fresh.search("live1299", k=3)] == [h.seq for h in log.search("live1299", k=3)] == [4300]


def test_write_manifest_gives_the_new_stamp_before_the_rename(tmp_path):
    from scroll.search.store import manifest_stamp, write_manifest
    seen = []
    first = write_manifest(tmp_path, {"v": 1}, [], covered_seq=0, vocab_size=0, generation=1)
    stamp = write_manifest(tmp_path, {"v": 1}, [], covered_seq=5, vocab_size=3, generation=2,
                           before_replace=lambda s: seen.append((s, manifest_stamp(tmp_path))))
    assert seen == [(stamp, first)] and stamp == manifest_stamp(tmp_path) != first
