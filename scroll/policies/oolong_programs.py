"""The reference policy's programs for OOLONG-style aggregation questions (scroll.bench.oolong).

The task text is the window's instructions (what an item is, the label set: "... one of: A,
B, C.") and one question. `match_oolong(task)` parses it into an `OolongQuery` (what to
aggregate) and returns an `OolongProgram`, whose cell is the natural llm_map program:

    READ      every item event: user_turns() (ms.expand in pages), each line parsed into
              (seq, date, user, instance)
    LABEL     ms.llm_map(instances, <instruction naming the label set>, schema={"label": enum})
    COMPUTE   plain Python: a count, most / least frequent, a comparison, per user, before /
              after a date, within a month
    EXPOSE    label counts, then one `ANSWER: <the OOLONG answer form> | evidence seqs: [...]`

The answer form is the one the question asks for ("Answer: 28", "Label: location", "User:
12345", "Answer: entity is more common than location", "Answer: location is less common
before Jun 16, 2024"); the policy then submits it with final(). Items that the mapper failed
on are reported and left out of the aggregate.
"""
from __future__ import annotations

import calendar
import re
import textwrap
from dataclasses import dataclass
from enum import Enum

_LABELSET = re.compile(r"\bone of: ([^.?\n]+)\.")
_DATE = r"([A-Z][a-z]{2,8} \d{1,2}, \d{4})"
_LAB = r"'([^']+)'"
_PLAIN = re.compile(r"[\w][\w -]*")
# what each TREC-coarse label means (the mapper's instruction); other label names go unexplained
MEANING = {"abbreviation": "the question asks what an abbreviation or acronym stands for",
           "entity": "the answer is a thing: an animal, a colour, a language, an object, a kind of something",
           "description and abstract concept": "the answer is a definition, a meaning or how something works",
           "human being": "the answer is a person",
           "location": "the answer is a place",
           "numeric value": "the answer is a number: a count, a size, a distance, a year or a date"}


class Ask(Enum):
    LABEL_COUNT = "label_count"        # how many items carry label L
    MOST = "most"                      # which label is the most common
    LEAST = "least"
    COMPARE = "compare"                # is L more / less / as common as M
    USER_COUNT = "user_count"          # how many items of user U carry L
    TOP_USER = "top_user"              # which user has the most items with L
    DATED_COUNT = "dated_count"        # how many items dated before / after D carry L
    DATED_COMPARE = "dated_compare"    # is L more / less common before D than after D
    MONTH_COUNT = "month_count"        # how many items in month M (any year) carry L


@dataclass(frozen=True)
class OolongQuery:
    ask: Ask
    labels: tuple[str, ...]            # the window's label set (public: the instructions name it)
    question: str
    label: str | None = None
    other: str | None = None           # COMPARE: the second label
    user: str | None = None
    side: str | None = None            # DATED_COUNT: "before" | "after"
    when: str | None = None            # the pivot date as the question writes it
    month: int | None = None           # 1..12


_PATTERNS: tuple[tuple[Ask, re.Pattern], ...] = tuple((a, re.compile(rx, re.I)) for a, rx in (
    (Ask.USER_COUNT, rf"how many items from user ([\w-]+) carry the label {_LAB}"),
    (Ask.DATED_COUNT, rf"how many items dated (before|after) {_DATE} carry the label {_LAB}"),
    (Ask.MONTH_COUNT, rf"items dated in ([A-Z][a-z]+) of any year, how many carry the label {_LAB}"),
    (Ask.LABEL_COUNT, rf"how many items carry the label {_LAB}"),
    (Ask.MOST, r"which label is the (most|least) common"),
    (Ask.DATED_COMPARE, rf"is the label {_LAB} more common, less common, or the same frequency among items dated "
                        rf"before {_DATE} as among items dated after"),
    (Ask.COMPARE, rf"is label {_LAB} more common, less common, or the same frequency as label {_LAB}"),
    (Ask.TOP_USER, rf"which user has the most items with the label {_LAB}"),
))


