"""BM25 search over the event log: immutable segments + an in-memory live tail.

Design (why not one bm25s index): bm25s cannot add documents or take outside corpus
statistics, and per-segment bm25s indexes score with per-segment statistics that drift.
Here every segment keeps raw postings (term frequencies and document lengths), and a
query is scored over all segments and the tail with GLOBAL N, document frequency and
average length, using bm25s's default formula (Lucene BM25):

    idf = ln(1 + (N - df + 0.5) / (df + 0.5))
    score(d) = sum over query terms t of  idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))

with bm25s's own tokenization (see tokens.py). The result is the ranking of one bm25s
index over all events, whatever the segmentation; a test checks it against bm25s.

* Freshness: before each search the index reads the log's highest `seq` and pulls any
  newer events (appended by this or another process) into the tail.
* Upkeep (upkeep.py): when the tail reaches `flush_docs` documents it is written as a
  segment by a background thread (the append that filled it does not wait); when there are
  more than `max_segments`, the adjacent pair with the fewest documents is merged, under
  the directory lock. A big batch (`append_many`, an import, a rebuild) becomes a segment
  directly (bulk.py), its words split in a helper process while the commit runs (splitter.py).
* Persistence: `<db>.index/` holds the manifest, the vocabulary and the segments. The
  log is the truth: a missing, foreign (other log id), inconsistent or differently
  configured (or older-format) index is rebuilt from the log. `readonly=True` never
  creates or writes the directory: a valid index there is used, else the whole log is
  indexed in memory (the tail), and nothing is flushed.
* Faults: a failed segment write leaves the tail in memory (its arrays grow) and is
  retried after another `flush_docs` documents; searches stay exact meanwhile.
* Queries (query.py): a term's postings in all segments are joined, ready for scoring, from
  its second use on and kept until the segments change (PARTS_CACHE postings at most).
* Budgets: a query's terms are counted first, and each distinct term's postings are
  fetched and scored once, weighted by its count (exactly bm25s's sum over occurrences).
* Determinism: hits are ordered by score, ties by `seq` newest first; a hit never has
  score 0 (a query with no matching term returns []).
"""
from __future__ import annotations

import logging
import os
import shutil
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from .documents import DEFAULT_MODEL, PREV_CHARS, TIME_CHARS, DocModel, IndexDoc
from .bulk import BulkBatch, BulkTokens
from .segment import _FIELDS, Segment, write_segment
from .store import append_vocab, dir_lock, manifest_stamp, read_manifest, write_manifest
from .tail import FlushJob, Tail
from .tokens import QUESTION_WORDS, Tokenizer
from .topk import Part, Scratch
from .query import IndexQuery
from .upkeep import SegmentUpkeep
from .vocab import Vocabulary

BULK_MIN_DOCS = 1000  # a batch at least this big is written as a segment directly (bulk.py)
FORMAT = 4  # 2: an origin column; 3: BM25F doc model (weighted postings); 4: per-term pruning bounds
# (separate fields need no new format: their terms are ordinary postings, and the doc model's
# spec, part of the manifest's params, names them)
logger = logging.getLogger(__name__)


