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
                                              ("yesterday" -> the day before it was written)
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
the sandboxed kernel at every start (scroll.prompts.kernel_prelude): standard library only,
`ms` is a global of the cell's namespace. Everything here is generic English; no name of a
task family, template or generator occurs (tests/test_writer.py checks that).
"""
import datetime as _dt
import re as _re

_SPLIT = _re.compile(r"(?<!\bDr)(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bSt)[.!?;]+(?:\s+|$)|\s+[-\u2013\u2014]+\s+|\n+")
_WORD = _re.compile(r"[A-Za-z][A-Za-z'&-]*|\d+")
_PEOPLE = set(("neighbor neighbour neighbors neighbours friend friends sister brother mom mum mother dad father "
               "parents cousin aunt uncle grandma grandmother grandpa grandfather grandparents wife husband partner "
               "colleague coworker boss son daughter niece nephew roommate flatmate boyfriend girlfriend kids "
               "stepbrother stepsister godmother godfather in-laws family sibling siblings fiance fiancee").split())
_HEDGE = _re.compile(
    r"\b(?:might|maybe|perhaps|someday|some day|one day|thinking (?:of|about)|considering|consider|plan|plans|"
    r"planning|planned|going to|gonna|will|won't|'ll|next (?:week|month|year|time)|soon|should|need|needs|"
    r"want to|wants to|would|'d|could|if|hope|hoping|wish|dream|dreams|daydream\w*|cancel\w*|skip\w*|"
    r"didn't|did not|don't|do not|doesn't|never|not|forgot|missed|fell through|called off|postponed|supposed to|"
    r"almost|quote\w*|instead|keeps? talking|talking about|signed up|sign up|signing up|registration|"
    r"registered|interview\w*|recruiter\w*|ignored|bail\w*|flaked|rain check|reschedul\w*|no-show|on the table|"
    r"leaning|pencil\w*|tbd|tentative\w*|hiring manager|appl(?:y|ied|ying|ication)s?)\b", _re.I)
# a request to the assistant states nothing
_REQUEST = _re.compile(r"\W*(?:(?:can|could|would|will) you|please|help me|let's|let me know)\b", _re.I)
_PURPOSE = _re.compile(r"\bso (?:that )?(?:[\w']+ ){0,3}(?:would|could)\b", _re.I)
_CLAUSE = _re.compile(r",?\s+(?:but|so|because|though|although|while|whereas)\s+|,?\s+and\s+(?=\w+s\b|I\b|we\b|my\b|it\b)|,\s+and\s+(?=[A-Z])|"
                      r",?\s+(?=who\b|who's\b|whose\b)|,?\s+since\s+(?=(?:he|she|they|his|her|their|its)\b)|"
                      r",\s+(?=(?:already|now|still|just|probably)?\s*[a-z]+ing\b)|,\s+(?=(?:someone|somebody|he|she|they)\b)")  # ", still sorting the photos"
_THIRD = _re.compile(r"\s*(?:he|she|they|his|her|their|its|someone|somebody)\b", _re.I)  # a clause about someone else
_HELPED = _re.compile(r"\b(?i:help)(?:ed|ing|s)?\s+(?:out\s+)?([A-Z][a-z]+)\b")  # "helped Ana carry boxes": Ana's event
_UNSPENT = _re.compile(r"\b(?:coupons?|vouchers?|refund\w*|saved|forgot|budget\w*|(?:a|per|each) (?:week|month|year))\b"
                       r"(?!'s)", _re.I)
_BACKDATED = _re.compile(
    r"\b(?:back in|back then|way back|long ago|years ago|ages ago|used to|as a (?:kid|child|student|teen)|"
    r"when I was|growing up|grew up|college|childhood|once lived|formerly|previously|last year)\b", _re.I)
_WHEN = [(_re.compile(r"\bthe day before yesterday\b", _re.I), 2),
         (_re.compile(r"\b(?:yesterday|last night)\b", _re.I), 1),
         (_re.compile(r"\b(?:today|this (?:morning|afternoon|evening)|earlier today|tonight|just now)\b", _re.I), 0),
         (_re.compile(r"\b(\d+|two|three|four|five|six) days ago\b", _re.I), None)]
_NUMS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_MONEY = _re.compile(r"[$\u20ac\u00a3]\s?(\d[\d,]*(?:\.\d\d)?)|\b(\d[\d,]*(?:\.\d\d)?)\s?(?:dollars|bucks|usd|euros?)\b",
                     _re.I)
_ALWAYS = set(("i i'm i've i'd i'll mr mrs ms dr monday tuesday wednesday thursday friday saturday sunday january february "
               "march april june july august september october november december").split())
# capitalised words that start sentences without being names (plain English, no task words)
_COMMON = set(("ouch ugh wow whoa yay phew oops welp ha haha hmm sigh yikes woo damn "
               "back for in on at to from with by of about after before during since until a an the i i'm i've i'd "
               "i'll we we're we've my our me us you your it it's its this that these those there here he she they "
               "his her their so and but or also just finally still now then today tonight yesterday tomorrow "
               "morning afternoon evening hey hi hello oh ok okay well yes no not anyway random quick big small new "
               "old good great little first second last next another other some any every all when while where what "
               "which who why how had have has did do does was were is are be been got get went came took made spent "
               "paid saw met started moved officially news update alert reminder note btw fyi guess turns apparently "
               "honestly seriously sat brought ran left found bought caught kept felt put read won lost gave told "
               "wrote drove flew ate drank wore cut began swam sang rode say meet look check ask remember imagine "
               "welcome thanks sorry years days weeks months one two three four five six mr mrs ms dr monday tuesday "
               "wednesday thursday friday saturday sunday january february march april may june july august "
               "september october november december spring summer autumn fall winter").split())


def _stem(w):
    w = w.lower().strip("'")
    w = w[:-2] if w.endswith("'s") else w
    for suf in ("ations", "ation", "ings", "ing", "ers", "ies", "ied", "es", "ed", "s", "e", "ion"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: len(w) - len(suf)]
    return w


def _groups(spec):
    """'Biscuit adopt|rescue' -> [[('biscuit',)], [('adopt',), ('rescue',)]] (phrases as stem tuples)."""
    if isinstance(spec, (list, tuple)):
        spec = " ".join(str(s) for s in spec)
    out = []
    for grp in str(spec or "").split():  # a lower-case word matches its synonyms too (scroll/thesaurus.py)
        words = [s for a in grp.split("|") for s in synonyms(a)]
        alts = [tuple(_stem(w) for w in _WORD.findall(a.replace("_", " "))) for a in dict.fromkeys(words)]
        alts = [a for a in alts if a]
        if alts:
            out.append(alts)
    return out


def _has(stems, alt):
    n = len(alt)
    return any(tuple(stems[i:i + n]) == alt for i in range(len(stems) - n + 1))


def _names(text, skip=(), vocab=frozenset()):
    """Capitalised Names in a sentence ("Cobalt Health", "Prague"). A capitalised word that is a
    common word, or that the history also writes in lower case (`vocab`), is not a name."""
    out, cur, first = [], [], True
    for m in _re.finditer(r"[A-Za-z][\w'&-]*|[^\sA-Za-z]+", text):
        tok = m.group().rstrip(".,")
        low = tok.lower()
        base = low[:-2] if low.endswith("'s") else low
        if tok[:1].isupper() and base not in _ALWAYS and not (first and (base in _COMMON or base in vocab
                                                                         or base.endswith(("ing", "ed"))
                                                                         or _common_first(tok, text[m.end():]))):
            cur.append(tok)
        else:
            if cur:
                out.append(" ".join(cur))
            cur = []
        first = (first and not tok[:1].isalpha() and tok.strip(" '\"([") == "") or tok.strip() == ":"
    if cur:
        out.append(" ".join(cur))
    skip = {s.lower() for s in skip}
    out = [n[:-2] if n.endswith("'s") else n for n in out]
    return [n for n in out if n.lower() not in skip]


_HISTORY_VOCAB = {"last": -1, "words": frozenset(), "names": frozenset()}
# a verb next ("Rosa moved", "Theo just relocated", "Ines tells"): what a Name at a sentence's start does
_VERB_NEXT = r"\s+(?:(?:just|also|finally|recently|now|still|already|\w+ly)\s+)?(?:is|was|has|had|and|\w+s|\w+ed)\b"


def _common_first(tok, rest):
    """A sentence's capitalised first word that the history never writes mid-sentence, followed by a
    lower-case word that is no verb ("Resignation letter sent"), is a common word, not a Name."""
    if tok in _HISTORY_VOCAB["names"]:
        return False
    if _re.match(r"\s*\(", rest):
        return True  # "Traceback (most recent call last)"
    return bool(_re.match(r"\s+[a-z]", rest)) and not _re.match(_VERB_NEXT, rest)


def _vocab(hits):
    """Every word the hits, or the history's user turns, write in lower case (so a capitalised 'Barber'
    or 'Drove' at a sentence start is no name). The history's words (and the capitalised words it
    writes mid-sentence: Names) are read once (its last 20,000 events) and kept until the log grows."""
    recent = ms.recent(1)  # noqa: F821 - `ms` is the kernel's global
    last = recent[0].seq if recent else 0
    if last != _HISTORY_VOCAB["last"]:
        words, names = set(), set()
        for lo in range(max(1, last - 19999), last + 1, 2000):
            for e in ms.expand(lo, min(last, lo + 1999)):  # noqa: F821
                if e.origin == "history" and e.role == "user":
                    words.update(_re.findall(r"\b[a-z][a-z'-]*", e.text or ""))
                    names.update(_re.findall(r"(?<=[a-z,] )[A-Z][a-z]+\b", e.text or ""))  # mid-sentence
        _HISTORY_VOCAB.update(last=last, words=frozenset(words), names=frozenset(names))
    return _HISTORY_VOCAB["words"] | frozenset(w for h in hits for w in _re.findall(r"\b[a-z][a-z'-]*", h.text or ""))


def _subject(sentence, vocab=frozenset()):
    """'me', a relation word ('sister'), or 'other' (someone else), from how the clause starts."""
    while True:  # "Quick update: my cousin moved ...", "Big day: the 10K is over, I did it"
        head, colon, tail = sentence.partition(":")
        if not (colon and len(head.split()) <= 8 and tail.strip()):
            break
        sentence = tail
    s = _re.sub(r"^(?:\W|so|also|and|then|oh|anyway|btw|apparently|turns out(?: that)?|last \w+|years ago)+\s*", "",
                sentence, flags=_re.I)
    m = _re.match(r"(?:my|our)\s+(?:[a-z-]+\s+)?([a-z-]+)('s)?\b", s, _re.I)  # "our upstairs neighbor"
    if not (m and m.group(1).lower() in _PEOPLE):
        m = _re.match(r"(?:my|our)\s+([a-z-]+)('s)?\b", s, _re.I)
    if not (m and m.group(1).lower() in _PEOPLE):  # "Mom finally moved ...", "Cousin Jo bought ..."
        m = _re.match(r"([A-Z][a-z-]+)('s)?\b(?!\s+(?:[A-Z][a-z]+\s+)?(?:and|&)\s+(?:I|me)\b)", s)
    if m and m.group(1).lower() in _PEOPLE:
        return "other" if m.group(2) else m.group(1).lower()
    if _re.match(r"(?:the|a|some)\s+(?:neighbou?rs?|friends?|kids|family)\b", s, _re.I) or \
            _re.match(r"(?:the|an?|some|one)\s+(?:[\w-]+\s+){0,2}(?:pal|buddy|mate|acquaintance|classmate|friend|"
                      r"colleague|coworker|neighbou?r)s?\s+of\s+(?:my|our)\b", s, _re.I):
        return "other"  # "A gym buddy of my brother moved to Oslo": the buddy's event
    if _re.search(r"(?:[,;]\s+|\band\s+)(?:I|we|I'm|I've|I'd|we're|we've)\b", s) or \
            _re.match(r"[A-Z][\w'-]*(?: [A-Z][\w'-]*)* \w+ (?:me|us)\b", s) or \
            _re.match(r"[A-Z][\w'-]*(?: [A-Z][\w'-]*)* (?:is|was|'s|has been|became) (?:my|our|where)\b", s):
        return "me"  # "Long day, I ate out", "Acme hired me", "Oslo is my home now": my event
    m = _re.match(r"([A-Z][a-z]+)\b(?! (?:on|in|at|of|for|to|by)\b)", s)  # not "Cash on the"
    if m and not m.group(1).endswith(("ed", "ing")) and m.group(1).lower() not in _COMMON | vocab \
            and not _re.match(r"[A-Z][a-z]+ and (?:I|me)\b", s) \
            and (m.group(1) in _HISTORY_VOCAB["names"] or _re.match(r"[A-Z][a-z]+(?:\s+[A-Z][\w'-]*)*(?:'s\b|" + _VERB_NEXT + ")", s)):
        return "name:" + m.group(1)  # a Name the history writes mid-sentence, or one that a verb follows
    return "me"  # "Quality time with Ana ...": no Name starts it


def _my_amounts(text):
    """The amounts of a text's clauses about me ("..., someone paid $60 for one": not mine)."""
    return [float((a or b).replace(",", "")) for c in _CLAUSE.split(text) if not _THIRD.match(c)
            for a, b in _MONEY.findall(c)]


