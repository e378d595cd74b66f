"""Content-addressed store for large raw payloads (tool outputs, files, big prints).

A payload is kept as one file named by the SHA-256 of its bytes, under
`<root>/<first two hex>/<rest>`. Writes go to a temporary file, are fsynced and then
renamed into place, so a reader never sees a partial payload and a crash leaves at most
an orphan temporary file (removed on the next write to the same place). Handles are
strings `sha256:<hex>`; `Handle` wraps one and loads the bytes only when asked.
`PayloadStore.writer()` streams a payload too large to hold in memory (a file being
attached): pieces go to a temporary file, hashed as they come; `commit()` renames it
into place under its digest, `abort()` (or a crash) leaves no payload behind.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

PREFIX = "sha256:"


class PayloadError(KeyError):
    """A handle that does not resolve (unknown, malformed, or corrupted on disk)."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "payload error"


def _digest_of(handle: str) -> str:
    if not isinstance(handle, str) or not handle.startswith(PREFIX):
        raise PayloadError(f"not a payload handle: {handle!r} (expected 'sha256:<64 hex>')")
    digest = handle[len(PREFIX):]
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise PayloadError(f"not a payload handle: {handle!r} (expected 'sha256:<64 hex>')")
    return digest


class PayloadStore:
    """Files addressed by content. `put` is idempotent; `get` returns the exact bytes."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def path(self, handle: str) -> Path:
        digest = _digest_of(handle)
        return self.root / digest[:2] / digest[2:]

    def put(self, data: bytes | str) -> str:
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"payload must be bytes or str, not {type(data).__name__}")
        digest = hashlib.sha256(data).hexdigest()
        handle = PREFIX + digest
        target = self.path(handle)
        if target.exists() and target.stat().st_size == len(data):
            return handle
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return handle

    def get(self, handle: str, *, verify: bool = False) -> bytes:
        path = self.path(handle)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise PayloadError(f"unknown payload {handle}") from None
        if verify and hashlib.sha256(data).hexdigest() != _digest_of(handle):
            raise PayloadError(f"payload {handle} is corrupted on disk ({path})")
        return data

    def read(self, handle: str, offset: int = 0, length: int | None = None) -> bytes:
        """`length` bytes from `offset` (fewer at the end; b"" past it), reading only that range."""
        for name, v in (("offset", offset), ("length", length)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise ValueError(f"{name} must be an int >= 0, not {v!r}")
        try:
            with open(self.path(handle), "rb") as fh:
                fh.seek(offset)
                return fh.read() if length is None else fh.read(length)
        except FileNotFoundError:
            raise PayloadError(f"unknown payload {handle}") from None

    def open_text(self, handle: str) -> str:
        return self.get(handle).decode("utf-8", errors="replace")

    def exists(self, handle: str) -> bool:
        try:
            return self.path(handle).exists()
        except PayloadError:
            return False

    def writer(self) -> PayloadWriter:
        """A streaming writer for one payload (see PayloadWriter)."""
        return PayloadWriter(self)

    def size(self, handle: str) -> int:
        """The payload's length in bytes."""
        try:
            return self.path(handle).stat().st_size
        except FileNotFoundError:
            raise PayloadError(f"unknown payload {handle}") from None


class PayloadWriter:
    """One payload written in pieces: `write(data)` ..., then `commit() -> handle` or `abort()`."""

    def __init__(self, store: PayloadStore):
        self.store = store
        store.root.mkdir(parents=True, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(dir=store.root, prefix=".tmp-")
        self._file = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> None:
        if self._file.closed:
            raise ValueError("payload writer is closed")
        self._file.write(data)
        self._hash.update(data)
        self.size += len(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()

    def commit(self) -> str:
        """fsync, then rename into place (atomic); the handle of the bytes written."""
        handle = PREFIX + self._hash.hexdigest()
        target = self.store.path(handle)
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            if target.exists() and target.stat().st_size == self.size:
                os.unlink(self.tmp)  # already stored (content-addressed)
                return handle
            target.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(self.tmp, 0o644)
            os.replace(self.tmp, target)
        except BaseException:
            self.abort()
            raise
        for d in {target.parent, self.store.root}:
            dir_fd = os.open(d, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        return handle

    def abort(self) -> None:
        try:
            self._file.close()
        finally:
            try:
                os.unlink(self.tmp)
            except FileNotFoundError:
                pass


class Handle:
    """A deferred reference to a payload: nothing is read until `.bytes()` or `.text()`."""

    __slots__ = ("handle", "_store", "_cache")

    def __init__(self, handle: str, store: PayloadStore):
        _digest_of(handle)
        self.handle = handle
        self._store = store
        self._cache: bytes | None = None

    def bytes(self) -> bytes:
        if self._cache is None:
            self._cache = self._store.get(self.handle)
        return self._cache

    def text(self) -> str:
        return self.bytes().decode("utf-8", errors="replace")

    def __len__(self) -> int:
        return self._store.size(self.handle)

    def __str__(self) -> str:
        return self.handle

    def __repr__(self) -> str:
        return f"Handle({self.handle!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Handle):
            return other.handle == self.handle
        return isinstance(other, str) and other == self.handle

    def __hash__(self) -> int:
        return hash(self.handle)