def parse_query(task: str) -> OolongQuery | None:
    """The question of an OOLONG-style task (instructions + question), or None if it is not one."""
    text = " ".join(str(task).split())
    found = _LABELSET.search(text)
    if found is None:
        return None
    labels = tuple(x.strip() for x in found.group(1).split(",") if x.strip())
    if not labels or not all(_PLAIN.fullmatch(x) for x in labels):
        return None  # the cell writes labels into string literals: plain words only
    question = str(task).strip().split("\n\n")[-1].strip()
    for ask, rx in _PATTERNS:
        m = rx.search(text)
        if m is None:
            continue
        g = m.groups()
        if ask is Ask.USER_COUNT:
            q = OolongQuery(ask, labels, question, label=g[1], user=g[0])
        elif ask is Ask.DATED_COUNT:
            q = OolongQuery(ask, labels, question, label=g[2], side=g[0].lower(), when=g[1])
        elif ask is Ask.MONTH_COUNT:
            months = {calendar.month_name[i].lower(): i for i in range(1, 13)}
            if g[0].lower() not in months:
                return None
            q = OolongQuery(ask, labels, question, label=g[1], month=months[g[0].lower()])
        elif ask is Ask.MOST:
            q = OolongQuery(Ask.MOST if g[0].lower() == "most" else Ask.LEAST, labels, question)
        elif ask is Ask.DATED_COMPARE:
            q = OolongQuery(ask, labels, question, label=g[0], when=g[1])
        elif ask is Ask.COMPARE:
            q = OolongQuery(ask, labels, question, label=g[0], other=g[1])
        else:  # LABEL_COUNT, TOP_USER
            q = OolongQuery(ask, labels, question, label=g[0])
        if any(x is not None and x not in labels for x in (q.label, q.other)):
            return None  # a label outside the set: not a question this program can answer
        return q
    return None


def instruction(labels: tuple[str, ...]) -> str:
    """The mapper's instruction: what to label, the label set (with meanings where known)."""
    lines = [f"- {lab}: {MEANING[lab]}" if lab in MEANING else f"- {lab}" for lab in labels]
    return ("The item is a general-knowledge question. Label it with the kind of answer it asks for, "
            "exactly one of these labels:\n" + "\n".join(lines))


_READ = '''\
import re, datetime as dt
from collections import Counter
from fractions import Fraction
LABELS = {labels!r}
ITEM = re.compile(r"^Date: (.+?) \\|\\| User: (.+?) \\|\\| Instance: (.*)$")
def day(s):
    for f in ("%b %d, %Y", "%B %d, %Y", "%Y-%m-%d"):
        try:
            return dt.datetime.strptime(s.strip(), f).date()
        except ValueError:
            pass
turns = [(e.seq, ITEM.match(e.text)) for e in user_turns()]
items = [(seq, day(m.group(1)), m.group(2), m.group(3)) for seq, m in turns if m]
print(f"{{len(items)}} item lines in {{len(turns)}} user turns")
labelled = ms.llm_map([text for *_, text in items], {prompt!r},
                      schema={{"type": "object", "properties": {{"label": {{"enum": LABELS}}}}, "required": ["label"]}})
failed = [r for r in labelled if not r["ok"]]
rows = [(seq, d, user, r["value"]["label"]) for (seq, d, user, _), r in zip(items, labelled) if r["ok"]]
print(f"labelled {{len(rows)}}, failed {{len(failed)}}" + (f" (first: {{failed[0]['error'][:100]}})" if failed else ""))
count = Counter(lab for *_, lab in rows)
print("label counts:", {{lab: count[lab] for lab in LABELS}})
def evidence(seqs):
    return f"{{seqs[:8]}}" + (f" (+{{len(seqs) - 8}} more)" if len(seqs) > 8 else "")
if not rows:
    print("ANSWER: unknown | evidence seqs: []")
else:
'''

