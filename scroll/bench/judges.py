"""Benchmark judges: one `Verdict` contract for every way an answer is scored.

Deterministic (stdlib only, in `JUDGES`):
- `exact_match`: our own normalisation (see `normalize_text` for exactly what it folds).
- `token_f1`, `locomo_score`: LoCoMo's official scoring (task_eval/evaluation.py):
  its normalisation, Porter-stemmed token F1, per-category rules.
- `numeric_partial`: OOLONG-synth's 0.75**|gold - pred| partial credit.
Model-judged (`LLMJudge`, any backend of `scroll.llm`): LongMemEval's type-specific
yes/no judge and BEAM's per-rubric-item 0 / 0.5 / 1 judge, prompts in our own words.

`Verdict.correct` always means full credit (score == 1). Gold answers may be non-strings
(LongMemEval has ints): numbers become their decimal text, a list/tuple gold is a set of
alternatives (best one wins) for the deterministic judges and is comma-joined in prompts.
Nothing here imports torch, vllm or anything outside the stdlib.
"""
from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class Verdict:
    """One judged answer. `score` in [0, 1]; `correct` is True only for full credit;
    `judge` names the judge; `detail` holds what the judge saw (normalised forms, raw
    model replies, parse failures) so every number can be audited."""

    score: float
    correct: bool
    judge: str
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.score, bool) or not isinstance(self.score, (int, float)) \
                or not (math.isfinite(self.score) and 0.0 <= self.score <= 1.0):
            raise ValueError(f"Verdict.score must be a number in [0, 1], got {self.score!r}")
        if not isinstance(self.correct, bool) or not isinstance(self.detail, dict) \
                or not isinstance(self.judge, str) or not self.judge:
            raise TypeError("Verdict needs correct: bool, judge: non-empty str, detail: dict")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _verdict(score: float, judge: str, **detail: Any) -> Verdict:
    score = float(score)
    return Verdict(score=score, correct=score == 1.0, judge=judge, detail=detail)


def as_text(x: Any) -> str:
    """Gold/prediction as text: None -> "", integral floats -> "3", lists -> "a, b"."""
    if x is None or isinstance(x, str):
        return x or ""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    if isinstance(x, (list, tuple)):
        return ", ".join(as_text(v) for v in x)
    return str(x)


def _alternatives(gold: Any) -> list[str]:
    many = isinstance(gold, (list, tuple)) and gold
    return [as_text(g) for g in gold] if many else [as_text(gold)]


# --- exact match ---------------------------------------------------------------------------

_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DECIMAL = re.compile(r"\d+\.\d+")
_ARTICLES = frozenset({"a", "an", "the"})


def normalize_text(text: Any) -> str:
    """What `exact_match` compares. In order: NFKC; casefold; accents dropped (NFKD, no
    combining marks); thousands separators dropped ("1,000" -> "1000"); decimals lose
    trailing zeros ("3.50" -> "3.5", "3.0" -> "3"); every Unicode punctuation or symbol
    character deleted (so "U.S." -> "us", "50%" -> "50") except a '.' between digits; the
    whole words zero..twenty -> digits; articles a/an/the dropped; whitespace collapsed.
    Not normalised: other number words ("thirty"), units, word order, dates, synonyms."""
    s = unicodedata.normalize("NFKC", as_text(text)).casefold()
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    s = _DECIMAL.sub(lambda m: m.group().rstrip("0").rstrip("."), _THOUSANDS.sub("", s))
    out = []
    for i, c in enumerate(s):
        if unicodedata.category(c)[0] in "PS":
            if c == "." and 0 < i < len(s) - 1 and s[i - 1].isdigit() and s[i + 1].isdigit():
                out.append(c)
            continue
        out.append(c)
    words = [_NUMBER_WORDS.get(w, w) for w in "".join(out).split()]
    return " ".join(w for w in words if w not in _ARTICLES)


def exact_match(pred: Any, gold: Any) -> Verdict:
    """1.0 iff `normalize_text(pred)` equals the normalised gold (any alternative)."""
    p = normalize_text(pred)
    golds = [normalize_text(g) for g in _alternatives(gold)]
    return _verdict(1.0 if p in golds else 0.0, "exact_match", pred_norm=p, gold_norm=golds)


