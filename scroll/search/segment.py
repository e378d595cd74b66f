"""An immutable on-disk segment of the search index: raw postings, not scores.

A segment keeps, per term id (global vocabulary), the local doc numbers and term
frequencies (CSR: `indptr`, `docs`, `tfs`), plus per-doc length, `seq`, and the
filter fields (session, kind, role, time). Because it stores raw term frequencies
and lengths instead of precomputed BM25 scores, the index can score any segment with
GLOBAL statistics (N, df, average length) at query time: the ranking is exactly the one
of a single index over all events, however the events are split into segments.
Files are `.npy` arrays loaded with mmap, written to a temporary directory and renamed.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np

RESIDENT_MAX = 256 << 20   # a segment up to this size is read into memory (`Segment.load`)
_ARRAYS = ("indptr", "docs", "tfs", "dl", "seqs", "sess", "kind", "role", "origin", "times", "maxtf", "mindl")
_FIELDS = ("sess", "kind", "role", "origin")  # string columns stored as codes + a table
# A background write (`paced`) makes each array durable PACE_BYTES at a time. On ext4 (data=ordered)
# the log's commit waits, in its fdatasync, for a journal commit that must first write out every
# block allocated since the last one: a segment written whole and then fsynced put up to tens of MB
# in front of an append's commit (measured here: a 24 MB write + fsync beside small WAL commits
# raised their p99 from 0.7 to 14-15 ms; synced a MiB at a time, 5.6-6.2 ms).
PACE_BYTES = 1 << 20
# A merge moves postings in runs of about this many (see merge_segments): numpy holds the GIL
# through a repeat or a scatter, and a background merge must not hold up the appends for long
# (measured here: a 1.5 M-posting segment's scatter into fresh memory, 45 ms; in runs of 2^18
# postings, 9 ms at most, so runs of 2^16).
MERGE_CHUNK = 1 << 16


class Segment:
    def __init__(self, path: Path, arrays: dict[str, np.ndarray], strings: dict[str, list[str]]):
        self.path = path
        self.indptr = arrays["indptr"]
        self.docs = arrays["docs"]
        self.tfs = arrays["tfs"]
        self.dl = arrays["dl"]
        self.seqs = arrays["seqs"]
        self.sess_local = arrays["sess"]
        self.kind_local = arrays["kind"]
        self.role_local = arrays["role"]
        self.origin_local = arrays["origin"]
        self.times = arrays["times"]
        self.maxtf = arrays["maxtf"]      # per term: the largest tf in this segment (0: no posting)
        self.mindl = arrays["mindl"]      # per term: the shortest document holding it (pruning bounds)
        self.strings = strings
        self.n_docs = int(len(self.seqs))
        self.n_terms = int(len(self.indptr) - 1)

    @property
    def first_seq(self) -> int:
        return int(self.seqs[0])

    @property
    def last_seq(self) -> int:
        return int(self.seqs[-1])

    def local(self, field: str) -> np.ndarray:
        """Per-doc codes of a string column into `self.strings[field]`."""
        return {"sess": self.sess_local, "kind": self.kind_local, "role": self.role_local,
                "origin": self.origin_local}[field]

    def postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        if tid >= self.n_terms:
            return _EMPTY_I, _EMPTY_I
        a, b = int(self.indptr[tid]), int(self.indptr[tid + 1])
        return self.docs[a:b], self.tfs[a:b]

    def bound(self, tid: int) -> tuple[int, int]:
        """(max tf, min doc length) of a term's postings here: BM25's upper bound for MaxScore."""
        if tid >= self.n_terms:
            return 0, 1
        return int(self.maxtf[tid]), int(self.mindl[tid])

    def df(self, tid: int) -> int:
        if tid >= self.n_terms:
            return 0
        return int(self.indptr[tid + 1] - self.indptr[tid])

    @staticmethod
    def load(path: Path) -> "Segment":
        """Read into memory when the segment is at most RESIDENT_MAX bytes, else map it. Mapped
        pages are page cache, which the kernel may drop while the index sits idle (this VM kind
        runs DAMON 'pageout'): the next query then reads them from disk again (measured: the first
        search after 500 appends p50 8.3 ms, the next one 2.3 ms). Plain ndarray views of the
        maps: slicing an np.memmap builds a memmap object each time (a third of a query's time)."""
        size = sum(f.stat().st_size for f in path.iterdir())
        if size <= RESIDENT_MAX:
            arrays = {name: np.load(path / f"{name}.npy") for name in _ARRAYS}
        else:
            arrays = {name: np.load(path / f"{name}.npy", mmap_mode="r").view(np.ndarray) for name in _ARRAYS}
        arrays["times"] = np.array(arrays["times"])  # small; unicode arrays copy fine
        strings = json.loads((path / "strings.json").read_text())
        seg = Segment(path, arrays, strings)
        if not (len(seg.dl) == seg.n_docs == len(seg.times) and seg.n_docs > 0):
            raise ValueError(f"segment {path} is inconsistent")
        return seg


_EMPTY_I = np.zeros(0, dtype=np.uint32)


def _codes(values: list[str]) -> tuple[np.ndarray, list[str]]:
    table: dict[str, int] = {}
    codes = np.fromiter((table.setdefault(v, len(table)) for v in values), dtype=np.int32, count=len(values))
    return codes, list(table)


def _bounds(indptr: np.ndarray, tfs: np.ndarray, dls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per term: the max tf and the min document length over its postings (0 / 1 for none)."""
    n_terms = len(indptr) - 1
    maxtf = np.zeros(n_terms, dtype=np.uint32)
    mindl = np.ones(n_terms, dtype=np.uint32)
    has = np.flatnonzero(np.diff(indptr) > 0)
    if len(has):
        starts = indptr[:-1][has]
        maxtf[has] = np.maximum.reduceat(tfs, starts)
        mindl[has] = np.minimum.reduceat(dls.astype(np.uint32), starts)
    return maxtf, mindl


def save_array(path: Path, arr: np.ndarray, paced: bool = False) -> None:
    """`np.save(path, arr, allow_pickle=False)`, the same bytes; `paced`: written and
    fdatasynced PACE_BYTES at a time (see PACE_BYTES)."""
    if not paced or arr.nbytes <= PACE_BYTES:
        np.save(path, arr, allow_pickle=False)
        return
    arr = np.ascontiguousarray(arr)
    raw = arr.reshape(-1).view(np.uint8)
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, np.lib.format.header_data_from_array_1_0(arr))
        for i in range(0, len(raw), PACE_BYTES):
            fh.write(raw[i:i + PACE_BYTES])
            fh.flush()
            os.fdatasync(fh.fileno())


def write_segment(root: Path, *, triples=None, csr=None, meta, n_terms: int, paced: bool = False) -> Path:
    """Write a segment from (terms, docs, tfs) postings in doc order, or from postings already
    in CSR form, (indptr, docs, tfs) (a merge); `meta`: the per-doc arrays (dl, seqs, times)
    and the string fields, each a list of strings or already (codes, table). `paced`: a
    background write, made durable a MiB at a time (`save_array`)."""
    if csr is not None:
        indptr, docs, tfs = csr
    else:
        terms, docs, tfs = triples
        order = np.argsort(terms, kind="stable")  # docs stay ascending within a term
        terms, docs, tfs = terms[order], docs[order], tfs[order]
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n_terms), out=indptr[1:])
    arrays = {"indptr": indptr, "docs": docs.astype(np.uint32, copy=False),
              "tfs": np.minimum(tfs, 2**32 - 1).astype(np.uint32, copy=False)}
    arrays["maxtf"], arrays["mindl"] = _bounds(indptr, arrays["tfs"], np.asarray(meta["dl"])[docs])
    strings = {}
    for field in _FIELDS:
        vals = meta[field]
        if isinstance(vals, tuple):  # already (codes, table)
            arrays[field], strings[field] = vals
        else:
            arrays[field], strings[field] = _codes(list(vals))
    arrays["dl"], arrays["seqs"], arrays["times"] = meta["dl"], meta["seqs"], meta["times"]
    seqs = arrays["seqs"]
    name = f"seg-{int(seqs[0]):012d}-{int(seqs[-1]):012d}-{uuid.uuid4().hex[:8]}"
    tmp = root / f".tmp-{name}"
    tmp.mkdir(parents=True)
    try:
        for key in _ARRAYS:
            save_array(tmp / f"{key}.npy", arrays[key], paced)
        (tmp / "strings.json").write_text(json.dumps(strings))
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, root / name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return root / name


def concat_in_runs(parts: list[np.ndarray]) -> np.ndarray:
    """`np.concatenate(parts)` (1-d), copied PACE_BYTES at a time. numpy holds the GIL through
    a copy of a str array (measured here: 600 k times <U19, 45 MB, 6 ms into reused memory and
    106 ms into fresh), and a background flush or merge must not hold up an append that long."""
    parts = [np.asarray(p) for p in parts]
    out = np.empty(sum(len(p) for p in parts), dtype=np.result_type(*parts))
    step = max(1, PACE_BYTES // max(1, out.dtype.itemsize))
    at = 0
    for p in parts:
        for i in range(0, len(p), step):
            piece = p[i:i + step]
            out[at + i:at + i + len(piece)] = piece
        at += len(p)
    return out


def _term_runs(indptr: np.ndarray, chunk: int) -> list[tuple[int, int]]:
    """Consecutive term ranges [a, b) covering all terms, each holding about `chunk` postings
    (a term with more is a run of its own)."""
    n = len(indptr) - 1
    cuts = np.searchsorted(indptr, np.arange(chunk, int(indptr[-1]), chunk), side="right") - 1
    bounds = np.unique(np.concatenate(([0], np.clip(cuts, 0, n), [n])))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def merge_segments(root: Path, segs: list["Segment"], n_terms: int, paced: bool = False) -> Path:
    """Merge consecutive segments (in seq order) into one new segment. No sort: each segment's
    postings are ordered by (term, doc) and the segments by doc, so a term's merged list is its
    lists one after another, and every posting's place in the result is computed directly
    (the lexsort this replaces took 2.6 s for 8 segments of 6.3 M postings here)."""
    counts = np.zeros((len(segs), n_terms), dtype=np.int64)
    for si, seg in enumerate(segs):
        counts[si, :seg.n_terms] = np.diff(seg.indptr)
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(counts.sum(axis=0), out=indptr[1:])
    total = int(indptr[-1])
    docs = np.empty(total, dtype=np.uint32)
    tfs = np.empty(total, dtype=np.uint32)
    start = indptr[:-1].copy()         # where each term's postings of the next segment go
    offset = 0
    meta: dict[str, list] = {k: [] for k in ("dl", "seqs", "times") + _FIELDS}
    tables: dict[str, dict[str, int]] = {f: {} for f in _FIELDS}   # merged string tables
    for si, seg in enumerate(segs):
        c = counts[si, :seg.n_terms]
        # posting j of term t goes to start[t] + (j - indptr[t]): one repeat gives start - indptr
        # (in runs of whole terms of about MERGE_CHUNK postings)
        for a, b in _term_runs(seg.indptr, MERGE_CHUNK):
            lo, hi = int(seg.indptr[a]), int(seg.indptr[b])
            dest = np.repeat(start[a:b] - seg.indptr[a:b], c[a:b])
            dest += np.arange(lo, hi, dtype=np.int64)
            docs[dest] = np.asarray(seg.docs[lo:hi], dtype=np.uint32) + np.uint32(offset)
            tfs[dest] = seg.tfs[lo:hi]
        start[:seg.n_terms] += c
        offset += seg.n_docs
        meta["dl"].append(np.asarray(seg.dl))
        meta["seqs"].append(np.asarray(seg.seqs))
        meta["times"].append(seg.times)
        for field in _FIELDS:   # a loop over each table's strings, not over the documents
            merged_table = tables[field]
            remap = np.array([merged_table.setdefault(v, len(merged_table)) for v in seg.strings[field]],
                             dtype=np.int32)
            meta[field].append(remap[np.asarray(seg.local(field))])
    merged = {
        "dl": concat_in_runs(meta["dl"]), "seqs": concat_in_runs(meta["seqs"]),
        "times": concat_in_runs(meta["times"]).astype(str, copy=False),
        **{field: (concat_in_runs(meta[field]), list(tables[field])) for field in _FIELDS},
    }
    return write_segment(root, csr=(indptr, docs, tfs), meta=merged, n_terms=n_terms, paced=paced)
