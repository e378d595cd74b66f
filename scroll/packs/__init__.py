"""Task packs: what a run may add to the core loop for one family of generated tasks.

The core speaks only `ms` and Python: its system prompt and kernel prelude (scroll.prompts,
scroll/toolkit.py) name no helper built for a task generator. Anything shaped by one (its
helpers, its prompt text, its program templates and the regex teacher that writes them)
lives in a pack, which a run names explicitly (`LoopConfig.pack`, `--pack NAME`) and which
every run records (the task event's meta, RunRecord.pack).

    pack = get_pack("generated")
    pack.prompt     # text appended to the system prompt
    pack.prelude    # Python run in the kernel after the core prelude
    pack.teacher    # the name of its labelled non-LLM teacher (scroll.policies.teachers)
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

# name -> "module:ATTRIBUTE" of its TaskPack (imported on first use: a pack may be heavy)
REGISTRY = {"generated": "scroll.packs.generated:PACK"}


@dataclass(frozen=True)
class TaskPack:
    name: str
    description: str
    prompt: str                      # appended to the core system prompt
    prelude: str                     # run in the kernel after the core prelude
    teacher: str                     # its teacher's name in scroll.policies.teachers (labelled, non-LLM)


def pack_names() -> list[str]:
    return sorted(REGISTRY)


def get_pack(name: str | None) -> TaskPack | None:
    """The pack called `name` (None: no pack). Unknown names get an error listing the known ones."""
    if name is None:
        return None
    try:
        module, attr = REGISTRY[name].split(":")
    except KeyError:
        raise ValueError(f"unknown task pack {name!r}; known: {', '.join(pack_names())}") from None
    return getattr(importlib.import_module(module), attr)


def check_kernel_pack(kernel, pack: str | None) -> None:
    """A given executor must have been built with the run's pack (its prelude defines the pack's helpers);
    executors that do not say (no `.pack`) are taken as they are."""
    if hasattr(kernel, "pack") and kernel.pack != pack:
        raise ValueError(f"the kernel was built for task pack {kernel.pack!r}, this run has {pack!r}")
