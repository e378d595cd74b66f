"""Machine and version facts, peak memory, percentiles, and the rich table of a bench run."""
from __future__ import annotations

import json
import platform
import resource
import sqlite3
import sys

from scroll import provenance


def versions(extra: tuple[str, ...] = ()) -> dict:
    """Python, SQLite and the packages a bench depends on (plus `extra` distributions)."""
    out = {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version}
    return out | provenance.versions(("bm25s", "numpy", "PyStemmer", "scroll-agent", *extra))


machine = provenance.machine


def run_provenance(extra: tuple[str, ...] = ()) -> dict:
    """A bench result's commit, machine, versions (the bench's own packages) and time."""
    return provenance.provenance() | {"versions": versions(extra)}


def peak_rss() -> dict:
    """This process's peak resident memory. VmHWM is per address space, so it is not
    inflated by the parent's memory at fork/exec time, unlike ru_maxrss can be."""
    hwm = None
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {"vmhwm_bytes": hwm, "ru_maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def human_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _f(v) -> str:
    return "-" if v is None else (f"{v:.2f}" if v < 10 else f"{v:,.1f}" if v < 1000 else f"{v:,.0f}")


# (label, raw value getter, formatter); the ratio column is ours / FTS5 of the raw values.
ROWS = [
    ("events (bulk + appended)", lambda r: r["events_bulk"] + r["events_tail"], lambda v: f"{v:,.0f}"),
    ("ingest s (bulk, until searchable)", lambda r: r["ingest_s"], _f),
    ("ingest events/s", lambda r: r["events_bulk"] / r["ingest_s"], lambda v: f"{v:,.0f}"),
    ("append p50 ms (incl. index)", lambda r: r["append"]["p50_ms"], _f),
    ("append p95 ms", lambda r: r["append"]["p95_ms"], _f),
    ("append p99 ms", lambda r: r["append"]["p99_ms"], _f),
    ("append max ms (flushes + merges)", lambda r: r["append"]["max_ms"], _f),
    ("search p50 ms", lambda r: r["search"]["p50_ms"], _f),
    ("search p95 ms", lambda r: r["search"]["p95_ms"], _f),
    ("search+session p50 ms", lambda r: r["search_session"]["p50_ms"], _f),
    ("search+session p95 ms", lambda r: r["search_session"]["p95_ms"], _f),
    ("interleaved search p50 ms", lambda r: r["interleaved"]["p50_ms"], _f),
    ("interleaved search p95 ms", lambda r: r["interleaved"]["p95_ms"], _f),
    ("recall@10 of the timed queries", lambda r: r["recall_at_10"]["recall"], lambda v: f"{v:.3f}"),
    ("just-appended found (share)", lambda r: r["fresh_found"] / max(1, r["fresh_total"]), lambda v: f"{v:.3f}"),
    ("reopen + first search s", lambda r: r["reopen_s"], _f),
    ("peak RSS MB", lambda r: r["rss"]["vmhwm_bytes"] / 2**20, _f),
    ("index on disk MB", lambda r: r["index_bytes"] / 2**20, _f),
    ("database file MB", lambda r: r["db_bytes"] / 2**20, _f),
    ("machine load (1m avg, end of run)", lambda r: r["loadavg_1m_start_end"][1], _f),
]


def table(result: dict):
    """A rich Table: one row per measure; per size a column per system, then ours/FTS5."""
    from rich.table import Table

    m = result["machine"]
    t = Table(title=f"Scroll search vs SQLite FTS5 - {m['cpu']}, {m['cores']} cores, "
                    f"{human_bytes(m['ram_bytes'])} RAM",
              caption="load above ~1 means other processes shared the cores: timings are inflated")
    t.add_column("measure")
    for run in result["runs"]:
        tag = f"{run['words'] / 1e6:.3g}M {run.get('shape', 'chat')}"
        for system in run["systems"]:
            t.add_column(f"{tag} {system}", justify="right")
        t.add_column("ours/FTS5", justify="right")
    for name, get, fmt in ROWS:
        cells = []
        for run in result["runs"]:
            vals = {s: _get(get, r, run) for s, r in run["systems"].items()}
            cells += [fmt(v) if v is not None else "-" for v in vals.values()]
            a, b = vals.get("ours"), vals.get("fts5")
            cells.append(f"{a / b:.3f}" if a is not None and b else "-")
        t.add_row(name, *cells)
    return t


def quality_table(q: dict):
    from rich.table import Table

    t = Table(title=f"Evidence recall@{q['k']} ({q['dataset']}, session filter, {q['questions']} questions)")
    t.add_column("system")
    cats = sorted({c for r in q["systems"].values() for c in r.get("by_category", {})})
    t.add_column("recall@10", justify="right")
    for c in cats:
        t.add_column(c, justify="right")
    for name, r in q["systems"].items():
        t.add_row(name, f"{r['recall']:.3f}", *[f"{r['by_category'].get(c, {}).get('recall', float('nan')):.3f}"
                                                for c in cats])
    return t


def _get(get, r, run):
    if r is None or "error" in r:
        return None
    try:
        return float(get({**run, **r}))
    except (KeyError, TypeError, ZeroDivisionError):
        return None


def write_json(path: str, data: dict) -> None:
    with open(path, "w") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")


def console_print(obj) -> None:
    from rich.console import Console
    Console(file=sys.stdout, width=200).print(obj)
