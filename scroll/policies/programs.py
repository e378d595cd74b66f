"""The code cells the reference policy writes, one program per question template.

A `Program` is matched against the question and yields the cells: `search` (locate every
candidate user turn with ms.search(k=None), print a compact summary), `compute` (filter the resident `hits` with the template's pattern, re-read the
chosen evidence with ms.expand, compute the answer, print `ANSWER: ...`), and `scan` (the
retry: the same computation over every user turn read with ms.expand, no search).

Every cell ends by printing a marker line (`== search ok`, `ANSWER: ...`), so the policy
can tell a cell that finished from one that failed, timed out or was cut. Exposures are
kept small: counts, seqs, dates and ~80-character snippets, never whole events.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# ---- shared prelude (defined in the search cell and in the scan cell) -------------------------
HELPERS = '''import re, datetime as _dt

def snip(text, pat, width=80):
    m = re.search(pat, text)
    i = max(0, (m.start() if m else 0) - width // 4)
    return " ".join(text[i:i + width].split())
'''

SEARCH = '''{helpers}
# LOCATE: every user turn that shares a term with the query (k=None: all of them)
Q, KEY = {query!r}, {key!r}
hits = ms.search(Q, k=None, role="user")
print(f"{{len(hits)}} user turns match {{Q!r}}; best {{min(5, len(hits))}}:")
for h in hits[:5]:
    print(f"  seq={{h.seq}} {{h.time[:10]}} {{snip(h.text, KEY)!r}}")
print("== search ok")
'''

SCAN = '''{helpers}
# RETRY without search: read every history event in ranges with ms.expand, keep the user turns
KEY = {key!r}
last = ms.recent(1)[0].seq
hits = []
for lo in range(1, last + 1, 2000):
    hits += [e for e in ms.expand(lo, min(last, lo + 1999)) if e.origin == "history" and e.role == "user"]
hits = [h for h in hits if re.search(KEY, h.text)]
print(f"scanned {{last}} events: {{len(hits)}} user turns match {{KEY!r}}")
'''

# compute bodies: use `hits` (resident) and PAT; set `answer`, `evidence`; print compactly
COMPUTE = {
    "latest": '''
# COMPUTE: every self-statement of the value, oldest first; the latest one is current
PAT = re.compile({pattern!r})
found = sorted((h.time, h.seq, m.group(1).strip(), m.group(0)) for h in hits for m in PAT.finditer(h.text))
for t, seq, value, phrase in found[-6:]:
    print(f"  seq={{seq}} {{t[:10]}} {{value!r}} <- {{phrase[:60]!r}}")
answer = found[-1][2] if found else "unknown"
evidence = [found[-1][1]] if found else []
for seq in evidence:  # MATERIALIZE: re-read the exact event
    e = ms.expand(seq)
    print(f"  expand({{seq}}): session={{e.session}} {{e.time[:16]}} {{snip(e.text, PAT.pattern, 100)!r}}")
print(f"ANSWER: {{answer}} | evidence seqs: {{evidence}} ({{len(found)}} statements)")
''',
    "count": '''
# COUNT: sessions with a first-person statement that it happened (plans/cancellations/others excluded)
PAT = re.compile({pattern!r})
by_session = {{}}
for h in sorted(hits, key=lambda h: h.seq):
    if PAT.search(h.text):
        by_session.setdefault(h.session, h)
for s, h in by_session.items():
    print(f"  seq={{h.seq}} {{h.time[:10]}} {{s}} {{snip(h.text, PAT.pattern, 60)!r}}")
near = [h.seq for h in hits if re.search({key!r}, h.text) and not PAT.search(h.text)]
print(f"  ({{len(near)}} near misses skipped, e.g. seqs {{near[:6]}})")
answer = str(len(by_session))
evidence = [h.seq for h in by_session.values()]
print(f"ANSWER: {{answer}} | evidence seqs: {{evidence}}")
''',
    "date": '''
# DATE: the first-person statement; the event's date, minus one day if it said "yesterday"
PAT = re.compile({pattern!r})
found = sorted((h.seq, h, m) for h in hits for m in [PAT.search(h.text)] if m)
for seq, h, m in found:
    print(f"  seq={{seq}} {{h.time[:10]}} {{m.group(0)!r}}")
answer, evidence = "unknown", []
if found:
    seq, h, m = found[0]
    e = ms.expand(seq)  # MATERIALIZE: the exact event and its timestamp
    day = _dt.date.fromisoformat(e.time[:10])
    if m.group(1).lower() in ("yesterday", "last night"):
        day -= _dt.timedelta(days=1)
    answer, evidence = day.isoformat(), [seq]
    print(f"  expand({{seq}}): {{e.time}} said {{m.group(1)!r}} -> {{answer}}")
print(f"ANSWER: {{answer}} | evidence seqs: {{evidence}}")
''',
    "sum": '''
# SUM: amounts the user paid (quotes, plans and other people's spending excluded)
PAT = re.compile({pattern!r})
paid = []
for h in sorted(hits, key=lambda h: h.seq):
    for m in PAT.finditer(h.text):
        amount = float(next(g for g in m.groups() if g))
        paid.append((h.seq, h.time[:10], amount))
        print(f"  seq={{h.seq}} {{h.time[:10]}} ${{amount:g}} <- {{m.group(0)[:60]!r}}")
total = sum(a for _, _, a in paid)
answer = f"${{total:,.2f}}".replace(".00", "") if paid else "unknown"
evidence = [s for s, _, _ in paid]
print(f"ANSWER: {{answer}} | evidence seqs: {{evidence}} ({{len(paid)}} payments)")
''',
}

_WHEN = r"(today|this morning|earlier today|yesterday|last night)"
_AMOUNT = r"\$(\d+(?:\.\d\d)?)"


@dataclass
class Program:
    name: str
    kind: str           # latest | count | date | sum
    query: str          # BM25 query for ms.search
    key: str            # regex every candidate contains (for snippets, near misses, the scan)
    pattern: str        # regex of a first-person statement (group 1 = the value / "when")

    def cell(self, plan: str) -> str:
        helpers = HELPERS.rstrip("\n")
        body = COMPUTE[self.kind].format(pattern=self.pattern, key=self.key)
        if plan == "search":
            return SEARCH.format(helpers=helpers, query=self.query, key=self.key).strip("\n")
        if plan == "compute":
            return body.strip("\n")
        if plan == "scan":
            return (SCAN.format(helpers=helpers, key=self.key) + body).strip("\n")
        raise ValueError(plan)


def _count(name, query, key, pattern):
    return lambda m: Program(name, "count", query, key, pattern)


# (question regex, factory(match) -> Program); first match wins
TEMPLATES = [
    (r"\bwhich city do i (?:live in|currently live in)(?: now| today| currently)?\b|\bwhere do i live(?: now)?\b",
     lambda m: Program("update_city", "latest", "moved live living relocated", r"\b(?:live|living|moved|relocated)\b",
                       r"\b(?:I|[Ww]e)(?:'ve| have)?\s+(?:live in|been living in|(?:just |finally )?(?:moved|relocated) to)"
                       r"\s+([A-Z][a-z]+(?: [A-Z][a-z]+)?)")),
    (r"\bwhich company do i work (?:for|at)(?: now| currently)?\b|\bwhere do i work(?: now)?\b",
     lambda m: Program("update_employer", "latest", "work job joined first day", r"\b(?:work|job|joined|first day)\b",
                       r"(?:\bI work at|\bfirst day at|\bnew job at|\bI (?:just )?joined)\s+([A-Z]\w+(?: [A-Z]\w+)*)")),
    (r"\bhow many times did i (?:go to|visit) the dentist\b|\bhow many dentist (?:visits|appointments)\b",
     _count("count_dentist", "dentist", r"(?i)dentist",
            r"\b(?:I went to the dentist|[Jj]ust got back from the dentist|I had a dentist appointment)")),
    (r"\bhow many yoga classes did i (?:attend|go to|take)\b|\bhow many times did i go to yoga\b",
     _count("count_yoga", "yoga class", r"(?i)yoga",
            r"\b(?:I went to a yoga class|[Dd]id a yoga class|I made it to yoga class)")),
    (r"\bhow many haircuts did i (?:get|have)\b|\bhow many times did i get a haircut\b",
     _count("count_haircut", "haircut hair cut", r"(?i)hair ?cut",
            r"\b(?:I got a haircut|[Ff]inally got my hair cut)")),
    (r"\b(?:on what date|when) did i adopt (\w+)",
     lambda m: Program("date_adopt", "date", f"adopted {m.group(1)}", rf"\b{re.escape(m.group(1))}\b",
                       rf"\b(?:I|[Ww]e)\s+adopted\s+{re.escape(m.group(1))}\s+{_WHEN}")),
    (r"\b(?:on what date|when) did i run the ([\w' -]+?)\s*\??$",
     lambda m: Program("date_race", "date", f"ran {m.group(1)}", rf"(?i){re.escape(m.group(1))}",
                       rf"\b(?:I|[Jj]ust)\s+ran\s+the\s+{re.escape(m.group(1))}\s+{_WHEN}")),
    (r"\bhow much did i spend on bike repairs\b|\bhow much have i spent on bike repairs\b",
     lambda m: Program("sum_bike", "sum", "paid spent charged bike shop repairs", r"(?i)bike",
                       rf"(?:\b[Pp]aid {_AMOUNT} at the bike shop|\bbike shop charged me {_AMOUNT}"
                       rf"|\b[Ss]pent {_AMOUNT} on bike repairs)")),
    (r"\bhow much (?:did i spend|have i spent) on (?:taxis|taxi rides|cabs)\b",
     lambda m: Program("sum_taxi", "sum", "paid taxi cost took", r"(?i)taxi",
                       rf"(?:\b[Pp]aid {_AMOUNT} for a taxi\b|\b[Tt]he taxi to [^$.]{{1,40}}? cost me {_AMOUNT}"
                       rf"|\b[Tt]ook a taxi to [^$.]{{1,40}}?, {_AMOUNT} with the tip)")),
    (r"\bhow much (?:did i spend|have i spent) on groceries\b",
     lambda m: Program("sum_groceries", "sum", "spent paid groceries grocery run", r"(?i)grocer",
                       rf"(?:\b[Ss]pent {_AMOUNT} on groceries\b|\bgrocery run at [^$.]{{1,40}}? came to {_AMOUNT}"
                       rf"|\b[Pp]aid {_AMOUNT} for groceries\b)")),
    # questions that name someone or something: the name goes into the search and the pattern
    (r"\bhow many times did i meet ([A-Z][\w'-]*) for ([\w' -]+?)\s*\??$",
     lambda m: Program("meet_friend", "count", f"{m.group(1)} {m.group(2)}", rf"\b{re.escape(m.group(1))}\b",
                       rf"\bI (?:met|caught up with) {re.escape(m.group(1))} (?:for|over) "
                       rf"{re.escape(m.group(2))}\b")),
    (r"\bwhere does my ([a-z][\w-]*) live(?: now| these days| currently)?\b",
     lambda m: Program("relative_city", "latest", f"{m.group(1)} moved lives", rf"\b[Mm]y {re.escape(m.group(1))}\b",
                       rf"\b[Mm]y {re.escape(m.group(1))} (?:lives in|(?:just |finally )?moved to)"
                       r"\s+([A-Z][a-z]+(?: [A-Z][a-z]+)?)")),
]


def match_program(question: str) -> Program | None:
    q = " ".join(question.strip().split())
    for rx, make in TEMPLATES:
        m = re.search(rx, q, re.I)
        if m:  # captured names (pet, race) keep the question's casing
            return make(m)
    return None
