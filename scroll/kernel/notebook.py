"""Export a session's cells as a Jupyter notebook (.ipynb) that nbclient can execute.

Each logged `kind="code"` cell becomes a code cell carrying its logged exposure as a
stream output (and its error). Cells that failed with an exception get the
`raises-exception` tag, so nbclient runs on past them; cells that timed out or killed the
kernel become markdown cells (running them again would hang or crash the notebook).

`ms` in the exported notebook: a first setup cell (tag `scroll-setup`) calls
`connect_ms(db)`, which opens the log in that notebook's process, serves it through the
same read-only service as the sandboxed kernel (a thread, a unix socket in a private temp
dir) and returns the same `ms` client object. The notebook kernel is NOT sandboxed: it
runs as whoever runs the notebook. Pass `with_ms=False` to leave the setup cell out.
"""
from __future__ import annotations

import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import scroll

from .kernel import MS_CLIENT_SOURCE
from .service import serve_in_thread

_SERVED: list = []  # keep services (and their logs) alive for the notebook's lifetime


def ms_client_module() -> types.ModuleType:
    mod = sys.modules.get("scroll_ms")
    if mod is None:
        mod = types.ModuleType("scroll_ms")
        exec(compile(MS_CLIENT_SOURCE, "scroll_ms", "exec"), mod.__dict__)
        sys.modules["scroll_ms"] = mod
    return mod


def connect_ms(db: str | os.PathLike, headlines=None) -> Any:
    """Serve the log at `db` read-only in a thread of this process; return an `ms` client."""
    import warnings

    from scroll.capability import Capability
    from scroll.events import EventLog

    # bm25s pulls tqdm.auto, which warns in notebooks without ipywidgets
    warnings.filterwarnings("ignore", message="IProgress not found")
    d = tempfile.mkdtemp(prefix="scroll-ms-")
    path = os.path.join(d, "ms.sock")
    thread, stop = serve_in_thread(path, lambda: Capability(EventLog(db, readonly=True), headlines=headlines))
    _SERVED.append((thread, stop))
    return ms_client_module().Ms(path)


def _stream(text: str):
    import nbformat.v4 as nbf

    return nbf.new_output("stream", name="stdout", text=text)


def export_notebook(log: Any, session: str, out: str | os.PathLike, *, with_ms: bool = True) -> dict:
    """Write the session as .ipynb; returns {"path", "cells", "skipped"}."""
    import nbformat
    import nbformat.v4 as nbf

    codes: dict[int, Any] = {}
    outputs: dict[int, Any] = {}
    for ev in log.events(session=session):
        if ev.kind == "code":
            codes[ev.seq] = ev
        elif ev.kind == "output" and isinstance((ev.meta or {}).get("code_seq"), int):
            outputs[ev.meta["code_seq"]] = ev
    if not codes:
        raise KeyError(f"session {session!r} has no code cells")
    nb = nbf.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["scroll"] = {"session": session, "db": str(Path(log.path).resolve())}
    if with_ms:
        root = str(Path(scroll.__file__).resolve().parent.parent)
        setup = (f"# scroll: `ms` over the log, read-only (this notebook is not sandboxed)\n"
                 f"import sys\n"
                 f"if {root!r} not in sys.path:\n"
                 f"    sys.path.insert(0, {root!r})\n"
                 f"from scroll.kernel.notebook import connect_ms\n"
                 f"ms = connect_ms({str(Path(log.path).resolve())!r})")
        nb.cells.append(nbf.new_code_cell(setup, metadata={"tags": ["scroll-setup"]}))
    skipped = []
    for seq in sorted(codes):
        ev, res = codes[seq], outputs.get(seq)
        meta = (res.meta or {}) if res else {}
        if res is None or meta.get("timed_out") or "KernelDied" in (meta.get("error") or ""):
            why = "no result logged" if res is None else (meta.get("error") or "").splitlines()[0]
            nb.cells.append(nbf.new_markdown_cell(
                f"**scroll seq {seq}: not run on export** ({why})\n\n```python\n{ev.text}\n```"))
            skipped.append(seq)
            continue
        cell = nbf.new_code_cell(ev.text, metadata={"scroll": {"seq": seq, "output_seq": res.seq}})
        if res.text:
            cell.outputs.append(_stream(res.text))
        if meta.get("error"):
            first = meta["error"].splitlines()[0]
            ename, _, evalue = first.partition(": ")
            cell.outputs.append(nbf.new_output("error", ename=ename, evalue=evalue,
                                               traceback=meta["error"].splitlines()))
            cell.metadata["tags"] = ["raises-exception"]
        nb.cells.append(cell)
    nbformat.validate(nb)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(out))
    return {"path": str(out), "cells": len(codes) - len(skipped), "skipped": skipped}
