"""Segment upkeep of the search index: the live tail written as a segment (in a background
thread when an append fills it, so that append never waits), merges down to `max_segments`,
and the per-doc arrays of the segments. A mixin of SearchIndex (index.py), which holds the
state these methods read and set; kept apart so that each file says one thing.

Background flushes: the full tail is frozen (searches keep reading it), a thread writes it as a
segment, merges, and writes the manifest under the directory lock, reading only its FlushJob;
the next add or search installs the result (`_install`). A failed write keeps the frozen tail
in memory and is retried after another `flush_docs` documents; another process's rewrite of
the index meanwhile (ForeignChange) drops the job's result: the reload re-reads everything.
"""
from __future__ import annotations

import logging
import threading

import numpy as np

from .segment import _FIELDS, Segment, merge_segments
from .store import append_vocab, dir_lock
from .tail import FlushJob, ForeignChange, release_in_background, static_with

logger = logging.getLogger("scroll.search.index")


class SegmentUpkeep:
    # --------------------------------------------------- background flushes
    def _flush_from_add(self) -> None:
        """The tail is full: freeze it and write it as a segment (then merge) in a background
        thread, so the append that filled it does not wait. Searches keep reading the frozen
        tail until the segment is installed (`_install`, at the next add or search). Inside a
        locked section (a catch-up during a flush) the write is done here, synchronously."""
        if self._lock_fh is not None:
            try:
                self._flush_locked()
                self._write_manifest()
            except Exception as e:  # noqa: BLE001 - the tail stays correct; segments are an optimisation
                self._flush_failed(e)
            return
        if self._frozen is None:
            self._frozen, self._tail = self._tail, self._new_tail()
            self._epoch += 1
        n = len(self.vocab)
        job = FlushJob(self._frozen, list(self.segments), self._static, self._manifest_stamp, self.generation,
                        self.vocab_persisted, n, self.vocab.terms[self.vocab_persisted:n])
        self._job = job
        threading.Thread(target=self._flush_worker, args=(job,), name="scroll-index-flush", daemon=True).start()

    def _merge_on_schedule(self) -> None:
        """More than max_segments segments (a bulk write leaves them so): merge them in a
        background thread, as a flush job with no tail to write, so that the bulk append returns
        without waiting for the merge (the next bulk write or flush waits for it instead, after
        computing its postings; searches meanwhile read the unmerged segments). Inside a locked
        section the merge is done here."""
        if len(self.segments) <= self.max_segments or self._job is not None or self.readonly:
            return
        if self._lock_fh is not None:       # inside a locked section (a catch-up): merge here
            self._maybe_merge()
            return
        job = FlushJob(None, list(self.segments), self._static, self._manifest_stamp, self.generation,
                       self.vocab_persisted, self.vocab_persisted, [])
        self._job = job
        threading.Thread(target=self._flush_worker, args=(job,), name="scroll-index-merge", daemon=True).start()

    def _flush_failed(self, e: BaseException) -> None:
        self._flush_retry_at = self.n_tail + self.flush_docs
        logger.warning("%s: could not write an index segment (%s: %s); the tail stays in memory, "
                       "retried after %d more events", self.path, type(e).__name__, e, self.flush_docs)

    def _flush_worker(self, job: FlushJob) -> None:
        """Background: write the frozen tail (if any) as a segment, merge, write the manifest,
        and prepare the new per-doc arrays. Reads only what the job holds; sets no attribute."""
        try:
            with dir_lock(self.path):
                if self._stamp() != job.base_stamp:
                    raise ForeignChange()
                segs = list(job.base_segments)
                if job.frozen is not None:
                    path = job.frozen.write(self.path, job.n_terms, paced=True)
                    append_vocab(self.path, job.vocab_persisted, job.new_terms)
                    segs.append(Segment.load(path))
                segs = self._merged(segs, job.n_terms, paced=True)
                # everything is ready before the manifest write: an append that sees the new manifest
                # before `done` knows it by the job's stamp and goes on (_check_manifest)
                job.static = static_with(job.base_static, job.frozen, segs)
                job.segments = segs
                # the stamp is the job's before the new manifest is in place: an append that sees it
                # never waits for the rest of this job (the deletes of merged-away segments)
                job.stamp = self._write_manifest_file(segs, segs[-1].last_seq, job.n_terms, job.generation + 1,
                                                      before_replace=lambda stamp: setattr(job, "stamp", stamp))
        except BaseException as e:  # noqa: BLE001 - reported to the main thread by _install
            job.error = e
        finally:
            job.done.set()

    def _install(self, *, wait: bool) -> None:
        """Take a finished background flush into use (or, `wait`, wait for it first)."""
        job = self._job
        if job is None or (not wait and not job.done.is_set()):
            return
        job.done.wait()
        self._job = None
        if job.error is not None:
            if isinstance(job.error, ForeignChange):        # a foreign change: the reload re-reads all
                pass
            elif job.frozen is None:                        # the segments stay as they are, unmerged
                logger.warning("%s: a background merge of the index segments failed (%s: %s); merged at "
                               "the next write", self.path, type(job.error).__name__, job.error)
            else:
                self._flush_failed(job.error)
            return
        self.segments, self.covered_seq = job.segments, job.segments[-1].last_seq
        self.generation, self.vocab_persisted = job.generation + 1, job.n_terms
        self._static = job.static
        if job.frozen is not None:
            self._frozen = None
            release_in_background(job.frozen)   # its many small arrays are freed off this append
        self._manifest_stamp = job.stamp
        self._epoch += 1

    # ----------------------------------------------------------- segments
    def flush(self) -> None:
        """Write the live tail as a segment now (e.g. after an import, or on close); waits for a
        background flush first."""
        self.sync()
        self._install(wait=True)
        if self.n_tail == 0 or self.readonly:
            return
        with self._locked():
            if self._stamp() != self._manifest_stamp:
                self._reload_after_foreign_flush()
            if self.n_tail:
                self._flush_locked()
                self._write_manifest()

    def _flush_locked(self) -> None:
        """Synchronously write what is in memory (a frozen tail left by a failed background
        write, then the live tail) as segments. No background flush may be in flight."""
        for which in ("_frozen", "_tail"):
            tail = getattr(self, which)
            if tail is None or not tail.n:
                continue
            # on failure the tail still holds these documents
            self._append_segment(lambda: tail.write(self.path, len(self.vocab)))
            self._rebuild_static()
            setattr(self, which, None if which == "_frozen" else self._new_tail())
            self._epoch += 1
        self._reset_tail()

    def _append_segment(self, write, merge: bool = True) -> None:
        """`write()` writes a segment (under the lock) and returns its path: persist the new
        vocabulary, take the segment, merge on schedule (`merge=False`: the caller merges, in the
        background). On any failure the segments, covered seq and persisted vocabulary are as
        before (a manifest a merge already wrote is picked up by the next sync)."""
        saved = (list(self.segments), self.covered_seq, self.vocab_persisted)
        try:
            path = write()
            self._persist_vocab()
            self.segments.append(Segment.load(path))
            self.covered_seq = self.segments[-1].last_seq
            if merge:
                self._maybe_merge()
        except BaseException:
            self.segments, self.covered_seq, self.vocab_persisted = saved
            raise

    def _maybe_merge(self) -> None:
        self.segments = self._merged(self.segments, len(self.vocab), self._write_manifest_now)

    def _write_manifest_now(self, segments: list) -> None:
        self.segments = segments
        self._write_manifest()

    def _merged(self, segments: list, n_terms: int, after_each=None, paced: bool = False) -> list:
        """Merge adjacent pairs (the smallest first) until at most max_segments remain. The
        replaced segments are deleted by the next manifest write (which no longer names them).
        `paced`: a background merge (`write_segment`)."""
        segs = list(segments)
        while len(segs) > self.max_segments:
            sizes = [a.n_docs + b.n_docs for a, b in zip(segs, segs[1:])]
            i = int(np.argmin(sizes))
            segs[i:i + 2] = [Segment.load(merge_segments(self.path, segs[i:i + 2], n_terms=n_terms, paced=paced))]
            if after_each is not None:
                after_each(segs)
        return segs

    def _rebuild_static(self) -> None:
        self._epoch += 1
        if not self.segments:
            self._static = None
            return
        offsets, n = [], 0
        for s in self.segments:
            offsets.append(n)
            n += s.n_docs
        fields = {}
        for field in _FIELDS:
            parts = []
            for s in self.segments:
                remap = np.array([self._code(field, v) for v in s.strings[field]], dtype=np.int32)
                parts.append(remap[np.asarray(s.local(field))])
            fields[field] = np.concatenate(parts)
        self._static = {
            "n": n, "offsets": offsets,
            "dl": np.concatenate([np.asarray(s.dl, dtype=np.float64) for s in self.segments]),
            "seqs": np.concatenate([np.asarray(s.seqs) for s in self.segments]),
            "times": np.concatenate([s.times for s in self.segments]),
            **fields,
        }
        self._static["len_sum"] = float(self._static["dl"].sum())


__all__ = ["SegmentUpkeep"]
