"""The `ms` object inside the kernel (stdlib only; this file's source is executed in the kernel).

`ms` is a thin client of the host-side service (scroll.kernel.service) over a unix socket:

    ms.search(query, k=10, session=None, kind=None, role=None, since=None, until=None,
              seq_range=None, origin="history") -> list[Record]    # k=None: every match
              # Record has .seq .score .session .role .kind .origin .time .text .meta .payload .tokens
    ms.expand(seq) -> Record;  ms.expand(lo, hi) -> list[Record]   (inclusive, in scope)
    ms.payload(handle, offset=0, length=None) -> str (or bytes when not UTF-8), read in pages
    ms.attach(path) -> Attachment (a file of the kernel's working dir stored whole in the log;
        str(a) is its exploration summary; the content: ms.payload(a.handle, offset, length))
    ms.recent(n=10, session=None, origin="history"); ms.sessions() -> list[dict]
    ms.headlines() -> list;  ms.final(answer) -> submits the task's answer
    ms.llm_map(items, prompt, schema=None, concurrency=16, retries=3, wait=True)
        -> MapResults (one dict per item, in order) or, with wait=False, a Job
    ms.agent_map(items, task, retain=..., delegate=..., concurrency=4, chunk=1, wait=True)
    ms.jobs() -> [status, ...];  Job.wait(timeout) / .results() / .cancel() / .status()

Large event texts are loaded lazily: `Record.text` fetches them through the payload handle
on first access. Large ranges and payloads arrive in pages (the host caps each reply's
bytes). Everything is read-only toward history; what may be read is decided on the host.
"""
import base64 as _b64
import json as _json
import socket as _socket
import sys as _sys
import threading as _threading

K_MAX = 1000  # the host's k limit per call (scroll.capability.MAX_K)
MAX_REQUEST = 1 << 20  # bytes of one request line (scroll.kernel.service.MAX_REQUEST, the host's limit)
_FIELDS = ("seq", "score", "session", "role", "kind", "origin", "time", "meta", "payload", "tokens")


class MsError(RuntimeError):
    """The host refused or failed a request."""


class Record:
    """One event (or search hit) from the log; `text` is loaded lazily when large."""

    __slots__ = _FIELDS + ("_text", "_ms", "text_len")

    def __init__(self, d, ms):
        for f in _FIELDS:
            setattr(self, f, d.get(f))
        self._text = d.get("text")
        self.text_len = d.get("text_len", len(self._text or ""))
        self._ms = ms

    @property
    def text(self):
        if self._text is None and self.payload:
            data = self._ms.payload(self.payload)
            self._text = data if isinstance(data, str) else data.decode("utf-8", "replace")
        return self._text if self._text is not None else ""

    def to_dict(self):
        d = {f: getattr(self, f) for f in _FIELDS}
        d["text"] = self.text
        return d

    def __repr__(self):
        t = (self._text if self._text is not None else f"<{self.text_len} chars, lazy>")
        t = t if len(t) <= 80 else t[:77] + "..."
        score = "" if self.score is None else f" score={self.score:.3f}"
        return f"Record(seq={self.seq}{score} {self.session}/{self.kind}/{self.role}: {t!r})"


class MapResults(list):
    """A map's results in item order: one dict per item, {"index", "ok", "value"} or
    {"index", "ok": False, "error"}; `.handle` is the JSONL payload (ms.payload(handle))."""

    def __init__(self, records, status):
        list.__init__(self, records)
        self.job, self.handle = status.get("job"), status.get("handle")
        self.ok, self.failed = status.get("ok"), status.get("failed")

    def values(self):
        """Each item's value (None where it failed)."""
        return [r.get("value") if r.get("ok") else None for r in self]

    def errors(self):
        return [r for r in self if not r.get("ok")]


