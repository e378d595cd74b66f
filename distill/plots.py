"""Distillation plots as PNGs (matplotlib, Agg; no display needed): loss curves, accuracy per round.

    python -c "import json; from distill.plots import plot_loss; \
        plot_loss([json.loads(l) for l in open('OUT/metrics.jsonl')], 'OUT/loss.png')"
    python -c "import json; from distill.plots import plot_rounds; \
        plot_rounds(json.load(open('report.json')), 'report-rounds.png')"     # `scroll distill report` does this
"""
from __future__ import annotations

import os
from pathlib import Path


def plot_loss(history: list[dict], dest: str | os.PathLike, title: str = "SFT loss") -> Path:
    """Train loss per logging step and dev loss per evaluation, against the optimizer step."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    train = [(h["step"], h["loss"]) for h in history if "loss" in h and "step" in h]
    dev = [(h["step"], h["eval_loss"]) for h in history if "eval_loss" in h and "step" in h]
    fig = Figure(figsize=(7, 4), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    if train:
        ax.plot(*zip(*train), label="train loss", color="tab:blue", linewidth=1)
    if dev:
        ax.plot(*zip(*dev), label="dev loss", color="tab:orange", marker="o", linewidth=1.5)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("loss (completion tokens)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if train or dev:
        ax.legend()
    fig.tight_layout()
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(dest, format="png")
    return dest


REF_STYLES = (("teacher", "--", "regex teacher"), ("writer", "-.", "writer teacher"), ("untrained", ":", "untrained"))


def plot_rounds(report: dict, dest: str | os.PathLike, title: str = "Success per round (95 % Wilson CI)") -> Path:
    """Accuracy per split per round from a distill.report object: x = round, one line (with its
    Wilson interval as error bars) per split for the trained student, and per split the
    teachers and the untrained student as horizontal lines in the split's colour (regex teacher
    dashed, writer teacher dash-dot, untrained dotted)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    by_split = (report.get("rounds") or {}).get("by_split") or {}
    round_nums = sorted({int(n) for s in by_split.values() for n, v in s["rounds"].items() if v})
    fig = Figure(figsize=(8, 4.8), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:gray"]
    lo_x = (round_nums[0] if round_nums else 0) - 0.3
    hi_x = (round_nums[-1] if round_nums else 0) + 0.3
    used_refs = set()
    for i, (split, s) in enumerate(by_split.items()):
        color = colors[i % len(colors)]
        pts = sorted((int(n), v) for n, v in s["rounds"].items() if v and v.get("success_rate") is not None)
        if pts:  # each split a little apart, so equal values do not hide each other
            xs = [n + 0.04 * (i - (len(by_split) - 1) / 2) for n, _ in pts]
            ys = [100 * v["success_rate"] for _, v in pts]
            err = [[100 * (v["success_rate"] - v["ci95"][0]) for _, v in pts],
                   [100 * (v["ci95"][1] - v["success_rate"]) for _, v in pts]]
            ax.errorbar(xs, ys, yerr=err, color=color, marker="o", linewidth=1.8, capsize=3,
                        label=f"{split} (n={pts[-1][1]['tasks']})")
        for role, style, _ in REF_STYLES:
            ref = (s.get("references") or {}).get(role)
            if ref and ref.get("success_rate") is not None:
                ax.hlines(100 * ref["success_rate"], lo_x, hi_x, colors=color, linestyles=style, linewidth=1,
                          alpha=0.8)
                used_refs.add(role)
    handles, labels = ax.get_legend_handles_labels()
    for role, style, name in REF_STYLES:
        if role in used_refs:
            handles.append(Line2D([0], [0], color="black", linestyle=style, linewidth=1))
            labels.append(name)
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(-3, 103)
    if round_nums:
        ax.set_xticks(round_nums)
    ax.set_xlabel("self-improvement round (0: SFT on the teacher's trajectories)")
    ax.set_ylabel("success %")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if handles:
        ax.legend(handles, labels, fontsize=8, loc="best")
    fig.tight_layout()
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(dest, format="png")
    return dest
