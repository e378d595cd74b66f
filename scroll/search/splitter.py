"""Splitting texts into words on the other core: the first step of bulk indexing, in a helper process.

    sp = Splitter()                      # the helper starts on first use
    job = sp.submit(texts)               # sends the texts and returns at once
    ...                                  # (the caller commits the events to SQLite meanwhile)
    analysed, nums, lens = job.result()  # the analyses of words new to the helper, word numbers, words per text
    sp.close()

Bulk indexing (`bulk.py`) spends much of an import splitting texts into words, numbering them and
analysing the new ones (lower-case, stopwords, stem); that holds the GIL for long stretches, so
a thread would not run beside the SQLite inserts, a process does. The helper is this file run by
path (`python -I`), with `words.py` and `wordnums.py` loaded by path, numpy and PyStemmer: nothing
else of the project. It reads length-prefixed pickled lists of texts on stdin and answers each
with (`words.analyse` of the words new to it, in number order; the word number of every word,
int32; words per text), numbering with `wordnums.WordNumbers` as the in-process path does. Its
numbers are 0, 1, 2, ... in the order it gave them out, so the parent appends rows for the new
words to its own table in the same order and both agree on every number; term ids stay the
parent's. The parent cuts texts over 1 MiB with `tokens._chunks` before sending, as the local
path does.

The helper ends when its stdin closes (the parent closed it, or died). If it fails, `result()`
raises SplitterError and the caller falls back to splitting in process (with a fresh table).
"""
from __future__ import annotations

import pickle
import select
import struct
import subprocess
import sys
import threading
from array import array

import numpy as np

_HEAD = struct.Struct("<Q")


class SplitterError(RuntimeError):
    """The helper process is gone or answered nonsense."""


class Job:
    """One request in flight; `result()` waits for its answer (requests are answered in order)."""

    def __init__(self, splitter: "Splitter", texts: list[str]):
        self.splitter, self.texts = splitter, texts
        self._answer: tuple | None = None

    def result(self) -> tuple[tuple, array, array]:
        if self._answer is None:
            self._answer = self.splitter._receive(self)
        return self._answer


class Splitter:
    """`on_new(words)` is called with each answer's new words in the order the helper numbered
    them (answers are read in request order), before anyone gets the answer."""

    def __init__(self, on_new):
        self.on_new = on_new
        self._proc: subprocess.Popen | None = None
        self._pending: list[Job] = []
        self._lock = threading.Lock()
        self.failed = False

    def _start(self) -> subprocess.Popen:
        if self._proc is None:
            self._proc = subprocess.Popen([sys.executable, "-I", __file__], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        return self._proc

    def submit(self, texts: list[str]) -> Job:
        """Send `texts` (each <= 1 MiB) to the helper; raises SplitterError if it cannot."""
        with self._lock:
            if self.failed:
                raise SplitterError("the splitter failed earlier")
            job = Job(self, texts)
            try:
                _write(self._start().stdin, pickle.dumps(texts, protocol=pickle.HIGHEST_PROTOCOL))
            except (OSError, ValueError) as e:
                self._fail()
                raise SplitterError(f"could not send to the splitter: {e}") from None
            self._pending.append(job)
            return job

    def _receive(self, job: Job) -> tuple[tuple, array, array]:
        with self._lock:
            if job._answer is not None:
                return job._answer
            while self._pending:
                first = self._pending[0]
                try:
                    analysed, nums_b, lens_b = pickle.loads(_read(self._proc.stdout, ANSWER_TIMEOUT_S))
                    nums, lens = array("i"), array("q")
                    nums.frombytes(nums_b)
                    lens.frombytes(lens_b)
                except Exception as e:  # noqa: BLE001 - whatever broke, the helper is unusable now
                    self._fail()
                    raise SplitterError(f"the splitter failed: {type(e).__name__}: {e}") from None
                if len(lens) != len(first.texts) or sum(lens) != len(nums):
                    self._fail()
                    raise SplitterError("the splitter's answer does not match its request")
                self.on_new(analysed)
                first._answer = (analysed, nums, lens)
                self._pending.pop(0)
                if first is job:
                    return job._answer
            raise SplitterError("no answer pending for this request")

    def _fail(self) -> None:
        self.failed = True
        self._pending.clear()
        self.close()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def _write(fh, data: bytes) -> None:
    fh.write(_HEAD.pack(len(data)))
    view = memoryview(data)
    while view:
        n = fh.write(view)
        view = view[n:]
    fh.flush()


ANSWER_TIMEOUT_S = 300   # a batch of 20 k texts takes seconds; a helper silent this long is stuck


def _read_exact(fh, n: int, timeout: float | None = None) -> bytes:
    parts, left = [], n
    while left:
        if timeout is not None and not select.select([fh], [], [], timeout)[0]:
            raise TimeoutError(f"no answer from the splitter in {timeout:.0f} s")
        chunk = fh.read(left)
        if not chunk:
            raise EOFError("the other side closed the pipe")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _read(fh, timeout: float | None = None) -> bytes:
    (n,) = _HEAD.unpack(_read_exact(fh, _HEAD.size, timeout))
    return _read_exact(fh, n, timeout)


def _load(name: str):
    """A module of this folder loaded by path (the helper imports nothing else of the project)."""
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location(f"scroll_{name}", os.path.join(os.path.dirname(__file__), f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _serve() -> None:
    """The helper's loop: answer each request until stdin closes."""
    import Stemmer

    words, numbers = _load("words"), _load("wordnums").WordNumbers()
    stem_words = Stemmer.Stemmer("english", 0).stemWords      # new words only: no cache
    rin, wout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            texts = pickle.loads(_read(rin))
        except EOFError:
            return
        nums, lens, new = numbers.number(texts)
        answer = (words.analyse(new, stem_words), nums.astype(np.int32).tobytes(), lens.tobytes())
        _write(wout, pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    _serve()