class Fact:
    def __init__(self, hit, text, score, vocab=frozenset()):
        self.seq, self.session, self.time, self.text, self.score = hit.seq, hit.session, hit.time, text, score
        self.message = hit.text or ""
        self.vocab = vocab
        self.names = _names(text, (), vocab)
        self.amounts = _my_amounts(text)
        self.pronoun = None  # the relation a leading "she" / "they" stands for (facts sets it)
        self.day, self.dated = _dt.date.fromisoformat(hit.time[:10]), False
        for where in (text, hit.text or ""):  # the statement's own when-word, else its message's
            for rx, back in _WHEN:
                m = rx.search(where)
                if m:
                    back = back if back is not None else int(_NUMS.get(m.group(1).lower(), m.group(1)))
                    self.day, self.dated = self.day - _dt.timedelta(days=back), True
                    return

    def __repr__(self):
        return f"Fact(seq={self.seq}, day={self.day}, {self.text[:70]!r})"


def _agent(sent, need, anchors, vocab=frozenset()):
    """True when a target word is done by someone named right before it ("Rosa lives in Oslo")."""
    for m in _re.finditer(r"(?<=\w)\s+([A-Z][a-z]+) ([a-z]+)\b", sent):  # a Name, a space, a verb: not first
        prev, w = m.group(1), m.group(2)
        if (prev in _HISTORY_VOCAB["names"] or prev.lower() not in _COMMON | vocab) \
                and not prev.endswith(("ed", "ing")) and _stem(prev) not in anchors \
                and w.endswith(("s", "ed", "ing")) and any(any(_has([_stem(w)], a) for a in g) for g in need) \
                and not _re.match(r"\s*(?:me|us)\b", sent[m.end():]):  # "Acme hired me": my event
            return True
    return False


