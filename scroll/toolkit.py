"""Question-agnostic helpers defined in every kernel next to `ms` (the system prompt lists them).

They know English, not any task: what a sentence is, who its subject is, whether it states
something that happened (not a plan, a wish, a quote, a cancellation, someone else's life),
which day it refers to, what amounts and Capitalised Names it holds. The question's own
words go in as arguments:

    hits = ms.search(widen("dentist checkup"), k=None, role="user")      # LOCATE
    count_of(hits, "dentist")                                             # sessions where I did it

`must`: the words a statement must contain, space-separated groups, `|` between the
alternatives of one group ("Biscuit adopt|rescue": Biscuit AND (adopt OR rescue)). A word
matches its variants (adopt ~ adopted, adopting, adoption; move ~ moved; taxi ~ taxis), a
lower-case word its synonyms too (scroll/thesaurus.py, defined just before this file: taxi ~
cab, uber; `synonyms("taxi")` lists them, `widen("taxi fare")` makes the ms.search query), and a
multi-word name matches as a phrase with `_` for its spaces ("Oslo_Half_Marathon").
`about`: optional words of the same form that rank statements (more matches first).
`who`: whose statements count: None = mine (first person or no other subject), a
relation word ("sister": sentences whose subject is "my sister"), or "*" (anyone).

    facts(hits, must, about="", who=None, any_time=False) -> Fact list (.seq .session .time
        .day .text .score .names .amounts), oldest first: the statements that qualify
    latest_of / earliest_of(hits, must, ...)  the Capitalised Name in the newest / oldest statement
    values_of(hits, must, ...)                every distinct Name, oldest first ("A; B")
    count_of(hits, must, ...)                 how many sessions hold a qualifying statement
    day_of(hits, must, ...)                   the day the (first) statement refers to
                                              ("yesterday" -> the day before it was written;
                                              "new shoes for the X": done for the event, a last resort)
    sum_of(hits, must, ...)                   the sum of the amounts ($12, 12 dollars)
    first_of(hits, [a, b], about="")          which option's event happened first ({label: must} too)
    days_apart(hits, a, b, about="")          days from event a to event b
    previous_of(hits, must, than)             the Name stated before `than` took over
    who_of(hits, must)                        who else did it ("sister", or a Name)
    largest_of / smallest_of(hits, must)      the largest / smallest single amount spent
    difference(hits, a, b, of="sum")          how much more a than b (of="count": sessions)
    compare(hits, a, b, by="sum")             "yes" when a beats b (by: sum, count, largest, day = first)
    ever(hits, must, ...)                     "yes" / "no"
    said_about(hits, must, ...)               the newest statement itself
    user_turns()                              every user turn of the history (no search)

Each prints a few evidence lines and one `ANSWER: <value> | evidence seqs: [...]` line and
returns the answer as a string ("unknown" when nothing qualifies). This file runs inside
the sandboxed kernel at every start (scroll.prompts.kernel_prelude), after scroll/thesaurus.py
and scroll/statements.py (how a statement is read: `facts`, `Fact`, `_value`), whose names it
uses: standard library only, `ms` is a global of the cell's namespace. Everything here is generic English; no name of a
task family, template or generator occurs (tests/test_writer.py checks that).
"""
def _show(rows, limit=5):
    for f in rows[-limit:]:
        print(f"  seq={f.seq} {f.time[:10]} {f.text[:100]!r}")


def _answer(value, rows, note=""):
    print(f"ANSWER: {value} | evidence seqs: {sorted({f.seq for f in rows})}{note}")
    return value


def _pick(hits, must, about, who, any_time=False):
    rows = facts(hits, must, about, who, any_time)
    print(f"{len(hits)} turns searched, {len(rows)} statements qualify")
    return rows


def _best(rows):
    top = max((f.score for f in rows), default=0)
    return [f for f in rows if f.score == top]


def latest_of(hits, must, about="", who=None, kind=None):
    """The Capitalised Name in the newest qualifying statement (the current value)."""
    rows = [f for f in _best(_pick(hits, must, about, who)) if _value(f, must, about, kind)]
    _show(rows)
    if not rows:
        return _answer("unknown", [], " (no statement qualifies)")
    f = max(rows, key=lambda f: (f.time, f.seq))
    return _answer(_value(f, must, about, kind), [f])


