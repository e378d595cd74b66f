"""`ReferencePolicy`: a deterministic, non-LLM program writer for the generated tasks.

It speaks the LLM protocol the agent loop uses (`complete`, `count_tokens`,
`token_counter_exact`, `describe`, `close`), and everything it produces is labelled
`backend="reference-policy"` (Completion, describe(), and a `[reference-policy ...]` tag
in every reply), so its results can never pass for a model's.

It reads the chat the loop sends: the question from the first user message's
`Task: <question>` line, its own earlier replies (their tags say which step and plan),
and the latest exposure (the last user message: what the previous cell printed). Each
reply is a HEADLINE line, a short thought and ONE ```python block:

    step 1  search   ms.search (paged until the hits run out), print a compact summary
    step 2  compute  filter the resident `hits`, ms.expand the evidence, print ANSWER: ...
    step 3  final    final(<the printed answer>)

A step whose marker line is missing from the exposure (an error, a timeout, a cut
output) or a compute that found nothing is retried ONCE differently (`scan`: no search,
every user turn read with ms.expand); after that it submits its best answer so far, or
"unknown". A question that matches no template gets final("unknown") at once, honestly.
The programs (query, patterns, computation) live in scroll.policies.programs.
"""
from __future__ import annotations

import re
import time
from typing import Any

from .programs import TEMPLATES, match_program

from scroll.llm.base import Completion

BACKEND = "reference-policy"
VERSION = 1
_TAG = re.compile(r"\[reference-policy step=(\d+) plan=(\w+)\]")
_TASK = re.compile(r"^\s*Task:\s*(.+?)\s*$", re.M)
_ANSWER = re.compile(r"^ANSWER: (.*?) \| evidence seqs:", re.M)
_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\Z)", re.S | re.I)


def extract_code(reply: str) -> str | None:
    """The reply's fenced code blocks as one cell (the loop's rule, scroll.agent.extract_code)."""
    code = "\n\n".join(b.strip("\n") for b in _FENCE.findall(reply or "") if b.strip())
    return code or None


