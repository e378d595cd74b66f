"""The distillation report: success per split and label with 95 % Wilson intervals, gap closed.

    python -c "from distill.report import build_report; print(build_report(['var/runs/teacher']))"
    scroll distill report --runs var/eval/teacher --runs var/eval/untrained --runs var/eval/trained \\
        --out var/report.json --md var/report.md

Every number is recomputed from the runner's JSONL records (`runs.jsonl`, one RunRecord
per task; the last record per (label, task_id) counts), never typed in. Per split
(test_unseen, test_paraphrase, test_heldout_kind first, then any other) and label: tasks,
correct, success rate with its 95 % Wilson interval, executable-cell rate (cells that ran
without an exception / model replies, pooled), mean steps, mean exposure / prompt /
completion tokens, mean and total wall seconds, runner errors. Per split and trained
label: `gap_closed = (trained - untrained) / (teacher - untrained)` on success rates, null
when the teacher leads the untrained student by less than 10 points (the ratio would be
noise). Plus what produced the records (each label's backends), the machine, the git SHA
and library versions.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from scroll.provenance import git_sha, machine, versions
from scroll.runner import RUNNER_ERROR, RunRecord, load_records
from scroll.stats import wilson

SPLIT_ORDER = ("test_unseen", "test_paraphrase", "test_heldout_kind")
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
        "reasons": dict(sorted(_count(r.reason for r in recs).items())),
    }


def _count(items) -> dict:
    out: dict = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def _split_key(split: str) -> tuple:
    return (SPLIT_ORDER.index(split) if split in SPLIT_ORDER else len(SPLIT_ORDER), split)


def _label_key(label: str, teacher: str, untrained: str) -> tuple:
    return (0 if label == teacher else 1 if label == untrained else 2, label)


def build_report(run_dirs: list[str | os.PathLike], *, teacher: str = "teacher", untrained: str = "untrained",
                 trained_prefix: str = "trained", min_gap: float = MIN_GAP) -> dict:
    """The report object from the records in `run_dirs` (see the module docstring). Trained
    labels: every label that starts with `trained_prefix` ("trained", "trained:ckpt-200")."""
    if not run_dirs:
        raise ValueError("give at least one run folder")
    records: dict[tuple[str, str], RunRecord] = {}
    sources, duplicates = [], 0
    for d in run_dirs:
        d = Path(d)
        path = d / "runs.jsonl" if d.is_dir() else d
        if not path.is_file():
            raise FileNotFoundError(f"{d}: no runs.jsonl")
        recs = load_records(d)
        for r in recs:
            duplicates += (r.label, r.task_id) in records
            records[(r.label, r.task_id)] = r
        meta = None
        try:
            meta = json.loads((path.parent / "runs.meta.json").read_text())
        except (OSError, ValueError):
            pass
        sources.append({"path": str(path.resolve()), "records": len(recs),
                        "labels": sorted({r.label for r in recs}), "git_sha": (meta or {}).get("git_sha"),
                        "loop_config": (meta or {}).get("loop_config")})
    recs = list(records.values())
    labels = sorted({r.label for r in recs}, key=lambda x: _label_key(x, teacher, untrained))
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
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "labels": labels, "roles": {"teacher": teacher, "untrained": untrained, "trained_prefix": trained_prefix},
        "backends": backends, "splits": splits,
        "gap_rule": f"gap_closed = (trained - untrained) / (teacher - untrained) on success rates; null when "
                    f"teacher - untrained < {100 * min_gap:.0f} points",
        "ci": "95 % Wilson score interval",
        "records": len(recs), "duplicates_replaced": duplicates, "sources": sources,
        "machine": machine(), "git_sha": git_sha(), "versions": versions(VERSION_PACKAGES),
    }


def _f(v, fmt="{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def to_markdown(report: dict) -> str:
    lines = ["# Distillation report", ""]
    m = report["machine"]
    lines.append(f"Machine: {m['cpu']} · {m['cores']} cores · {_f(m.get('ram_gib'))} GiB RAM · "
                 f"git {report['git_sha'] or '-'} · {report['created']}")
    lines.append("Versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v))
    lines.append("")
    for lab, bs in report["backends"].items():
        desc = "; ".join(f"{b.get('backend')} / {b.get('model')}" for b in bs)
        note = " (deterministic program writer, NOT a model)" if any(
            b.get("backend") == "reference-policy" for b in bs) else ""
        lines.append(f"- **{lab}**: {desc}{note}")
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
        for lab, g in s["gap_closed"].items():
            val = "null (" + g["null_because"] + ")" if g["gap_closed"] is None else f"{g['gap_closed']:.3f}"
            lines.append(f"\ngap closed by **{lab}**: {val}")
        lines.append("")
    lines.append(f"_{report['gap_rule']}. CI: {report['ci']}. Recomputed from {report['records']} records._")
    return "\n".join(lines) + "\n"


def write_report(run_dirs, out_json, md=None, **kw) -> dict:
    rep = build_report(run_dirs, **kw)
    Path(out_json).parent.mkdir(parents=True, exist_ok=True)
    Path(out_json).write_text(json.dumps(rep, indent=2, default=str))
    if md:
        Path(md).parent.mkdir(parents=True, exist_ok=True)
        Path(md).write_text(to_markdown(rep))
    return rep