def earliest_of(hits, must, about="", who=None, kind=None):
    """The Capitalised Name in the oldest qualifying statement (any time, the distant past included)."""
    rows = [f for f in _best(_pick(hits, must, about, who, True)) if _value(f, must, about, kind)]
    _show(rows[:5])
    if not rows:
        return _answer("unknown", [], " (no statement qualifies)")
    f = min(rows, key=lambda f: (f.time, f.seq))
    return _answer(_value(f, must, about, kind), [f])


def values_of(hits, must, about="", who=None, kind=None, besides=(), any_time=False):
    """Every distinct Capitalised Name of the qualifying statements, oldest first, joined by '; '
    (`besides`: Names to leave out; any_time: the distant past too)."""
    rows = [f for f in _pick(hits, must, about, who, any_time) if _value(f, must, about, kind, besides)]
    _show(rows, 8)
    vals, ev = [], []
    for f in rows:
        v = _value(f, must, about, kind, besides)
        if v not in vals:
            vals.append(v)
            ev.append(f)
    return _answer("; ".join(vals), ev) if vals else _answer("unknown", [], " (no statement qualifies)")


def count_of(hits, must, about="", who=None):
    """How many sessions hold a qualifying statement (a session counts once)."""
    rows = _pick(hits, must, about, who)
    first = {}
    for f in rows:
        first.setdefault(f.session, f)
    _show(list(first.values()), 8)
    return _answer(str(len(first)), list(first.values()))


def day_of(hits, must, about="", who=None):
    """The day the best-matching (then first) qualifying statement refers to, ISO format."""
    rows = _pick(hits, must, about, who)
    rows = _best([f for f in rows if not _aimed(f, must)] or rows)  # not "new shoes for the X"
    dated = [f for f in rows if f.dated] or rows
    _show(dated)
    if not dated:
        return _answer("unknown", [], " (no statement qualifies)")
    f = min(dated, key=lambda f: (f.time, f.seq))
    print(f"  seq={f.seq} was written {f.time[:16]}: the event was on {f.day}")
    return _answer(f.day.isoformat(), [f])


def sum_of(hits, must, about="", who=None):
    """The sum of the amounts ($12, 12 dollars) in qualifying statements of money actually spent (a
    statement without one takes its message's only amount: "Took a cab home; that was $20")."""
    rows = [f for f in _pick(hits, must, about, who) if _spent(f)]
    _show(rows, 8)
    if not rows:
        return _answer("unknown", [], " (no amount qualifies)")
    s = sum(a for f in rows for a in f.amounts)
    return _answer(f"${s:,.2f}".replace(".00", ""), rows)


def first_of(hits, options, about="", who=None):
    """Which event happened first: `options` is a list of `must`s, or a dict {label: must}; the
    answer is the label (the must itself for a list), by the day each statement refers to."""
    labelled = options.items() if isinstance(options, dict) else [(str(o).replace("_", " "), o) for o in options]
    seen = []
    for label, m in labelled:
        rows = _best(facts(hits, m, about, who))
        rows = [f for f in rows if f.dated] or rows
        if rows:
            f = min(rows, key=lambda f: (f.day, f.seq))
            print(f"  {label}: {f.day} seq={f.seq} {f.text[:80]!r}")
            seen.append((f.day, f.seq, label, f))
    if len(seen) < 2:
        return _answer("unknown", [x[3] for x in seen], " (need a dated statement for each option)")
    seen.sort(key=lambda x: (x[0], x[1]))
    day, seq, label, f = seen[0]
    words = {w.lower() for w in _WORD.findall(str(label))}
    full = [n for n in _names(f.text, (), f.vocab) if words & {w.lower() for w in n.split()} and n.lower() not in
            str(label).lower()]
    return _answer(f"{label} ({full[0]})" if full else label, [x[3] for x in seen])


