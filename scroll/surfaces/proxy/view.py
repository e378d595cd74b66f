"""What the upstream receives: the conversation under a token budget.

Layout, stable parts first so consecutive prompts share their prefix (and the server's
prefix cache hits):

    the client's leading system message(s)                       (never changes)
    [addition] headline index of evicted ranges                  (only once something was evicted)
    the recent turns that fit, oldest first                      (grows by appending)
    [addition] retrieved events for the newest user message      (retrieval="search", after evictions)
    the newest message                                           (always)

Over the budget, the oldest turns leave the VIEW (never the log) down to `soft_share` of
the budget, in one range, starting the window on a user turn; the range gets a headline
(scroll.headlines.HeadlineIndex: tiers, merges, coverage). Between evictions the window
start stays put, so the next prompt is the previous one plus the new turns.

Tokens: the upstream's `/tokenize` (vLLM) through scroll.llm.openai_http.OpenAILLM, the
whole view counted with the chat template, when the upstream has it; otherwise the
approximate counter (scroll.llm.base.approx_count, upper-leaning) with `approx_margin` of the
budget kept free. `ViewPlan.exact` says which. The view is re-counted whole before it
is sent and evicted further until it fits: it never exceeds the budget by its counter.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ...headlines import HeadlineIndex
from ...llm.base import GENERATION_PROMPT, PER_MESSAGE_OVERHEAD, ROLES, approx_count, approx_count_text
from ...llm.config import LLMConfig
from ...llm.openai_http import OpenAILLM
from .config import ProxyConfig
from .conversation import Conversation, ProxyRequestError, Turn

INDEX_HEAD = "Earlier turns, moved out of this prompt (kept in full in the log; [lo..hi] are log seqs):"
RETRIEVED_HEAD = "Retrieved from earlier in this conversation (turns no longer shown above), in order:"
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TERMS = 200  # below the capability's 256 distinct terms


class TokenCounter:
    """The upstream's /tokenize when it has one ('auto'), else the approximate counter."""

    def __init__(self, cfg: ProxyConfig):
        self._llm = None
        if cfg.token_counter == "auto":
            self._llm = OpenAILLM(LLMConfig(base_urls=[cfg.upstream], model="auto", max_retries=1,
                                            timeout_s=min(cfg.timeout_s, 60.0),
                                            api_key_env=cfg.upstream_api_key_env))
        self._exact: bool | None = None if self._llm is not None else False

    @property
    def exact(self) -> bool:
        if self._exact is None:
            ok = self._llm.token_counter_exact
            if ok or self._llm._server_tokenize is False:  # decided (not: upstream unreachable now)
                self._exact = ok
            return ok
        return self._exact

    def describe(self) -> str:
        return "upstream:/tokenize" if self.exact else "approximate"

    def text(self, text: str) -> int:
        return self._llm.count_tokens(text) if self.exact else approx_count_text(text)

    def messages(self, messages: list[dict]) -> int:
        msgs = [{"role": m["role"] if m["role"] in ROLES else "user", "content": m["content"]} for m in messages]
        return self._llm.count_tokens(msgs) if self.exact else approx_count(msgs)

    def close(self) -> None:
        if self._llm is not None:
            self._llm.close()


@dataclass
class ViewPlan:
    messages: list[dict]                 # what the upstream receives
    view_tokens: int                     # counted with `exact`'s counter, the whole view
    added_tokens: int                    # the proxy's own messages (index + retrieved block)
    evicted_turns: int                   # client messages not sent (in the log, out of the view)
    newly_evicted: list[tuple[int, int]] = field(default_factory=list)  # client message ranges [a, b)
    retrieved_seqs: list[int] = field(default_factory=list)
    index_entries: int = 0
    exact: bool = False
    budget: int = 0                      # the budget the view was fitted to (after approx_margin)


def render_index(index: HeadlineIndex, budget: int, count: Callable[[str], int]) -> str:
    """The headline index as text, newest entries kept when not all fit `budget` tokens."""
    lines = [e.render() for e in index.entries()]
    if not lines:
        return ""
    kept: list[str] = []
    for line in reversed(lines):
        elided = len(lines) - len(kept) - 1
        head = [INDEX_HEAD] + ([f"… {elided} older entries elided"] if elided else [])
        if count("\n".join(head + [line, *kept])) + PER_MESSAGE_OVERHEAD > budget:
            break
        kept.insert(0, line)
    if not kept:
        return ""
    elided = len(lines) - len(kept)
    return "\n".join([INDEX_HEAD] + ([f"… {elided} older entries elided"] if elided else []) + kept)


