"""Answer checking for the generated tasks: normalize, then accept only the right value.

Six value types, one rule each:

* number (counts, sums): every number in the answer is read (digits with `,` thousands
  separators and decimals, `$`, or English number words up to the millions, "twenty-one",
  "three hundred and five"); the answer is right when at least one number was read and
  ALL of them equal the expected value (so "5 or 6" and "4" fail, "five times" and
  "$1,234.00" pass).
* date: every date in the answer is read (ISO `2026-03-14`, `2026/03/14`, `March 14, 2026`,
  `Mar 14th 2026`, `14 March 2026`, `14th of March, 2026`, `3/14/2026`, `14/3/2026` when
  unambiguous); right when at least one was read and all equal the expected date.
* entity (a city, a company): case, punctuation, "the" and extra spaces are ignored; right
  when the expected name occurs as whole words and no known wrong value (the task's
  distractors: older values, other people's values) occurs.
* set (a contradiction: the history states two values of one fact): right when EVERY
  expected name occurs (the answer surfaces the conflict) and no distractor does.
* abstain (the history never says): right when the answer says so ("unknown", "not
  mentioned", "you never told me", "I don't know", ...) and names no planted value
  (distractors) and no number or date.
* yesno (a yes/no question): right when the answer says the expected one ("yes", "yeah",
  "yep", "yup" / "no", "nope", as whole words) and not the other, and names no distractor.

Empty answers never pass; "unknown" / "I don't know" pass only where abstaining is right.
"""
from __future__ import annotations

import datetime as dt
import re

_MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"])}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_NUMWORD = set(_UNITS) | set(_TENS) | set(_SCALES)
_ORDINALS = {"once": 1, "twice": 2, "thrice": 3}

_ABSTAIN = re.compile(
    r"\b(unknown|not (?:been |ever )?(?:mentioned|stated|said|told|specified|provided|recorded|in (?:the|our|my) "
    r"(?:history|conversations?|records?|notes))|never (?:mentioned|told|said|stated|specified)|"
    r"no (?:information|record|mention|evidence)|(?:don'?t|do not) know|cannot (?:tell|determine|find|answer)|"
    r"can'?t (?:tell|determine|find|answer)|not sure|no answer|n/a)\b", re.I)
_YES = re.compile(r"\b(yes|yeah|yep|yup)\b", re.I)
_NO = re.compile(r"\b(no|nope)\b", re.I)
_REFUSALS = re.compile(r"^\s*(unknown|n/?a|none|i don'?t know|not sure|no answer|cannot (tell|determine))\W*$",
                       re.I)


def _words_value(words: list[str]) -> int:
    total, current = 0, 0
    for w in words:
        if w in _UNITS:
            current += _UNITS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        else:  # thousand, million
            total += max(current, 1) * _SCALES[w]
            current = 0
    return total + current


