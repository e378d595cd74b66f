"""LCM's retrieval tools over a built `SummaryDag`, as plain functions that return text.

    grep(dag, r"marathon|race")                  # matching turns (and the node covering each) + summaries
    describe(dag, "sum_...")                     # what a node covers, its lineage, its summary
    expand(dag, "sum_...", token_cap=2000)       # the exact events behind a node
    expand_query(dag, "sum_...", "When was the race?", llm, token_cap=300)

`expand` restores originals verbatim. LCM keeps it away from the main loop (it would flood
the context): the main loop routes with grep/describe and delegates deep reads to
`expand_query`, a sub-call that reads the node's events (in as many window-sized parts as
needed, then one call to merge the findings) and returns a distilled answer with the seqs
it cites, under `token_cap` tokens. Citations of seqs outside the node are dropped. The
sub-call has no tools, so it cannot recurse.

Every tool sees only this history: the nodes reachable from the DAG's context and the
history events of its granted sessions. A bad id or pattern comes back as an error text
(never an exception), so a model reading it can correct itself.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from ..llm.base import approx_count_text
from .dag import SummaryDag
from .store import render_node
from .history import cut_to_tokens, event_date, format_event, history_events
from .summarize import Usage, call_llm, clean_reply, fit_messages

GREP_LIMIT = 20
EXPAND_SYSTEM = ("You read excerpts of a conversation history, each tagged [seq N | session | date | role], to answer "
                 "one question for another assistant. Quote exact values (names, numbers, dates). Cite every turn you "
                 "use as [seq N]. If the excerpts do not answer it, reply exactly NONE.")
MERGE_SYSTEM = ("Several readers searched consecutive parts of a conversation history for the answer to one question. "
                "Merge their findings into one concise answer. Keep exact values and every [seq N] citation you rely "
                "on. If none of them found it, reply exactly NONE.")
_SEQ = re.compile(r"\bseqs?\s*[:#]?\s*(\d+)", re.I)


def _counter(dag: SummaryDag) -> Callable[[str], int]:
    return dag._count or approx_count_text  # the builder's counter when the DAG was built here


def _snippet(text: str, m: re.Match, width: int = 80) -> str:
    a, b = max(0, m.start() - width), min(len(text), m.end() + width)
    return ("..." if a else "") + text[a:b].replace("\n", " ") + ("..." if b < len(text) else "")


def grep(dag: SummaryDag, pattern: str, *, limit: int = GREP_LIMIT) -> str:
    """Regex (case-insensitive; an invalid one is matched literally) over the history's turns
    and its summaries. Turns name the context item covering them (a node id, or "raw")."""
    if not isinstance(pattern, str) or not pattern:
        return "grep: give a non-empty pattern"
    note = ""
    try:
        rx = re.compile(pattern, re.I)
    except re.error as e:
        rx, note = re.compile(re.escape(pattern), re.I), f" (not a valid regex: {e}; matched literally)"
    cover: dict[int, str] = {}
    for it in dag.items:
        if it.kind == "node":
            cover.update((s, it.ref) for s in dag.seqs_of(it.ref))
    turns, n_turns = [], 0
    for ev in history_events(dag.log, dag.sessions, upto=dag.upto):
        m = rx.search(ev.text)
        if m:
            n_turns += 1
            if len(turns) < limit:
                turns.append(f"seq {ev.seq} | {ev.session} | {event_date(ev)} | {ev.role} | "
                             f"in {cover.get(ev.seq, 'raw context')}: {_snippet(ev.text, m)}")
    sums, n_sums = [], 0
    for node in sorted(dag.reachable().values(), key=lambda n: (n.lo, -n.depth)):
        m = rx.search(node.text)
        if m:
            n_sums += 1
            if len(sums) < limit:
                sums.append(f"{node.node_id} | {node.kind} d{node.depth} | seqs {node.lo}-{node.hi}: "
                            f"{_snippet(node.text, m)}")
    out = [f"grep {pattern!r}{note}: {n_turns} turn(s), {n_sums} summary node(s)"]
    if turns:
        out += ["turns:"] + turns + ([f"... {n_turns - limit} more turn(s)"] if n_turns > limit else [])
    if sums:
        out += ["summaries:"] + sums + ([f"... {n_sums - limit} more summary node(s)"] if n_sums > limit else [])
    return "\n".join(out)


def describe(dag: SummaryDag, node_id: str) -> str:
    """A node's coverage (seqs, sessions, dates), escalation level, lineage and summary text."""
    try:
        node = dag.node(node_id)
    except KeyError as e:
        return f"describe: {e.args[0]}"
    reach = dag.reachable()
    parents = [p for p in dag.store.parents(node_id) if p in reach]
    in_context = any(it.kind == "node" and it.ref == node_id for it in dag.items)
    n_events = len(dag.seqs_of(node_id))
    lines = [
        f"{node.node_id}: {node.kind} summary (depth {node.depth}) of {n_events} turn(s), seqs {node.lo}-{node.hi}",
        f"sessions: {', '.join(node.sessions)} | dates: {node.first_date} .. {node.last_date}",
        f"level: {node.level} | tokens: {node.tokens} (replaced {node.input_tokens})"
        f" | in the active context: {'yes' if in_context else 'no'}",
    ]
    if node.children:
        lines.append(f"children: {', '.join(node.children)}")
    if parents:
        lines.append(f"parents: {', '.join(parents)}")
    lines += ["summary:", node.text]
    return "\n".join(lines)