def facts(hits, must, about="", who=None, any_time=False):
    """The statements in `hits` that hold every `must` group, said by `who` (None: me), not
    hedged (plans, wishes, negations, quotes) and, unless any_time, not about the distant past."""
    need, rank = _groups(must), _groups(about)
    anchors = {a[0] for g in need for a in g}  # "Oslo" of "Oslo_Half_Marathon" too
    vocab, out = _vocab(hits), []
    for h in sorted(hits, key=lambda h: h.seq):
        for sent in _SPLIT.split(h.text or ""):
            sent = sent.strip()
            stems = [_stem(w) for w in _WORD.findall(sent)]
            if not sent or not all(any(_has(stems, a) for a in g) for g in need):
                continue
            if _REQUEST.match(sent):
                continue
            subj, pronoun = _subject(sent, vocab), None
            if _re.match(r"\W*(?:he|she|they)\b", sent, _re.I):  # "Helped my aunt pack; she's relocating ...": the aunt
                before = (h.text or "")[:max(0, (h.text or "").find(sent))]
                ref = [r.lower() for r in _re.findall(r"\b(?:my|our)\s+([a-z-]+)\b(?!')", before, _re.I)
                       if r.lower() in _PEOPLE]
                subj = pronoun = ref[-1] if ref else subj
            if subj.startswith("name:") and _stem(subj[5:]) in anchors:
                subj = "me"  # the question's own name is the subject ("Juniper sleeps on our bed now")
            # the clauses that hold the target decide: "I ran it last year and want to again" is no plan;
            # "so the vet could see her", "so my sister could move": a purpose, no plan
            said = [c for c in _CLAUSE.split(_PURPOSE.sub("so", sent))
                    if any(any(_has([_stem(w) for w in _WORD.findall(c)], a) for a in g) for g in need)] or [sent]
            rel = next((c for c in said if _re.match(r"\s*who\b|\s*who's\b|\s*whose\b", c, _re.I)), None)
            if rel is not None:  # "a postcard from Omar, who's living in Valencia": about the one before `who`
                m = _re.search(r"\b(?:my|our)\s+([a-z-]+)\W*$", sent[:sent.find(rel.strip())], _re.I)
                subj = m.group(1).lower() if m and m.group(1).lower() in _PEOPLE else "other"
            elif _agent(sent, need, anchors, vocab):
                subj = "other"  # "Did I mention Rosa lives in Oslo now": Rosa does the living
            if who and who != "*" and subj == "me" and _re.search(r"\b(?:my|our)\s+" + who + r"\b(?!'s)", sent, _re.I):
                subj = who.lower()  # "I helped my cousin move into her place in Oslo": about my cousin
            if who is None and subj == "me" and any(
                    p not in anchors for p in _re.findall(r"\bmy\s+([a-z-]+)\b(?!')", sent, _re.I)
                    if p.lower() in _PEOPLE and p.lower() != "family"):
                continue  # "Helped my mom carry furniture into her new place": about my mom
            if who is None and subj == "me" and any(
                    _stem(n) not in anchors and n.lower() not in _COMMON | vocab for n in _HELPED.findall(sent)):
                continue  # "Helped Ana carry boxes into her flat in Rome": Ana moves
            if who is None and subj == "me" and all(_THIRD.match(c) for c in said):
                continue  # "the flat is quiet since their tenants left for Rome": they left
            if who != "*" and subj != (who.lower() if who else "me"):
                continue
            if any(_HEDGE.search(c) for c in said) or (not any_time and any(_BACKDATED.search(c) for c in said)):
                continue
            if any(any(_has([_stem(w)], a) for g in need for a in g)
                   for c in said for w in _re.findall(r"\bno\s+([a-z-]+)", c, _re.I)):
                continue  # "the barber was closed, so no haircut": the target did not happen
            f = Fact(h, sent, sum(any(_has(stems, a) for a in g) for g in rank), vocab)
            f.pronoun = pronoun  # the relation "she" / "they" stands for: their clauses are the statement's own
            at = (h.text or "").find(sent)  # "You know who hired me? Acme!": the answer follows a question
            f.after = (h.text[at + len(sent) + 1:].strip() if at >= 0 and h.text[at + len(sent):at + len(sent) + 1] == "?"
                       else "")
            out.append(f)
    return out


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


