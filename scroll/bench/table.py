"""The side-by-side table of context managers: accuracy per category, tokens and time per
question, recomputed from the runners' JSONL records (never typed in).

    rep = build_table(["var/bench/scroll", "var/bench/rag", ...])   # each a `scroll bench run --out` folder
    to_markdown(rep); plot_table(rep, "table.png")

A row is one (manager, label) pair; categories are `scroll.tasks.catalog.category_of` of the
tasks' kinds (date -> temporal, count and sum -> aggregation; the others as they are; for a
public benchmark file, its question types: LongMemEval
question_type, LoCoMo category, BEAM ability, OOLONG task). Records that carry a partial-credit
`score` (F1, rubric mean, 0.75^|diff|) also get the mean score, overall and per category, beside
the accuracy, and the row names its judges. Every row must share one backbone (the model each backend reports),
else the table refuses: comparing managers means one model for all. CIs: 95 % Wilson.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from scroll.provenance import git_sha, machine, versions
from scroll.runner import RUNNER_ERROR, load_records
from scroll.stats import wilson
from scroll.tasks.catalog import category_of

ORDER = ("scroll", "truncate", "rag", "lcm", "lcm-context", "no_log", "no_kernel", "no_index")


def _rate(k: int, n: int, scores: list | None = None) -> dict:
    ci = wilson(k, n)
    scored = [x for x in scores or [] if x is not None]
    return {"n": n, "correct": k, "accuracy": k / n if n else None, "ci95": list(ci) if ci else None,
            "score": sum(scored) / len(scored) if scored else None, "scored": len(scored)}


def _rate_of(rs: list) -> dict:
    return _rate(sum(r.correct for r in rs), len(rs), [r.score for r in rs])


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def build_table(run_dirs: list[str | os.PathLike], *, allow_mixed_backbones: bool = False) -> dict:
    recs = [r for d in run_dirs for r in load_records(d)]
    if not recs:
        raise ValueError(f"no records in {', '.join(map(str, run_dirs))}")
    rows: dict[tuple[str, str], list] = {}
    for r in recs:
        rows.setdefault((r.manager, r.label), []).append(r)
    models = sorted({str(r.model) for r in recs})
    if len(models) > 1 and not allow_mixed_backbones:
        raise ValueError(f"the records come from several backbones {models}: one table compares managers on ONE model")

    cat = {id(r): category_of(r.kind) for r in recs}
    kinds = sorted(set(cat.values()))
    out_rows = []
    for (manager, label), rs in sorted(rows.items(), key=lambda kv: (ORDER.index(kv[0][0]) if kv[0][0] in ORDER
                                                                     else len(ORDER), kv[0])):
        row = {"manager": manager, "label": label, **_rate_of(rs),
               "by_kind": {k: _rate_of([r for r in rs if cat[id(r)] == k]) for k in kinds},
               "judges": sorted({r.judge for r in rs}),
               "tokens_per_question": _mean([(r.prompt_tokens or 0) + (r.completion_tokens or 0) for r in rs]),
               "prompt_tokens_per_question": _mean([r.prompt_tokens for r in rs]),
               "completion_tokens_per_question": _mean([r.completion_tokens for r in rs]),
               "calls_per_question": _mean([r.steps for r in rs]),
               "wall_s_per_question": _mean([r.wall_s for r in rs]),
               "runner_errors": sum(r.reason == RUNNER_ERROR for r in rs),
               "backend": rs[0].backend}
        out_rows.append(row)
    return {"created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "backbone": models,
            "scored": any(r["scored"] for r in out_rows),
            "kinds": kinds, "rows": out_rows, "records": len(recs), "sources": [str(Path(d)) for d in run_dirs],
            "tasks": sorted({r.task_id for r in recs}), "machine": machine(), "git_sha": git_sha(),
            "versions": versions(("scroll-agent", "vllm", "transformers", "torch"))}


def _percent(x) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _score(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def _cell(rate: dict, scored: bool) -> str:
    return f"{_percent(rate['accuracy'])} · {_score(rate.get('score'))}" if scored else _percent(rate["accuracy"])


def to_markdown(rep: dict) -> str:
    kinds = rep["kinds"]
    m = rep["machine"]
    scored = rep.get("scored", False)
    lines = ["# Context managers side by side", "",
             f"Backbone: {', '.join(rep['backbone'])} · {m.get('cpu', '?')} · {m.get('cores', '?')} cores · "
             f"git {rep['git_sha']} · {rep['created']} · {rep['records']} records", "",
             "| manager | label | n | accuracy % (95 % CI) | " + ("mean score | " if scored else "")
             + " | ".join(kinds) + " | tokens / q | calls / q | wall s / q | runner errors |"
             + (" judge |" if scored else ""),
             "|---|---|---:|---|" + ("---:|" if scored else "") + "---:|" * len(kinds) + "---:|---:|---:|---:|"
             + ("---|" if scored else "")]
    for r in rep["rows"]:
        ci = r["ci95"]
        acc = f"{_percent(r['accuracy'])} ({_percent(ci[0])}–{_percent(ci[1])})" if ci else "–"
        per = " | ".join(_cell(r["by_kind"][k], scored) for k in kinds)
        tok = "–" if r["tokens_per_question"] is None else f"{r['tokens_per_question']:.0f}"
        calls = "–" if r["calls_per_question"] is None else f"{r['calls_per_question']:.2f}"
        wall = "–" if r["wall_s_per_question"] is None else f"{r['wall_s_per_question']:.1f}"
        score = f"{_score(r.get('score'))} | " if scored else ""
        judge = f" {', '.join(r.get('judges', []))} |" if scored else ""
        lines.append(f"| {r['manager']} | {r['label']} | {r['n']} | {acc} | {score}{per} | {tok} | {calls} | {wall} | "
                     f"{r['runner_errors']} |{judge}")
    note = ("accuracy per category = each task's own checker" if not scored else
            "per category: accuracy % · mean score; score = the judge's partial credit (LoCoMo F1, BEAM rubric "
            "mean, OOLONG 0.75^|diff|), correct = full credit (LoCoMo: F1 >= 0.5)")
    lines += ["", f"_Recomputed from the runners' JSONL records; {note}._"]
    return "\n".join(lines) + "\n"


def plot_table(rep: dict, dest: str | os.PathLike) -> Path:
    """Grouped bars: accuracy per category, one bar per row."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds, rows = rep["kinds"], rep["rows"]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(kinds) + 2), 4))
    width = 0.8 / max(1, len(rows))
    for i, r in enumerate(rows):
        xs = [j + i * width for j in range(len(kinds))]
        ys = [100 * (r["by_kind"][k]["accuracy"] or 0) for k in kinds]
        ax.bar(xs, ys, width, label=f"{r['manager']} ({r['label']})" if r["label"] != r["manager"] else r["manager"])
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(kinds))], kinds)
    ax.set_ylabel("accuracy %")
    ax.set_ylim(0, 100)
    ax.set_title(f"managers on {', '.join(rep['backbone'])}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    dest = Path(dest)
    fig.savefig(dest, dpi=100)
    plt.close(fig)
    return dest


def write_table(run_dirs, out_json, md=None, png=None, **kw) -> dict:
    rep = build_table(run_dirs, **kw)
    Path(out_json).parent.mkdir(parents=True, exist_ok=True)
    Path(out_json).write_text(json.dumps(rep, indent=2, default=str))
    if md:
        Path(md).write_text(to_markdown(rep))
    if png:
        plot_table(rep, png)
    return rep