def _approx_tokens(text_or_messages) -> int:
    try:
        from scroll.llm.base import approx_count

        return approx_count(text_or_messages)
    except ImportError:  # pragma: no cover
        if isinstance(text_or_messages, str):
            return max(1, len(text_or_messages) // 4) if text_or_messages else 0
        return sum(4 + len(str(m.get("content", ""))) // 4 for m in text_or_messages) + 3


def _content(m: dict) -> str:
    c = m.get("content", "")
    if isinstance(c, list):  # OpenAI content parts
        return "\n".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c if isinstance(c, str) else str(c)


class ReferencePolicy:
    """Deterministic program writer behind the LLM protocol (see the module docstring)."""

    backend = BACKEND

    def __init__(self) -> None:
        self.calls = 0

    # ------------------------------------------------------------------ protocol
    def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                 temperature: float | None = None, stop: list[str] | None = None, **kw: Any) -> Completion:
        t0 = time.perf_counter()
        text, plan = self.reply(messages)
        self.calls += 1
        return Completion(text=text, prompt_tokens=self.count_tokens(messages),
                          completion_tokens=self.count_tokens(text), model=BACKEND,
                          latency_s=time.perf_counter() - t0, backend=BACKEND, finish_reason="stop",
                          raw={"backend": BACKEND, "plan": plan, "version": VERSION})

    def count_tokens(self, text_or_messages) -> int:
        return _approx_tokens(text_or_messages)

    @property
    def token_counter_exact(self) -> bool:
        return False

    def describe(self) -> dict[str, Any]:
        return {"backend": BACKEND, "model": BACKEND, "version": VERSION,
                "policy": "scroll.policies.reference.ReferencePolicy",
                "note": "deterministic non-LLM program writer (search -> expand -> compute -> print -> final); "
                        "its results are reference-policy results, not model results",
                "templates": len(TEMPLATES), "token_counter": "approximate"}

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ the policy
    def reply(self, messages: list[dict]) -> tuple[str, str]:
        """(reply text, plan) for the next step, from the messages alone (stateless)."""
        question = self._question(messages)
        if question is None:
            return self._say(1, "unknown", "?", "No `Task:` line in the conversation, so there is no question "
                             "to answer.", 'print("reference policy: no Task: line found")\nfinal("unknown")'), "unknown"
        prog = match_program(question)
        step, plan, exposure, history = self._state(messages)
        if prog is None:
            if plan is None:
                return self._say(1, "unknown", question,
                                 "This question matches none of my templates; I answer honestly that I don't know.",
                                 'print("reference policy: no program for this question template")\nfinal("unknown")'), "unknown"
            return self._no_code(step + 1, "unknown"), "done"
        answer = self._answer(exposure)
        if plan is None:
            nxt = "search"
        elif plan == "search":
            nxt = "compute" if "== search ok" in exposure else "scan"
        elif plan == "compute":
            nxt = "final" if answer not in (None, "unknown") else "scan"
        elif plan == "scan":
            nxt = "final"
        elif plan == "final" and "final" not in history[:-1]:
            nxt = "final"  # the final cell failed once: submit again
        else:
            return self._no_code(step + 1, "done"), "done"
        if nxt == "scan" and "scan" in history:  # retried once already: best effort
            nxt = "final"
        step += 1
        if nxt == "final":
            best = answer if answer not in (None, "unknown") else self._best_answer(messages)
            why = ("the previous cell printed the answer" if answer not in (None, "unknown")
                   else "my retry did not give a clean answer, so I submit my best one")
            code = f"final({best!r})"
            return self._say(step, "final", question, f"Submit: {why}: {best!r}.", code), "final"
        thought = {
            "search": f"Locate the user's own statements with ms.search({prog.query!r}); print only counts and "
                      f"short snippets, keep the hits resident.",
            "compute": f"Filter the resident hits with the {prog.kind} pattern, re-read the evidence with "
                       f"ms.expand, compute and print the answer with its seqs.",
            "scan": "The last cell did not finish cleanly (or found nothing); retry without search: read every "
                    "user turn with ms.expand and compute again.",
        }[nxt]
        return self._say(step, nxt, question, thought, prog.cell(nxt)), nxt

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _question(messages: list[dict]) -> str | None:
        for m in messages:
            if m.get("role") == "user":
                found = _TASK.search(_content(m))
                if found:
                    return found.group(1)
        return None

    @staticmethod
    def _state(messages: list[dict]):
        """(last step number, last plan, last exposure, plans so far) from my tagged replies."""
        step, plan, exposure, history = 0, None, "", []
        last_assistant = -1
        for i, m in enumerate(messages):
            if m.get("role") == "assistant":
                tag = _TAG.search(_content(m))
                if tag:
                    step, plan = int(tag.group(1)), tag.group(2)
                    history.append(plan)
                    last_assistant = i
        if last_assistant >= 0:
            exposure = "\n".join(_content(m) for m in messages[last_assistant + 1:] if m.get("role") in ("user", "tool"))
        return step, plan, exposure, history

    @staticmethod
    def _answer(exposure: str) -> str | None:
        found = _ANSWER.findall(exposure or "")
        return found[-1].strip() if found else None

    def _best_answer(self, messages: list[dict]) -> str:
        best = "unknown"
        for m in messages:
            if m.get("role") in ("user", "tool"):
                for a in _ANSWER.findall(_content(m)):
                    if a.strip() and a.strip() != "unknown":
                        best = a.strip()
        return best

    @staticmethod
    def _say(step: int, plan: str, question: str, thought: str, code: str) -> str:
        nxt = {"search": "filter and compute", "compute": "submit the answer", "scan": "submit the answer",
               "final": "done", "unknown": "done"}.get(plan, "done")
        q = " ".join(question.split())[:80]
        return (f"HEADLINE: {q} | step {step}: {plan} | next: {nxt}\n"
                f"[reference-policy step={step} plan={plan}] {thought}\n\n```python\n{code}\n```\n")

    @staticmethod
    def _no_code(step: int, plan: str) -> str:
        return (f"[reference-policy step={step} plan={plan}] I have already submitted my answer; "
                f"there is nothing more for me to do.")