def days_apart(hits, a, b, about="", who=None):
    """Days from event `a` to event `b` (a `must` each), by the days their statements refer to."""
    ends = []
    for m in (a, b):
        rows = _best(facts(hits, m, about, who))
        dated = [f for f in rows if f.dated] or rows
        if not dated:
            return _answer("unknown", [e for e in ends], f" (no statement qualifies for {m!r})")
        ends.append(min(dated, key=lambda f: (f.time, f.seq)))
        print(f"  {m}: {ends[-1].day} seq={ends[-1].seq} {ends[-1].text[:80]!r}")
    return _answer(str(abs((ends[1].day - ends[0].day).days)), ends)


def previous_of(hits, must, than, about="", who=None, kind=None):
    """The value stated before `than` took over: the last qualifying statement's Name older
    than the first one naming `than`."""
    rows = [f for f in _pick(hits, must, about, who, True) if _value(f, must, about, kind)]
    rows.sort(key=lambda f: (f.time, f.seq))
    at = next((i for i, f in enumerate(rows) if str(than).replace("_", " ").lower() in f.text.lower()), None)
    before = [f for f in rows[:at] if _value(f, must, about, kind).lower() != str(than).replace("_", " ").lower()] \
        if at else []
    _show(before, 4)
    if not before:
        return _answer("unknown", [], f" (nothing stated before {than!r})")
    return _answer(_value(before[-1], must, about, kind), [before[-1]])


def who_of(hits, must, about=""):
    """Who else did it: the subject of the newest qualifying statement that is not mine (a
    relation word like "sister", or the Name after it / as the subject)."""
    vocab = _vocab(hits)
    rows = [f for f in _pick(hits, must, about, "*", True) if _subject(f.text, vocab) != "me"]
    people = [f for f in rows if _subject(f.text, vocab) in _PEOPLE]  # "my sister ..." before a bare Name
    rows = _best(people or rows)
    _show(rows, 4)
    if not rows:
        return _answer("unknown", [], " (nobody else qualifies)")
    f = max(rows, key=lambda f: (f.time, f.seq))
    subj = _subject(f.text, vocab)
    m = _re.search(r"\b(?i:my|our)\s+(?i:" + _re.escape(subj) + r")\s+([A-Z][a-z]+)\b", f.text) \
        if not subj.startswith(("name:", "other")) else None
    value = m.group(1) if m else subj.split(":")[-1]
    if subj == "other":  # "my sister's friend": the first person word
        m = _re.search(r"\b(?:my|our)\s+([a-z-]+)", f.text, _re.I)
        value = m.group(1) if m else "unknown"
    return _answer(value, [f])


def largest_of(hits, must, about="", who=None):
    """The largest single amount spent in a qualifying statement."""
    return _extreme(hits, must, about, who, max)


def smallest_of(hits, must, about="", who=None):
    """The smallest single amount spent in a qualifying statement."""
    return _extreme(hits, must, about, who, min)


def _spent(f):
    """True when the statement (or its message, for a lone amount) says money was spent."""
    if not f.amounts and f.message:
        found = _my_amounts(f.message)
        f.amounts = found if len(found) == 1 else []
    return bool(f.amounts) and not _UNSPENT.search(f.text)


def _extreme(hits, must, about, who, pick):
    rows = [f for f in _pick(hits, must, about, who) if _spent(f)]
    _show(rows, 8)
    if not rows:
        return _answer("unknown", [], " (no amount qualifies)")
    f = pick(rows, key=lambda f: pick(f.amounts))
    return _answer(f"${pick(f.amounts):,.2f}".replace(".00", ""), [f])


def difference(hits, a, b, of="sum", about="", who=None):
    """How much more `a` than `b`: of="sum" (amounts spent) or "count" (sessions)."""
    helper = sum_of if of == "sum" else count_of
    va, vb = helper(hits, a, about, who), helper(hits, b, about, who)
    if "unknown" in (va, vb):
        return _answer("unknown", [], " (one side has no value)")
    x, y = (float(v.replace("$", "").replace(",", "")) for v in (va, vb))
    d = x - y
    return _answer((f"${d:,.2f}".replace(".00", "") if of == "sum" else f"{d:g}"), [])


