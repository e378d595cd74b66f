"""How each public benchmark's answers are scored in `scroll bench run --data` (one Verdict each).

    j = FormatJudge("longmemeval", llm_judge=LLMJudge(backend))   # or llm_judge=None
    v = j.judge(label_record, answer)     # label_record: the question's label-sidecar record

| format | with a judge model (--judge-url / --judge-llm) | without one |
|---|---|---|
| longmemeval | `longmemeval_llm`: the type-specific yes/no judge (abstention rule for `_abs` ids) | `exact_or_contains`: the normalised gold equals, or appears as whole words in, the normalised answer; `_abs` ids: `abstention_phrase` |
| locomo | `locomo`: LoCoMo's stemmed token F1 with its per-category rules (the model is not used) | the same |
| beam | `beam_rubric_llm`: every rubric item scored 0 / 0.5 / 1 by the judge model, mean | `beam_rubric_overlap` (a rough proxy, NOT BEAM's metric): per item, the share of its content words found in the answer (>= 0.8 -> 1, >= 0.5 -> 0.5) |
| oolong | `numeric_partial`: 0.75^abs(diff) for numbers, exact match otherwise (best gold alternative) | the same |
| jsonl-qa | LongMemEval's yes/no judge (the line's `type`, default multi-session) | `exact_or_contains` |

`correct` is full credit (score 1), except LoCoMo, where an F1 of at least `LOCOMO_CORRECT`
(0.5) counts as correct (LoCoMo reports mean F1 only: the threshold is ours). Mean score is
the benchmarks' own number; accuracy is the share of correct answers.
"""
from __future__ import annotations

import re
from typing import Any

from .judges import LLMJudge, Verdict, exact_match, locomo_score, normalize_text, numeric_partial

FORMATS = ("longmemeval", "locomo", "beam", "oolong", "jsonl-qa")
LOCOMO_CORRECT = 0.5
ABSTAIN_PHRASES = ("don't know", "do not know", "not know", "no information", "not mentioned", "not enough information",
                   "cannot answer", "can't answer", "cannot be answered", "unanswerable", "not specified",
                   "not provided", "no record", "doesn't say", "does not say", "not sure", "unknown",
                   "no mention", "not stated", "not available")
_RUBRIC_PREFIX = re.compile(r"^\s*(?:the\s+)?llm\s+response\s+should\s+(?:\w+\s+){0,2}?(?:state|contain|mention|"
                            r"include|say|give|be)\s*:?\s*", re.IGNORECASE)
_STOP = frozenset("a an the and or of to in on for with is are was were be by at as it that this you your i my me "
                  "from should response llm".split())


def _v(score: float, judge: str, correct: bool | None = None, **detail: Any) -> Verdict:
    return Verdict(score=float(score), correct=score == 1.0 if correct is None else correct, judge=judge, detail=detail)


def says_abstain(answer: Any) -> list[str]:
    """The abstention phrases the answer uses (case-insensitive; curly apostrophes folded)."""
    a = str(answer or "").lower().replace("\u2019", "'")
    return [p for p in ABSTAIN_PHRASES if p in a]


def exact_or_contains(pred: Any, gold: Any) -> Verdict:
    """1 when `exact_match` holds or the normalised gold appears, on word boundaries, in the
    normalised answer (any gold alternative); else 0."""
    ex = exact_match(pred, gold)
    p = f" {ex.detail['pred_norm']} "
    hit = ex.correct or any(g and f" {g} " in p for g in ex.detail["gold_norm"])
    return _v(1.0 if hit else 0.0, "exact_or_contains", pred_norm=ex.detail["pred_norm"],
              gold_norm=ex.detail["gold_norm"], exact=ex.correct)


def rubric_overlap(rubric: list[str], pred: Any) -> Verdict:
    """`beam_rubric_overlap`: per rubric item, the share of its content words (normalised, no
    stop words) present in the answer; >= 0.8 scores 1, >= 0.5 scores 0.5, else 0. An item
    that says there is no information is met by an abstention phrase. Mean over items."""
    words = set(normalize_text(pred).split())
    items = []
    for item in rubric:
        body = _RUBRIC_PREFIX.sub("", str(item))
        need = [w for w in normalize_text(body).split() if w not in _STOP]
        if "no information" in body.lower() and says_abstain(pred):
            share = 1.0
        else:
            share = sum(w in words for w in need) / len(need) if need else 0.0
        items.append({"item": str(item), "share": round(share, 4),
                      "score": 1.0 if share >= 0.8 else 0.5 if share >= 0.5 else 0.0})
    mean = sum(i["score"] for i in items) / len(items) if items else 0.0
    return _v(mean, "beam_rubric_overlap", items=items, note="deterministic proxy, not BEAM's model-judged metric")


class FormatJudge:
    """The judge of one format; `llm_judge` (an LLMJudge) is used where the format needs one."""

    def __init__(self, fmt: str, llm_judge: LLMJudge | None = None):
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
        self.fmt, self.llm_judge = fmt, llm_judge

    @property
    def name(self) -> str:
        """The judge's name as records carry it (LongMemEval's abstention fallback aside)."""
        llm = self.llm_judge is not None
        return {"longmemeval": "longmemeval_llm" if llm else "exact_or_contains", "locomo": "locomo",
                "beam": "beam_rubric_llm" if llm else "beam_rubric_overlap", "oolong": "numeric_partial",
                "jsonl-qa": "longmemeval_llm" if llm else "exact_or_contains"}[self.fmt]

    def judge(self, label: dict, answer: Any) -> Verdict:
        if self.fmt == "jsonl-qa":   # a user's own questions: LongMemEval's rules (no abstention ids)
            return self._longmemeval({**label, "abstention": False}, answer)
        return getattr(self, f"_{self.fmt}")(label, answer)

    def _longmemeval(self, lab: dict, answer: Any) -> Verdict:
        abstention = bool(lab.get("abstention"))
        if self.llm_judge is not None:
            return self.llm_judge.judge_longmemeval(lab.get("question") or "", lab.get("answer"), answer,
                                                    lab.get("question_type") or "multi-session", abstention)
        if abstention:
            hit = says_abstain(answer)
            return _v(1.0 if hit else 0.0, "abstention_phrase", matched=hit)
        return exact_or_contains(answer, lab.get("answer"))

    def _locomo(self, lab: dict, answer: Any) -> Verdict:
        v = locomo_score(answer, lab.get("answer"), lab["category"])
        return _v(v.score, "locomo", v.score >= LOCOMO_CORRECT, threshold=LOCOMO_CORRECT, **v.detail)

    def _beam(self, lab: dict, answer: Any) -> Verdict:
        rubric = [str(r) for r in lab.get("rubric") or []]
        if not rubric:  # nothing to judge against: fall back to the ideal answer
            return exact_or_contains(answer, lab.get("answer"))
        if self.llm_judge is not None:
            return self.llm_judge.judge_beam_rubric(lab.get("question") or "", rubric, answer)
        return rubric_overlap(rubric, answer)

    def _oolong(self, lab: dict, answer: Any) -> Verdict:
        golds = lab.get("answer")
        golds = golds if isinstance(golds, list) and golds else [golds]
        best = max((numeric_partial(answer, g) for g in golds), key=lambda v: v.score)
        return best
