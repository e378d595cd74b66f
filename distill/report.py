"""The distillation report: success per split and label with 95 % Wilson intervals, gap closed,
per-round costs, accuracy per round.

    python -c "from distill.report import build_report; print(build_report(['var/runs/teacher']))"
    scroll distill report --runs var/eval/teacher --runs var/eval/untrained --runs var/eval/trained \\
        --out var/report.json --md var/report.md [--costs costs.json]

Every number is recomputed from the runner's JSONL records (`runs.jsonl`, one RunRecord
per task; the last record per (label, task_id) counts), never typed in. Per split
(test_unseen, test_paraphrase, test_heldout_kind, natural first, then any other) and label
(the regex teacher `teacher`, the wording-robust teacher `writer`, `untrained`, then the
trained students by round: `trained-r0`, `trained-r1`, ...): tasks, correct, success rate
with its 95 % Wilson interval (scroll.stats.wilson), executable-cell rate (cells that ran
without an exception / model replies, pooled), mean steps, mean exposure / prompt /
completion tokens, mean and total wall seconds, runner errors (a checker that raised is
one, also counted as `check_errors`). Per split and trained label: `gap_closed = (trained -
untrained) / (teacher - untrained)` on success rates, null when the teacher leads the
untrained student by less than 10 points (the ratio would be noise). `rounds`: each round's
trained label and its rate per split, beside the teachers' and the untrained student's
(distill/plots.py draws it: REPORT-rounds.png next to the report). `costs` (given by the
caller, e.g. scripts/distill_cpu.py): wall and CPU seconds of every step, per round. Plus
what produced the records (each label's backends and task pack), the machine, the git SHA
and library versions.
"""
from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

from distill.export import is_check_error
from scroll.provenance import git_sha, machine, versions
from scroll.runner import RUNNER_ERROR, RunRecord, load_records
from scroll.stats import wilson

SPLIT_ORDER = ("test_unseen", "test_paraphrase", "test_heldout_kind", "natural")
NON_MODEL_BACKENDS = ("reference-policy", "program-writer")   # the teachers: deterministic, not models
COST_STEPS = ("collect", "sample", "export", "sft", "eval")   # the cost table's columns, first
MIN_GAP = 0.10                   # teacher - untrained below this: gap_closed is null
VERSION_PACKAGES = ("scroll-agent", "torch", "transformers", "trl", "peft", "datasets", "vllm", "accelerate")


def gap_closed(trained: float | None, untrained: float | None, teacher: float | None,
               min_gap: float = MIN_GAP) -> tuple[float | None, str | None]:
    """(gap closed, why null): (trained - untrained) / (teacher - untrained)."""
    if trained is None or untrained is None or teacher is None:
        return None, "a label has no records on this split"
    gap = teacher - untrained
    if gap < min_gap - 1e-12:
        return None, f"teacher - untrained = {100 * gap:.1f} points < {100 * min_gap:.0f}"
    return (trained - untrained) / gap, None


def _mean(values) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def label_stats(recs: list[RunRecord]) -> dict:
    n = len(recs)
    k = sum(1 for r in recs if r.correct)
    ci = wilson(k, n)
    steps = sum(r.steps for r in recs)
    return {
        "tasks": n, "correct": k, "success_rate": k / n if n else None,
        "ci95": list(ci) if ci else None,
        "executable_cells": sum(r.executable_cells for r in recs), "replies": steps,
        "executable_cell_rate": sum(r.executable_cells for r in recs) / steps if steps else None,
        "mean_steps": _mean(r.steps for r in recs),
        "mean_exposure_tokens": _mean(r.exposure_tokens for r in recs),
        "mean_prompt_tokens": _mean(r.prompt_tokens for r in recs),
        "mean_completion_tokens": _mean(r.completion_tokens for r in recs),
        "mean_wall_s": _mean(r.wall_s for r in recs),
        "total_wall_s": sum(r.wall_s for r in recs),
        "runner_errors": sum(1 for r in recs if r.reason == RUNNER_ERROR),
        "check_errors": sum(1 for r in recs if is_check_error(r)),   # the checker raised: never a success
        "reasons": dict(sorted(_count(r.reason for r in recs).items())),
    }


