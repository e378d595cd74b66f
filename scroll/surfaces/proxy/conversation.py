"""Conversations in the log: which one a request belongs to, and each turn stored once.

Clients of a chat-completions API resend the whole conversation every time. The proxy
keeps, per conversation, the turns it has logged (seq + a hash of the message); a request's
messages are compared position by position and only what is new is appended, with the
`history` origin, to the conversation's own session (`proxy:<id>`):

* a message equal to the logged one at its position is not logged again;
* the upstream's reply is logged when it arrives (turn = its position), so the client's
  resend of it matches and is not logged twice;
* a message that differs from the logged one at its position (an edited or regenerated
  turn) starts a revision: it and everything after it are logged as new events whose meta
  names the seq they revise. The log stays append-only; nothing is rewritten.

A conversation is named by a header (`X-Scroll-Conversation` by default) or by the hash of
its messages up to and including the first user message (`conversation_key`). Its state is
rebuilt from the log when the proxy restarts: the logged turns (meta `turn`, `sha`) and the
leaf headlines of evicted ranges (kind `headline`, `agent` origin, meta `window_start`).
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping

from ...headlines import Headline, HeadlineIndex
from ...origin import Origin

CONVERSATION_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
SESSION_PREFIX = "proxy:"


class ProxyRequestError(ValueError):
    """A request the proxy refuses; `status` is the HTTP status it answers with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Turn:
    """One message of the client's conversation, as the proxy reads it."""

    role: str
    text: str              # what is logged, counted and searched
    raw: dict              # the message as received (forwarded unchanged)
    sha: str

    @classmethod
    def parse(cls, i: int, m: Any) -> "Turn":
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not m["role"]:
            raise ProxyRequestError(f"messages[{i}] must be an object with a string 'role'")
        text = content_text(i, m.get("content"))
        extra = {k: m[k] for k in ("name", "tool_calls", "tool_call_id") if m.get(k)}
        if extra.get("tool_calls"):
            text = (text + "\n" if text else "") + "[tool_calls] " + json.dumps(extra["tool_calls"], sort_keys=True)
        sha = hashlib.sha256(json.dumps([m["role"], text, extra], sort_keys=True, default=str).encode()).hexdigest()
        return cls(role=m["role"], text=text, raw=m, sha=sha[:24])


def content_text(i: int, content: Any) -> str:
    """A message's content as text: a string, None, or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not (isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)):
                raise ProxyRequestError(f"messages[{i}]: only text content parts are supported by this proxy")
            parts.append(part["text"])
        return "\n".join(parts)
    raise ProxyRequestError(f"messages[{i}].content must be a string, null or a list of text parts")


def parse_messages(messages: Any) -> list[Turn]:
    if not isinstance(messages, list) or not messages:
        raise ProxyRequestError("'messages' must be a non-empty list")
    return [Turn.parse(i, m) for i, m in enumerate(messages)]


def conversation_id(headers: Mapping[str, str], turns: list[Turn], key: str, header: str) -> str:
    """The conversation a request belongs to (see the module docstring)."""
    value = headers.get(header.lower()) if key in ("auto", "header") else None
    if value is not None:
        if not CONVERSATION_ID.match(value):
            raise ProxyRequestError(f"{header} must be 1-128 characters of letters, digits, '.', '_', ':', '-'")
        return value
    if key == "header":
        raise ProxyRequestError(f"this proxy names conversations by the {header} header; the request has none")
    first_user = next((i for i, t in enumerate(turns) if t.role == "user"), len(turns) - 1)
    h = hashlib.sha256("\n".join(t.sha for t in turns[: first_user + 1]).encode()).hexdigest()
    return "h-" + h[:20]


@dataclass
class LoggedTurn:
    seq: int
    sha: str


@dataclass
class Conversation:
    """What the proxy keeps about one conversation (rebuilt from the log on restart)."""

    id: str
    session: str
    index: HeadlineIndex
    turns: list[LoggedTurn] = field(default_factory=list)
    window_start: int = 0       # the first client message still in the view (earlier ones: evicted)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    requests: int = 0
    max_prompt_tokens: int = 0  # the largest upstream-reported prompt_tokens seen
    last_usage: dict | None = None

    def stats(self) -> dict:
        return {"conversation": self.id, "session": self.session, "turns_logged": len(self.turns),
                "window_start": self.window_start, "headlines": len(self.index), "requests": self.requests,
                "max_prompt_tokens": self.max_prompt_tokens, "last_usage": self.last_usage}


def _gist(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def derive_headline(turns: list[Turn], a: int, b: int) -> tuple[str, str, str]:
    """(task, state, next) for client messages a..b-1, without a model call: the gist of the
    range's first user message and of its last reply, clipped short (a gist, not a copy)."""
    rng = turns[a:b]
    first_user = next((t.text for t in rng if t.role == "user"), rng[0].text)
    last_reply = next((t.text for t in reversed(rng) if t.role == "assistant"), "")
    state = f"turns {a}-{b - 1}" + (f", last reply: {_gist(last_reply, 32)}" if last_reply else "")
    return f"user: {_gist(first_user, 40)}", state, f"turn {b}"


