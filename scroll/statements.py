"""How the kernel reads a statement: defined in every kernel after scroll/thesaurus.py and before the
helpers of scroll/toolkit.py (scroll.prompts.TOOLKIT_SOURCE), so it shares their namespace.

Generic English, no task: a message's sentences and clauses, a sentence's subject (me, a relation
such as "sister", or someone else; a leading "she" is the relation the message named before),
whether a clause states something that happened (not a plan, a wish, a negation, a quote, a
request, the distant past), the day it refers to ("yesterday"), its amounts, its Capitalised Names,
and which Name is a statement's value for a kind (a place, an org, a person).

    facts(hits, must, about="", who=None, any_time=False) -> the qualifying statements (Fact:
        .seq .session .time .day .text .score .names .amounts), oldest first
    _value(fact, must, about, kind=None) -> the Name the statement gives (the helpers' value)

Standard library only; `ms` is a global of the cell's namespace. No name of a task family,
template or generator occurs here (tests/test_writer.py checks that).
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
                      # ", still sorting the photos", ", someone paid ...", ", he's moving soon"
                      r",\s+(?=(?:already|now|still|just|probably)?\s*[a-z]+ing\b)|,\s+(?=(?:someone|somebody|he|she|they)\b)")
_THIRD = _re.compile(r"\s*(?:he|she|they|his|her|their|its|someone|somebody)\b", _re.I)  # a clause about someone else
_HELPED = _re.compile(r"\b(?i:help)(?:ed|ing|s)?\s+(?:out\s+)?([A-Z][a-z]+)\b")  # "helped Ana carry boxes": Ana's event
_UNSPENT = _re.compile(r"\b(?:coupons?|vouchers?|refund\w*|saved|forgot|budget\w*|(?:a|per|each) (?:week|month|year))\b"
                       r"(?!'s)", _re.I)
_BACKDATED = _re.compile(
    r"\b(?:back in|back then|way back|long ago|years ago|ages ago|used to|as a (?:kid|child|student|teen)|"
    r"when I was|growing up|grew up|college|childhood|once lived|formerly|previously|last year|"
    r"(?:university|uni|student|school) days|in my (?:teens|twenties|thirties)|decades ago)\b", _re.I)
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
_VERB_NEXT = (r"\s+(?:(?:just|also|finally|recently|now|still|already|\w+ly)\s+)?(?:is|was|has|had|and|\w+s|\w+ed|"
              r"got|took|went|came|left|made|became|began|found|won|ran|met|saw|bought|paid|sold|flew|drove|quit|grew)\b")


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
    if _re.match(r"(?:the|a|some|that|this|one)\s+(?:[\w-]+\s+)?(?:neighbou?rs?|friends?|kids|family)\b", s, _re.I) or \
            _re.match(r"(?:the|an?|some|one)\s+(?:[\w-]+\s+){0,2}(?:pal|buddy|mate|acquaintance|classmate|friend|"
                      r"colleague|coworker|neighbou?r)s?\s+of\s+(?:my|our)\b", s, _re.I):
        return "other"  # "A gym buddy of my brother moved to Oslo": the buddy's event
    if _re.search(r"(?:[,;]\s+|\band\s+)(?:I|we|I'm|I've|I'd|we're|we've)\b", s) or \
            _re.match(r"[A-Z][\w'-]*(?: [A-Z][\w'-]*)* \w+ (?:me|us)\b", s) or \
            _re.search(r"(?:^|, |\band )[A-Z][\w'-]*(?: [A-Z][\w'-]*)* (?:is|was|'s|has been|became) "
                       r"(?:\w+ly )?(?:my|our|mine|ours|where)\b", s):
        return "me"  # "Long day, I ate out", "Acme hired me", "..., Acme is now my employer": my event
    m = _re.match(r"([A-Z][a-z]+)\b(?! (?:on|in|at|of|for|to|by)\b)", s)  # not "Cash on the"
    if m and not m.group(1).endswith(("ed", "ing")) and m.group(1).lower() not in _COMMON | vocab \
            and not _re.match(r"[A-Z][a-z]+ and (?:I|me)\b", s) \
            and (m.group(1) in _HISTORY_VOCAB["names"] or _re.match(r"[A-Z][a-z]+(?:\s+[A-Z][\w'-]*)*(?:'s\b|" + _VERB_NEXT + ")", s)):
        return "name:" + m.group(1)  # a Name the history writes mid-sentence, or one that a verb follows
    return "me"  # "Quality time with Ana ...": no Name starts it


def _told_after(rest):
    """Who a "guess who ...?" sentence is about, from the words after it: 'me' ("Me!"), a relation
    word ("My aunt, ..."), else 'other' (a Name, or nobody said)."""
    m = _re.match(r"[\s?!.]*(?:(me|yours truly)\b|(?:my|our)\s+([a-z-]+))", rest, _re.I)
    if m and m.group(1):
        return "me"
    if m and m.group(2).lower() in _PEOPLE:
        return m.group(2).lower()
    return "other"


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


def _aimed(f, must):
    """True when every mention of the `must` Names in the statement is something done FOR it ("picked up
    a race number for the Oslo Marathon", "intervals ahead of the Oslo Marathon"): not the event itself."""
    phrases = [w.replace("_", " ") for g in str(must or "").split() for w in g.split("|") if w[:1].isupper()]
    at = [m.start() for p in phrases for m in _re.finditer(r"\b" + _re.escape(p) + r"\b", f.text)]
    return bool(at) and all(_re.search(r"\b(?:for|ahead of|before|towards)\s+the\s+$",
                                       f.text[:i], _re.I) for i in at)


def facts(hits, must, about="", who=None, any_time=False):
    """The statements in `hits` that hold every `must` group, said by `who` (None: me), not
    hedged (plans, wishes, negations, quotes) and, unless any_time, not about the distant past."""
    need, rank = _groups(must), _groups(about)
    anchors = {a[0] for g in need for a in g}  # "Oslo" of "Oslo_Half_Marathon" too
    vocab, out = _vocab(hits), []
    off = {_stem(c) for grp in str(must or "").split() for a in grp.split("|") for c in _contrary(a)}
    for h in sorted(hits, key=lambda h: h.seq):
        for sent in _SPLIT.split(h.text or ""):
            sent = sent.strip()
            stems = [_stem(w) for w in _WORD.findall(sent)]
            if not sent or not all(any(_has(stems, a) for a in g) for g in need):
                continue
            if _REQUEST.match(sent):
                continue
            subj, pronoun = _subject(sent, vocab), None
            at = (h.text or "").find(sent)
            if _re.match(r"\W*(?:he|she|they)\b", sent, _re.I):  # "Helped my aunt pack; she's relocating ...": the aunt
                before = (h.text or "")[:max(0, at)]
                ref = [r.lower() for r in _re.findall(r"\b(?:my|our)\s+([a-z-]+)\b(?!')", before, _re.I)
                       if r.lower() in _PEOPLE]
                subj = pronoun = ref[-1] if ref else subj
            told = _re.match(r"(?:[^:]{0,60}:)?\W*guess\s+who\b", sent, _re.I)  # "Big news: guess who ..."
            if told:  # the subject is told after the question mark
                subj = _told_after((h.text or "")[max(0, at) + len(sent):])
            if subj.startswith("name:") and _stem(subj[5:]) in anchors:
                subj = "me"  # the question's own name is the subject ("Juniper sleeps on our bed now")
            # the clauses that hold the target decide: "I ran it last year and want to again" is no plan;
            # "so the vet could see her", "so my sister could move": a purpose, no plan
            clauses = [(c, [_stem(w) for w in _WORD.findall(c)]) for c in _CLAUSE.split(_PURPOSE.sub("so", sent))]
            held = [(c, cs) for c, cs in clauses if any(any(_has(cs, a) for a in g) for g in need)] or [(sent, stems)]
            said = [c for c, _ in held]
            rel = next((c for c in said if _re.match(r"\s*who\b|\s*who's\b|\s*whose\b", c, _re.I)), None)
            if told:
                pass
            elif rel is not None:  # "a postcard from Omar, who's living in Valencia": about the one before `who`
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
            if off and any(st in off for _, cs in held for st in cs):
                continue  # "in Bodo for a conference, home on Sunday": a trip, not where I live
            f = Fact(h, sent, sum(any(_has(stems, a) for a in g) for g in rank), vocab)
            f.pronoun = pronoun  # the relation "she" / "they" stands for: their clauses are the statement's own
            # "You know who hired me? Acme!": the answer follows a question
            f.after = (h.text[at + len(sent) + 1:].strip() if at >= 0 and h.text[at + len(sent):at + len(sent) + 1] == "?"
                       else "")
            out.append(f)
    return out


_CARRIED = set("took take brought bring carried carry fetched fetch drove walked picked".split())  # "took Rex home": Rex is no place
_KIND = {"place": ("in", "to", "near", "around", "through", "across", "left for", "headed for", "off for", "hello from"),
         "org": ("at", "for", "joined", "join", "with", "by", "from", "went to", "moved to", "switched to", "over to"),
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
            [n for n in free if _re.search(_re.escape(n) + r"\s+(?:is|was|'s)\s+(?:\w+ly\s+)?(?:where|my|our)\b",
                                           f.text)] or \
            [n for n in names if _re.search(_re.escape(n) + r",?\s+(?:so\s+)?(?:that's|that is|which is|it's)\s+"
                                            r"(?:(?:now|officially)\s+)?(?:my|our)\b", f.text)] or \
            [n for n in free if near(n)] or \
            [n for n in free if _re.search(_re.escape(n) + r"\s+[a-z]+\s+(?:me|us)\b", f.text)] or \
            [n for n in free if after(n, ("is", "it's", "was"))] or [n for n in free if lead.startswith(n)]
        return fit[-1] if fit else None
    return names[-1] if len(names) > 1 and after(names[-1], ("to", "in", "at", "for", "joined")) \
        else (names[0] if names else None)