def _count(items) -> dict:
    out: dict = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def _split_key(split: str) -> tuple:
    return (SPLIT_ORDER.index(split) if split in SPLIT_ORDER else len(SPLIT_ORDER), split)


def round_of(label: str, trained_prefix: str = "trained") -> int | None:
    """The self-improvement round of a trained label: `trained` is round 0 (one SFT from the
    teacher's data), `trained-r2` / `trained:r2` round 2; any other label: None."""
    if label == trained_prefix:
        return 0
    m = re.fullmatch(re.escape(trained_prefix) + r"[-:_]r(\d+)", label)
    return int(m.group(1)) if m else None


def _label_key(label: str, teacher: str, untrained: str, writer: str = "writer",
               trained_prefix: str = "trained") -> tuple:
    rnd = round_of(label, trained_prefix)
    if label == teacher:
        return (0, 0, label)
    if label == writer:
        return (1, 0, label)
    if label == untrained:
        return (2, 0, label)
    if rnd is not None:
        return (3, rnd, label)
    return (4, 0, label)


def _packs(recs: list[RunRecord], folder_pack: dict[int, str | None], folder_of: dict) -> dict:
    """label -> the task packs its runs had: the record's own `pack` when it has one, else the
    pack its backend declares (a teacher written for one: the regex teacher's `generated`),
    else the loop config's in its folder's runs.meta.json (None: no pack)."""
    out: dict[str, list] = {}
    for r in recs:
        pk = getattr(r, "pack", None)
        if pk is None and isinstance(r.backend, dict):
            pk = r.backend.get("pack")
        if pk is None:
            pk = folder_pack.get(folder_of.get((r.label, r.task_id)))
        seen = out.setdefault(r.label, [])
        if pk not in seen:
            seen.append(pk)
    return out