# --- Porter stemmer ------------------------------------------------------------------------
# Porter (1980), "An algorithm for suffix stripping". mode="original" is the published
# algorithm; mode="nltk" adds NLTK's default extensions (what LoCoMo's scorer ran): a table
# of irregular forms, words of <= 2 letters untouched, ies/ied -> ie for 4-letter words,
# y -> i only after a consonant, bli/alli/fulli/logi rules, and *o true for 2-letter vc.

_NLTK_IRREGULAR = dict(p.split(">") for p in (
    "skies>sky sky>sky dying>die lying>lie tying>tie news>news innings>inning inning>inning "
    "outings>outing outing>outing cannings>canning canning>canning howe>howe "
    "proceed>proceed exceed>exceed succeed>succeed").split())
_STEP2 = [("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
          ("izer", "ize"), ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
          ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
          ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
          ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")]
_STEP2_NLTK = [("bli", "ble") if s == "abli" else (s, r) for s, r in _STEP2] + [("fulli", "ful")]
_STEP3 = [("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
          ("ful", ""), ("ness", "")]
_STEP4 = ["al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
          "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"]


def _cv(w: str) -> str:
    """'c'/'v' per letter: a, e, i, o, u are vowels; y is a vowel after a consonant."""
    out: list[str] = []
    for i, ch in enumerate(w):
        out.append("v" if ch in "aeiou" or (ch == "y" and i > 0 and out[-1] == "c") else "c")
    return "".join(out)


def _m(stem: str) -> int:
    return _cv(stem).count("vc")


def _cvc(w: str, nltk: bool) -> bool:
    cv = _cv(w)
    if len(w) >= 3 and cv.endswith("cvc") and w[-1] not in "wxy":
        return True
    return nltk and cv == "vc"


def _rules(w: str, rules: Sequence[tuple[str, str]], ok: Callable[[str], bool]) -> str:
    for suffix, repl in rules:  # the first matching suffix decides, as in the paper
        if w.endswith(suffix):
            stem = w[: len(w) - len(suffix)]
            return stem + repl if ok(stem) else w
    return w


def porter_stem(word: str, mode: str = "nltk") -> str:
    """Porter-stem one word (lowercased first). mode: "nltk" (default) or "original"."""
    if mode not in ("nltk", "original"):
        raise ValueError(f"porter_stem mode must be 'nltk' or 'original', got {mode!r}")
    nltk = mode == "nltk"
    w = word.lower()
    if nltk and w in _NLTK_IRREGULAR:
        return _NLTK_IRREGULAR[w]
    if nltk and len(word) <= 2:
        return w
    # step 1a
    w = w[:-1] if nltk and w.endswith("ies") and len(w) == 4 else \
        _rules(w, [("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", "")], lambda s: True)
    # step 1b
    if nltk and w.endswith("ied"):
        w = w[:-1] if len(w) == 4 else w[:-2]
    elif w.endswith("eed"):
        w = w[:-1] if _m(w[:-3]) > 0 else w
    else:
        for suffix in ("ed", "ing"):
            if w.endswith(suffix) and "v" in _cv(w[: -len(suffix)]):
                w = w[: -len(suffix)]
                if w.endswith(("at", "bl", "iz")):
                    w += "e"
                elif len(w) >= 2 and w[-1] == w[-2] and _cv(w)[-1] == "c":
                    if w[-1] not in "lsz":
                        w = w[:-1]
                elif _m(w) == 1 and _cvc(w, nltk):
                    w += "e"
                break
    # step 1c
    if w.endswith("y"):
        s = w[:-1]
        if (len(s) > 1 and _cv(s)[-1] == "c") if nltk else "v" in _cv(s):
            w = s + "i"
    # step 2
    if nltk and w.endswith("alli") and _m(w[:-4]) > 0:
        w = w[:-2]
    if nltk and w.endswith("logi"):  # no other step-2 suffix ends in "logi"
        w = w[:-1] if _m(w[:-3]) > 0 else w  # the 'l' counts as part of the stem
    else:
        w = _rules(w, _STEP2_NLTK if nltk else _STEP2, lambda s: _m(s) > 0)
    # steps 3 and 4
    w = _rules(w, _STEP3, lambda s: _m(s) > 0)
    ion = w.endswith("ion")  # (m>1 and (*S or *T)) ION ->
    w = _rules(w, [(s, "") for s in _STEP4],
               lambda s: _m(s) > 1 and (not ion or s.endswith(("s", "t"))))
    # step 5
    if w.endswith("e"):
        m = _m(w[:-1])
        if m > 1 or (m == 1 and not _cvc(w[:-1], nltk)):
            w = w[:-1]
    if w.endswith("ll") and _m(w[:-1]) > 1:
        w = w[:-1]
    return w


# --- LoCoMo --------------------------------------------------------------------------------

_LOCOMO_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_ASCII_PUNCT = frozenset(string.punctuation)
ADVERSARIAL_PHRASES = ("no information available", "not mentioned")


def locomo_normalize(text: Any) -> str:
    """LoCoMo's normalisation, kept as the official scorer has it: commas dropped,
    lowercase, ASCII punctuation deleted (curly quotes etc. stay), whole words
    a/an/the/and removed, whitespace collapsed."""
    s = as_text(text).replace(",", "").lower()
    s = "".join(c for c in s if c not in _ASCII_PUNCT)
    return " ".join(_LOCOMO_ARTICLES.sub(" ", s).split())


def _f1(pred: str, gold: str, stem: bool) -> float:
    fix = porter_stem if stem else (lambda w: w)
    p = [fix(w) for w in locomo_normalize(pred).split()]
    g = [fix(w) for w in locomo_normalize(gold).split()]
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:  # the official scorer gives 0 here, even when both sides are empty
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def token_f1(pred: Any, gold: Any, *, stem: bool = True) -> Verdict:
    """LoCoMo token F1 (Porter-stemmed, NLTK mode, unless stem=False); best alternative."""
    scores = [_f1(as_text(pred), g, stem) for g in _alternatives(gold)]
    return _verdict(max(scores), "token_f1", per_alternative=scores, stem=stem)


def locomo_score(pred: Any, gold: Any, category: int | str) -> Verdict:
    """LoCoMo's per-category rule. 1 multi-hop: gold and prediction split on commas, the
    mean over gold parts of the best F1 against any prediction part (empty gold parts are
    dropped: a deviation). 2 temporal, 4 single-hop: F1. 3 open-domain: F1 against the
    gold up to its first ';'. 5 adversarial: 1 iff the prediction says "no information
    available" or "not mentioned" (case-insensitive); the gold is not used."""
    try:
        cat = int(category)
    except (TypeError, ValueError):
        raise ValueError(f"LoCoMo category must be 1..5, got {category!r}") from None
    p, g = as_text(pred), as_text(gold)
    if cat == 5:
        hit = [x for x in ADVERSARIAL_PHRASES if x in p.lower()]
        return _verdict(1.0 if hit else 0.0, "locomo", category=5, matched=hit)
    if cat == 1:
        golds = [x.strip() for x in g.split(",") if x.strip()] or [""]
        preds = [x.strip() for x in p.split(",")]
        per = [max(_f1(q, x, True) for q in preds) for x in golds]
        return _verdict(sum(per) / len(per), "locomo", category=1, gold_parts=golds,
                        pred_parts=preds, per_gold_part=per)
    if cat in (2, 3, 4):
        if cat == 3:
            g = g.split(";")[0].strip()
        return _verdict(_f1(p, g, True), "locomo", category=cat, gold_used=g)
    raise ValueError(f"LoCoMo category must be 1..5, got {category!r}")


# --- OOLONG --------------------------------------------------------------------------------

_NUM = re.compile(r"[-+]?\d+(?:,\d{3})*(?:\.\d+)?")
_COMPARISONS = ("more common", "less common", "same frequency")


def _to_number(s: str) -> float | None:
    return float(s.replace(",", "")) if _NUM.fullmatch(s) else None


def _unwrap(s: str) -> str:
    return s.strip().strip("[]").strip().strip("'\"").strip()


def oolong_candidate(pred: Any) -> str:
    """The answer part of a reply, as OOLONG's parser takes it: the text after the last
    ':' (with '*', '[' and ']' removed) when there is one, else the whole reply."""
    p = as_text(pred)
    if ":" in p:
        p = p.rsplit(":", 1)[1].replace("*", "").replace("[", "").replace("]", "")
    return p.strip()


def numeric_partial(pred: Any, gold: Any) -> Verdict:
    """OOLONG scoring. Numeric gold (a number, or text that is one, optionally wrapped as
    "[12]"): the first number in `oolong_candidate(pred)` (else in the whole reply) scores
    0.75 ** |gold - pred|; no number scores 0. Other gold: `exact_match` of the candidate or
    the whole reply, plus OOLONG's comparison rule (a gold containing "more common" / "less
    common" / "same frequency" matches a candidate containing that phrase)."""
    p, cand = as_text(pred), oolong_candidate(pred)
    num = isinstance(gold, (int, float)) and not isinstance(gold, bool)
    g = float(gold) if num else _to_number(_unwrap(as_text(gold)))
    if g is not None and math.isfinite(g):
        m = _NUM.search(cand) or _NUM.search(p)
        if m is None:
            return _verdict(0.0, "numeric_partial", gold=g, parsed=None, candidate=cand)
        x = float(m.group().replace(",", ""))
        return _verdict(0.75 ** abs(g - x), "numeric_partial", gold=g, parsed=x, candidate=cand)
    gt = _unwrap(as_text(gold))
    hit = exact_match(cand, gt).correct or exact_match(p, gt).correct
    gn, cn = normalize_text(gt), normalize_text(cand)
    hit = hit or any(c in gn and c in cn for c in _COMPARISONS)
    return _verdict(1.0 if hit else 0.0, "numeric_partial", gold=gt, candidate=cand)


JUDGES: dict[str, Callable[..., Verdict]] = {
    "exact_match": exact_match,          # (pred, gold)
    "token_f1": token_f1,                # (pred, gold, *, stem=True)
    "locomo": locomo_score,              # (pred, gold, category)
    "numeric_partial": numeric_partial,  # (pred, gold)
}


def judge_names() -> list[str]:
    return sorted(JUDGES)


# --- model judges --------------------------------------------------------------------------

_LME_CORE = "Answer yes if the response contains the correct answer; otherwise answer no. "
_LME_STEPS = ("Also answer yes if the response is equivalent to the correct answer or shows all "
              "the intermediate steps that lead to it. If the response gives only part of the "
              "information the answer requires, answer no. ")
LONGMEMEVAL_RULES: dict[str, str] = {
    "single-session-user": _LME_CORE + _LME_STEPS,
    "single-session-assistant": _LME_CORE + _LME_STEPS,
    "multi-session": _LME_CORE + _LME_STEPS,
    "temporal-reasoning": _LME_CORE + _LME_STEPS + (
        "Do not penalise off-by-one errors in a number of days, weeks, months or years: if "
        "the correct answer is 18 days, a response of 17 or 19 days is still correct. "),
    "knowledge-update": _LME_CORE + (
        "The information was updated over time: if the response mentions earlier information "
        "along with the updated answer, it is correct as long as the updated answer is the "
        "required one. "),
    "single-session-preference": (
        "Answer yes if the response satisfies the rubric for the desired personalised "
        "response; otherwise answer no. The response need not cover every point of the "
        "rubric: it is correct as long as it recalls and uses the user's personal "
        "information correctly. "),
}
_LME_ABSTAIN = ("The question cannot be answered from the conversation history. Answer yes if "
                "the response correctly identifies it as unanswerable, for example by saying "
                "the information is incomplete, or that related information was given but not "
                "what was asked; otherwise answer no. ")


def longmemeval_prompt(question: str, gold: Any, pred: Any, question_type: str,
                       abstention: bool = False) -> str:
    """The judge prompt for one LongMemEval answer (our wording of the official rules;
    abstention questions, ids ending "_abs", use the abstention rule whatever the type)."""
    if question_type not in LONGMEMEVAL_RULES:
        raise ValueError(f"unknown LongMemEval question_type {question_type!r}; "
                         f"known: {', '.join(LONGMEMEVAL_RULES)}")
    if abstention:
        what, label, head = "an explanation", "Explanation", _LME_ABSTAIN
        ask = "Does the model response correctly identify the question as unanswerable?"
    elif question_type == "single-session-preference":
        what, label, head = "a rubric for the desired personalised response", "Rubric", \
            LONGMEMEVAL_RULES[question_type]
        ask = "Is the model response correct?"
    else:
        what, label, head = "the correct answer", "Correct answer", \
            LONGMEMEVAL_RULES[question_type]
        ask = "Is the model response correct?"
    return (f"You will see a question, {what}, and a response from a model. {head}\n\n"
            f"Question: {as_text(question)}\n\n{label}: {as_text(gold)}\n\n"
            f"Model response: {as_text(pred)}\n\n{ask} Answer yes or no only.")


def beam_rubric_prompt(question: str, item: str, pred: Any) -> str:
    """The judge prompt for one BEAM rubric item (our condensed wording of BEAM's rules)."""
    return (
        "You judge whether a response complies with one rubric criterion.\n\n"
        f"Question (what the user asked): {as_text(question)}\n"
        f"Rubric criterion: {item}\n"
        f"Response: {as_text(pred)}\n\n"
        "Rules: decide whether the criterion asks for something to be present (positive) or "
        "absent (negative: 'no', 'not', 'avoid'). A response that does not address the "
        "question scores 0, also for negative criteria. Judge meaning, not wording: accept "
        "paraphrases and equivalent forms of numbers, dates and amounts; ignore case, "
        "punctuation, tone and length unless the criterion asks for a format.\n"
        "Scores: 1 = fully complies; 0.5 = partly (minor inaccuracy, or only some parts of a "
        "compound criterion); 0 = does not comply (missing, wrong, or prohibited element "
        "present).\n\n"
        "Reply with exactly one line `SCORE: 1`, `SCORE: 0.5` or `SCORE: 0`, optionally "
        "followed by one line starting `REASON:`.")


_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_SCORE = re.compile(r"\bscore\b[\s\"'*]*[:=][\s\"'*]*(\d*\.?\d+)", re.IGNORECASE)


def parse_yes_no(reply: str) -> str | None:
    """'yes' / 'no' for the first whole word yes or no in the reply, else None."""
    m = _YES_NO.search(reply or "")
    return m.group(1).lower() if m else None


def parse_rubric_score(reply: str) -> float | None:
    """The first `SCORE: x` (also `"score": x`) if x is 0, 0.5 or 1, else None."""
    m = _SCORE.search(reply or "")
    if not m:
        return None
    x = float(m.group(1))
    return x if x in (0.0, 0.5, 1.0) else None


class LLMJudge:
    """Model-judged scoring through any `scroll.llm` backend (greedy, temperature 0).
    Backend errors (LLMError) propagate: a failed call is not a wrong answer."""

    def __init__(self, llm: Any, *, yes_no_tokens: int = 10, rubric_tokens: int = 128):
        self.llm = llm
        self.yes_no_tokens = yes_no_tokens
        self.rubric_tokens = rubric_tokens

    def _ask(self, prompt: str, max_tokens: int) -> Any:
        return self.llm.complete([{"role": "user", "content": prompt}],
                                 max_tokens=max_tokens, temperature=0.0)

    def judge_longmemeval(self, question: str, gold: Any, pred: Any, question_type: str,
                          abstention: bool = False) -> Verdict:
        """Yes/no with the type's prompt; the first yes/no word decides, anything else is
        not correct (detail keeps the raw reply)."""
        c = self._ask(longmemeval_prompt(question, gold, pred, question_type, abstention),
                      self.yes_no_tokens)
        label = parse_yes_no(c.text)
        return _verdict(1.0 if label == "yes" else 0.0, "longmemeval_llm",
                        question_type=question_type, abstention=bool(abstention),
                        reply=c.text, label=label, parsed=label is not None,
                        judge_model=getattr(c, "model", None))

    def judge_beam_rubric(self, question: str, rubric: Sequence[str], pred: Any) -> Verdict:
        """One call per rubric item scored 0 / 0.5 / 1; an unparseable reply scores 0 and
        is counted in detail; the verdict's score is the mean over items."""
        if isinstance(rubric, str) or not rubric:
            raise ValueError("rubric must be a non-empty list of strings")
        items = []
        for item in rubric:
            c = self._ask(beam_rubric_prompt(question, as_text(item), pred), self.rubric_tokens)
            s = parse_rubric_score(c.text)
            items.append({"item": as_text(item), "score": 0.0 if s is None else s,
                          "parsed": s is not None, "reply": c.text})
        mean = sum(i["score"] for i in items) / len(items)
        return _verdict(mean, "beam_rubric_llm", items=items,
                        unparseable=sum(not i["parsed"] for i in items))