class ConversationStore:
    """Conversations of one proxy over one EventLog (thread-safe per conversation)."""

    def __init__(self, log: Any, tier_cap: int = 10):
        self.log = log
        self.tier_cap = tier_cap
        self._convs: dict[str, Conversation] = {}
        self._lock = threading.Lock()

    def get(self, cid: str) -> Conversation:
        with self._lock:
            conv = self._convs.get(cid)
            if conv is None:
                conv = self._convs[cid] = self._rebuild(cid)
            return conv

    def known(self, cid: str) -> Conversation | None:
        with self._lock:
            return self._convs.get(cid)

    def peek(self, cid: str) -> Conversation:
        """The conversation as the log has it, without keeping it in memory (read-only callers)."""
        return self._rebuild(cid)

    def _rebuild(self, cid: str) -> Conversation:
        conv = Conversation(id=cid, session=SESSION_PREFIX + cid, index=HeadlineIndex(self.tier_cap))
        for ev in self.log.events(session=conv.session):
            m = ev.meta or {}
            if ev.origin is Origin.HISTORY and ev.kind == "message" and isinstance(m.get("turn"), int) and "sha" in m:
                t = m["turn"]
                if 0 <= t <= len(conv.turns):
                    conv.turns[t:] = [LoggedTurn(ev.seq, str(m["sha"]))]
                    conv.window_start = min(conv.window_start, t)  # a revision inside the evicted part
            elif ev.origin is Origin.AGENT and ev.kind == "headline" and {"lo", "hi", "window_start"} <= set(m):
                try:
                    conv.index.add(int(m["lo"]), int(m["hi"]), str(m["task"]), str(m["state"]), str(m["next"]))
                except (ValueError, KeyError, TypeError):
                    pass
                conv.window_start = int(m["window_start"])
        return conv

    def sync(self, conv: Conversation, turns: list[Turn]) -> list[int]:
        """Log the request's messages not yet logged (caller holds conv.lock); their seqs."""
        i = 0
        while i < len(turns) and i < len(conv.turns) and conv.turns[i].sha == turns[i].sha:
            i += 1
        if i == len(turns):
            return []
        revises = {t: conv.turns[t].seq for t in range(i, min(len(turns), len(conv.turns)))}
        rows = []
        for t in range(i, len(turns)):
            meta: dict[str, Any] = {"turn": t, "sha": turns[t].sha, "conversation": conv.id}
            if t in revises:
                meta["revises"] = revises[t]
            for k in ("name", "tool_call_id"):
                if turns[t].raw.get(k):
                    meta[k] = str(turns[t].raw[k])
            rows.append({"session": conv.session, "role": turns[t].role, "text": turns[t].text, "kind": "message",
                         "meta": meta, "origin": Origin.HISTORY})
        seqs = self.log.append_many(rows)
        conv.turns[i:] = [LoggedTurn(s, turns[t].sha) for s, t in zip(seqs, range(i, len(turns)))]
        if i < conv.window_start:
            conv.window_start = i  # an edit inside the evicted part: the window restarts there
        return seqs

    def record_reply(self, conv: Conversation, turn: int, message: dict, meta: dict) -> int | None:
        """Log the upstream's reply as turn `turn` (unless the client already sent it)."""
        reply = Turn.parse(turn, message)
        with conv.lock:
            if turn < len(conv.turns):
                return None  # the next request came first and logged it (or revised the conversation)
            if turn > len(conv.turns):
                return None
            seq = self.log.append(conv.session, reply.role, reply.text, kind="message",
                                  meta={"turn": turn, "sha": reply.sha, "conversation": conv.id, **meta},
                                  origin=Origin.HISTORY)
            conv.turns.append(LoggedTurn(seq, reply.sha))
            return seq

    def evict(self, conv: Conversation, turns: list[Turn], a: int, b: int) -> Headline | None:
        """Client messages a..b-1 leave the view: a headline for their seq range, logged as a
        leaf (agent origin) with the new window start; the caller holds conv.lock."""
        if b <= a:
            return None
        lo, hi = conv.turns[a].seq, conv.turns[b - 1].seq
        task, state, nxt = derive_headline(turns, a, b)
        conv.window_start = b
        try:
            leaf = conv.index.add(lo, hi, task, state, nxt)
        except ValueError:
            leaf = None  # a range overlapping an older one (after a revision): the window still moves
        self.log.append(conv.session, "scroll", f"[{lo}..{hi}] task: {task} | state: {state} | next: {nxt}",
                        kind="headline", meta={"lo": lo, "hi": hi, "task": task, "state": state, "next": nxt,
                                               "files": [], "window_start": b, "turns": [a, b - 1]},
                        origin=Origin.AGENT)
        return leaf