class Job:
    """A map running on the host (ms.llm_map(..., wait=False)); lives across cells until it
    ends, is cancelled, or the session closes."""

    def __init__(self, ms, status):
        self._ms, self.id, self._status = ms, status["job"], status

    def status(self):
        self._status = self._ms._call("job_wait", job=self.id, timeout=0)
        return self._status

    @property
    def done(self):
        return self.status()["state"] != "running"

    def wait(self, timeout=None):
        """Block until the job ends or `timeout` seconds pass (None: until it ends, within
        the cell's time); returns True when it has ended."""
        import time as _time

        end = None if timeout is None else _time.monotonic() + timeout
        while True:
            left = 0.25 if end is None else max(0.0, min(0.25, end - _time.monotonic()))
            self._status = self._ms._call("job_wait", job=self.id, timeout=left)
            if self._status["state"] != "running":
                return True
            if end is not None and _time.monotonic() >= end:
                return False

    def results(self):
        """MapResults of a job that has ended (MsError while it runs: wait first)."""
        out, offset = [], 0
        while offset is not None:
            page = self._ms._call("job_results", job=self.id, offset=offset)
            out.extend(page["results"])
            offset = page["next"]
        return MapResults(out, self.status())

    def cancel(self):
        self._status = self._ms._call("job_cancel", job=self.id)
        return self._status

    def __repr__(self):
        s = self._status
        return f"<Job {self.id} {s['op']} {s['state']}: {s['done']}/{s['total']} done, {s['failed']} failed>"


def _map_item(x):
    if isinstance(x, Record):
        return {"seq": x.seq, "session": x.session, "time": x.time, "role": x.role, "text": x.text}
    return x


_PAGE = 3 << 20   # bytes one payload reply may carry (the host caps it too)
_CHUNK = 512 << 10  # bytes one attach request carries (a request is capped at 1 MiB)


def _os_real(p):
    import os

    return os.path.realpath(p)


class Attachment:
    """A file stored by ms.attach: .seq (its `file` event: ms.expand(seq)), .handle, .name,
    .size, .sha256, .type, .facts; str() is the reference + exploration summary, never the content."""

    def __init__(self, d):
        for k in ("seq", "handle", "name", "size", "sha256", "type", "text", "tokens", "facts"):
            setattr(self, k, d.get(k))
        self.summary = self.text

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<Attachment seq={self.seq} {self.name!r} {self.type}, {self.size} bytes, {self.handle}>"


