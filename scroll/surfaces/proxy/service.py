"""The proxy without HTTP: log a request's new turns, build the upstream's view, log the reply.

    svc = ProxyService(ProxyConfig(upstream="http://127.0.0.1:8000/v1", db=Path("proxy.db")))
    prep = svc.prepare(headers, body)        # logs new turns; prep.body goes upstream
    svc.finish(prep, reply_message, usage)   # logs the reply, records the upstream's usage
    svc.close()

Retrieval goes through the one capability (scroll.capability.Capability.handle, `search`),
scoped to the conversation's session and the `history` origin, limited to the seq range of
the evicted turns (what is still in the view is not retrieved again). The proxy offers the
model no tool: retrieval is the proxy's own top-k search for the newest user message.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ... import env
from ...capability import Capability
from ...events import EventLog
from .config import ProxyConfig
from .conversation import Conversation, ConversationStore, ProxyRequestError, conversation_id, parse_messages
from .view import TokenCounter, ViewPlan, build_view, check_fits


# The chat-completions fields the proxy forwards: OpenAI's, and vLLM's sampling / structured-output extras.
# Any other field is dropped (and named in X-Scroll-Dropped-Fields): a body field must not be able to point
# the upstream somewhere else ("base_url", "api_base", "extra_headers", ...) or reach it unchecked.
FORWARDED = frozenset((
    "model", "messages", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "max_tokens",
    "max_completion_tokens", "n", "presence_penalty", "response_format", "seed", "stop", "stream", "stream_options",
    "temperature", "top_p", "tools", "tool_choice", "parallel_tool_calls", "user", "reasoning_effort", "modalities",
    "prediction", "store", "metadata", "service_tier", "verbosity", "audio", "functions", "function_call",
    # vLLM extras
    "top_k", "min_p", "repetition_penalty", "length_penalty", "min_tokens", "ignore_eos", "stop_token_ids",
    "skip_special_tokens", "spaces_between_special_tokens", "include_stop_str_in_output", "structured_outputs",
    "guided_json", "guided_regex", "guided_choice", "guided_grammar", "guided_decoding_backend",
    "guided_whitespace_pattern", "chat_template_kwargs", "add_generation_prompt", "continue_final_message",
    "echo", "prompt_logprobs", "truncate_prompt_tokens", "priority", "request_id"))


@dataclass
class Prepared:
    conv: Conversation
    body: dict            # the request body for the upstream (messages replaced by the view)
    plan: ViewPlan
    logged: list[int]     # seqs appended for this request's new turns
    reply_turn: int       # the position the upstream's reply takes in the conversation
    stream: bool
    include_usage: bool   # the client asked for the usage chunk when streaming
    dropped: tuple = ()   # body fields not forwarded (not in FORWARDED)

    def headers(self, counter: str) -> dict[str, str]:
        p = self.plan
        return {
            "X-Scroll-Conversation": self.conv.id,
            "X-Scroll-Added-Tokens": str(p.added_tokens),
            "X-Scroll-View-Tokens": str(p.view_tokens),
            "X-Scroll-Budget": str(p.budget),
            "X-Scroll-Evicted-Turns": str(p.evicted_turns),
            "X-Scroll-Newly-Evicted": str(sum(b - a for a, b in p.newly_evicted)),
            "X-Scroll-Retrieved-Events": str(len(p.retrieved_seqs)),
            "X-Scroll-Retrieved-Seqs": ",".join(map(str, p.retrieved_seqs)),
            "X-Scroll-Headlines": str(p.index_entries),
            "X-Scroll-Logged-Events": str(len(self.logged)),
            "X-Scroll-Token-Counter": counter,
            **({"X-Scroll-Dropped-Fields": ",".join(self.dropped)[:500]} if self.dropped else {}),
        }


class ProxyService:
    def __init__(self, cfg: ProxyConfig, *, log: Any = None, counter: TokenCounter | None = None):
        self.cfg = cfg
        self._own_log = log is None
        if log is None:
            db = cfg.db or env.default_db()
            db.parent.mkdir(parents=True, exist_ok=True)
            log = EventLog(db)
        self.log = log
        self.store = ConversationStore(log, cfg.tier_cap)
        self.counter = counter or TokenCounter(cfg)

    def _search(self, conv: Conversation) -> Any:
        cap = Capability(self.log, sessions=[conv.session])

        def search(query: str, lo: int, hi: int) -> list[dict]:
            if not query.strip():
                return []
            reply = cap.handle({"id": 0, "method": "search", "params": {
                "query": query, "k": self.cfg.top_k, "session": conv.session, "seq_range": [lo, hi],
                "origin": "history"}})
            if not reply["ok"]:
                raise ProxyRequestError(f"retrieval failed: {reply['error']}", status=500)
            return reply["result"]
        return search

    def _tools_reserve(self, body: dict) -> int:
        """Tool definitions reach the prompt through the chat template, outside the messages:
        their JSON's token count (plus a fifth for the template's framing) stays free."""
        tools = body.get("tools") or body.get("functions")
        if not tools:
            return 0
        import json

        return self.counter.text(json.dumps(tools, sort_keys=True)) * 6 // 5

    def prepare(self, headers: Mapping[str, str], body: Any) -> Prepared:
        if not isinstance(body, dict):
            raise ProxyRequestError("the request body must be a JSON object")
        turns = parse_messages(body.get("messages"))
        if body.get("n") not in (None, 1):
            raise ProxyRequestError("n > 1 is not supported by this proxy (one reply is logged per turn)")
        cid = conversation_id(headers, turns, self.cfg.conversation_key, self.cfg.conversation_header)
        reserve = self._tools_reserve(body)
        check_fits(turns, self.cfg, self.counter, reserve)  # a request that cannot fit is refused unlogged
        conv = self.store.get(cid)
        with conv.lock:
            logged = self.store.sync(conv, turns)
            plan = build_view(conv, turns, self.cfg, self.counter, reserve=reserve,
                              evict=lambda a, b: self.store.evict(conv, turns, a, b), search=self._search(conv))
            conv.requests += 1
        stream = bool(body.get("stream"))
        dropped = tuple(sorted(str(k) for k in body if k not in FORWARDED))
        out = {**{k: v for k, v in body.items() if k in FORWARDED}, "messages": plan.messages}
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if stream:
            out["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
        return Prepared(conv=conv, body=out, plan=plan, logged=logged, reply_turn=len(turns), stream=stream,
                        include_usage=include_usage, dropped=dropped)

    def finish(self, prep: Prepared, message: dict | None, usage: dict | None, model: str | None = None) -> int | None:
        """The upstream answered: record its usage, log its reply (seq, or None when not logged)."""
        if isinstance(usage, dict):
            pt = usage.get("prompt_tokens")
            with prep.conv.lock:
                prep.conv.last_usage = usage
                if isinstance(pt, int):
                    prep.conv.max_prompt_tokens = max(prep.conv.max_prompt_tokens, pt)
        if not isinstance(message, dict) or not message.get("role"):
            return None
        meta: dict[str, Any] = {"source": "upstream"}
        if model:
            meta["model"] = str(model)[:200]
        if isinstance(usage, dict):
            meta["usage"] = {k: v for k, v in usage.items() if isinstance(v, int)}
        try:
            return self.store.record_reply(prep.conv, prep.reply_turn, message, meta)
        except ProxyRequestError:
            return None  # a reply the proxy cannot read as text (e.g. other content parts): not logged

    def stats(self, cid: str) -> dict | None:
        """What the proxy keeps about a conversation (read from the log when not in memory)."""
        conv = self.store.known(cid) or self.store.peek(cid)
        return conv.stats() if conv.turns else None

    def close(self) -> None:
        self.counter.close()
        if self._own_log:
            self.log.close()