_COMPUTE = {
    Ask.LABEL_COUNT: '''\
hit = [seq for seq, d, user, lab in rows if lab == {label!r}]
print(f"ANSWER: Answer: {{len(hit)}} | evidence seqs: {{evidence(hit)}}")''',
    Ask.MOST: '''\
best = max(LABELS, key=lambda lab: count[lab])
print(f"ANSWER: Label: {{best}} | evidence seqs: {{evidence([seq for seq, d, u, lab in rows if lab == best])}}")''',
    Ask.LEAST: '''\
best = min(LABELS, key=lambda lab: count[lab])
print(f"ANSWER: Label: {{best}} | evidence seqs: {{evidence([seq for seq, d, u, lab in rows if lab == best])}}")''',
    Ask.COMPARE: '''\
a, b = count[{label!r}], count[{other!r}]
x = "more common than" if a > b else "less common than" if a < b else "same frequency as"
print(f"{label}: {{a}}, {other}: {{b}}")
print(f"ANSWER: Answer: {label} is {{x}} {other} | evidence seqs: {{evidence([s for s, d, u, lab in rows if lab in ({label!r}, {other!r})])}}")''',
    Ask.USER_COUNT: '''\
hit = [seq for seq, d, user, lab in rows if user == {user!r} and lab == {label!r}]
print(f"user {user}: {{sum(1 for r in rows if r[2] == {user!r})}} items")
print(f"ANSWER: Answer: {{len(hit)}} | evidence seqs: {{evidence(hit)}}")''',
    Ask.TOP_USER: '''\
per = Counter(user for seq, d, user, lab in rows if lab == {label!r})
print("top users:", per.most_common(3))
top, n = per.most_common(1)[0] if per else ("unknown", 0)
print(f"ANSWER: User: {{top}} | evidence seqs: {{evidence([s for s, d, u, lab in rows if u == top and lab == {label!r}])}}")''',
    Ask.DATED_COUNT: '''\
pivot = day({when!r})
hit = [seq for seq, d, user, lab in rows if d and d {op} pivot and lab == {label!r}]
print(f"ANSWER: Answer: {{len(hit)}} | evidence seqs: {{evidence(hit)}}")''',
    Ask.DATED_COMPARE: '''\
pivot = day({when!r})
before = [lab for seq, d, u, lab in rows if d and d < pivot]
after = [lab for seq, d, u, lab in rows if d and d > pivot]
fb = Fraction(before.count({label!r}), max(1, len(before)))
fa = Fraction(after.count({label!r}), max(1, len(after)))
print(f"before: {{before.count({label!r})}}/{{len(before)}}, after: {{after.count({label!r})}}/{{len(after)}}")
x = "more common" if fb > fa else "less common" if fb < fa else "the same frequency"
print(f"ANSWER: Answer: {label} is {{x}} before {when} | evidence seqs: {{evidence([s for s, d, u, lab in rows if lab == {label!r}])}}")''',
    Ask.MONTH_COUNT: '''\
hit = [seq for seq, d, user, lab in rows if d and d.month == {month} and lab == {label!r}]
print(f"ANSWER: Answer: {{len(hit)}} | evidence seqs: {{evidence(hit)}}")''',
}


@dataclass(frozen=True)
class OolongProgram:
    """The llm_map program for one OOLONG-style question (the module docstring)."""

    query: OolongQuery

    @property
    def name(self) -> str:
        return f"oolong_{self.query.ask.value}"

    @property
    def question(self) -> str:
        return self.query.question

    def cell(self, plan: str) -> str:
        """The cell of `plan` ("solve"; "scan", the retry, is the same program run again)."""
        if plan not in ("solve", "scan"):
            raise ValueError(plan)
        q = self.query
        read = _READ.format(labels=list(q.labels), prompt=instruction(q.labels))
        compute = _COMPUTE[q.ask].format(label=q.label, other=q.other, user=q.user, when=q.when, month=q.month,
                                         op="<" if q.side == "before" else ">")
        return read + textwrap.indent(compute, "    ")


def match_oolong(task: str) -> OolongProgram | None:
    q = parse_query(task)
    return OolongProgram(q) if q is not None else None