class Ms:
    """Read-only capability object over the session history."""

    def __init__(self, path, timeout=300.0, root=None):
        import os

        self._path = path
        self._root = root or os.getcwd()  # the kernel's working dir (it starts there): ms.attach's root
        self._timeout = timeout
        self._sock = None
        self._file = None
        self._lock = _threading.Lock()
        self._next = 0

    def _connect(self):
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        s.settimeout(self._timeout)
        s.connect(self._path)
        self._sock, self._file = s, s.makefile("rb")

    def _call(self, method, **params):
        if _stale_thread():
            raise MsError(f"ms.{method}: refused for a background thread started in an earlier cell (its cell "
                          "has ended; threads may use ms only during the cell that started them)")
        with self._lock:
            for attempt in (0, 1):
                try:
                    if self._sock is None:
                        self._connect()
                    self._next += 1
                    line = _json.dumps({"id": self._next, "method": method, "params": params}).encode()
                    if len(line) > MAX_REQUEST:  # the host would drop the connection: say why instead
                        raise MsError(f"ms.{method}: request of {len(line):,} bytes is over the limit of "
                                      f"{MAX_REQUEST:,} bytes (1 MiB) per ms call; pass less at once")
                    self._sock.sendall(line + b"\n")
                    reply = self._file.readline()
                    if not reply:
                        raise ConnectionError("service closed the connection")
                    break
                except (OSError, ConnectionError):
                    self._sock = self._file = None
                    if attempt:
                        raise
        rep = _json.loads(reply)
        if not rep.get("ok"):
            raise MsError(rep.get("error"))
        return rep["result"]

    def search(self, query, k=10, session=None, kind=None, role=None, since=None, until=None,
               seq_range=None, origin="history"):
        """BM25 hits, best first. `k=None`: every match (paged over seq windows under the
        host's per-call limit of K_MAX hits)."""
        kw = dict(query=query, session=session, kind=kind, role=role, since=since, until=until,
                  origin=origin)
        if k is not None:
            sr = list(seq_range) if seq_range is not None else None
            return [Record(d, self) for d in self._call("search", k=k, seq_range=sr, **kw)]
        lo, hi = seq_range if seq_range is not None else (0, None)
        first = self._call("search", k=K_MAX, seq_range=[lo, hi] if hi is not None else None, **kw)
        if len(first) < K_MAX:
            return [Record(d, self) for d in first]
        if hi is None:
            hi = max((s["last_seq"] for s in self._call("sessions")), default=0)
        found, span = {}, max(1, (hi - lo + 1) // 4)
        while lo <= hi:
            top = min(hi, lo + span - 1)
            page = self._call("search", k=K_MAX, seq_range=[lo, top], **kw)
            if len(page) >= K_MAX and span > 1:
                span //= 2
                continue
            for d in page:
                found[d["seq"]] = d
            lo = top + 1
        ranked = sorted(found.values(), key=lambda d: (-d["score"], -d["seq"]))
        return [Record(d, self) for d in ranked]

    def expand(self, lo, hi=None):
        if hi is None:
            return Record(self._call("expand", lo=lo)["event"], self)
        out, nxt = [], lo
        while nxt is not None:
            page = self._call("expand", lo=nxt, hi=hi)
            out.extend(Record(d, self) for d in page["events"])
            nxt = page["next"]
        return out

    def payload(self, handle, offset=0, length=None):
        """The payload's bytes from `offset` (`length` of them; None: to the end), in pages:
        str when they are valid UTF-8, else bytes."""
        parts, left = [], length
        while offset is not None and (left is None or left > 0):
            chunk = self._call("payload", handle=handle, offset=offset, length=left if left is None else min(left, _PAGE))
            data = _b64.b64decode(chunk["b64"])
            parts.append(data)
            offset = chunk["next"]
            if left is not None:
                left -= len(data)
        data = b"".join(parts)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data

    def attach(self, path):
        """Store a file of the kernel's working directory whole in the log (streamed to the
        host in chunks) and get back an Attachment: its seq, handle, name, size, sha256,
        type and exploration summary (print it); the content: ms.payload(a.handle, offset, length)."""
        import hashlib
        import os
        import stat

        root = _os_real(self._root)
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise MsError("attach: path must be a string or a path")
        full = _os_real(os.path.join(root, os.fsdecode(os.fspath(path))))
        if os.path.commonpath([root, full]) != root:
            raise MsError(f"attach: {os.fsdecode(os.fspath(path))!r} is outside the kernel's working directory "
                          f"{root} (symlinks are resolved first); copy the file there")
        try:  # O_NONBLOCK: a FIFO must not hang the cell (a regular file ignores it)
            fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError as e:
            raise MsError(f"attach: cannot open {os.path.relpath(full, root)!r}: {e.strerror}") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise MsError(f"attach: {os.path.relpath(full, root)!r} is not a regular file")
        with os.fdopen(fd, "rb") as fh:
            stage = self._call("attach_begin", name=os.path.basename(full), size=st.st_size)["stage"]
            h = hashlib.sha256()
            while True:
                data = fh.read(_CHUNK)
                if not data:
                    break
                h.update(data)
                self._call("attach_chunk", stage=stage, b64=_b64.b64encode(data).decode("ascii"))
        return Attachment(self._call("attach_end", stage=stage, sha256=h.hexdigest()))

    def recent(self, n=10, session=None, origin="history"):
        return [Record(d, self) for d in self._call("recent", n=n, session=session, origin=origin)]

    def sessions(self):
        return self._call("sessions")

    def headlines(self):
        return self._call("headlines")

    def final(self, answer):
        """Submit the task's answer (it goes to the host, not to the printout)."""
        self._call("final", answer=str(answer))

    # ---- operators: the host runs the model calls; items travel in pages -------------------
    def _map(self, method, items, wait, **params):
        items = [_map_item(x) for x in items]
        nbytes = sum(len(x) for x in items if isinstance(x, str))
        stage = self._call(method, n=len(items), nbytes=nbytes, detach=not wait, **params)["stage"]
        page, size = [], 0
        for x in items:
            n = len(_json.dumps(x))
            if page and size + n > (512 << 10):
                self._call("map_items", stage=stage, items=page)
                page, size = [], 0
            page.append(x)
            size += n
        if page:
            self._call("map_items", stage=stage, items=page)
        job = Job(self, self._call("map_start", stage=stage))
        if not wait:
            return job
        job.wait()
        return job.results()

    def llm_map(self, items, prompt, schema=None, concurrency=16, retries=3, wait=True):
        """One stateless model call per item (host side, in parallel), validated against
        `schema` (JSON-schema subset) with retries; MapResults in item order, or a Job."""
        return self._map("llm_map", items, wait, prompt=prompt, schema=schema, concurrency=concurrency,
                         retries=retries)

    def agent_map(self, items, task, retain, delegate, concurrency=4, chunk=1, wait=True):
        """A full sub-session per `chunk` items; `retain`: the work you keep, `delegate`: what
        each sub-session does (each receives strictly fewer items than the call holds)."""
        return self._map("agent_map", items, wait, task=task, retain=retain, delegate=delegate,
                         concurrency=concurrency, chunk=chunk)

    def jobs(self):
        return self._call("jobs")

    def __repr__(self):
        return "<ms: search expand payload attach recent sessions headlines final llm_map agent_map jobs>"


_CELL = [0]  # the user cell now running, counted by IPython's pre_run_cell (see fence_threads)


def _stale_thread():
    """True in a thread that a cell started and that outlived that cell."""
    t = _threading.current_thread()
    return t is not _threading.main_thread() and getattr(t, "_scroll_cell", _CELL[0]) != _CELL[0]


def fence_threads():
    """Background threads end with their cell, as far as the host can tell: every thread is stamped
    with the cell that started it; once a later cell runs, its writes to stdout/stderr are dropped
    (they would show in that later cell's exposure) and its `ms` calls refused (`ms.final` for a later
    step). Kernel-side, like all of this file: careless code is fenced; hostile code that patches it
    gains nothing it could not do in its own cell."""
    start = _threading.Thread.start

    def stamped(self, *a, **k):
        self._scroll_cell = _CELL[0]
        return start(self, *a, **k)

    _threading.Thread.start = stamped
    try:
        get_ipython().events.register("pre_run_cell", lambda *a: _CELL.__setitem__(0, _CELL[0] + 1))  # noqa: F821
    except NameError:  # not in IPython
        pass


def chunk_streams(limit=1 << 20):
    """Send stdout/stderr in messages of at most `limit` chars (the host refuses huge ones).

    ipykernel's OutStream buffers writes and sends the buffer from its IO thread; the
    stream's class is swapped for a subclass whose `_flush_buffers` yields the buffer in
    pieces (an instance-level patch of `write` would be undone by IPython after each cell).
    """
    for stream in (_sys.stdout, _sys.stderr):
        base = type(stream)
        if not hasattr(base, "_flush_buffers"):
            continue

        def _flush_buffers(self, _base=base):
            for parent, data in _base._flush_buffers(self):
                if len(data) <= limit:
                    yield parent, data
                else:
                    for i in range(0, len(data), limit):
                        yield parent, data[i:i + limit]

        attrs = {"_flush_buffers": _flush_buffers}
        parent = getattr(base, "parent_header", None)
        if isinstance(parent, property):
            # a thread of an earlier cell (fence_threads) writes under a parent no cell has: the host
            # takes only the running cell's messages, so it never reaches a later cell's exposure
            # (IPython wraps `write` itself per instance; the parent is looked up at every write)
            attrs["parent_header"] = property(
                lambda self, _get=parent.fget: {"msg_id": "scroll-ended-cell"} if _stale_thread() else _get(self),
                parent.fset, parent.fdel)
        try:
            stream.__class__ = type("Chunked" + base.__name__, (base,), attrs)
        except TypeError:
            pass
