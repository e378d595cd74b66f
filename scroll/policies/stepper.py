"""`ProgramPolicy`: the step machine shared by the deterministic, non-LLM program writers.

It speaks the LLM protocol the agent loop uses (`complete`, `count_tokens`,
`token_counter_exact`, `describe`, `close`), and everything it produces is labelled with the
subclass's `backend` (Completion.backend/.model/.raw and describe(); the loop logs them with
every reply), so its results can never pass for a model's. Its reply text is what a model
should write (it is the distillation target): a HEADLINE line and ONE ```python block.

It reads the chat the loop sends: the question from the first user message's
`Task: <question>` line, its own earlier replies (their HEADLINE says which step and plan),
and the latest exposure (the last user message: what the previous cell printed):

    step 1  solve   the program's "solve" cell: LOCATE, COMPUTE, EXPOSE `ANSWER: ...`
    step 2  final   final(<the printed answer>)

A solve whose `ANSWER:` line is missing from the exposure (an error, a timeout, a cut
output) or says "unknown" is retried ONCE differently (`scan`: no search, the helper over
user_turns(), every user turn read with ms.expand); after that it submits its best answer
so far, or "unknown". A question the subclass has no program for gets final("unknown") at
once. llm_map item calls that reach this backend are answered by
scroll.policies.mapper.RuleMapper, from the item's wording only. Subclasses:
scroll.policies.reference.ReferencePolicy (the regex teacher of the `generated` task pack)
and scroll.policies.writer.ProgramWriter (programs from the question's meaning).
"""
from __future__ import annotations

import re
import time
from typing import Any

from scroll.llm.base import Completion, approx_count
from scroll.reply import extract_code

from .mapper import RuleMapper, is_map_call

_TAG = re.compile(r"^HEADLINE: .* \| step (\d+): (\w+) \| next: ", re.M)
_TASK = re.compile(r"^\s*Task:\s*(.+?)\s*$", re.M)
_ANSWER = re.compile(r"^ANSWER: (.*?) \| evidence seqs:", re.M)


def _content(m: dict) -> str:
    c = m.get("content", "")
    if isinstance(c, list):  # OpenAI content parts
        return "\n".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c if isinstance(c, str) else str(c)


class ProgramPolicy:
    """A deterministic program writer behind the LLM protocol (see the module docstring).
    Subclasses give `backend`, `pack`, `describe()` and `_program(question, messages)`: an object
    with `.cell(plan)` for plan "solve" / "scan" (optionally `.question`), or None."""

    backend = "program-policy"
    pack: str | None = None

    def __init__(self) -> None:
        self.calls = 0
        self.mapper = RuleMapper()  # answers ms.llm_map item calls that reach this backend

    # ------------------------------------------------------------------ protocol
    def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                 temperature: float | None = None, stop: list[str] | None = None, **kw: Any) -> Completion:
        if is_map_call(messages):  # a stateless llm_map item call: the labelled rule mapper answers
            return self.mapper.complete(messages, max_tokens=max_tokens, temperature=temperature, stop=stop)
        t0 = time.perf_counter()
        text, plan = self.reply(messages)
        self.calls += 1
        return Completion(text=text, prompt_tokens=self.count_tokens(messages),
                          completion_tokens=self.count_tokens(text), model=self.backend,
                          latency_s=time.perf_counter() - t0, backend=self.backend, finish_reason="stop",
                          raw={"backend": self.backend, "plan": plan, "version": self.describe()["version"]})

    def count_tokens(self, text_or_messages) -> int:
        return approx_count(text_or_messages)

    @property
    def token_counter_exact(self) -> bool:
        return False

    def describe(self) -> dict[str, Any]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ the policy
    def reply(self, messages: list[dict]) -> tuple[str, str]:
        """(reply text, plan) for the next step, from the messages alone (stateless)."""
        question = self._question(messages)
        if question is None:
            return self._say(1, "unknown", "?", 'print("no Task: line found")\nfinal("unknown")'), "unknown"
        prog = self._program(question, messages)
        question = getattr(prog, "question", None) or question
        step, plan, exposure, history = self._state(messages)
        if prog is None:
            if plan is None:
                return self._say(1, "unknown", question,
                                 'print("no program for this question")\nfinal("unknown")'), "unknown"
            return self._no_code(step + 1, "unknown"), "done"
        answer = self._answer(exposure)
        if plan is None:
            nxt = "solve"
        elif plan in ("solve", "scan"):
            nxt = "final" if answer not in (None, "unknown") else "scan"
        elif plan == "final" and "final" not in history[:-1]:
            nxt = "final"  # the final cell failed once: submit again
        else:
            return self._no_code(step + 1, "done"), "done"
        if nxt == "scan" and "scan" in history:  # retried once already: best effort
            nxt = "final"
        step += 1
        if nxt == "final":
            best = answer if answer not in (None, "unknown") else self._best_answer(messages)
            return self._say(step, "final", question, f"final({best!r})"), "final"
        return self._say(step, nxt, question, prog.cell(nxt)), nxt

    # ------------------------------------------------------------------ helpers
    def _program(self, question: str, messages: list[dict]):
        raise NotImplementedError

    @staticmethod
    def _question(messages: list[dict]) -> str | None:
        for m in messages:
            if m.get("role") == "user":
                found = _TASK.search(_content(m))
                if found:
                    return found.group(1)
        return None

    @staticmethod
    def _task(messages: list[dict]) -> str | None:
        """The whole task text (every line after `Task:`) of the first user message that has one."""
        for m in messages:
            if m.get("role") == "user":
                text = _content(m)
                found = re.search(r"^\s*Task:\s*", text, re.M)
                if found:
                    return text[found.end():].strip()
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
    def _say(step: int, plan: str, question: str, code: str) -> str:
        nxt = {"solve": "submit the answer", "scan": "submit the answer", "final": "done",
               "unknown": "done"}.get(plan, "done")
        q = " ".join(question.split())[:80]
        return f"HEADLINE: {q} | step {step}: {plan} | next: {nxt}\n```python\n{code}\n```\n"

    @staticmethod
    def _no_code(step: int, plan: str) -> str:
        return f"HEADLINE: done | step {step}: {plan} | next: nothing\nI have already submitted my answer."
