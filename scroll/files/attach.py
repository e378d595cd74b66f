"""Large files stored whole behind a reference, with an exploration summary in the log.

Two ways in, one way to store (`store_file` -> `log_file`):

* `ms.attach(path)` in the kernel: the kernel side (scroll.kernel.ms_client) resolves the
  path inside its own working directory (no `..`, absolute path or symlink that leaves
  it), reads the file and streams it in 512 KiB chunks through the capability's wire
  methods, answered here by `FileAttacher` (the host never opens a path a cell names):

      attach_begin(name, size)      -> {"stage"}   refused up front above attach_max_bytes
      attach_chunk(stage, b64)      -> {"received"} bytes go straight to a payload writer
      attach_end(stage, sha256)     -> the file: {seq, handle, name, size, sha256, type, summary, ...}

  A stage lives within its cell: one still open when the cell ends (timeout, a killed
  kernel) is aborted and leaves no payload and no event. A kernel replay (after a
  restart) does not log the file again: it gets the event the same bytes and name made.
* `scroll import --attach FILE` (an operator's file on the host's command line).

Either way the payload store keeps the exact bytes (streamed to disk, never whole in
memory) and ONE event is logged (kind "file"): its text is a short reference header and
the type-aware summary (scroll.files.summary), bounded by `summary_tokens` whatever the
file's size; `meta["file"]` holds the handle, name, size, sha256, type and facts. The
content is never the event's text (nor indexed for search): it is read in pages through
`ms.payload(handle, offset, length)`.
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from ..capability import CapabilityError, _int
from ..events import estimate_tokens
from ..headlines import FileRef
from ..origin import Origin
from ..payloads import PayloadWriter
from .dispatch import summarize
from .summary import SummaryLimits

KIND = "file"
CHUNK_BYTES = 512 << 10  # what the kernel client sends per request (a request is capped at 1 MiB)


@dataclass(frozen=True)
class FileLimits:
    attach_max_bytes: int = 256 << 20   # one file (config attach_max_bytes)
    summary_tokens: int = 600           # the file event's text (config file_summary_tokens)
    chunk_bytes: int = 768 << 10        # decoded bytes one attach_chunk may carry
    max_name_chars: int = 255
    max_live: int = 2                   # attaches staged at once in a session

    def __post_init__(self) -> None:
        if self.attach_max_bytes < 0 or self.summary_tokens < 64 or self.chunk_bytes < 1:
            raise ValueError("file limits: need attach_max_bytes >= 0, summary_tokens >= 64, chunk_bytes >= 1")

    @classmethod
    def from_config(cls, cfg: Any) -> "FileLimits":
        """From a LoopConfig (attach_max_bytes, file_summary_tokens); defaults where absent."""
        d = cls()
        return cls(attach_max_bytes=getattr(cfg, "attach_max_bytes", d.attach_max_bytes),
                   summary_tokens=getattr(cfg, "file_summary_tokens", d.summary_tokens))


@dataclass(frozen=True)
class AttachedFile:
    """A stored file: what the file event's meta holds and what `ms.attach` returns."""

    seq: int
    handle: str
    name: str
    size: int
    sha256: str
    type: str
    text: str            # the event's text: reference header + summary (bounded)
    tokens: int
    facts: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def ref(self) -> FileRef:
        return FileRef(self.seq, self.name)

    @classmethod
    def from_event(cls, ev: Any) -> "AttachedFile":
        f = ev.meta["file"]
        return cls(ev.seq, f["handle"], f["name"], f["size"], f["sha256"], f["type"], ev.text,
                   estimate_tokens(ev.text), f.get("facts", {}))


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def safe_name(name: Any, limit: int = 255) -> str:
    """The file's base name as stored: no directories, no control characters, bounded."""
    if not isinstance(name, str):
        raise CapabilityError("attach: the file name must be a string")
    base = _CONTROL.sub("?", name.replace("\\", "/").rsplit("/", 1)[-1]).strip()
    if not base or base in (".", ".."):
        raise CapabilityError(f"attach: {name[:80]!r} is not a file name")
    return base if len(base) <= limit else base[: limit - 1] + "…"


def log_file(log: Any, session: str, name: str, handle: str, *, origin: Origin, role: str,
             limits: FileLimits, meta: dict | None = None) -> AttachedFile:
    """Summarize a stored payload and log ONE file event for it."""
    store = log.payloads
    size = store.size(handle)
    sha = handle.split(":", 1)[1]
    head = lambda kind: (f"[file] {name} ({kind}, {size} bytes, sha256 {sha[:16]}…) stored whole, not shown.\n"  # noqa: E731
                         f"handle: {handle}\ncontent: ms.payload(handle, offset, length) reads it in pages\n")
    cap = max(32, limits.summary_tokens - estimate_tokens(head("markdown")) - 2)
    with open(store.path(handle), "rb") as fh:
        s = summarize(fh, size, name, SummaryLimits(max_tokens=cap))
    text = head(str(s.type)) + s.text
    info = {"handle": handle, "name": name, "size": size, "sha256": sha, "type": str(s.type),
            "summary_tokens": s.tokens, "facts": s.facts}
    seq = log.append(session=session, role=role, kind=KIND, text=text, meta={**(meta or {}), "file": info},
                     origin=origin)
    return AttachedFile(seq, handle, name, size, sha, str(s.type), text, estimate_tokens(text), s.facts)