def build_report(run_dirs: list[str | os.PathLike], *, teacher: str = "teacher", untrained: str = "untrained",
                 trained_prefix: str = "trained", min_gap: float = MIN_GAP, writer: str = "writer",
                 costs: dict | None = None) -> dict:
    """The report object from the records in `run_dirs` (see the module docstring). Trained
    labels: every label that starts with `trained_prefix` ("trained", "trained-r1",
    "trained:ckpt-200"); `writer`: the wording-robust teacher's label (a reference row, like
    the teacher's); `costs`: the per-round step costs to show (kept as given)."""
    if not run_dirs:
        raise ValueError("give at least one run folder")
    records: dict[tuple[str, str], RunRecord] = {}
    folder_of: dict[tuple[str, str], int] = {}
    folder_pack: dict[int, str | None] = {}
    sources, duplicates = [], 0
    for i, d in enumerate(run_dirs):
        d = Path(d)
        path = d / "runs.jsonl" if d.is_dir() else d
        if not path.is_file():
            raise FileNotFoundError(f"{d}: no runs.jsonl")
        recs = load_records(d)
        for r in recs:
            duplicates += (r.label, r.task_id) in records
            records[(r.label, r.task_id)] = r
            folder_of[(r.label, r.task_id)] = i
        meta = None
        try:
            meta = json.loads((path.parent / "runs.meta.json").read_text())
        except (OSError, ValueError):
            pass
        loop_cfg = (meta or {}).get("loop_config") or {}
        folder_pack[i] = loop_cfg.get("pack")
        sources.append({"path": str(path.resolve()), "records": len(recs),
                        "labels": sorted({r.label for r in recs}), "git_sha": (meta or {}).get("git_sha"),
                        "loop_config": (meta or {}).get("loop_config")})
    recs = list(records.values())
    labels = sorted({r.label for r in recs}, key=lambda x: _label_key(x, teacher, untrained, writer, trained_prefix))
    backends = {}
    for lab in labels:
        seen = []
        for r in recs:
            if r.label == lab and r.backend not in seen:
                seen.append(r.backend)
        backends[lab] = seen
    splits = {}
    for split in sorted({r.split for r in recs}, key=_split_key):
        per = {lab: label_stats([r for r in recs if r.split == split and r.label == lab]) for lab in labels}
        per = {lab: s for lab, s in per.items() if s["tasks"]}
        rate = {lab: s["success_rate"] for lab, s in per.items()}
        gaps = {}
        for lab in per:
            if lab.startswith(trained_prefix):
                value, why = gap_closed(rate.get(lab), rate.get(untrained), rate.get(teacher), min_gap)
                gaps[lab] = {"gap_closed": value, "null_because": why}
        splits[split] = {"labels": per, "gap_closed": gaps}
    rounds = {lab: round_of(lab, trained_prefix) for lab in labels if round_of(lab, trained_prefix) is not None}
    def rate(per: dict, lab: str) -> dict | None:
        st = per.get(lab)
        return None if st is None else {"success_rate": st["success_rate"], "ci95": st["ci95"], "tasks": st["tasks"]}

    by_round = {}
    for split, s in splits.items():
        by_round[split] = {"rounds": {str(n): rate(s["labels"], lab)
                                      for lab, n in sorted(rounds.items(), key=lambda x: x[1])},
                           "references": {role: rate(s["labels"], lab) for role, lab in
                                          (("teacher", teacher), ("writer", writer), ("untrained", untrained))}}
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "labels": labels, "roles": {"teacher": teacher, "writer": writer, "untrained": untrained,
                                    "trained_prefix": trained_prefix},
        "backends": backends, "packs": _packs(recs, folder_pack, folder_of), "splits": splits,
        "rounds": {"labels": {str(n): lab for lab, n in sorted(rounds.items(), key=lambda x: x[1])},
                   "by_split": by_round},
        "costs": costs,
        "gap_rule": f"gap_closed = (trained - untrained) / (teacher - untrained) on success rates; null when "
                    f"teacher - untrained < {100 * min_gap:.0f} points",
        "ci": "95 % Wilson score interval",
        "records": len(recs), "duplicates_replaced": duplicates, "sources": sources,
        "machine": machine(), "git_sha": git_sha(), "versions": versions(VERSION_PACKAGES),
    }