_DATE_PATTERNS = [
    # 2026-03-14, 2026/03/14, 2026.03.14
    (re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b"), lambda m: (m[1], m[2], m[3])),
    # March 14, 2026 / Mar 14th 2026
    (re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I),
     lambda m: (m[3], _MONTHS[m[1].lower()], m[2])),
    # 14 March 2026 / 14th of March, 2026
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.I),
     lambda m: (m[3], _MONTHS[m[2].lower()], m[1])),
]
_SLASH_DATE = re.compile(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b")


def parse_dates(text: str) -> list[dt.date]:
    """Every date written in `text`, in order of appearance (see the module docstring)."""
    found: list[tuple[int, dt.date]] = []
    taken: list[tuple[int, int]] = []

    def add(start, end, y, mo, d):
        try:
            found.append((start, dt.date(int(y), int(mo), int(d))))
            taken.append((start, end))
        except ValueError:
            pass

    for rx, parts in _DATE_PATTERNS:
        for m in rx.finditer(text):
            if not any(s < m.end() and m.start() < e for s, e in taken):
                add(m.start(), m.end(), *parts(m))
    for m in _SLASH_DATE.finditer(text):
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue
        a, b, y = int(m[1]), int(m[2]), int(m[3])
        if a <= 12 and b > 12:
            add(m.start(), m.end(), y, a, b)      # US month/day
        elif b <= 12 and a > 12:
            add(m.start(), m.end(), y, b, a)      # day/month
        elif a == b:
            add(m.start(), m.end(), y, a, b)
        else:  # ambiguous (3/4/2026): read both ways, so it only passes when they agree
            add(m.start(), m.end(), y, a, b)
            add(m.start(), m.end(), y, b, a)
    return [d for _, d in sorted(found, key=lambda x: x[0])]


def _strip_dates(text: str) -> str:
    for rx, _ in _DATE_PATTERNS:
        text = rx.sub(" ", text)
    return _SLASH_DATE.sub(" ", text)


_NUM_TOKEN = re.compile(r"\$?\d[\d,]*(?:\.\d+)?|[a-z]+", re.I)


def parse_numbers(text: str) -> list[float]:
    """Every number in `text` (digits or English words), dates excluded."""
    text = _strip_dates(text).lower().replace("-", " ")
    out: list[float] = []
    run: list[str] = []
    for tok in _NUM_TOKEN.findall(text):
        if tok in _NUMWORD or (tok == "and" and run):
            run.append(tok)
            continue
        if run:
            out.append(float(_words_value([w for w in run if w != "and"])))
            run = []
        if tok in _ORDINALS:
            out.append(float(_ORDINALS[tok]))
        elif tok[0] == "$" or tok[0].isdigit():
            digits = tok.lstrip("$")
            if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", digits):
                digits = digits.replace(",", "")
            digits = digits.rstrip(",")
            if "," in digits:  # "3,5" etc.: read each part as its own number
                out.extend(float(p) for p in digits.split(",") if p)
            else:
                out.append(float(digits))
    if run:
        out.append(float(_words_value([w for w in run if w != "and"])))
    return out


def normalize_text(text: str) -> str:
    text = re.sub(r"[^\w\s]", " ", text.lower())
    text = re.sub(r"\bthe\b", " ", text)
    return " ".join(text.split())


def _contains(haystack: str, needle: str) -> bool:
    n = normalize_text(needle)
    return bool(n) and re.search(rf"(?<!\w){re.escape(n)}(?!\w)", haystack) is not None


def check_answer(answer_text, expected, value_type: str, distractors=()) -> bool:
    """True when `answer_text` states `expected` (and nothing contradicting it)."""
    if answer_text is None:
        return False
    text = str(answer_text).strip()
    if not text:
        return False
    if value_type == "abstain":
        norm = normalize_text(text)
        return (_ABSTAIN.search(text) is not None and not any(_contains(norm, d) for d in distractors)
                and not parse_numbers(text) and not parse_dates(text))
    if _REFUSALS.match(text):
        return False
    if value_type == "number":
        nums = parse_numbers(text)
        return bool(nums) and all(abs(x - float(expected)) < 0.005 for x in nums)
    if value_type == "date":
        want = expected if isinstance(expected, dt.date) else dt.date.fromisoformat(str(expected))
        dates = parse_dates(text)
        return bool(dates) and all(d == want for d in dates)
    if value_type == "entity":
        norm = normalize_text(text)
        if not _contains(norm, str(expected)):
            return False
        return not any(_contains(norm, d) for d in distractors
                       if normalize_text(d) != normalize_text(str(expected)))
    if value_type == "set":
        norm = normalize_text(text)
        want = [str(v) for v in (expected if isinstance(expected, (list, tuple)) else [expected])]
        wanted = {normalize_text(v) for v in want}
        return (all(_contains(norm, v) for v in want)
                and not any(_contains(norm, d) for d in distractors if normalize_text(d) not in wanted))
    if value_type == "yesno":
        want = {"yes": True, "no": False, True: True, False: False}.get(
            expected.strip().lower() if isinstance(expected, str) else expected)
        if want is None:
            raise ValueError(f"a yesno value is 'yes' or 'no', not {expected!r}")
        said_yes, said_no = _YES.search(text) is not None, _NO.search(text) is not None
        norm = normalize_text(text)
        return (said_yes != said_no and said_yes == want
                and not any(_contains(norm, d) for d in distractors))
    raise ValueError(f"unknown value_type {value_type!r}")
