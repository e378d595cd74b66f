"""The code cells the reference policy writes, one program per question template.

A `Program` is matched against the question and names a kernel helper
(scroll/toolkit.py: latest | count_sessions | date_of | total), the BM25 query that
locates the candidates and the cue (a short regex of the user's own statement). Its cells:

    solve   hits = ms.search(<query>, k=None, role="user")      LOCATE every candidate turn
            <helper>(hits, <cue>)                                COMPUTE, MATERIALIZE, EXPOSE `ANSWER: ...`
    scan    <helper>(user_turns(), <cue>)                        the retry: no search, every user turn

The cue fits the generator's "train" wording (scroll/tasks/wordings.py) and carries the
names the question gives (a relative, a friend, a pet, a race), so memorising a handful of
cells cannot pass; its near misses (other people, plans, cancellations, quotes) do not match.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

HELPERS = ("latest", "count_sessions", "date_of", "total")


def _lit(s: str) -> str:
    """A Python literal for `s`: a raw string when it holds a backslash (as a person writes a regex)."""
    if '"' in s or s.endswith("\\") or "\n" in s:
        return repr(s)
    return ("r" if "\\" in s else "") + f'"{s}"'


@dataclass(frozen=True)
class Program:
    name: str
    helper: str   # a scroll/toolkit.py helper
    query: str    # BM25 query for ms.search
    cue: str      # regex of a first-person statement (the helper reads the value after it)

    def __post_init__(self):
        if self.helper not in HELPERS:
            raise ValueError(f"unknown helper {self.helper!r}; known: {HELPERS}")

    def cell(self, plan: str) -> str:
        if plan == "solve":
            return f'hits = ms.search({_lit(self.query)}, k=None, role="user")\n{self.helper}(hits, {_lit(self.cue)})'
        if plan == "scan":
            return f"{self.helper}(user_turns(), {_lit(self.cue)})"
        raise ValueError(plan)


def _fixed(name, helper, query, cue):
    return lambda m: Program(name, helper, query, cue)


# (question regex, factory(match) -> Program); first match wins
TEMPLATES = [
    (r"\bwhich city do i (?:live in|currently live in)(?: now| today| currently)?\b|\bwhere do i live(?: now)?\b",
     _fixed("update_city", "latest", "moved live living relocated",
            "I live in|I've been living in|I just moved to|I moved to|We finally moved to|I relocated to")),
    (r"\bwhich company do i work (?:for|at)(?: now| currently)?\b|\bwhere do i work(?: now)?\b",
     _fixed("update_employer", "latest", "work job joined first day",
            "I work at|first day at|new job at|I just joined")),
    (r"\bhow many times did i (?:go to|visit) the dentist\b|\bhow many dentist (?:visits|appointments)\b",
     _fixed("count_dentist", "count_sessions", "dentist",
            "I went to the dentist|got back from the dentist|I had a dentist appointment")),
    (r"\bhow many yoga classes did i (?:attend|go to|take)\b|\bhow many times did i go to yoga\b",
     _fixed("count_yoga", "count_sessions", "yoga class",
            "I went to a yoga class|did a yoga class|I made it to yoga class")),
    (r"\bhow many haircuts did i (?:get|have)\b|\bhow many times did i get a haircut\b",
     _fixed("count_haircut", "count_sessions", "haircut hair cut", "I got a haircut|got my hair cut")),
    # captured names are plain words ([\w' -]): safe inside a cue without escaping
    (r"\b(?:on what date|when) did i adopt (\w+)",
     lambda m: Program("date_adopt", "date_of", f"adopted {m.group(1)}", f"adopted {m.group(1)}")),
    (r"\b(?:on what date|when) did i run the ([\w' -]+?)\s*\??$",
     lambda m: Program("date_race", "date_of", f"ran {m.group(1)}", f"ran the {m.group(1)}")),
    (r"\bhow much did i spend on bike repairs\b|\bhow much have i spent on bike repairs\b",
     _fixed("sum_bike", "total", "paid spent charged bike shop repairs",
            "paid $ at the bike shop|bike shop charged me $|spent $ on bike repairs")),
    (r"\bhow much (?:did i spend|have i spent) on (?:taxis|taxi rides|cabs)\b",
     _fixed("sum_taxi", "total", "paid taxi cost took",
            r"paid $ for a taxi|taxi to [\w' -]{1,30}? cost me $|taxi to [\w' -]{1,30}?, $ with the tip")),
    (r"\bhow much (?:did i spend|have i spent) on groceries\b",
     _fixed("sum_groceries", "total", "spent paid groceries grocery run",
            r"spent $ on groceries|grocery run at [\w' -]{1,30}? came to $|paid $ for groceries")),
    # questions that name someone or something: the name goes into the search and the cue
    (r"\bhow many times did i meet ([A-Z][\w'-]*) for ([\w' -]+?)\s*\??$",
     lambda m: Program("meet_friend", "count_sessions", f"{m.group(1)} {m.group(2)}",
                       f"I met {m.group(1)} for {m.group(2)}|I caught up with {m.group(1)} over {m.group(2)}")),
    (r"\bwhere does my ([a-z][\w-]*) live(?: now| these days| currently)?\b",
     lambda m: Program("relative_city", "latest", f"{m.group(1)} moved lives",
                       f"my {m.group(1)} lives in|my {m.group(1)} just moved to|my {m.group(1)} finally moved to")),
]


def match_program(question: str) -> Program | None:
    q = " ".join(question.strip().split())
    for rx, make in TEMPLATES:
        m = re.search(rx, q, re.I)
        if m:  # captured names (pet, race) keep the question's casing
            return make(m)
    return None
