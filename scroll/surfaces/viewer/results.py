"""The runs page's files: result files under one folder (results/ by default), read-only.

Only regular files below the folder, with a known suffix, are listed or served; a path is
resolved (symlinks included) and must stay inside the folder, so `..`, absolute paths and
links pointing out are refused as if the file did not exist.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

MEDIA_TYPES = {
    ".json": "application/json",
    ".jsonl": "text/plain; charset=utf-8",
    ".png": "image/png",
    ".md": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".csv": "text/plain; charset=utf-8",
}
MAX_FILES = 2000
MAX_JSON_BYTES = 16 << 20  # rendered as tables; larger files are only served raw


class ResultPathError(KeyError):
    """A path outside the results folder, of an unknown kind, or not a file."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "no such result file"


@dataclass(frozen=True)
class ResultFile:
    path: str  # relative to the results folder, '/'-separated
    size: int

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.path).suffix.lower()

    @property
    def folder(self) -> str:
        return str(PurePosixPath(self.path).parent)

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name


def list_results(root: Path) -> list[ResultFile]:
    """Result files under `root`, sorted by path (at most MAX_FILES)."""
    if not root.is_dir():
        return []
    base = root.resolve()
    out: list[ResultFile] = []
    for p in sorted(base.rglob("*")):
        if len(out) >= MAX_FILES:
            break
        if p.suffix.lower() not in MEDIA_TYPES or p.is_symlink() or not p.is_file():
            continue
        out.append(ResultFile(p.relative_to(base).as_posix(), p.stat().st_size))
    return out


def resolve_result(root: Path, rel: str) -> Path:
    """The file `rel` names inside `root`, or ResultPathError."""
    pure = PurePosixPath(rel)
    if not rel or pure.is_absolute() or ".." in pure.parts or "\\" in rel or "\x00" in rel:
        raise ResultPathError(f"no result file {rel!r}")
    base = root.resolve()
    path = (base / pure).resolve()
    if not path.is_relative_to(base) or not path.is_file() or path.suffix.lower() not in MEDIA_TYPES:
        raise ResultPathError(f"no result file {rel!r}")
    return path


def plots_for(files: list[ResultFile], rel: str) -> list[ResultFile]:
    """PNG files beside `rel` whose name starts with its stem (smollm2.json -> smollm2-loss.png)."""
    p = PurePosixPath(rel)
    return [f for f in files if f.suffix == ".png" and f.folder == str(p.parent) and f.name.startswith(p.stem)]


def load_json(path: Path) -> Any:
    if path.stat().st_size > MAX_JSON_BYTES:
        raise ValueError(f"{path.name} is larger than {MAX_JSON_BYTES >> 20} MiB: open it raw")
    return json.loads(path.read_text(encoding="utf-8"))


def columns(rows: list) -> list[str]:
    """The union of the keys of a list of objects, in first-seen order (the table's columns)."""
    seen: dict[str, None] = {}
    for r in rows:
        if isinstance(r, dict):
            seen.update(dict.fromkeys(map(str, r)))
    return list(seen)


def is_table(value: Any) -> bool:
    """A non-empty list of objects: rendered as one table, a row per object."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
