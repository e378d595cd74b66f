"""The label sidecar: what an evaluation scores against, kept OUT of the event log.

Answer strings, evidence flags and evidence seqs, question types and ids, generator seeds
and parameters, and the mapping from neutral session names back to a data set's own
session ids live in ``<log>.labels.json`` next to the log: written atomically, mode 0600,
owned by the writer (root, when the kernel sandbox is in use). No `ms` method reads it,
and the sandboxed kernel's uid cannot open it. Only host-side code (importers, task
generators, runners, judges) does.

    labels = LabelStore(log.path)
    labels.put("longmemeval/q42", {"answer": "...", "question_type": "...", ...})
    labels.get("longmemeval/q42")  # -> dict or None
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

SUFFIX = ".labels.json"
VERSION = 1


class LabelError(ValueError):
    """The sidecar exists but is not a label file this code can read."""


def sidecar_path(log_path: str | os.PathLike) -> Path:
    return Path(str(log_path) + SUFFIX)


class LabelStore:
    """A small JSON key -> object store next to a log; every write replaces the file atomically."""

    _lock = threading.Lock()

    def __init__(self, log_path: str | os.PathLike):
        self.path = sidecar_path(log_path)

    def all(self) -> dict[str, Any]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(raw)
        except ValueError as e:
            raise LabelError(f"{self.path}: not a label sidecar ({e})") from None
        if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("labels"), dict):
            raise LabelError(f"{self.path}: not a version-{VERSION} label sidecar")
        return data["labels"]

    def get(self, key: str) -> Any:
        return self.all().get(key)

    def put(self, key: str, value: Any) -> None:
        self.put_many({key: value})

    def put_many(self, items: dict[str, Any]) -> None:
        with self._lock:
            labels = self.all()
            labels.update(items)
            self._write({"version": VERSION, "labels": labels})

    def _write(self, data: dict) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, ensure_ascii=False, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
