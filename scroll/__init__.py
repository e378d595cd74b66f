"""Scroll: programmatic, lossless context management for long-horizon LLM agents.

The light core (event log, payload store, search, kernel, CLI) imports without torch or
vllm. Public names are loaded lazily so `import scroll` stays cheap.
"""
from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "EventLog": ("scroll.events", "EventLog"),
    "Event": ("scroll.events", "Event"),
    "Hit": ("scroll.events", "Hit"),
    "PayloadStore": ("scroll.payloads", "PayloadStore"),
    "Handle": ("scroll.payloads", "Handle"),
    "SearchIndex": ("scroll.search", "SearchIndex"),
    "Kernel": ("scroll.kernel", "Kernel"),
    "Capability": ("scroll.capability", "Capability"),
    "Origin": ("scroll.origin", "Origin"),
    "LabelStore": ("scroll.labels", "LabelStore"),
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(mod), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'scroll' has no attribute {name!r}")