def search_query(text: str) -> str:
    """The newest user message as a bounded query (distinct words, newest part)."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text[-4000:])))
    return " ".join(words[-MAX_QUERY_TERMS:])


def retrieved_block(hits: list[dict], budget: int, clip: int, count: Callable[[str], int]) -> tuple[str, list[int]]:
    """Retrieved events as one text within `budget` tokens: the best hits that fit, shown in
    conversation order (a question next to its answer reads as the dialogue did); (text, seqs)."""
    chosen: list[tuple[int, str]] = []
    used = count(RETRIEVED_HEAD) + PER_MESSAGE_OVERHEAD
    for h in hits:
        text = " ".join((h.get("text") or "").split())
        if not text:
            continue
        if len(text) > clip:
            text = text[: clip - 1] + "…"
        turn = (h.get("meta") or {}).get("turn")
        line = f"[turn {turn}, {h.get('role')}, seq {h['seq']}] {text}"
        n = count(line) + 1
        if used + n > budget:
            continue  # a shorter, later hit may still fit
        chosen.append((h["seq"], line))
        used += n
    if not chosen:
        return "", []
    chosen.sort()
    return "\n".join([RETRIEVED_HEAD] + [line for _, line in chosen]), [s for s, _ in chosen]


def check_fits(turns: list[Turn], cfg: ProxyConfig, counter: TokenCounter, reserve: int = 0) -> tuple[bool, int, int]:
    """(exact, budget, prefix length); 413 when the system prefix and the newest message alone
    exceed the budget (checked before anything is logged)."""
    exact = counter.exact
    budget = (cfg.budget if exact else int(cfg.budget * (1 - cfg.approx_margin))) - reserve
    p = 0
    while p < len(turns) - 1 and turns[p].role == "system":
        p += 1
    fixed = sum(counter.text(t.text) + PER_MESSAGE_OVERHEAD for t in turns[:p] + turns[-1:]) + GENERATION_PROMPT
    if fixed > budget:
        raise ProxyRequestError(f"the system message(s) and the newest message alone are ~{fixed} tokens; the "
                                f"proxy's budget for the upstream is {budget} tokens", status=413)
    return exact, budget, p


def build_view(conv: Conversation, turns: list[Turn], cfg: ProxyConfig, counter: TokenCounter,
               evict: Callable[[int, int], Any], search: Callable[[str, int, int], list[dict]],
               reserve: int = 0) -> ViewPlan:
    """The upstream's messages for this request (caller holds conv.lock; turns are logged).

    `evict(a, b)`: client messages a..b-1 leave the view (ConversationStore.evict).
    `search(query, lo_seq, hi_seq)`: history events of this conversation in that seq range.
    `reserve`: tokens the request adds outside the messages (tool definitions), kept free."""
    exact, budget, p = check_fits(turns, cfg, counter, reserve)
    n = len(turns)
    cost = [counter.text(t.text) + PER_MESSAGE_OVERHEAD for t in turns]
    fixed = sum(cost[:p]) + cost[-1] + GENERATION_PROMPT
    index_cap = int(cfg.index_share * budget)
    retr_cap = int(cfg.retrieval_share * budget) if cfg.retrieval == "search" else 0
    w = min(max(conv.window_start, p), n - 1)

    def total(w: int) -> int:
        extra = index_cap + retr_cap if w > p else 0
        return fixed + sum(cost[w:n - 1]) + extra

    plan = ViewPlan(messages=[], view_tokens=0, added_tokens=0, evicted_turns=0, exact=exact, budget=budget)
    target = int(cfg.soft_share * budget)
    drop_retrieved = drop_index = False
    while True:
        if total(w) > budget and w < n - 1:
            start = w
            while w < n - 1 and total(w) > target:
                w += 1
            while w < n - 1 and turns[w].role != "user":
                w += 1
            evict(start, w)
            plan.newly_evicted.append((start, w))
        plan.messages, plan.added_tokens, plan.retrieved_seqs = [t.raw for t in turns[:p]], 0, []
        index_text = render_index(conv.index, index_cap, counter.text) if w > p and not drop_index else ""
        if index_text:
            plan.messages.append({"role": cfg.addition_role, "content": index_text})
            plan.added_tokens += counter.text(index_text) + PER_MESSAGE_OVERHEAD
        plan.messages += [t.raw for t in turns[w:n - 1]]
        if retr_cap and w > p and not drop_retrieved:
            lo, hi = conv.turns[p].seq, conv.turns[w - 1].seq
            block, plan.retrieved_seqs = retrieved_block(search(search_query(turns[-1].text), lo, hi), retr_cap,
                                                         cfg.retrieval_event_chars, counter.text)
            if block:
                plan.messages.append({"role": cfg.addition_role, "content": block})
                plan.added_tokens += counter.text(block) + PER_MESSAGE_OVERHEAD
        plan.messages.append(turns[-1].raw)
        view = [{"role": m["role"], "content": Turn.parse(i, m).text} for i, m in enumerate(plan.messages)]
        plan.view_tokens = counter.messages(view)
        if plan.view_tokens <= budget:
            break
        # the chat template costs more than estimated: evict one more user turn, then drop additions
        if w < n - 1:
            nxt = w + 1
            while nxt < n - 1 and turns[nxt].role != "user":
                nxt += 1
            evict(w, nxt)
            plan.newly_evicted.append((w, nxt))
            w = nxt
        elif not drop_retrieved and plan.retrieved_seqs:
            drop_retrieved = True
        elif not drop_index and index_text:
            drop_index = True
        else:
            raise ProxyRequestError(f"the view is {plan.view_tokens} tokens with nothing left to evict; the budget "
                                    f"is {budget}", status=413)
    plan.evicted_turns = w - p
    plan.index_entries = len(conv.index)
    return plan
