"""Every environment variable Scroll reads, in one place. Nothing happens at import time.

    SCROLL_HOME        where commands put their files (default ./var)
    SCROLL_DB          the default event log (default $SCROLL_HOME/scroll.db)
    SCROLL_CONFIG_DIR  config folder(s) searched first (os.pathsep-separated)
    SCROLL_MODELS_DIR  where relative model paths resolve (default /models, else ./var/models)

Config lookup: `config_dirs()` is the ONE search path for every kind of config
(`loop.yaml`, `llm/<preset>.yaml`, `models/<preset>.yaml`), in this order:
  1. `$SCROLL_CONFIG_DIR` (each entry, when set),
  2. the checkout's `configs/` (when Scroll runs from a source checkout, editable installs too),
  3. the packaged defaults `scroll/defaults/` (a copy of `configs/` inside an installed wheel).
The first folder that holds the wanted file wins (`config_file`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

_PACKAGE = Path(__file__).resolve().parent   # .../scroll


def data_dir() -> Path:
    """Where commands put their files when no path is given (SCROLL_HOME, default ./var)."""
    return Path(os.environ.get("SCROLL_HOME", "var")).resolve()


def default_db() -> Path:
    """The event log used when `--db` is not given (SCROLL_DB, default $SCROLL_HOME/scroll.db)."""
    value = os.environ.get("SCROLL_DB")
    return Path(value).resolve() if value else data_dir() / "scroll.db"


def models_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where relative model paths resolve: $SCROLL_MODELS_DIR, else /models when it exists,
    else ./var/models."""
    env = os.environ if environ is None else environ
    if env.get("SCROLL_MODELS_DIR"):
        return Path(env["SCROLL_MODELS_DIR"]).expanduser()
    if Path("/models").is_dir():
        return Path("/models")
    return Path("var/models").resolve()


def checkout_configs() -> Path | None:
    """`configs/` of the source checkout this code runs from, or None (an installed wheel)."""
    root = _PACKAGE.parent
    if (root / "pyproject.toml").is_file() and (root / "configs").is_dir():
        return root / "configs"
    return None


def packaged_configs() -> Path | None:
    """`scroll/defaults/`: the copy of `configs/` shipped inside the wheel, or None."""
    d = _PACKAGE / "defaults"
    return d if d.is_dir() else None


def config_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The config search path, first match wins: $SCROLL_CONFIG_DIR entries (listed even when
    missing, so errors name them), the checkout's configs/, the packaged defaults."""
    env = os.environ if environ is None else environ
    dirs: list[Path] = [Path(p).expanduser() for p in env.get("SCROLL_CONFIG_DIR", "").split(os.pathsep) if p]
    dirs += [d for d in (checkout_configs(), packaged_configs()) if d is not None]
    seen: set[Path] = set()
    out: list[Path] = []
    for d in dirs:
        r = d.resolve()
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out


def config_file(relpath: str | os.PathLike, environ: Mapping[str, str] | None = None) -> Path | None:
    """The first `DIR/relpath` that is a file, over `config_dirs()`; None when none is."""
    for d in config_dirs(environ):
        cand = d / relpath
        if cand.is_file():
            return cand
    return None


def read_yaml(path: str | os.PathLike, section: str | None = None) -> dict:
    """The one reader of the project's YAML files (loop, LLM, model, task-set, SFT, proxy and recall-set
    configs): the mapping in `path`, or the one under `section:` when the file has that key; an empty
    file is {}. ValueError naming the file when it cannot be read, is not YAML or is not a mapping;
    each config type checks its own fields."""
    import yaml  # a light-core dependency, loaded when a config is read, not at import

    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror or e})") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML: {e}") from None
    raw = {} if raw is None else raw
    if section is not None and isinstance(raw, dict) and section in raw:
        raw = raw[section]
    if not isinstance(raw, dict):
        where = f" (under `{section}:`)" if section else ""
        raise ValueError(f"{path}: expected a mapping{where}, got {type(raw).__name__}")
    return raw