_CARRIED = set("took brought carried fetched drove walked picked".split())  # "took Rex home": Rex is no place
_KIND = {"place": ("in", "to", "near", "around", "left for", "headed for", "off for", "hello from"),
         "org": ("at", "for", "joined", "join", "with", "by", "from"),
         "person": ("with", "met", "saw", "and", "joined")}


def _value(f, must, about, kind=None, besides=()):
    """The Name a statement gives: with `kind` ("place" / "org") the one after that kind's
    prepositions, never one after the other kind's; else the last one after to/in/at/for/joined,
    else the first."""
    skip = [" ".join(w.split("_")) for g in str(must).split() + str(about).split() for w in g.split("|")]
    skip += [str(b).replace("_", " ") for b in besides]
    names = _names(f.text, skip, f.vocab)
    theirs = set() if f.pronoun else \
        {n for c in _CLAUSE.split(f.text) if _THIRD.match(c) for n in _names(c, skip, f.vocab)}
    names = [n for n in names if n not in theirs]  # "... since their tenants left for Rome": not my value
    if not names and getattr(f, "after", ""):  # "You know who hired me? Acme!"
        names = _names(f.after, skip, f.vocab)[:1]

    def after(n, preps):  # ", and Acme hired me": a clause starts, "and" is no preposition there
        alts = "|".join("(?<!, )and" if p == "and" else p for p in preps)
        return _re.search(r"\b(?i:" + alts + r")\s+(?:the\s+)?" + _re.escape(n) + r"\b", f.text) is not None

    if kind in _KIND:
        other = [p for k, ps in _KIND.items() if k != kind for p in ps]
        words = [w.lower() for w in _WORD.findall(f.text)]
        groups = _groups(must) + _groups(about)  # once per statement, not once per word
        terms = [i for i, w in enumerate(words) if any(any(_has([_stem(w)], a) for a in g) for g in groups)]

        def near(n):  # "home is Oslo", "an Oslo resident", "made Oslo their home": beside a target word
            first = n.split()[0].lower()
            at = [i for i, w in enumerate(words) if w == first and not (i and words[i - 1] in _CARRIED)]
            return any(0 < abs(i - t) <= 2 for i in at for t in terms)

        free = [n for n in names if not after(n, other)]
        lead = _re.sub(r"^.*:\s*", "", f.text)  # "Update: Oslo feels like home": the clause's first word
        fit = [n for n in names if after(n, _KIND[kind])] or \
            [n for n in free if _re.search(_re.escape(n) + r"\s+(?:is|was|'s)\s+(?:where|my|our)\b", f.text)] or \
            [n for n in free if near(n)] or \
            [n for n in free if _re.search(_re.escape(n) + r"\s+[a-z]+\s+(?:me|us)\b", f.text)] or \
            [n for n in free if after(n, ("is", "it's", "was"))] or [n for n in free if lead.startswith(n)]
        return fit[-1] if fit else None
    return names[-1] if len(names) > 1 and after(names[-1], ("to", "in", "at", "for", "joined")) \
        else (names[0] if names else None)


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
    rows = _best(_pick(hits, must, about, who))
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