def expand(dag: SummaryDag, node_id: str, *, token_cap: int | None = None) -> str:
    """The exact turns behind a node, oldest first; with `token_cap`, as many whole turns as
    fit and the seqs of the rest."""
    try:
        events = dag.events_of(node_id)
    except KeyError as e:
        return f"expand: {e.args[0]}"
    count = _counter(dag)
    lines, used = [], 0
    for i, ev in enumerate(events):
        line = format_event(ev)
        n = count(line)
        if token_cap is not None and used + n > token_cap:
            rest = events[i:]
            lines.append(f"[... {len(rest)} more turn(s), seqs {rest[0].seq}-{rest[-1].seq}: over the cap of "
                         f"{token_cap} tokens; use expand_query]")
            break
        lines.append(line)
        used += n
    return "\n".join(lines)


def expand_query(dag: SummaryDag, node_id: str, question: str, llm: Any, token_cap: int = 400, *,
                 window: int | None = None, usage: Usage | None = None, temperature: float = 0.0) -> str:
    """Delegated expansion: sub-calls read the node's exact turns and answer `question`; the
    reply (at most `token_cap` tokens, counted with `llm`) ends with the cited seqs."""
    usage = usage if usage is not None else Usage()
    try:
        events = dag.events_of(node_id)
    except KeyError as e:
        return f"expand_query: {e.args[0]}"
    if token_cap < 16:
        return "expand_query: token_cap must be >= 16"
    window = window or dag.config.window
    head = f"Question: {question}\n\nExcerpts:\n"
    room = window - token_cap - llm.count_tokens([{"role": "system", "content": EXPAND_SYSTEM},
                                                 {"role": "user", "content": head}]) - 16
    if room < 32:
        return "expand_query: the window is too small for the question"
    parts, cur, size = [], [], 0
    for ev in events:
        line = format_event(ev)
        n = llm.count_tokens(line) + 1
        if cur and size + n > room:
            parts.append(cur)
            cur, size = [], 0
        cur.append(line)
        size += n
    if cur:
        parts.append(cur)
    findings, failed = [], 0
    for part in parts:
        msgs = fit_messages(llm, EXPAND_SYSTEM, head, "\n".join(part), window=window, max_tokens=token_cap)
        reply = call_llm(llm, msgs, max_tokens=token_cap, temperature=temperature, usage=usage) if msgs else None
        if reply is None:
            failed += 1
            continue
        reply = clean_reply(reply)
        if reply and reply.strip().upper() != "NONE":
            findings.append(reply)
    if failed == len(parts):
        return f"expand_query failed: the model did not answer ({failed} sub-call(s) failed); try again"
    if len(findings) > 1:
        body = "\n\n".join(f"Reader {k + 1}:\n{f}" for k, f in enumerate(findings))
        msgs = fit_messages(llm, MERGE_SYSTEM, f"Question: {question}\n\n", body, window=window, max_tokens=token_cap)
        merged = call_llm(llm, msgs, max_tokens=token_cap, temperature=temperature, usage=usage) if msgs else None
        answer = clean_reply(merged) if merged is not None else "\n".join(findings)
    else:
        answer = findings[0] if findings else "NONE"
    valid = {ev.seq for ev in events}
    cited = sorted({int(s) for s in _SEQ.findall(answer)} & valid)
    if answer.strip().upper() == "NONE" or not answer.strip():
        answer = f"Not found in {node_id} (seqs {events[0].seq}-{events[-1].seq})." if events else "Not found."
    tail = f"\n[cited seqs: {', '.join(map(str, cited)) or 'none'}]"
    if failed:
        tail += f"\n[{failed} of {len(parts)} sub-call(s) failed]"
    keep = token_cap - llm.count_tokens(tail)
    if keep < 1:  # a long citation list: keep the answer, shorten the list
        tail = f"\n[cited seqs: {len(cited)}]"
        keep = token_cap - llm.count_tokens(tail)
    out = cut_to_tokens(answer, keep, llm.count_tokens, marker=" [...]") + tail
    return out if llm.count_tokens(out) <= token_cap else cut_to_tokens(out, token_cap, llm.count_tokens)


__all__ = ["grep", "describe", "expand", "expand_query", "render_node", "GREP_LIMIT"]
