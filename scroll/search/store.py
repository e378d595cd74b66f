"""The index directory on disk: manifest, vocabulary file, lock. Pure file operations.

    stamp = write_manifest(path, header, segments, covered_seq=120, vocab_size=900, generation=4)
    append_vocab(path, persisted=850, new_terms=["apple", ...])

The manifest names the segments that make up the index; it is replaced atomically (temp file,
fsync, rename) and is the only thing a reader trusts. Callers hold the directory lock.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

MANIFEST = "manifest.json"


def manifest_stamp(path: Path) -> tuple | None:
    """(mtime, size, inode) of the manifest: changes whenever any process replaces it."""
    try:
        return _stamp_of(os.stat(path / MANIFEST))
    except FileNotFoundError:
        return None


def _stamp_of(st: os.stat_result) -> tuple:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def read_manifest(path: Path) -> dict | None:
    try:
        return json.loads((path / MANIFEST).read_text())
    except (FileNotFoundError, json.JSONDecodeError, OSError):
        return None


def write_manifest(path: Path, header: dict, segments: list, covered_seq: int, vocab_size: int,
                   generation: int, before_replace=None) -> tuple | None:
    """Atomically replace the manifest, then delete what it no longer names; returns its stamp.
    `before_replace(stamp)` gets the new manifest's stamp before it is in place (a rename keeps
    the inode, size and mtime, so the temp file's stamp is the manifest's): no reader sees the
    new manifest before its writer knows its stamp. The stamp returned is read after the
    rename (the same, save on a filesystem whose rename would touch the mtime)."""
    data = {**header, "generation": generation, "covered_seq": covered_seq, "vocab_size": vocab_size,
            "segments": [s.path.name for s in segments]}
    tmp = path / (MANIFEST + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
        stamp = _stamp_of(os.fstat(fh.fileno()))
    if before_replace is not None:
        before_replace(stamp)
    os.replace(tmp, path / MANIFEST)
    stamp = manifest_stamp(path)
    # under the lock every write is finished: a segment the manifest does not name (merged
    # away, or left by a writer killed before its manifest) and any .tmp- dir are garbage
    keep = set(data["segments"])
    for child in path.iterdir():
        if (child.name.startswith(".tmp-") or child.name.startswith("seg-")) and child.name not in keep:
            shutil.rmtree(child, ignore_errors=True)
    return stamp


# vocab.txt as this process last left it: path -> (lines, (inode, size, mtime)). While the file
# is untouched since, its first `lines` lines end at `size`: the next append need not re-read them.
_LEFT: dict[str, tuple[int, tuple[int, int, int]]] = {}


def append_vocab(path: Path, persisted: int, new_terms: list[str]) -> None:
    """vocab.txt := its first `persisted` lines + new_terms (term-id order)."""
    with open(path / "vocab.txt", "a+b") as fh:
        st = os.fstat(fh.fileno())
        left = _LEFT.get(str(path))
        if left == (persisted, (st.st_ino, st.st_size, st.st_mtime_ns)):
            keep = st.st_size
        else:
            fh.seek(0)
            # drop anything past what the manifest vouches for (a crash mid-append)
            keep, count = 0, 0
            for line in fh:
                if count == persisted:
                    break
                keep += len(line)
                count += 1
        fh.truncate(keep)
        fh.seek(keep)
        fh.write("".join(t + "\n" for t in new_terms).encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
        st = os.fstat(fh.fileno())
        _LEFT[str(path)] = (persisted + len(new_terms), (st.st_ino, st.st_size, st.st_mtime_ns))


@contextmanager
def dir_lock(path: Path) -> Iterator[None]:
    """Exclusive lock on the index directory across processes (and across threads of one
    process: each holder opens its own file description)."""
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


__all__ = ["manifest_stamp", "read_manifest", "write_manifest", "append_vocab", "dir_lock", "MANIFEST"]