def compare(hits, a, b, by="sum", about="", who=None):
    """"yes" when event / thing `a` beats `b`, else "no": by="sum" (more money spent), "count" (more
    sessions), "largest" (a bigger single amount), "day" (a happened first)."""
    if by == "day":
        ends = []
        for m in (a, b):
            rows = _best(facts(hits, m, about, who))
            rows = [f for f in rows if f.dated] or rows
            if not rows:
                return _answer("unknown", ends, f" (no statement qualifies for {m!r})")
            ends.append(min(rows, key=lambda f: (f.day, f.seq)))
            print(f"  {m}: {ends[-1].day} seq={ends[-1].seq} {ends[-1].text[:80]!r}")
        return _answer("yes" if ends[0].day < ends[1].day else "no", ends)
    helper = {"sum": sum_of, "count": count_of, "largest": largest_of}[by]
    va, vb = helper(hits, a, about, who), helper(hits, b, about, who)
    if "unknown" in (va, vb):
        return _answer("unknown", [], " (one side has no value)")
    x, y = (float(v.replace("$", "").replace(",", "")) for v in (va, vb))
    return _answer("yes" if x > y else "no", [])


def ever(hits, must, about="", who=None):
    """'yes' when any statement qualifies, else 'no'."""
    rows = _pick(hits, must, about, who, True)
    _show(rows, 3)
    return _answer("yes" if rows else "no", rows)


def said_about(hits, must, about="", who=None):
    """The newest qualifying statement, as said."""
    rows = _best(_pick(hits, must, about, who, True))
    _show(rows, 3)
    if not rows:
        return _answer("unknown", [], " (no statement qualifies)")
    f = max(rows, key=lambda f: (f.time, f.seq))
    return _answer(f.text, [f])


def _member(text, members):
    """The first member of a kind that `text` names (the longer of two at one place; "beagle mix":
    a following mix/cross word kept), else None."""
    found = []
    for m in members:
        for hit in _re.finditer(r"\b" + _re.escape(m) + r"s?\b", text, 0 if m[:1].isupper() else _re.I):
            found.append((hit.start(), -len(m), hit))
    if not found:
        return None
    hit = min(found, key=lambda x: (x[0], x[1]))[2]
    tail = _re.match(r"\s+(mix|cross)\b", text[hit.end():], _re.I)
    value = hit.group() + (" " + tail.group(1) if tail else "")
    return value.lower() if value[:1].islower() else value  # a Name (a language) keeps its capital


def kind_of(hits, must, about="", who=None, kind=None):
    """Which member of a kind ("dog" or "breed", "cat", "instrument", "language") my newest
    qualifying statement names (in its message: "We got Rex! A beagle."); when none qualifies (or no
    `must`), my newest statement that names one, found by its own search."""
    members = _kind_members(kind)
    if not members:
        return _answer("unknown", [], f" (no kind {kind!r}: dog, breed, cat, instrument, language)")
    rows = [f for f in _pick(hits, must, about, who) if _member(f.message, members)] if must else []
    if not rows:
        more = ms.search(" ".join(members), k=None, role="user")  # noqa: F821 - `ms` is the kernel's global
        rows = [f for f in _pick(more, "|".join(m.replace(" ", "_") for m in members), about, who)
                if _member(f.text, members)]
    _show(rows)
    if not rows:
        return _answer("unknown", [], " (no statement names one)")
    f = max(rows, key=lambda f: (f.time, f.seq))
    return _answer(_member(f.text, members) or _member(f.message, members), [f])


def user_turns(session=None):
    """Every user turn of the history in log order, read with ms.expand in ranges (no search)."""
    recent = ms.recent(1)  # noqa: F821 - `ms` is the kernel's global
    last = recent[0].seq if recent else 0
    out = []
    for lo in range(1, last + 1, 2000):
        out += [e for e in ms.expand(lo, min(last, lo + 1999))  # noqa: F821
                if e.origin == "history" and e.role == "user" and (session is None or e.session == session)]
    print(f"read {last} events: {len(out)} user turns")
    return out
