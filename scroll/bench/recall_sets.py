"""Recall@10 on evaluation sets of fixed shapes, side by side with the peers, and the tuning of
our document model on the sets' tune seeds (never on their report seeds).

    res = run(load_sets(), split="report")         # every shape x report seed, four systems
    best = tune(load_sets())                        # DocModel candidates on the tune seeds

Systems, each over the same events and questions (the question's session as a filter when it
has one):
- `ours`: Scroll's `EventLog.search` with the document model under test (the user's path);
- `fts5`: SQLite FTS5, the OR of the raw question's tokens (what the public Scroll code does);
- `fts5-fields`: FTS5 with the same query cleaning and the same extra fields as columns,
  weighted like our model (`Fts5Config.like`): its best reasonable configuration;
- `bm25s`: one bm25s index over the raw event texts (English stopwords, stemming).

The sets (shapes, words, tune/report seeds) are recorded in `configs/recall-sets.yaml`.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from scroll.bench import recall as R
from scroll.bench.fts5 import Fts5Config, Fts5Log
from scroll.bench.shapes import generate_shape
from scroll.events import EventLog
from scroll.search.documents import DEFAULT_MODEL, DocModel

SYSTEMS = ("ours", "fts5", "fts5-fields", "bm25s")
PEERS = ("fts5", "fts5-fields", "bm25s")


def _ours(events: Sequence[dict], path: Path, model: DocModel, k: int) -> R.Searcher:
    log = EventLog(str(path), index_options={"doc_model": model})
    seqs = log.append_many(events)
    pos = {s: i for i, s in enumerate(seqs)}
    return lambda text, session: [pos[h.seq] for h in log.search(text, k=k, sessions=None if session is None
                                                                   else {session})]


def _fts5(events: Sequence[dict], path: Path, config, k: int) -> R.Searcher:
    log = Fts5Log(path, config=config)
    seqs = log.append_many(events)
    pos = {s: i for i, s in enumerate(seqs)}
    return lambda text, session: [pos[h.seq] for h in log.search(text, k=k, session=session)]


def searcher(system: str, events: Sequence[dict], workdir: Path, model: DocModel, k: int = 10) -> R.Searcher:
    if system == "ours":
        return _ours(events, workdir / "ours.db", model, k)
    if system == "fts5":
        return _fts5(events, workdir / "fts5.db", Fts5Config.raw(), k)
    if system == "fts5-fields":
        return _fts5(events, workdir / "fts5-fields.db", Fts5Config.like(model), k)
    if system == "bm25s":
        bm = R.Bm25Searcher(events, R.Bm25Config())
        return lambda text, session: bm(text, session, k)
    raise ValueError(f"unknown system {system!r}; one of {', '.join(SYSTEMS)}")


def evaluate(corpus, model: DocModel = DEFAULT_MODEL, systems: Iterable[str] = SYSTEMS, k: int = 10,
             workdir: Path | None = None, per_question: bool = False) -> dict:
    """recall@k of each system on one corpus (plus each system's index build time; `per_question`:
    each question's recall too)."""
    root = Path(workdir or tempfile.mkdtemp(prefix="scroll-recall-"))
    out: dict = {}
    try:
        for system in systems:
            d = root / system
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            t0 = time.perf_counter()
            fn = searcher(system, corpus.events, d, model, k)
            built = time.perf_counter() - t0
            res = R.recall_at_k(corpus.events, corpus.questions, fn, k=k, per_question=per_question)
            out[system] = {**res, "build_s": round(built, 3)}
            shutil.rmtree(d, ignore_errors=True)
    finally:
        if workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    return out


def _margin(systems: dict) -> float:
    """ours minus the best peer, in recall points."""
    return 100 * (systems["ours"]["recall"] - max(systems[p]["recall"] for p in PEERS if p in systems))


def versus_best_peer(systems: dict) -> dict:
    """ours against the best peer of the set, question by question (`R.paired_difference`); takes
    the per-question recalls out of `systems` (they stay out of result files)."""
    per = {s: v.pop("per_question") for s, v in systems.items()}
    peer = max((p for p in PEERS if p in systems), key=lambda p: systems[p]["recall"])
    return {"peer": peer, **R.paired_difference(per["ours"], per[peer])}


def run(sets: dict, split: str = "report", shapes: Sequence[str] | None = None, words: int | None = None,
        model: DocModel = DEFAULT_MODEL, k: int = 10, progress: Callable[[str], None] | None = None) -> dict:
    """Every (shape, seed) of the split: the four systems side by side."""
    say = progress or (lambda m: None)
    if split not in ("tune", "report"):
        raise ValueError("split must be 'tune' or 'report'")
    rows = []
    for shape in shapes or list(sets["shapes"]):
        spec = sets["shapes"][shape]
        n = int(words or spec["words"])
        for seed in spec[split]:
            say(f"{shape} seed {seed}: generating {n:,} words")
            corpus = generate_shape(shape, n, seed)
            say(f"{shape} seed {seed}: {len(corpus.events):,} events, {len(corpus.questions)} questions")
            systems = evaluate(corpus, model, k=k, per_question=True)
            paired = versus_best_peer(systems)
            rows.append({"shape": shape, "seed": seed, "words": corpus.n_words, "events": len(corpus.events),
                         "questions": sum(1 for q in corpus.questions if q.evidence), "systems": systems,
                         "ours_minus_best_peer_points": round(_margin(systems), 2), "versus_best_peer": paired,
                         "ours_minus_fts5_points": round(100 * (systems["ours"]["recall"]
                                                                - systems["fts5"]["recall"]), 2)})
            say(f"{shape} seed {seed}: " + ", ".join(f"{s} {v['recall']:.3f}" for s, v in systems.items()))
    return {"bench": "recall-sets", "split": split, "k": k, "doc_model": model.spec(),
            "systems": {"ours": "Scroll EventLog.search", **{p: _label(p, model) for p in PEERS}},
            "rows": rows, "ours_at_least_best_peer_everywhere": all(r["ours_minus_best_peer_points"] >= 0
                                                                     for r in rows)}


def _label(system: str, model: DocModel) -> str:
    if system == "fts5":
        return Fts5Config.raw().label()
    if system == "fts5-fields":
        return Fts5Config.like(model).label()
    return "bm25s over the raw event text (stopwords en, English stemmer)"


def candidates(base: DocModel = DEFAULT_MODEL) -> list[DocModel]:
    """The tuning grid around `base` (scale 4, text weight 4): one field at a time (a field the
    base lacks is added)."""
    w = dict(base.weights)
    out = [base]
    for field, values in (("prev", (0, 1, 2, 4)), ("role", (0, 1, 2, 4, 8, 12, 16)), ("date", (0, 1, 2, 4, 8)),
                          ("parts", (0, 1, 2, 4, 8))):
        for v in values:
            if v != w.get(field, 0):
                weights = tuple({**w, field: v}.items())
                separate = tuple(f for f in base.separate if dict(weights).get(f))
                out.append(replace(base, weights=weights, separate=separate))
    for separate in ((), ("role",), ("date",), ("role", "date")):    # scored apart, or in the BM25F sum
        separate = tuple(f for f in separate if w.get(f))
        if separate != base.separate:
            out.append(replace(base, separate=separate))
    if w.get("prev"):                  # the cap only matters when the previous turn is indexed
        for cap in (0, 40, 80, 160):
            if cap != base.prev_max_tokens:
                out.append(replace(base, prev_max_tokens=cap))
    return out


def _tune_scorer(sets: dict, shapes: Sequence[str] | None, words: int | None, k: int,
                 say: Callable[[str], None]) -> tuple[Callable[[DocModel], dict], dict]:
    """score(model) on every TUNE set (memoised in `tried`): ours and the FTS5 fields peer per
    model; the peers that do not depend on the model are measured once."""
    data = []
    for shape in shapes or list(sets["shapes"]):
        spec = sets["shapes"][shape]
        for seed in spec["tune"]:
            corpus = generate_shape(shape, int(words or spec["words"]), seed)
            peers = evaluate(corpus, systems=("fts5", "bm25s"), k=k)
            data.append((shape, seed, corpus, peers))
            say(f"tune {shape} seed {seed}: " + ", ".join(f"{s} {v['recall']:.3f}" for s, v in peers.items()))
    tried: dict[str, dict] = {}

    def score(model: DocModel) -> dict:
        key = repr(model.spec())
        if key not in tried:
            per = []
            for shape, seed, corpus, peers in data:
                res = evaluate(corpus, model, systems=("ours", "fts5-fields"), k=k)
                per.append({"shape": shape, "seed": seed, "ours": res["ours"]["recall"],
                            "fts5-fields": res["fts5-fields"]["recall"],
                            **{p: v["recall"] for p, v in peers.items()},
                            "margin": _margin({**peers, **res})})
            tried[key] = {"doc_model": model.spec(), "sets": per, "worst_margin": min(p["margin"] for p in per),
                          "mean_ours": sum(p["ours"] for p in per) / len(per)}
            say(f"tune {model.spec()}: worst margin {tried[key]['worst_margin']:+.2f}, "
                f"mean {tried[key]['mean_ours']:.4f}")
        return tried[key]
    return score, tried


def tune(sets: dict, shapes: Sequence[str] | None = None, words: int | None = None, rounds: int = 2, k: int = 10,
         progress: Callable[[str], None] | None = None) -> dict:
    """Coordinate search on the TUNE seeds: maximize the worst margin (ours - best peer) over the
    sets, ties by the mean recall."""
    score, tried = _tune_scorer(sets, shapes, words, k, progress or (lambda m: None))
    best = DEFAULT_MODEL
    for _ in range(rounds):
        start = best
        for cand in candidates(best):
            r, b = score(cand), score(best)
            if (r["worst_margin"], r["mean_ours"]) > (b["worst_margin"], b["mean_ours"]):
                best = cand
        if best == start:
            break
    return {"bench": "recall-tune", "k": k, "best": score(best), "default": score(DEFAULT_MODEL),
            "tried": list(tried.values())}


def compare(sets: dict, models: Sequence[DocModel], shapes: Sequence[str] | None = None, words: int | None = None,
            k: int = 10, progress: Callable[[str], None] | None = None) -> dict:
    """The given document models side by side on the TUNE seeds (e.g. a tuning's finalists at the
    sets' full size); `best` by the tune's rule (worst margin, then mean recall)."""
    score, tried = _tune_scorer(sets, shapes, words, k, progress or (lambda m: None))
    rows = [score(m) for m in models]
    best = max(rows, key=lambda r: (r["worst_margin"], r["mean_ours"]))
    return {"bench": "recall-compare", "k": k, "best": best, "default": score(DEFAULT_MODEL), "tried": rows}


def to_markdown(res: dict) -> str:
    """The side-by-side table, recomputed from the result's rows."""
    prov = res.get("machine", {})
    head = (f"# Evidence recall@{res['k']} on the evaluation sets ({res['split']} seeds)\n\n"
            f"{prov.get('cpu', '?')} · {prov.get('cores', '?')} cores · git {res.get('git_sha', '?')} · "
            f"document model {res['doc_model']}\n\n")
    systems = list(res["systems"])
    lines = ["| set | words | events | questions | " + " | ".join(systems)
             + " | ours - best peer (points) | 95 % CI (points) | questions ours better / worse |",
             "|---|---:|---:|---:|" + "---:|" * len(systems) + "---:|---:|---:|"]
    for r in res["rows"]:
        best = max(r["systems"][p]["recall"] for p in PEERS)
        cells = [(f"**{r['systems'][s]['recall']:.3f}**" if s != "ours" and r["systems"][s]["recall"] == best
                  else f"{r['systems'][s]['recall']:.3f}") for s in systems]
        lines.append(f"| {r['shape']} seed {r['seed']} | {r['words']:,} | {r['events']:,} | {r['questions']} | "
                     + " | ".join(cells) + f" | {r['ours_minus_best_peer_points']:+.1f} | " + paired_cells(r) + " |")
    if res.get("locomo"):
        lo = res["locomo"]["systems"]
        lines.append(f"| LoCoMo {res['locomo']['file']} | | | {lo['ours']['n']} | "
                     + " | ".join(f"{lo[s]['recall']:.3f}" for s in systems) + f" | {_margin(lo):+.1f} | – | – |")
    keys = "\n".join(f"- `{s}`: {label}" for s, label in res["systems"].items())
    verdict = ("ours >= the best peer on every set" if res["ours_at_least_best_peer_everywhere"]
               else "ours is BELOW the best peer on at least one set")
    return (head + "\n".join(lines) + f"\n\n{verdict}; bold: the best peer. {PAIRED_NOTE}\n\n{keys}\n")


PAIRED_NOTE = ("The interval: ours minus the best peer of the set, question by question, 95 % paired "
               "bootstrap over the set's questions (2,000 resamples, fixed seed); an interval that "
               "holds 0 is a difference the set's questions cannot tell from chance.")


def paired_cells(row: dict) -> str:
    """'[lo, hi] | better / worse' of a row's `versus_best_peer` ('– | –' in results from before it)."""
    p = row.get("versus_best_peer")
    if not p:
        return "– | –"
    lo, hi = p["ci95_points"]
    return f"[{lo:+.2f}, {hi:+.2f}] | {p['better']} / {p['worse']}"


__all__ = ["SYSTEMS", "PEERS", "evaluate", "run", "tune", "candidates", "searcher", "to_markdown", "versus_best_peer",
           "paired_cells", "PAIRED_NOTE"]
