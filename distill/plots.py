"""Loss curves from a trainer's log history, as a PNG (matplotlib, Agg; no display needed).

    python -c "import json; from distill.plots import plot_loss; \
        plot_loss([json.loads(l) for l in open('OUT/metrics.jsonl')], 'OUT/loss.png')"
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