class SearchIndex(IndexQuery, SegmentUpkeep):
    def __init__(
        self,
        path: str | os.PathLike,
        *,
        log_id: str,
        fetch_after: Callable[[int, int], list[IndexDoc]],
        max_seq: Callable[[], int],
        prev_text: Callable[[str, int], str] | None = None,
        k1: float = 1.5,  # k1 1.5 / b 0.85: on the tune seeds at the sets' full size (scripts/tune_k1b.py)
        b: float = 0.85,
        doc_model: DocModel = DEFAULT_MODEL,
        drop_question_words: bool = True,
        flush_docs: int = 5_000,  # 20 k -> 5 k: a reopened index replays at most this many events from the
        # log, a flush job is short (~0.15 s for 5 k long messages here), and a tail search reads fewer postings
        max_segments: int = 4,  # 8 -> 4: each query term is looked up in every segment (10 M words of
        # chat, first queries p50 1.44 -> 0.85 ms here); a sort-free merge made the extra merging cheap
        readonly: bool = False,
    ):
        self.path = Path(path)
        self.readonly = bool(readonly)  # never create or write the index directory
        self.log_id = log_id
        self._fetch_after = fetch_after
        self._max_seq = max_seq
        self.k1, self.b = float(k1), float(b)
        if not isinstance(doc_model, DocModel):
            raise TypeError("doc_model must be a scroll.search.documents.DocModel")
        self.doc_model = doc_model
        self.fields = doc_model.fields
        self.k1_eff = self.k1 * doc_model.scale  # postings hold scale * BM25F's weighted tf
        self._separate = doc_model.separate_weights   # separate fields: raw tf, the plain k1, b = 0
        self._prev_text = prev_text or (lambda session, seq: "")
        self.query_drop = QUESTION_WORDS if drop_question_words else frozenset()
        self.flush_docs = int(flush_docs)
        self.max_segments = int(max_segments)
        self.tok = Tokenizer()
        self._bulk = BulkTokens(self.tok)
        self.params = {
            "format": FORMAT, "k1": self.k1, "b": self.b, "doc_model": doc_model.spec(),
            "tokenizer": Tokenizer.spec, "prev_chars": PREV_CHARS,
        }
        self._manifest_stamp: tuple | None = None
        self._lock_fh = None
        self._col_cache: dict[str, tuple] = {}
        self._epoch = 0  # bumped whenever segments or the tail arrays are replaced
        self.last_query_stats: dict = {}  # how the last search ran (topk.TopK.stats)
        self._scratch = Scratch()   # the queries' work arrays (one search at a time: EventLog's lock)
        self._parts_cache: OrderedDict[int, tuple[list[Part], int]] = OrderedDict()  # tid -> segment postings, df
        self._parts_epoch, self._parts_postings = -1, 0
        self._parts_seen: set[int] = set()   # terms asked for once since the segments changed
        self._load_or_rebuild()

    # ----------------------------------------------------------------- state
    def _reset_memory(self) -> None:
        self.vocab = Vocabulary()
        self.vocab_persisted = 0
        self.segments: list[Segment] = []
        self.covered_seq = 0  # highest seq held in segments
        self.generation = 0
        self._strings: dict[str, dict[str, int]] = {f: {} for f in _FIELDS}
        self._static = None  # concatenated per-doc arrays of the segments
        self._last_text: dict[str, str] = {}  # session -> its latest indexed text (capped)
        self._job: FlushJob | None = None    # a background flush in flight (its result is ignored now)
        self._reset_tail()

    def _new_tail(self) -> Tail:
        return Tail(min(self.flush_docs + 1, 1 << 16))

    def _reset_tail(self) -> None:
        """Empty the in-memory part (its documents are in segments now)."""
        self._epoch += 1
        self.seen_seq = self.covered_seq
        self._tail = self._new_tail()
        self._frozen: Tail | None = None   # being written in the background (or after a failed write)
        self._flush_retry_at = 0  # after a failed flush, the tail size at which to try again

    @property
    def n_tail(self) -> int:
        """Documents held in memory only (the live tail and a frozen one being written)."""
        return self._tail.n + (self._frozen.n if self._frozen else 0)

    @property
    def tail_len_sum(self) -> int:
        return self._tail.len_sum + (self._frozen.len_sum if self._frozen else 0)

    @property
    def n_docs(self) -> int:
        return self._static_n + self.n_tail

    @property
    def _static_n(self) -> int:
        return self._static["n"] if self._static else 0

    def _tails(self) -> list[tuple[int, Tail]]:
        """(offset, tail) of the in-memory parts, in doc-number order."""
        out, off = [], self._static_n
        for t in (self._frozen, self._tail):
            if t is not None and t.n:
                out.append((off, t))
                off += t.n
        return out

    def _code(self, field: str, value: str) -> int:
        table = self._strings[field]
        code = table.get(value)
        if code is None:
            code = table[value] = len(table)
        return code

    # ----------------------------------------------------------- persistence
    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Exclusive lock on the index directory across processes (re-entrant here)."""
        if self.readonly:
            raise RuntimeError("a read-only index never writes its directory")
        if self._lock_fh is not None:
            yield
            return
        with dir_lock(self.path):
            self._lock_fh = True
            try:
                yield
            finally:
                self._lock_fh = None

    def _stamp(self) -> tuple | None:
        return manifest_stamp(self.path)

    def _read_manifest(self) -> dict | None:
        return read_manifest(self.path)

    def _write_manifest(self) -> None:
        self.generation += 1
        self._manifest_stamp = self._write_manifest_file(self.segments, self.covered_seq, self.vocab_persisted,
                                                         self.generation)

    def _write_manifest_file(self, segments: list, covered_seq: int, vocab_size: int, generation: int,
                             before_replace=None) -> tuple | None:
        """Atomically replace the manifest; returns its new stamp. Touches no attribute."""
        return write_manifest(self.path, {**self.params, "log_id": self.log_id}, segments, covered_seq,
                              vocab_size, generation, before_replace)

    def _persist_vocab(self) -> None:
        """Append the terms that got ids since the last flush to vocab.txt (in id order)."""
        n = len(self.vocab)
        append_vocab(self.path, self.vocab_persisted, self.vocab.terms[self.vocab_persisted:n])
        self.vocab_persisted = n

    def _try_load(self) -> bool:
        m = self._read_manifest()
        if not m or m.get("log_id") != self.log_id:
            return False
        if any(m.get(k) != v for k, v in self.params.items()):
            return False
        if m["covered_seq"] > self._max_seq():
            return False
        try:
            with open(self.path / "vocab.txt", encoding="utf-8") as fh:
                terms = [line.rstrip("\n") for _, line in zip(range(m["vocab_size"]), fh)]
            if len(terms) != m["vocab_size"]:
                return False
            segs = [Segment.load(self.path / name) for name in m["segments"]]
        except (OSError, ValueError, KeyError):  # a JSONDecodeError is a ValueError
            return False
        last = 0
        for s in segs:  # segments must be in seq order and not overlap
            if s.first_seq <= last:
                return False
            last = s.last_seq
        if last != m["covered_seq"]:
            return False
        self._reset_memory()
        self.vocab = Vocabulary(terms)
        self.vocab_persisted = len(terms)
        self.segments = segs
        self.covered_seq = m["covered_seq"]
        self.generation = m["generation"]
        self._rebuild_static()
        self._reset_tail()
        self._manifest_stamp = self._stamp()
        return True

    def _load_or_rebuild(self) -> None:
        self._reset_memory()
        if self._try_load():
            return
        if self.readonly:
            self._build_in_memory()
            return
        with self._locked():
            if not self._try_load():  # another process may have just rebuilt it
                self.rebuild_locked()

    def _build_in_memory(self) -> None:
        """Read-only: index the whole log in the in-memory tail; nothing is written."""
        self._reset_memory()
        self._manifest_stamp = self._stamp()  # reload only when a writer changes the manifest
        self._catch_up()

    def rebuild(self) -> None:
        """Throw the on-disk index away and build it again from the log (in memory when read-only)."""
        if self.readonly:
            self._build_in_memory()
            return
        self._install(wait=True)
        with self._locked():
            self.rebuild_locked()

    def rebuild_locked(self) -> None:
        for child in self.path.iterdir():
            if child.name.startswith("seg-") or child.name.startswith(".tmp-"):
                shutil.rmtree(child, ignore_errors=True)
            elif child.name in ("manifest.json", "vocab.txt", "manifest.json.tmp"):
                child.unlink()
        self._reset_memory()
        after = 0
        while True:
            docs = self._fetch_after(after, self.flush_docs)
            if not docs:
                break
            if len(docs) >= BULK_MIN_DOCS and not self.n_tail:
                self._write_bulk_segment(self._bulk_batch(docs))
                self._merge_on_schedule()           # locked: merges here
            else:
                self._add_docs(docs, flush=False)
            after = docs[-1].seq
            if self.n_tail >= self.flush_docs:
                self._flush_locked()
        self._write_manifest() if self.segments else self._persist_vocab_and_empty_manifest()

    def _persist_vocab_and_empty_manifest(self) -> None:
        self.vocab_persisted = 0
        self.path.mkdir(parents=True, exist_ok=True)
        (self.path / "vocab.txt").write_bytes(b"")
        # the tail's terms are not persisted until they are in a segment
        self._write_manifest()

    def disk_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())

    # ---------------------------------------------------------------- ingest
    def add(self, docs: Iterable[IndexDoc]) -> None:
        """Add events just appended (in seq order); catches up on any gap first."""
        docs = list(docs)
        if not docs:
            return
        self._check_manifest()
        if docs[0].seq > self.seen_seq + 1:
            self._catch_up(until=docs[0].seq - 1)
        docs = [d for d in docs if d.seq > self.seen_seq]
        self._add_docs(docs)

    def presplit(self, texts: list[str]) -> None:
        """The texts of a batch about to be `add`ed (EventLog.append_many calls this before its
        commit): a big batch starts being split into words in the helper process meanwhile."""
        if not self.readonly and len(texts) >= BULK_MIN_DOCS:
            self._bulk.presplit(texts, self.vocab)

    def settle(self) -> None:
        """Wait for a background flush or merge in flight and take its result into use (searches
        are exact without it: this only ends the index's own upkeep)."""
        self._install(wait=True)

    def close(self) -> None:
        """Settle, and stop the splitter process, if any (the index stays usable: it restarts on
        demand)."""
        self.settle()
        self._bulk.close()

    def _with_prev(self, docs: list[IndexDoc], last: dict[str, str]) -> list[IndexDoc]:
        """The docs with their session's previous turn filled in; `last` (session -> latest
        indexed text) is updated as they go."""
        if "prev" not in self.fields:
            return docs
        out = []
        for d in docs:
            prev = last.get(d.session)
            if prev is None:
                prev = self._prev_text(d.session, d.seq)[:PREV_CHARS]
            last[d.session] = d.text[:PREV_CHARS]
            out.append(IndexDoc(d.seq, d.session, d.kind, d.role, d.time, d.text, prev, d.origin))
        return out

    def _add_bulk(self, docs: list[IndexDoc]) -> bool:
        """Index a big batch as one new segment, written directly (the tail, if any, is flushed
        first so that segments stay in seq order). False if that failed: the caller then indexes
        the batch in the tail, which stays exact. The batch's postings are computed before
        waiting for a background merge in flight (the previous batch's), so the two overlap."""
        try:
            docs = [d for d in docs if d.seq > self.seen_seq]
            if not docs:
                return True
            batch = self._bulk_batch(docs)
            if self._lock_fh is None:
                self._install(wait=True)               # never wait for the writer while holding the lock
            with self._locked():
                if self._stamp() != self._manifest_stamp:
                    self._reload_after_foreign_flush()      # may already have caught up past them
                    docs = [d for d in docs if d.seq > self.seen_seq]
                    if not docs:
                        return True
                    batch = self._bulk_batch(docs)          # against the reloaded vocabulary
                if self.n_tail:
                    self._flush_locked()
                self._write_bulk_segment(batch)
                self._write_manifest()
            self._merge_on_schedule()
            return True
        except Exception as e:  # noqa: BLE001 - the tail path below is always correct
            logger.warning("%s: could not write a bulk segment (%s: %s); indexing the batch in the tail",
                           self.path, type(e).__name__, e)
            return False

    def _bulk_batch(self, docs: list[IndexDoc]) -> BulkBatch:
        """docs (seq order, after seen_seq) -> what their segment is written from; new terms get
        ids in the vocabulary."""
        last = dict(self._last_text)
        docs = self._with_prev(docs, last)
        bp = self._bulk.postings(docs, self.doc_model, self.vocab)
        meta = {"dl": bp.dls.astype(np.uint32), "seqs": np.fromiter((d.seq for d in docs), np.int64, len(docs)),
                "sess": [d.session for d in docs], "kind": [d.kind for d in docs], "role": [d.role for d in docs],
                "origin": [d.origin for d in docs], "times": np.asarray([d.time[:TIME_CHARS] for d in docs], dtype=str)}
        return BulkBatch(meta, bp, last)

    def _write_bulk_segment(self, batch: BulkBatch) -> None:
        """Under the lock, with an empty tail: a `_bulk_batch` -> a segment (merged on schedule by
        the caller)."""
        bp = batch.postings
        self._append_segment(lambda: write_segment(self.path, triples=(bp.terms, bp.docs, bp.tfs), meta=batch.meta,
                                                   n_terms=len(self.vocab)), merge=False)
        self._last_text = batch.last_text
        self._rebuild_static()
        self._reset_tail()

    def _add_docs(self, docs: list[IndexDoc], flush: bool = True) -> None:
        docs = [d for d in docs if d.seq > self.seen_seq]  # some may have been pulled in by a catch-up
        if flush and not self.readonly and len(docs) >= BULK_MIN_DOCS:
            # a segment per flush_docs documents (a whole import is one append_many): bounded memory
            step, i = max(BULK_MIN_DOCS, self.flush_docs), 0
            while len(docs) - i >= BULK_MIN_DOCS and self._add_bulk(docs[i:i + step]):
                i += step
            docs = docs[i:]            # a short remainder (or what a failed write left) goes to the tail
        tok, vocab = self.tok, self.vocab
        for d in self._with_prev(docs, self._last_text):
            counts, length = self.doc_model.counts(d, tok.counts)
            if length == 0:
                length = 1  # bm25s keeps an empty document as one empty token
            ids = vocab.id_map(counts)
            strs = {"sess": d.session, "kind": d.kind, "role": d.role, "origin": d.origin}
            self._tail.add(d.seq, ids, length, {f: self._code(f, v) for f, v in strs.items()}, strs,
                           d.time[:TIME_CHARS])
            self.seen_seq = d.seq
            if (flush and not self.readonly and self._job is None
                    and self.n_tail >= max(self.flush_docs, self._flush_retry_at)):
                self._flush_from_add()

    def _check_manifest(self) -> None:
        """Install our own finished flush; reload if another process changed the index."""
        self._install(wait=False)
        stamp = self._stamp()
        if stamp != self._manifest_stamp:
            if self._job is not None and self._job.stamp == stamp:
                return                          # our own flush, about to say it is done: installed next time
            if self._job is not None:
                self._install(wait=True)        # it may be our own flush, just written
                if self._stamp() == self._manifest_stamp:
                    return
            self._reload_after_foreign_flush()

    def _catch_up(self, until: int | None = None) -> None:
        while True:
            limit = 5000 if until is None else max(1, min(5000, until - self.seen_seq))
            docs = self._fetch_after(self.seen_seq, limit)
            if until is not None:
                docs = [d for d in docs if d.seq <= until]
            if not docs:
                return
            self._add_docs(docs)
            if until is not None and self.seen_seq >= until:
                return

    def _reload_after_foreign_flush(self) -> None:
        """Another process rewrote the index: load its manifest, rebuild our tail."""
        self._job = None           # a flush in flight was based on the old state: its result is dropped
        if self.readonly:
            if not self._try_load():
                self._build_in_memory()
                return
        elif not self._try_load():
            with self._locked():
                if not self._try_load():
                    self.rebuild_locked()
        self._catch_up()

    def sync(self) -> None:
        """Make every event in the log searchable (called before each search)."""
        self._check_manifest()
        if self._max_seq() > self.seen_seq:
            self._catch_up()
