"""Retrieval-only metrics, no model: per category and per history length.

    res = measure_retrieval([10_000, 200_000, 1_000_000], work="var/bench/retrieval", k=10)

For each length, one generated history (scroll.tasks.build_demo_log, every family of
`families`, one question each) is written to an EventLog; then, per question:

* evidence recall@k of `ms.search(question, k)`: the share of the question's evidence
  turns in the top k when the question itself is the query (what a model that only
  searches would see first);
* evidence recall@k of the reference program's own query (`ms.search(program.query, k)`);
* the reference policy (a test double, labelled as such, never a model result) answering
  through `Agent.run` and the real sandboxed kernel: accuracy by the task's checker, and
  the exposure ratio (tokens its cells printed / tokens of the whole history).

Abstention questions have no evidence: they count for the policy's accuracy only.
Categories are `scroll.tasks.catalog.category_of(task.kind)`.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

from scroll.agent import Agent
from scroll.capability import Capability
from scroll.config import LoopConfig
from scroll.packs.generated.programs import match_program
from scroll.policies.reference import ReferencePolicy
from scroll.tasks import build_demo_log
from scroll.tasks.catalog import BENCH_FAMILIES, category_of
from scroll.tasks.history import sized



def _recall(hits, evidence) -> float:
    got = {h["seq"] for h in hits}
    return len(got & set(evidence)) / len(set(evidence))


def _mean(xs, digits: int = 4):
    xs = list(xs)
    return round(sum(xs) / len(xs), digits) if xs else None


def measure_length(target_tokens: int, work: Path, *, k: int = 10, seed: int = 0,
                   families: Sequence[str] = BENCH_FAMILIES, policy: bool = True) -> dict:
    """Rows (one per question) and the history's size for one length."""
    db = Path(work) / f"hist-{target_tokens}-s{seed}.db"
    for p in Path(work).glob(f"{db.name}*"):  # a fresh log each time: agent sessions must not pile up
        p.unlink() if p.is_file() else None
    t0 = time.perf_counter()
    log, tasks = build_demo_log(db, seed=seed, target_tokens=target_tokens, families=list(families), pool="all",
                                **sized(target_tokens))
    rows = []
    with log:
        stats = log.stats()
        build_s = time.perf_counter() - t0
        ms = Capability(log, sessions=None, own_session="retrieval")
        for t in tasks:
            row = {"family": t.family, "kind": t.kind, "category": category_of(t.kind), "evidence": len(t.evidence_seqs)}
            if t.evidence_seqs:
                row["recall_question"] = _recall(ms.search(t.question, k=k), t.evidence_seqs)
                prog = match_program(t.question)
                row["recall_program"] = _recall(ms.search(prog.query, k=k), t.evidence_seqs) if prog else 0.0
            rows.append(row)
        if policy:
            cfg = LoopConfig(max_steps=4, cell_timeout=60, max_output_chars=1500, soft_budget=3000, hard_budget=4000)
            with Agent.open(log, ReferencePolicy(), cfg, session="retrieval-reference") as agent:
                for row, t in zip(rows, tasks):
                    res = agent.run(t.question)
                    row["policy_correct"] = bool(res.answer is not None and t.check(res.answer))
                    row["exposure_tokens"] = sum(s.exposure_tokens for s in res.steps)
    return {"target_tokens": target_tokens, "tokens": stats["tokens_estimate"], "events": stats["events"],
            "build_s": round(build_s, 3), "rows": rows}


def summarize(length: dict) -> dict:
    """Per category: recall@k (question / program query), policy accuracy, exposure ratio."""
    cats: dict[str, list[dict]] = {}
    for r in length["rows"]:
        cats.setdefault(r["category"], []).append(r)
    out = {}
    for c, rs in sorted(cats.items()):
        ev = [r for r in rs if r["evidence"]]
        out[c] = {"n": len(rs), "n_with_evidence": len(ev),
                  "recall_question": _mean(r["recall_question"] for r in ev),
                  "recall_program": _mean(r["recall_program"] for r in ev),
                  "policy_accuracy": _mean(float(r["policy_correct"]) for r in rs if "policy_correct" in r),
                  "exposure_ratio": _mean((r["exposure_tokens"] / length["tokens"] for r in rs
                                           if "exposure_tokens" in r), 10)}
    return out


def measure_retrieval(sizes: Sequence[int], work, *, k: int = 10, seed: int = 0, policy: bool = True,
                      progress: Callable[[str], None] | None = None) -> dict:
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    lengths = []
    for n in sizes:
        t0 = time.perf_counter()
        length = measure_length(n, work, k=k, seed=seed, policy=policy)
        length["by_category"] = summarize(length)
        length["wall_s"] = round(time.perf_counter() - t0, 2)
        lengths.append(length)
        if progress:
            progress(f"{n:,} target tokens: {length['tokens']:,} tokens, {len(length['rows'])} questions, "
                     f"{length['wall_s']} s")
    return {"k": k, "seed": seed, "families": list(BENCH_FAMILIES), "policy": "reference policy (a test double, not a model)",
            "lengths": lengths}


def to_markdown(res: dict) -> str:
    k = res["k"]
    lines = [f"| history tokens | category | n | recall@{k} (question) | recall@{k} (program query) | "
             "reference policy accuracy | exposure (printed / history tokens) |", "|---|---|---|---|---|---|---|"]
    fmt = lambda x, pct=True: "–" if x is None else (f"{100 * x:.1f} %" if pct else f"{100 * x:.2g} %")  # noqa: E731
    for length in res["lengths"]:
        for c, s in length["by_category"].items():
            lines.append(f"| {length['tokens']:,} | {c} | {s['n']} | {fmt(s['recall_question'])} | "
                         f"{fmt(s['recall_program'])} | {fmt(s['policy_accuracy'])} | {fmt(s['exposure_ratio'], False)} |")
    return "\n".join(lines) + "\n"


def plot(res: dict, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    cats = sorted({c for length in res["lengths"] for c in length["by_category"]})
    xs = [length["tokens"] for length in res["lengths"]]
    for ax, key, title in ((axes[0], "recall_question", "question as query"),
                           (axes[1], "recall_program", "reference program's query")):
        for c in cats:
            ys = [length["by_category"].get(c, {}).get(key) for length in res["lengths"]]
            if any(y is not None for y in ys):
                ax.plot(xs, [None if y is None else 100 * y for y in ys], marker="o", label=c)
        ax.set_xscale("log")
        ax.set_xlabel("history tokens")
        ax.set_ylabel(f"evidence recall@{res['k']} (%)")
        ax.set_title(title)
        ax.set_ylim(-2, 102)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
