"""Export a session's cells as a Jupyter notebook (.ipynb) that nbclient can execute.

Each logged `kind="code"` cell becomes a code cell carrying its logged exposure as a
stream output (and its error). Cells that failed with an exception get the
`raises-exception` tag, so nbclient runs on past them; cells that timed out or killed the
kernel become markdown cells (running them again would hang or crash the notebook).

`ms` in the exported notebook: a first setup cell (tag `scroll-setup`) calls
`connect_ms(db, sessions=...)`, which opens the log in that notebook's process, serves it
through the same read-only service as the sandboxed kernel (a thread, a unix socket in a
private temp dir) with the run's session scope, and returns the same `ms` client object.
A notebook kernel (Jupyter, nbclient) is NOT sandboxed: it runs as whoever runs the
notebook. Pass `with_ms=False` to leave the setup cell out.

A FAITHFUL replay is `replay_notebook` (`scroll kernel replay NB`): the code cells run in
a fresh sandboxed Kernel (same sandbox, no network) whose `ms` has the run's session scope
(recorded in the notebook's metadata), over a snapshot of the log (the log itself is never
written), and each cell's printout is compared with the one the run logged. Events appended
in scope after the run can change hits: the replay then says which cells differ.
"""
from __future__ import annotations

import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import scroll

from scroll.capability import Capability
from scroll.events import EventLog
from scroll.files import FileAttacher
from scroll.packs import get_pack
from scroll.prompts import kernel_prelude
from .kernel import Kernel, MS_CLIENT_SOURCE
from .service import serve_in_thread

_SERVED: list = []  # keep services (and their logs) alive for the notebook's lifetime


def ms_client_module() -> types.ModuleType:
    mod = sys.modules.get("scroll_ms")
    if mod is None:
        mod = types.ModuleType("scroll_ms")
        exec(compile(MS_CLIENT_SOURCE, "scroll_ms", "exec"), mod.__dict__)
        sys.modules["scroll_ms"] = mod
    return mod


def connect_ms(db: str | os.PathLike, headlines=None, sessions: list[str] | None = None) -> Any:
    """Serve the log at `db` read-only in a thread of this process; return an `ms` client whose
    reads are limited to `sessions` (None: the whole log), as the run's were."""
    import warnings

    # bm25s pulls tqdm.auto, which warns in notebooks without ipywidgets
    warnings.filterwarnings("ignore", message="IProgress not found")
    d = tempfile.mkdtemp(prefix="scroll-ms-")
    path = os.path.join(d, "ms.sock")
    thread, stop = serve_in_thread(path, lambda: Capability(EventLog(db, readonly=True), headlines=headlines,
                                                             sessions=sessions))
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
    events = list(log.events(session=session))
    for ev in events:
        if ev.kind == "code":
            codes[ev.seq] = ev
        elif ev.kind == "output" and isinstance((ev.meta or {}).get("code_seq"), int):
            outputs[ev.meta["code_seq"]] = ev
    if not codes:
        raise KeyError(f"session {session!r} has no code cells")
    scope = run_scope(events, session)
    tasks = [e for e in events if e.kind == "task"]
    nb = nbf.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["scroll"] = {"session": session, "db": str(Path(log.path).resolve()), "sessions": scope,
                             # an agent run's kernel had the loop's prelude (final, the helpers, its pack's)
                             "prelude": bool(tasks), "pack": (tasks[-1].meta or {}).get("pack") if tasks else None}
    if with_ms:
        root = str(Path(scroll.__file__).resolve().parent.parent)
        setup = (f"# scroll: `ms` over the log, read-only, with the run's session scope. This notebook is\n"
                 f"# NOT sandboxed; for a faithful replay: scroll kernel replay THIS.ipynb\n"
                 f"import sys\n"
                 f"if {root!r} not in sys.path:\n"
                 f"    sys.path.insert(0, {root!r})\n"
                 f"from scroll.kernel.notebook import connect_ms\n"
                 f"ms = connect_ms({str(Path(log.path).resolve())!r}, sessions={scope!r})")
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


def run_scope(events: list, session: str) -> list[str] | None:
    """The sessions `ms` could read in the run of `session`, from its `events` (None: the whole log):
    what its kernel logged with its last cell, else its last task's grant plus the session itself, else
    the whole log (cells logged before kernels recorded their scope)."""
    last_code = last_task = None
    for e in events:
        if e.kind == "code" and "sessions" in (e.meta or {}):
            last_code = e
        elif e.kind == "task":
            last_task = e
    if last_code is not None:
        return last_code.meta["sessions"]
    granted = (last_task.meta or {}).get("sessions") if last_task is not None else None
    return None if granted is None else sorted({*granted, session})


def replay_notebook(nb_path: str | os.PathLike, db: str | os.PathLike | None = None, *, timeout: float = 30,
                    memory_limit: str = "4G") -> dict:
    """Run an exported notebook's cells again in a fresh SANDBOXED Kernel whose `ms` has the run's
    session scope, over a snapshot of the log (the log is not written); compare each printout with
    the logged one. Returns {"cells", "same", "differ": [{"seq", "logged", "replayed"}], "db"}."""
    import shutil

    import nbformat

    nb = nbformat.read(str(nb_path), as_version=4)
    info = nb.metadata.get("scroll") or {}
    if "session" not in info:
        raise ValueError(f"{nb_path}: not a notebook of `scroll kernel export` (no scroll metadata)")
    db = Path(db or info.get("db", ""))
    scope = info.get("sessions", [info["session"]])
    tmp = Path(tempfile.mkdtemp(prefix="scroll-replay-"))  # the snapshot: the kernel sees its dir hidden
    try:
        with EventLog(db, readonly=True) as src:
            src.snapshot(tmp / "replay.db")
        own = f"replay:{info['session']}"
        with EventLog(tmp / "replay.db") as log:
            cap = Capability(log, sessions=scope, own_session=own,  # the own session is always in scope
                             files=FileAttacher(log, own))
            differ, n = [], 0
            prelude = kernel_prelude(get_pack(info.get("pack"))) if info.get("prelude") else None
            with Kernel(log, own, timeout=timeout, memory_limit=memory_limit, capability=cap,
                        replay_on_open=False, prelude=prelude) as k:
                for cell in nb.cells:
                    if cell.cell_type != "code" or "scroll-setup" in cell.metadata.get("tags", []):
                        continue
                    n += 1
                    r = k.execute(cell.source)
                    logged = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
                    errs = [o for o in cell.outputs if o.get("output_type") == "error"]
                    logged_err = errs[0].get("ename") if errs else None
                    got_err = (r.error or "").split(":", 1)[0] or None
                    if r.stdout != logged or got_err != logged_err:
                        differ.append({"seq": cell.metadata.get("scroll", {}).get("seq"), "logged": logged[:500],
                                       "replayed": r.stdout[:500], "logged_error": logged_err, "error": got_err})
        return {"cells": n, "same": n - len(differ), "differ": differ, "db": str(db), "sessions": scope}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
