"""The code cells the reference policy writes, one program per question template.

A `Program` is matched against the question and names a kernel helper
(scroll/packs/generated/toolkit.py: latest | count_sessions | date_of | total | earliest | days_between |
all_values), the BM25 query that
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

HELPERS = ("latest", "count_sessions", "date_of", "total", "earliest", "days_between", "all_values")


def _lit(s: str) -> str:
    """A Python literal for `s`: a raw string when it holds a backslash (as a person writes a regex)."""
    if '"' in s or s.endswith("\\") or "\n" in s:
        return repr(s)
    return ("r" if "\\" in s else "") + f'"{s}"'


@dataclass(frozen=True)
class Program:
    name: str
    helper: str   # a scroll/packs/generated/toolkit.py helper
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
    (r"\bwhere does my friend ([A-Z][\w'-]*) live(?: now| these days| currently)?\b",
     lambda m: Program("friend_city", "latest", f"{m.group(1)} lives moved",
                       f"my friend {m.group(1)} lives in|{m.group(1)} just moved to|{m.group(1)} moved to")),
    # knowledge update, recall and preference: one statement (the latest wins)
    (r"\bwho is my manager(?: now| currently)?\b",
     _fixed("update_manager", "latest", "manager", "My manager is|My new manager is")),
    (r"\bwhich city was i born in\b|\bwhere was i born\b", _fixed("recall_born", "latest", "born", "I was born in")),
    (r"\bwhat is my dentist'?s name\b|\bwho is my dentist\b",
     _fixed("recall_dentist", "latest", "dentist Dr", r"My dentist is Dr\.")),
    (r"\b(?:in )?which city did i get married(?: in)?\b|\bwhere did i get married\b",
     _fixed("recall_married", "latest", "married", "We got married in|I got married in")),
    (r"\bwhich city did i go to university in\b|\bwhere did i go to university\b",
     _fixed("recall_university", "latest", "university", "I went to university in")),
    (r"\bwhat is my favou?rite cuisine\b", _fixed("pref_cuisine", "latest", "favourite cuisine", "My favourite cuisine is")),
    (r"\bwho is my favou?rite author\b", _fixed("pref_author", "latest", "favourite author", "My favourite author is")),
    (r"\bwhat is my dream destination\b",
     _fixed("pref_destination", "latest", "dream destination", "My dream destination is")),
    (r"\bwhat is my favou?rite board game\b",
     _fixed("pref_board_game", "latest", "favourite board game", "My favourite board game is")),
    # temporal: a first time, which came first, days between
    (r"\b(?:on what date|when) did i have my first ([a-z]+) lesson\b",
     lambda m: Program("date_lesson", "date_of", f"first {m.group(1)} lesson", f"I had my first {m.group(1)} lesson")),
    (r"\bwhich holiday did i take first: ([A-Z][\w' -]*?) or ([A-Z][\w' -]*?)\s*\??$",
     lambda m: Program("holiday_order", "earliest", f"holiday {m.group(1)} {m.group(2)}",
                       f"got back from my holiday in(?= (?:{m.group(1)}|{m.group(2)})\\b)")),
    (r"\bhow many days passed between my business trip to ([A-Z][\w' -]*?) and my business trip to "
     r"([A-Z][\w' -]*?)\s*\??$",
     lambda m: Program("trip_gap", "days_between", f"business trip {m.group(1)} {m.group(2)}",
                       f"flew back from my business trip to (?:{m.group(1)}|{m.group(2)})")),
    # contradictions: every value the history states for one fact
    (r"\bwhat is my middle name\b", _fixed("conflict_middle_name", "all_values", "middle name", "My middle name is")),
    (r"\bwhich city did i grow up in\b|\bwhere did i grow up\b",
     _fixed("conflict_grew_up", "all_values", "grew up", "I grew up in")),
    (r"\bwhat was my first pet called\b|\bwhat was my first pet'?s name\b",
     _fixed("conflict_first_pet", "all_values", "first pet called", r"My first pet was a \w+ called")),
    (r"\bwhere was my first job\b|\bwhich company was my first job at\b",
     _fixed("conflict_first_job", "all_values", "first job", "My first job was at")),
]


def match_program(question: str) -> Program | None:
    q = " ".join(question.strip().split())
    for rx, make in TEMPLATES:
        m = re.search(rx, q, re.I)
        if m:  # captured names (pet, race) keep the question's casing
            return make(m)
    return None
