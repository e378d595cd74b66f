"""The search tables of docs/benchmarks.md, rendered from the committed result files under a
repository root (never typed in). `scripts/benchmark_tables.py` writes them between the markers;
tests/test_benchmark_tables.py fails when the document and the result files disagree."""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from scroll.bench.recall_sets import PAIRED_NOTE, paired_cells

BEGIN, END = "<!-- search-tables:begin -->", "<!-- search-tables:end -->"
SPEED = ("results/bench/search-13m-long.json", "results/bench/search-10m-chat.json")
RECALL = "results/bench/recall-sets.json"
AB = "results/bench/search-ab.json"
INGEST = "results/bench/ingest-rounds.json"
RUNS = "results/bench/runs"
SYSTEMS = ("ours", "fts5", "fts5-fields", "bm25s")
SPEED_ROWS = [
    ("ingest s (bulk, until searchable)", lambda r: r["ingest_s"], "{:.1f}"),
    ("search p50 / p95 / p99 ms", lambda r: (r["search"]["p50_ms"], r["search"]["p95_ms"], r["search"]["p99_ms"]),
     "{:.2f} / {:.2f} / {:.2f}"),
    ("search with a session filter p50 / p95 ms", lambda r: (r["search_session"]["p50_ms"], r["search_session"]["p95_ms"]),
     "{:.2f} / {:.2f}"),
    ("search in the reopened log (a fresh process's view) p50 / p95 ms",
     lambda r: (r["search_reopened"]["p50_ms"], r["search_reopened"]["p95_ms"]), "{:.2f} / {:.2f}"),
    ("searches interleaved with appends p95 ms", lambda r: r["interleaved"]["p95_ms"], "{:.2f}"),
    ("append p50 / p99 / max ms (flushes + merges)",
     lambda r: (r["append"]["p50_ms"], r["append"]["p99_ms"], r["append"]["max_ms"]), "{:.2f} / {:.2f} / {:.1f}"),
    ("append p99 / max ms of the appends while a background flush or merge of ours ran (how many)",
     lambda r: (r["append_during_background"]["p99_ms"], r["append_during_background"]["max_ms"],
                r["append_during_background"]["n"]), "{:.2f} / {:.1f} ({:,})"),
    ("append p99 / max ms without the appends during a disk stall (left out: the probe's own fdatasync "
     "took over 5 ms meanwhile, no background work of the system in flight)",
     lambda r: (r["append_machine_quiet"]["p99_ms"], r["append_machine_quiet"]["max_ms"],
                r["append_machine_quiet"]["left_out"]), "{:.2f} / {:.1f} ({})"),
    ("recall@10 of the timed queries", lambda r: r["recall_at_10"]["recall"], "{:.3f}"),
    ("peak RSS MB", lambda r: r["rss"]["vmhwm_bytes"] / 2**20, "{:.0f}"),
    ("index on disk MB", lambda r: r["index_bytes"] / 2**20, "{:.1f}"),
]


def _cell(fmt: str, get, r: dict | None) -> str:
    if not r or "error" in r:
        return "-"
    try:
        v = get(r)
    except (KeyError, TypeError):
        return "-"
    return fmt.format(*v) if isinstance(v, tuple) else fmt.format(v)


_PROBE_SAW = {"fsync": "the probe's own fsync took {ms:.0f} ms then",
              "late": "the probe's own wake-up came {ms:.0f} ms late then"}


def _probe_saw(worst: dict, nothing: str) -> str:
    """What the stall probe saw during a slowest-append record (`nothing`: it saw nothing slow)."""
    probe = worst.get("probe")
    return _PROBE_SAW[probe["kind"]].format(ms=probe["ms"]) if probe else nothing


def _slowest_note(run: dict, systems: list[str]) -> str:
    """Each system's slowest append and what the machine-stall probe saw during it (older result
    files have no such record: no note)."""
    parts = []
    for s in systems:
        worst = (run["systems"][s].get("append_slowest") or [None])[0]
        if worst is None:
            continue
        saw = _probe_saw(worst, "the probe saw nothing slow then")
        bg = {True: ", our background flush running", False: ", no background work", None: ""}[worst["background"]]
        parts.append(f"{s} {worst['ms']:.1f} ms (append {worst['append']:,}, {worst['cpu_ms']:.1f} ms of it on "
                     f"the CPU{bg}; {saw})")
    if not parts:
        return ""
    return ("\nThe slowest append of each system, with what a separate probe process (2 ms sleeps and 4 KiB "
            "fdatasyncs of its own, `scroll/bench/stallprobe.py`) saw at that moment: " + "; ".join(parts) + ".\n")