def store_file(log: Any, session: str, name: str, chunks: Iterable[bytes], *, origin: Origin, role: str,
               limits: FileLimits, meta: dict | None = None) -> AttachedFile:
    """Stream `chunks` into the payload store (refused past attach_max_bytes), then log it."""
    writer = log.payloads.writer()
    try:
        for c in chunks:
            if writer.size + len(c) > limits.attach_max_bytes:
                raise CapabilityError(f"{name}: more than {limits.attach_max_bytes} bytes (attach_max_bytes); "
                                      "nothing was stored")
            writer.write(c)
        handle = writer.commit()
    except BaseException:
        writer.abort()
        raise
    return log_file(log, session, safe_name(name), handle, origin=origin, role=role, limits=limits, meta=meta)


def read_chunks(path: Any, size: int = 1 << 20) -> Iterable[bytes]:
    """A host file in pieces (the CLI's --attach: a path the operator typed, never a cell's)."""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(size)
            if not block:
                return
            yield block


def check_host_file(path: Any, limits: FileLimits) -> int:
    """`scroll import --attach`: the operator's file must be a regular file within the cap."""
    import os
    import stat

    try:
        st = os.stat(path)
    except OSError as e:
        raise ValueError(f"--attach {path}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"--attach {path}: not a regular file")
    if st.st_size > limits.attach_max_bytes:
        raise ValueError(f"--attach {path}: {st.st_size} bytes; the limit is {limits.attach_max_bytes} "
                         "(config attach_max_bytes)")
    return st.st_size


def import_file(log: Any, session: str, path: Any, limits: FileLimits) -> AttachedFile:
    """Store an operator's file (`scroll import --attach`) as history: origin history, role user."""
    from pathlib import Path

    check_host_file(path, limits)
    return store_file(log, session, Path(path).name, read_chunks(path), origin=Origin.HISTORY, role="user",
                      limits=limits, meta={"imported_from": str(path)})


def file_refs(events: Iterable[Any]) -> tuple[FileRef, ...]:
    """The files among `events` (a step's): what its headline keeps after eviction."""
    return tuple(FileRef(e.seq, e.meta["file"]["name"]) for e in events
                 if e.kind == KIND and isinstance((e.meta or {}).get("file"), dict))


@dataclass
class _Stage:
    name: str
    size: int
    writer: PayloadWriter


class FileAttacher:
    """The host side of `ms.attach` for one session (the capability's file methods)."""

    METHODS = ("attach_begin", "attach_chunk", "attach_end")

    def __init__(self, log: Any, session: str, limits: FileLimits | None = None):
        self.log, self.session, self.limits = log, session, limits or FileLimits()
        self.stages: dict[int, _Stage] = {}
        self._next = 0
        self.replay = False

    def begin_cell(self, deadline: float | None, replay: bool) -> None:
        self.end_cell()  # nothing staged survives into another cell
        self.replay = replay

    def end_cell(self) -> None:
        """Attaches still staged die with their cell: no payload, no event."""
        for st in self.stages.values():
            st.writer.abort()
        self.stages.clear()

    close = end_cell

    def attach_begin(self, name, size) -> dict:
        name = safe_name(name, self.limits.max_name_chars)
        size = _int(size, "size", 0)
        if size > self.limits.attach_max_bytes:
            raise CapabilityError(f"attach: {name} is {size} bytes; the limit is {self.limits.attach_max_bytes} "
                                  "(config attach_max_bytes). Nothing was stored")
        if getattr(self.log, "readonly", False):
            raise CapabilityError("attach: this log is read-only")
        if len(self.stages) >= self.limits.max_live:
            raise CapabilityError(f"attach: {len(self.stages)} attaches are already open in this cell")
        self._next += 1
        self.stages[self._next] = _Stage(name, size, self.log.payloads.writer())
        return {"stage": self._next}

    def _stage(self, stage: Any) -> _Stage:
        st = self.stages.get(stage) if isinstance(stage, int) and not isinstance(stage, bool) else None
        if st is None:
            raise CapabilityError(f"attach: no open attach {stage!r} in this cell")
        return st

    def _abort(self, stage: int, why: str) -> CapabilityError:
        self.stages.pop(stage).writer.abort()
        return CapabilityError(f"attach: {why}; nothing was stored")

    def attach_chunk(self, stage, b64) -> dict:
        st = self._stage(stage)
        if not isinstance(b64, str) or len(b64) > (self.limits.chunk_bytes * 4 // 3 + 4):
            raise self._abort(stage, f"a chunk must be base64 of at most {self.limits.chunk_bytes} bytes")
        try:
            data = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise self._abort(stage, "a chunk is not valid base64") from None
        if st.writer.size + len(data) > st.size:
            raise self._abort(stage, f"{st.name}: more bytes than the {st.size} declared (did it grow?)")
        st.writer.write(data)
        return {"received": st.writer.size}

    def attach_end(self, stage, sha256) -> dict:
        st = self._stage(stage)
        if st.writer.size != st.size:
            raise self._abort(stage, f"{st.name}: {st.writer.size} of {st.size} bytes received")
        if sha256 != st.writer.hexdigest():
            raise self._abort(stage, f"{st.name}: the sha256 of the bytes received differs from the sender's "
                                     "(did the file change while it was read?)")
        del self.stages[stage]
        if self.replay:  # a restarted kernel replays the cell: the file is already logged
            st.writer.abort()
            for ev in self.log.events(session=self.session, kind=KIND):
                f = (ev.meta or {}).get("file") or {}
                if f.get("sha256") == sha256 and f.get("name") == st.name:
                    return AttachedFile.from_event(ev).to_dict()
            raise CapabilityError("attach: not logged again when the kernel replays a cell (no earlier attach of "
                                  "these bytes under this name); run the cell again")
        try:
            handle = st.writer.commit()
        except OSError as e:
            raise CapabilityError(f"attach: could not store {st.name}: {e}") from None
        return log_file(self.log, self.session, st.name, handle, origin=Origin.AGENT, role="scroll",
                        limits=self.limits).to_dict()
