"""Context managers behind one contract (`base.Manager`), so a benchmark compares them on the
same backbone by changing one name:

* `scroll`      - the full system: the agent loop, kernel, `ms`, eviction (`loop.ScrollManager`)
* `no_log` / `no_kernel` / `no_index` - the paper's ablations: the loop without `ms` over the
  history (the newest history that fits is in the view), without resident variables, without
  the headline index
* `truncate`    - the newest turns that fit, one call (`truncate.TruncateManager`)
* `rag`         - top-k BM25 turns in time order, one call (`rag.RagManager`)
* `lcm`         - LCM's loop: its tools over the summary DAG, then final (`lcm_loop.LcmLoopManager`)
* `lcm-context` - LCM's summary DAG context, one answer call (`lcm_context.LcmContextManager`)

    make_manager("rag", k=30).answer(log, question, sessions=granted, llm=llm, budget=Budget(8192))

Modules load lazily: importing this package loads nothing but the registry.
"""
from __future__ import annotations

import importlib
from typing import Any

MANAGERS = {
    "scroll": ("scroll.managers.loop", "ScrollManager"),
    "no_log": ("scroll.managers.loop", "ScrollManager"),      # ablations: the loop with one part off
    "no_kernel": ("scroll.managers.loop", "ScrollManager"),
    "no_index": ("scroll.managers.loop", "ScrollManager"),
    "truncate": ("scroll.managers.truncate", "TruncateManager"),
    "rag": ("scroll.managers.rag", "RagManager"),
    "lcm": ("scroll.managers.lcm_loop", "LcmLoopManager"),
    "lcm-context": ("scroll.managers.lcm_context", "LcmContextManager"),
}


ONE_CALL = ("truncate", "rag", "lcm-context")   # never write the log: they only read it
LOOPED = ("scroll", "no_log", "no_kernel", "no_index", "lcm")   # an agent loop: writes its own agent session


def make_manager(name: str, **options: Any) -> Any:
    """The manager called `name`, built with `options` (its dataclass fields)."""
    if name not in MANAGERS:
        raise ValueError(f"unknown context manager {name!r}; known: {sorted(MANAGERS)}")
    module, cls = MANAGERS[name]
    if module == "scroll.managers.loop":
        options = {"name": name, **options}
    return getattr(importlib.import_module(module), cls)(**options)


__all__ = ["MANAGERS", "ONE_CALL", "LOOPED", "make_manager"]