def speed_table(res: dict) -> str:
    run = res["runs"][0]
    m = res["machine"]
    cal = res.get("calibration", {}).get("python_loop_10m_s")
    head = (f"**{run['words'] / 1e6:.1f} M words, {run.get('shape', 'chat')} shape** ({run['events']:,} events; "
            f"`{res['command']}`; `{Path(res.get('_path', '')).name}`; {m['cpu']}, {m['cores']} cores"
            + (f", a 10 M-step Python loop in {cal:.2f} s" if cal else "")
            + f"; git {res['git_sha'][:10]}; load at the end {run['systems']['ours']['loadavg_1m_start_end'][1]:.2f})\n\n")
    systems = [s for s in SYSTEMS if s in run["systems"]]
    lines = ["| measure | " + " | ".join(systems) + " |", "|---|" + "---:|" * len(systems)]
    for name, get, fmt in SPEED_ROWS:
        lines.append(f"| {name} | " + " | ".join(_cell(fmt, get, run["systems"][s]) for s in systems) + " |")
    ours = run["systems"].get("ours", {})
    ratios = [f"{p} {ours['ingest_s'] / run['systems'][p]['ingest_s']:.2f}x" for p in ("fts5", "fts5-fields")
              if "ingest_s" in run["systems"].get(p, {}) and "ingest_s" in ours]
    tail = f"\nIngest, ours / peer: {', '.join(ratios)}.\n" if ratios else ""
    if "index_flushes_during_appends" in ours:
        tail += (f"\nDuring our {ours['append']['n']:,} timed appends the index wrote "
                 f"{ours['index_flushes_during_appends']} tail segments in the background and took them into use "
                 "(each with its merges); "
                 "FTS5 merges its segments inside its commits.\n")
    if res.get("config", {}).get("settle"):
        tail += ("\nAfter its import, each system waits for an `os.sync()` (not counted in ingest) before the "
                 "timed searches and appends, so that they do not run against the import's writeback.\n")
    tail += _slowest_note(run, systems)
    probe = res.get("calibration", {}).get("fsync_probe")
    if probe:
        tail += (f"\nThe disk itself, same run: a 4 KiB write + fsync took p50 {probe['p50_ms']:.2f}, "
                 f"p99 {probe['p99_ms']:.2f}, max {probe['max_ms']:.1f} ms ({probe['n']} of them): every "
                 "synchronous=FULL commit, ours or FTS5's, waits for one.\n")
    return head + "\n".join(lines) + "\n" + tail


def runs_table(root: Path) -> str:
    """Every committed run of the two speed benches (the tables' files and `RUNS`' repeats), each
    corpus's runs in the order they ran: the appends' tails vary with the disk and the VM, and one
    run's table can't show that."""
    rows = []
    for f in [root / p for p in SPEED] + sorted((root / RUNS).glob("search-*-run*.json")):
        res = json.loads(f.read_text())
        run = res["runs"][0]
        ours = run["systems"].get("ours", {})
        if "append" not in ours:
            continue
        rows.append((run.get("shape", "chat"), run["words"], res.get("created", ""), f.relative_to(root), res, run))
    if not rows:
        return ""
    lines = ["| corpus | result file | git | ours: append p99 / max ms | max while our flush or merge ran | "
             "ours' slowest append: what the stall probe saw | FTS5 / FTS5-fields append max ms |",
             "|---|---|---|---:|---:|---|---:|"]
    for shape, words, _, path, res, run in sorted(rows, key=lambda r: (r[0], r[2])):
        ours = run["systems"]["ours"]
        during = ours.get("append_during_background", {})
        worst = (ours.get("append_slowest") or [None])[0]
        saw = "-" if worst is None else _probe_saw(worst, "nothing slow") + {
            True: " (our flush or merge running)", False: " (no background work of ours)", None: ""}[worst["background"]]
        peers = " / ".join(f"{run['systems'][p]['append']['max_ms']:.1f}" if "append" in run["systems"].get(p, {})
                           else "-" for p in ("fts5", "fts5-fields"))
        lines.append(f"| {words / 1e6:.0f} M {shape} | `{path}` | {res['git_sha'][:7]} | "
                     f"{ours['append']['p99_ms']:.2f} / {ours['append']['max_ms']:.1f} | "
                     + (f"{during['max_ms']:.1f}" if "max_ms" in during else "-") + f" | {saw} | {peers} |")
    return ("**Every committed run of the two commands above** (the tables' files and their repeats in "
            f"`{RUNS}/`, each `--out` path in its file's command; by corpus, in the order they ran; the search "
            "code is the same from 38467ca on, the rows before it ran older code):\n\n"
            + "\n".join(lines) + "\n")