def _f(v, fmt="{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def _dur(seconds) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.2f} h"


def _cpu(step: dict) -> float | None:
    parts = [step.get(k) for k in ("cpu_s", "server_cpu_s") if step.get(k) is not None]
    return sum(parts) if parts else None


def cost_table(costs: dict) -> list[str]:
    """Markdown lines: one row per round (and setup / baseline rows), one column per step kind,
    each cell `wall (CPU)`; CPU = the step's processes + the model server's while it ran."""
    rows = costs.get("rows") or []
    if not rows:
        return []
    cols = [c for c in COST_STEPS if any(c in (r.get("steps") or {}) for r in rows)]
    cols += sorted({c for r in rows for c in (r.get("steps") or {})} - set(cols))
    lines = ["| row | " + " | ".join(cols) + " | total |", "|---|" + "---:|" * (len(cols) + 1)]
    tot_wall, tot_cpu = 0.0, 0.0
    for r in rows:
        st = r.get("steps") or {}
        cells, w_sum, c_sum = [], 0.0, 0.0
        for c in cols:
            x = st.get(c)
            if x is None:
                cells.append("-")
                continue
            w, cpu = x.get("wall_s"), _cpu(x)
            w_sum += w or 0
            c_sum += cpu or 0
            cells.append(f"{_dur(w)} ({_dur(cpu)} CPU)")
        tot_wall += w_sum
        tot_cpu += c_sum
        lines.append(f"| {r.get('row', '-')} | " + " | ".join(cells) + f" | {_dur(w_sum)} ({_dur(c_sum)} CPU) |")
    lines.append("| **all** | " + " | ".join("" for _ in cols) + f" | **{_dur(tot_wall)} ({_dur(tot_cpu)} CPU)** |")
    return lines


def to_markdown(report: dict) -> str:
    lines = ["# Distillation report", ""]
    m = report["machine"]
    lines.append(f"Machine: {m['cpu']} · {m['cores']} cores · {_f(m.get('ram_gib'))} GiB RAM · "
                 f"git {report['git_sha'] or '-'} · {report['created']}")
    lines.append("Versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v))
    lines.append("")
    packs = report.get("packs") or {}
    for lab, bs in report["backends"].items():
        desc = "; ".join(dict.fromkeys(f"{b.get('backend')} / {b.get('model')}" for b in bs))
        note = " (deterministic program writer, NOT a model)" if any(
            b.get("backend") in NON_MODEL_BACKENDS for b in bs) else ""
        pk = ", ".join(p or "none" for p in packs.get(lab, [])) or "-"
        lines.append(f"- **{lab}**: {desc}{note} · pack {pk}")
    lines.append("")
    for split, s in report["splits"].items():
        lines += [f"## {split}", "",
                  "| label | tasks | success % (95 % CI) | exec-cell % | mean steps | exposure tok | prompt tok "
                  "| completion tok | mean wall s | errors runner/backend |",
                  "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
        for lab, st in s["labels"].items():
            ci = st["ci95"]
            succ = f"{100 * st['success_rate']:.1f} ({100 * ci[0]:.1f}–{100 * ci[1]:.1f})" if ci else "-"
            exe = _f(None if st["executable_cell_rate"] is None else 100 * st["executable_cell_rate"])
            lines.append(f"| {lab} | {st['tasks']} | {succ} | {exe} | {_f(st['mean_steps'], '{:.2f}')} | "
                         f"{_f(st['mean_exposure_tokens'], '{:.0f}')} | {_f(st['mean_prompt_tokens'], '{:.0f}')} | "
                         f"{_f(st['mean_completion_tokens'], '{:.0f}')} | {_f(st['mean_wall_s'], '{:.2f}')} | "
                         f"{st['runner_errors']}/{st['reasons'].get('backend_error', 0)} |")
        checker = {lab: st["check_errors"] for lab, st in s["labels"].items() if st.get("check_errors")}
        if checker:
            lines.append("\nthe checker raised (runner errors, never a success): "
                         + ", ".join(f"**{lab}** {n}" for lab, n in checker.items()))
        for lab, g in s["gap_closed"].items():
            val = "null (" + g["null_because"] + ")" if g["gap_closed"] is None else f"{g['gap_closed']:.3f}"
            lines.append(f"\ngap closed by **{lab}**: {val}")
        lines.append("")
    costs = report.get("costs")
    if costs and costs.get("rows"):
        note = f" {costs['note']}" if costs.get("note") else ""
        lines += ["## Cost per round", "",
                  ("_Wall time (CPU time: the step's processes + the model server's while it ran)._" + note), ""]
        lines += cost_table(costs)
        lines.append("")
    if report.get("plot"):
        lines += [f"![accuracy per round]({Path(report['plot']).name})", ""]
    lines.append(f"_{report['gap_rule']}. CI: {report['ci']}. Recomputed from {report['records']} records._")
    return "\n".join(lines) + "\n"


def write_report(run_dirs, out_json, md=None, plot: bool = True, **kw) -> dict:
    """Build the report, write it as JSON (and markdown); with `plot` and at least one round,
    the accuracy-per-round PNG next to it (OUT's name + -rounds.png)."""
    rep = build_report(run_dirs, **kw)
    Path(out_json).parent.mkdir(parents=True, exist_ok=True)
    if plot and rep["rounds"]["labels"]:
        from distill.plots import plot_rounds

        dest = Path(out_json).with_name(Path(out_json).stem + "-rounds.png")
        rep["plot"] = str(plot_rounds(rep, dest))
    Path(out_json).write_text(json.dumps(rep, indent=2, default=str))
    if md:
        Path(md).parent.mkdir(parents=True, exist_ok=True)
        Path(md).write_text(to_markdown(rep))
    return rep