def recall_table(res: dict) -> str:
    m = res["machine"]
    head = (f"**Evidence recall@{res['k']}, evaluation sets of three shapes** (report seeds of "
            f"`configs/recall-sets.yaml`, never tuned on; `{res['command']}` -> `{RECALL}`; "
            f"{m['cpu']}, git {res['git_sha'][:10]}):\n\n")
    lines = ["| set | questions | " + " | ".join(SYSTEMS)
             + " | ours - best peer | 95 % CI (points) | questions ours better / worse |",
             "|---|---:|" + "---:|" * len(SYSTEMS) + "---:|---:|---:|"]
    for r in res["rows"]:
        lines.append(f"| {r['shape']} seed {r['seed']} ({r['words'] / 1e6:.1f} M words) | {r['questions']} | "
                     + " | ".join(f"{r['systems'][s]['recall']:.3f}" for s in SYSTEMS)
                     + f" | {r['ours_minus_best_peer_points']:+.1f} | {paired_cells(r)} |")
    return head + "\n".join(lines) + "\n\n" + PAIRED_NOTE + "\n"


def ab_label(row: dict) -> str:
    """"search p50 ms", "ingest s": an A/B row's measure, statistic and unit."""
    return " ".join(x for x in (row["measure"].replace("_", " "), row["stat"], row["unit"]) if x)


def ingest_table(res: dict) -> str:
    """Ingest alone, the systems taking turns, several rounds (scripts/bench_ingest.py)."""
    m = res["machine"]
    head = (f"**Ingest alone, {res['rounds']} rounds, the systems taking turns** (`{res['command']}` -> "
            f"`{INGEST}`; {m['cpu']}, {m['cores']} cores; git {res['git_sha'][:10]}):\n\n")
    peers = list(res["corpora"][0]["ours_over_peer"])
    lines = ["| corpus | events imported | " + " | ".join(f"{s} median s (all)" for s in ("ours", *peers))
             + " | " + " | ".join(f"ours / {p}" for p in peers) + " |",
             "|---|---:|" + "---:|" * (1 + 2 * len(peers))]
    for c in res["corpora"]:
        cells = [f"{c['median_s'][s]:.2f} ({', '.join(f'{x:.2f}' for x in c['ingest_s'][s])})" for s in ("ours", *peers)]
        cells += [f"{c['ours_over_peer'][p]:.2f}x" for p in peers]
        lines.append(f"| {c['words'] / 1e6:.1f} M words, {c['shape']} | {c['events_bulk']:,} | " + " | ".join(cells) + " |")
    settled = [f"{c['words'] / 1e6:.1f} M {c['shape']} {statistics.median(c['ours_settled_s']):.2f} s"
               for c in res["corpora"] if c.get("ours_settled_s")]
    note = ("\nOurs is searchable (exactly) when its last `append_many` returns; its last background merge "
            f"ended later, median: {', '.join(settled)}.\n") if settled else ""
    return head + "\n".join(lines) + "\n" + note


def ab_table(res: dict) -> str:
    """Our engine against an earlier commit of itself, one run (scripts/bench_search_ab.py)."""
    m = res["machine"]
    cs = res["corpora"]
    head = (f"**Against an earlier commit of itself, side by side** (`{res['command']}` -> `{AB}`; base "
            f"{res['base'][:10]}, head {res['git_sha'][:10]}; the two alternate, {res['rounds']} rounds each, "
            f"medians; {m['cpu']}, {m['cores']} cores; neither waits for an `os.sync()` after its import, "
            "so the appends meet the import's writeback):\n\n")
    lines = ["| measure | " + " | ".join(f"{c['words'] / 1e6:.0f} M {c['shape']}: base / head (ratio)" for c in cs) + " |",
             "|---|" + "---:|" * len(cs)]
    for i, row in enumerate(cs[0]["rows"]):
        cells = []
        for c in cs:
            r = c["rows"][i]
            cells.append(f"{r['base']:.2f} / {r['head']:.2f} ({r['head_over_base']:.2f}x)")
        lines.append(f"| {ab_label(row)} | " + " | ".join(cells) + " |")
    return head + "\n".join(lines) + "\n"


def block(root: Path) -> str:
    """Every search table whose result file exists under `root`, in the document's order."""
    parts = []
    if (root / RECALL).exists():
        parts.append(recall_table(json.loads((root / RECALL).read_text())))
    for p in SPEED:
        if (root / p).exists():
            res = json.loads((root / p).read_text())
            res["_path"] = p
            parts.append(speed_table(res))
    runs = runs_table(root)
    if runs:
        parts.append(runs)
    if (root / INGEST).exists():
        parts.append(ingest_table(json.loads((root / INGEST).read_text())))
    if (root / AB).exists():
        parts.append(ab_table(json.loads((root / AB).read_text())))
    return "\n".join(parts)


def replace_in(doc: str, new_block: str) -> str:
    a, b = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    return doc[:a] + "\n" + new_block + doc[b:]


def current(doc: str) -> str:
    a, b = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    return doc[a:b].strip("\n") + "\n"

