"""`ProgramWriter`: a deterministic program writer that reads the question's meaning, not a template.

It is NOT a model (no model available offline can do this job): a labelled rule system, like
the regex teacher (scroll.policies.reference), whose replies are what a student should learn
to write. Where the regex teacher recognises one generator's question templates and passes
that generator's evidence phrase as a cue, this writer never reads a generator's template
ids or wording tables (tests/test_writer.py checks its imports); it derives from the
question alone:

* the answer type: entity, date, count, sum, duration, yes/no, which-came-first, a list,
  what was said (and "not mentioned" when nothing qualifies: the helpers answer "unknown");
* the target: the question's own content words and names, one per synonym group (the kernel
  helpers match a word's variants and synonyms: scroll/thesaurus.py); names and nouns are
  required (`must`), verbs and containers only rank (`about`); "my sister" as the subject
  becomes who="sister";
* the time scope: now / latest, first / originally, every, or between two events.

and writes LOCATE -> COMPUTE -> EXPOSE cells over the core kernel helpers (scroll/toolkit.py):

    step 1  solve   hits = ms.search(widen("<must and about words>"), k=None, role="user")
                    <helper>(hits, "<must>", about="<about>")       prints `ANSWER: ...`
    step 2  final   final(<the printed answer>)     (a missing or "unknown" answer: one `scan` retry
                                                     over every user turn, then its best answer)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import synonyms as syn
from .stepper import ProgramPolicy

BACKEND = "program-writer"
VERSION = 1

_STOP = set(("a an the i i'm i've me my mine we our us you your it its is are was were be been am do does did done "
             "have has had to of in on at for from with by about into onto over under and or but so if than then "
             "that this these those there here what which who whom whose when where why how ever never any some "
             "all each every just only really actually again still now currently current these days today "
             "present moment latest most recent recently first firstly originally initially earliest before "
             "previous previously back then since after between long far total altogether overall much many "
             "often number count times time tell remind know can could would will should please quick question "
             "recall remember wondering wonder idea sure think say said mention mentioned "
             "happened happen did't yet already lately end ended up right single please give list combined "
             "since started talking talk chatting chat way altogether together both whole entire exactly "
             "what's where's who's how's when's let let's me anything something one ones instance example "
             "kind sort type overall far more less expensive cheapest priciest biggest largest highest smallest "
             "lowest least most tally exact shown show showed actually sum up point everything anything told "
             "part out into checking check remember nowadays presently anymore while we've past present "
             "also someone somebody anyone told they them their last january february march april may june july "
             "august september october november december behind wanted want drop latest sorry help looking "
             "frequently find mine again current currently plus ask asked asking across within during throughout "
             "grand besides other apart aside forget forgot forgotten around lot lots").split())
_PEOPLE_RX = "|".join(sorted(syn.PEOPLE))
_DISCOURSE = re.compile(r"^(?:\W*(?:quick question|question|hey|hi|so|ok|okay|remind me|can you (?:tell|remind) me|"
                        r"could you (?:tell|remind) me|do you (?:know|remember)|any idea|tell me|let me know|"
                        r"i (?:wonder|was wondering)|i'm curious|just curious|please)\b[\s:,]*)+", re.I)
_QWORDS = set("how what which who where when why remind quick tell give list name count did do does".split())


@dataclass(frozen=True)
class Plan:
    """What the question asks, as the writer read it."""
    answer: str                      # entity | date | count | sum | duration | yesno | first | list | said
    helper: str                      # the kernel helper (scroll/toolkit.py)
    must: str = ""
    about: str = ""
    who: str | None = None
    options: tuple = field(default_factory=tuple)  # first: (label, must) pairs; duration / difference: two musts;
    #                                                previous: (the later value,)
    of: str = "sum"                  # difference: "sum" or "count"
    kind: str | None = None          # the Name's kind for the name helpers: "place" | "org" | "person" | None;
    #                                  kind_of: the kind asked for ("dog", "cat", "instrument", "language")
    besides: tuple = field(default_factory=tuple)  # values_of: Names the question already gives ("besides Leo")
    any_time: bool = False           # values_of: the distant past counts too ("my childhood towns")

    @property
    def query(self) -> str:
        """The plan's words for `widen` (the kernel adds their synonyms)."""
        musts = [o[1] if isinstance(o, tuple) else o for o in self.options]
        words = (self.must + " " + self.about + " " + " ".join(musts)).replace("|", " ").split()
        return " ".join(dict.fromkeys(words)) or "the"

    def cell(self, plan: str) -> str:
        src = 'hits = ms.search(widen({!r}), k=None, role="user")\n'.format(self.query) if plan == "solve" else ""
        hits = "hits" if plan == "solve" else "user_turns()"
        if plan not in ("solve", "scan"):
            raise ValueError(plan)
        kw = (f", about={self.about!r}" if self.about else "") + (f", who={self.who!r}" if self.who else "") \
            + (f", kind={self.kind!r}" if self.kind else "")
        if self.helper == "first_of":
            return src + f"first_of({hits}, {dict(self.options)!r}{kw})"
        if self.helper == "days_apart":
            return src + f"days_apart({hits}, {self.options[0]!r}, {self.options[1]!r}{kw})"
        if self.helper == "difference":
            of = "" if self.of == "sum" else f", of={self.of!r}"
            return src + f"difference({hits}, {self.options[0]!r}, {self.options[1]!r}{of}{kw})"
        if self.helper == "previous_of":
            return src + f"previous_of({hits}, {self.must!r}, {self.options[0]!r}{kw})"
        if self.helper == "compare":
            return src + f"compare({hits}, {self.options[0]!r}, {self.options[1]!r}, by={self.of!r}{kw})"
        if self.helper == "values_of":
            kw += (f", besides={list(self.besides)!r}" if self.besides else "") + \
                (", any_time=True" if self.any_time else "")
        return src + f"{self.helper}({hits}, {self.must!r}{kw})"


def _known(word: str) -> bool:
    """An English word of the writer's own tables (a capitalised one at a sentence start is no name)."""
    w = word.lower().rstrip("?,.!:;")
    w = w[:-2] if w.endswith("'s") else w
    return (w in _STOP or syn.is_verb(w) or syn.is_weak(w) or syn.is_type(w) or syn.group(w) != w
            or w in syn.PEOPLE or w in _QWORDS or w.endswith(("ing", "ed")))


_PARTICLE_NEXT = re.compile(r"\s+(?:up|out|off|down|over|back|through|count|track|the|a|an|my|me|all|every)\b")


def _names(question: str) -> list[str]:
    """Capitalised names in the question, multi-word names joined by `_` (not its first word unless it
    is followed by another capitalised word or is no common word)."""
    out = []
    for m in re.finditer(r"\b[A-Z][\w'-]*(?:\s+(?:[A-Z]|\d+[A-Z])[\w'-]*)*", question):
        words = [w for w in m.group().split() if w.lower() not in ("i", "i'm", "i've", "i'd")]
        if m.start() == 0 or question[:m.start()].rstrip().endswith((":", "?", ".", "!")):
            while words and _known(words[0]):
                words = words[1:]
            if len(words) == 1 and _PARTICLE_NEXT.match(question[m.end():]):
                words = []  # "Pull up when ...", "Lost count of ...": a verb, no name
            if len(words) == 1 and words[0].endswith("s") and question[m.end():].startswith(":"):
                words = []  # "Ferries: what's my spend": a plural topic as a label, no name
            nxt = re.match(r"\s+([a-z][a-z-]*)\b", question[m.end():])
            if len(words) == 1 and not words[0].endswith("'s") and nxt and nxt.group(1) not in _STOP \
                    and question.rstrip().endswith(("?", ".")) \
                    and not syn.is_verb(nxt.group(1)) and not nxt.group(1).endswith(("ed", "s")):
                words = []  # "Tax forms want ...?": a whole sentence opens with a noun's modifier, no name
        words = [w.rstrip("'s").rstrip("?") if w.endswith("'s") else w.rstrip("?") for w in words]
        if words:
            out.append("_".join(words))
    return out


def _content(text: str, names: list[str]) -> list[str]:
    """Content words (lower case, in order) that are not names, stop words or answer types."""
    low_names = {w.lower() for n in names for w in n.split("_")}
    out, nouns = [], set()
    for m in re.finditer(r"\b(?:a|an|the|my|some|many)\s+([A-Za-z][A-Za-z'-]*)", text, re.I):
        nouns.add(m.group(1).lower())  # "for a run", "how many runs": a noun, whatever else the word can be
    for m in re.finditer(r"\b(?:go|goes|went|gone|going)\s+(\w+ing)\b", text, re.I):
        nouns.add(m.group(1).lower())  # "went running", "go climbing": the activity
    for w in re.findall(r"[A-Za-z][A-Za-z'-]*", text):
        lw = w.lower().strip("'")
        if lw.endswith("'s"):
            lw = lw[:-2]
        if lw in low_names or lw in _STOP or lw in syn.PEOPLE or len(lw) < 3 or syn.is_type(lw):
            continue
        out.append(lw)
    return list(dict.fromkeys(out)), nouns


def _target(text: str, names: list[str]) -> tuple[str, str]:
    """(must, about) for a phrase: names and nouns are required, verbs and containers rank."""
    words, nouns = _content(text, names)
    verbish = [w for w in words if (syn.is_verb(w) or (w.endswith("ed") and len(w) > 4)) and w not in nouns]
    strong = [w for w in words if w not in verbish and not syn.is_weak(w)]
    verbs = verbish
    weak = [w for w in words if syn.is_weak(w)]
    topics = [w for w in strong if syn.is_topic(w)]  # a noun we know ("dentist") before other nouns ("chair")
    must = list(names) + _one_per_group(topics or strong)
    about = _one_per_group(verbs + weak + ([w for w in strong if w not in topics] if topics else []))
    if not must and about:           # only verbs ("live"): the most telling one is the target
        pick = next((a for a in about if not syn.is_light(a)), about[0])
        must, about = [pick], [a for a in about if a != pick]
    taken = {syn.group(w) for w in must}
    return " ".join(must), " ".join(a for a in about if syn.group(a) not in taken)


def _one_per_group(words: list[str]) -> list[str]:
    """The question's own words, the first of each synonym group (the kernel widens each to its group)."""
    seen: dict[str, str] = {}
    for w in words:
        seen.setdefault(syn.group(w), w)
    return list(seen.values())


_KIND_Q = re.compile(r"\b(?:kind|type|sort|breed)\s+of\s+(\w+)|\b(?:what|which)\s+(breed|instrument|language)\b",
                     re.I)  # "what kind of dog", "which instrument": one member of a kind (kind_of)
_RX = {
    "said": re.compile(r"\bwhat (?:did|have) i (?:say|said|mention|mentioned|tell you|told you)\b|"
                       r"\bwhat do you know about\b|\bwhat have i told you about\b", re.I),
    "duration": re.compile(r"\bhow (?:many|much) (?:days|weeks|time)\b|\bhow long (?:after|before|between|since|"
                           r"was it|passed|did it take)\b|\bdays (?:passed|went by|between|after|before|apart)\b|"
                           r"\bhow far apart\b|\bseparat(?:e|ed|es)\b", re.I),
    "first": re.compile(r"\b(?:first|earlier|sooner|before the other)\b.*\bor\b|\bor\b.*\b(?:first|earlier)\b", re.I),
    "sum": re.compile(r"\bhow much\b|\bset me back\b|\bcost me\b|\bwhat did .* cost\b|\bsum(?:med)?\b|\badd(?:s|ed)? up\b|"
                      r"\b(?:came|come|comes) to what\b|\bwhat (?:did|do|does) .{1,60} (?:come|add up) to\b|"
                      r"\bshell(?:ed)? out\b|"
                      r"\b(?:running |grand )?total\b(?=.*\b(?:paid|pay|spen[dt]|spending|cost|bills?|expenses?|"
                      r"money|outlay|damage|fares?|repairs?|groceries|taxis?|cabs?)\b)|"
                      r"\b(?:paid|pay|spen[dt]|spending|cost|bills?|expenses?|money|outlay|damage|fares?|repairs?|"
                      r"groceries|taxis?|cabs?)\b.*\b(?:running |grand )?total\b|"
                      r"\b(?:altogether|in all|combined|all together|overall|so far|all told)\b.*\b(?:paid|pay|"
                      r"spen[dt]|spending|cost|costs|bills?|expenses?|money|damage|outlay|payments?)\b|\b(?:paid|pay|"
                      r"spen[dt]|spending|cost|costs|bills?|expenses?|money|damage|outlay|payments?)\b.*"
                      r"\b(?:altogether|in all|combined|all together|"
                      r"overall|so far|all told)\b", re.I),
    "count": re.compile(r"\bhow many\b|\bhow often\b|\bnumber of\b|\b(?:what|the) number\b|\bhow frequently\b|\bcount\b|"
                        r"\btally\b|\battendance\b|\btotal\b", re.I),
    "date": re.compile(r"\bwhen\b|\bdate\b|\b(?:what|which) (?:\w+ )?day\b|\bthe day\b|\bon what\b", re.I),
    "who": re.compile(r"^\W*(?:which|what) (?:relative|friend|person|family member|colleague|one of my \w+)\b|"
                      r"\bwho (?:else )?(?:in my family|of my (?:friends|relatives))\b|\bwho was it\b|"
                      r"^\W*who (?:used to|else|also|has|had|did|was|is also)\b(?!.*\b(?:I|me)\b)", re.I),
    "besides": re.compile(r"\b(?i:besides|other than|apart from|except(?: for)?|aside from)\s+"
                          r"([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
    "compare": re.compile(r"\b(?:more|less|fewer|bigger|larger|higher|smaller)\b.*\bthan\b", re.I),
    "order": re.compile(r"\b(?:before|after|earlier than|later than)\b", re.I),
    "previous": re.compile(r"\b(?:right |just |immediately )?(?i:before|prior to|previous to)\s+"
                           r"(?:[Ii] (?:\w+ )?(?:at|to|in|for) )?([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
    "largest": re.compile(r"\b(?:most expensive|priciest|biggest|largest|highest|most I (?:spent|paid))\b", re.I),
    "smallest": re.compile(r"\b(?:cheapest|least expensive|smallest|lowest|least I (?:spent|paid))\b", re.I),
    "difference": re.compile(r"\bhow (?:much|many) more\b.*\bthan\b|\bby how much\b.*\b(?:beat|exceed|top|outdo)\w*\b",
                             re.I),
    "list": re.compile(r"\blist\b|\bevery\b|\ball (?:the )?(?:cities|places|companies|names|jobs)\b|"
                       r"\bwhich (?:cities|places|companies|towns|friends)\b|\bname all\b|\bpast and present\b|"
                       r"\bwhere (?:has|have) (?:my \w+|I) (?:lived|worked|been)\b|\bwho (?:have|did) I\b|"
                       r"\b(?:employers|cities|trips|holidays|places)\b|\bwhere did I (?:go|travel|fly)\b", re.I),
    "yesno": re.compile(r"^(?:\W*(?:so|and|quick question|hey|remind me)\W*)*(?:did|have|has|do|does|was|were|"
                        r"am|is)\s+(?:i|my|we)\b", re.I),
}
_SCOPE_FIRST = re.compile(r"\b(?:first|originally|initially|earliest|previous|previously|used to|"
                          r"back then|at first|to begin with)\b", re.I)


def _events(q: str, names: list[str]) -> tuple[str, str] | None:
    """The two events of a duration / which-first question ("between A and B", "after A did B", "A or B")."""
    for rx in (r"\bbetween (.+?) and (.+?)(?:\?|$)", r"\bfrom (.+?) (?:to|until|till) (.+?)(?:\?|$)",
               r"\b(?:separate|separated|apart were|apart was) (.+?) and (.+?)(?:\?|,|$)",
               r"\bafter (.+?) (?:did|was|were|had) (.+?)(?:\?|$)",
               r"\bbefore (.+?) (?:did|was|were|had) (.+?)(?:\?|$)", r":\s*(.+?),? or (.+?)(?:\?|$)",
               r"\b(?:first|earlier),? (.+?),? or (.+?)(?:\?|$)", r"^(.+?),? or (.+?),? (?:first|earlier)\b"):
        m = re.search(rx, q, re.I)
        if m:
            return m.group(1), m.group(2)
    return None


def _label(phrase: str) -> str:
    """An option as the question words it, without the clause around it ("Chicago or Copenhagen:
    which holiday came first" -> "Copenhagen")."""
    phrase = re.split(r"[:;?]|,\s*(?:which|what|who)\b|\s+(?:which|what) (?:came|happened|was)\b", phrase)[0]
    phrase = re.sub(r"\s+(?:came|happened|was|did i do|occurred)(?: first| earlier)?\s*$", "", phrase.strip(), flags=re.I)
    phrase = re.sub(r"(\w)\s+one\s*$", r"\1", phrase.strip())  # "the Toronto one"
    return re.sub(r"^(?:the|my|our)\s+", "", phrase.strip(" ,"), flags=re.I) or phrase


def _event_must(phrase: str) -> str:
    names = _names(phrase)
    if names:  # "bringing Rocket home": the name is the event
        return " ".join(names)
    must, about = _target(phrase, names)
    return must or about


_PLACE = re.compile(r"\b(?:city|cities|town|towns|country|countries|place|places|where|metro|area|region)\b", re.I)
_ORG = re.compile(r"\b(?:company|companies|employer|employers|firm|firms|work|working|worked|job|jobs|workplace|"
                  r"organi[sz]ation|hired|hire|employ|employs|employed|paychecks?|salary|salaries)\b", re.I)
_NOW = re.compile(r"\b(?:now|currently|current|at present|these days|nowadays|right now|today|at the moment)\b", re.I)
_TYPE_NOUN = re.compile(r"\b(?:city|town|country|metro|employer|company|firm|workplace)\b", re.I)
_NAMED = ("latest_of", "earliest_of", "values_of", "previous_of")
_COUNTING = re.compile(r"\bhow many\b|\bhow often\b|\bnumber of\b|\b(?:what|the) number\b|\bcount\b|\btally\b|\battendance\b|"
                       r"\btimes\b|\bhow frequently\b", re.I)
_MONEY_TOPIC = re.compile(r"\b(?:groceries|grocery|taxis?|cabs?|repairs?|fixes|fares?)\b", re.I)
_BILLS = re.compile(r"\b(?:bills?|fares?|receipts?|spending|spend|outlay|damage|expenses?|costs?|paid|payments?|money)\b",
                    re.I)
_MONEY = re.compile(r"\b(?:paid|pay|payments?|spen[dt]|spending|cost|costs|bills?|expenses?|money|\$|dollars?|bucks)\b",
                    re.I)


def write_plan(question: str) -> Plan:
    """The plan for a question (see the module docstring)."""
    for rx, plain in _IDIOMS:  # once, for the plan and for the answer's kind
        question = rx.sub(plain, question)
    plan = _plan(question)
    if plan.must and any(syn.is_light(w) for w in plan.about.split()):  # "when did I get Rex": not "Rex gets along"
        plan = Plan(**{**plan.__dict__, "about": " ".join(w for w in plan.about.split() if not syn.is_light(w))})
    if plan.helper in _NAMED:
        q = question.lower()
        kind = "org" if _ORG.search(q) else "place" if _PLACE.search(q) else None
        plan = Plan(**{**plan.__dict__, "kind": kind})
    return plan


def _plan(question: str) -> Plan:
    q = _DISCOURSE.sub("", " ".join(question.strip().split())).strip() or question.strip()
    q = _setting(q)
    q = re.sub(r"\b(?:running|grand) (totals?)\b", r"\1", q, flags=re.I)  # a total, not a run
    q = _SINCE.sub("", q).strip()  # "since January", "this year": the whole history is the scope
    names = _names(q)
    rel = re.search(rf"\bmy ({_PEOPLE_RX})\b(?!'s)|\bmy ({_PEOPLE_RX})'s (?:current |new |present )?(?:city|home|address|"
                    rf"place|town|country|job|employer|company)\b", q, re.I)
    rel_word = (rel.group(1) or rel.group(2)).lower() if rel else None
    who = rel_word if rel and (not re.search(r"\b(?:I|I'm|I've|me)\b", q) or (
        _PLACE.search(q) and not re.search(r"\bI(?:'ve| have| am|'m)?\s+(?:live|lived|living|moved|reside)", q))) \
        else None  # a question about visiting my cousin's town asks where the cousin lives
    must, about = _target(q, names)
    if not must.strip() and _ORG.search(q):  # "who's my current employer": where someone works
        must = "work"
    elif not must.strip() and _PLACE.search(q):  # "what's my dad's current city": where someone lives
        must = "live"
    elif not names and _NOW.search(q) and (noun := _TYPE_NOUN.search(q)) and \
            not any(syn.is_topic(w) for w in must.split()):
        # "my landlord wants to know the town I'm in today": the current town; the other words are the
        # question's setting, not the statement's (they would rank unrelated turns)
        must, about = ("work" if _ORG.search(noun.group()) else "live"), ""
    if who and _PLACE.search(q) and _NOW.search(q) and not _ORG.search(q) and not _COUNTING.search(q) \
            and not _RX["date"].search(q) and not any(syn.is_topic(w) for w in must.split()):
        must, about = "live", ""  # "which airport do I book now to see my aunt": where my aunt lives
    if rel and who is None:  # "my sister" as an object: a required word
        must = " ".join(dict.fromkeys([rel_word, *must.split()]))
    besides = _RX["besides"].search(q)
    if besides:  # "besides Leo, who did I play tennis with": the others
        other = "_".join(besides.group(1).split())
        rest = q[:besides.start()] + " " + q[besides.end():]
        m2, a2 = _target(rest, [n for n in names if n != other])
        return Plan("list", "values_of", m2 or a2, a2 if m2 else "", who, kind="person", besides=(other,))
    if _RX["yesno"].search(q) and (_RX["compare"].search(q) or _RX["order"].search(q)):
        return _comparison(q, names, who)
    kind_q = _KIND_Q.search(q)
    if kind_q and (word := (kind_q.group(1) or kind_q.group(2)).lower()) in syn.KIND_WORDS:
        kind = "cat" if word == "breed" and re.search(r"\b(?:cat|kitten)s?\b", q, re.I) else syn.KIND_WORDS[word]
        rest = q[:kind_q.start()] + " " + q[kind_q.end():]
        m2, a2 = _target(re.sub(r"\b(?:dog|puppy|cat|kitten)s?\b", " ", rest, flags=re.I), names)
        return Plan("entity", "kind_of", m2, a2, who, kind=kind)
    if _RX["said"].search(q):
        return Plan("said", "said_about", must, about, who)
    if _RX["who"].search(q):
        return Plan("who", "who_of", must, about)
    if _RX["difference"].search(q):
        a, b = re.split(r"\bthan\b|\b(?:beat|exceed|top|outdo)\w*\b", q, maxsplit=1, flags=re.I)
        of = "count" if re.search(r"\bhow many\b", a, re.I) else "sum"
        return Plan("difference", "difference", "", "", who, (_event_must(a), _event_must(b)), of=of)
    prev = _RX["previous"].search(q)
    if prev:
        than = "_".join(prev.group(1).split())
        rest = (q[:prev.start()] + " " + q[prev.end():])
        m2, a2 = _target(rest, [n for n in names if n != than])
        return Plan("previous", "previous_of", m2 or a2, a2 if m2 else "", who, (than,))
    if _RX["largest"].search(q) or _RX["smallest"].search(q):
        helper = "largest_of" if _RX["largest"].search(q) else "smallest_of"
        return Plan("extreme", helper, must, about, who)
    context = " ".join(g for g in (must + " " + about).split() if g not in names)  # "business trip": ranks
    if _RX["duration"].search(q):
        ev = _events(q, names)
        if ev:
            return Plan("duration", "days_apart", "", context, who, (_event_must(ev[0]), _event_must(ev[1])))
    if _RX["first"].search(q) or (_RX["order"].search(q) and re.search(r"\bwhich\b", q, re.I)):
        ev = _events(q, names)
        if ev:
            labels = [_label(e) for e in ev]
            return Plan("first", "first_of", "", context, who, tuple((lb, _event_must(lb)) for lb in labels))
    counting = _COUNTING.search(q)
    moneyish = _MONEY.search(q) or _BILLS.search(q) or _MONEY_TOPIC.search(q)
    units = [w for w in re.findall(r"[a-z]+s\b", q.lower()) if syn.is_weak(w) and w not in ("bills", "costs")]
    plural = [w for w in re.findall(r"\btotal\s+([a-z]+s)\b", q, re.I)  # "total haircuts": things counted
              if w.lower() in must.split() and not w.endswith("ss")]
    if (_RX["sum"].search(q) and (moneyish or not counting)) or \
            (re.search(r"\btotal\b", q, re.I) and not counting and not units and (moneyish or not plural)) or \
            (counting and _BILLS.search(q) and not re.search(r"\bhow many\b", q, re.I)):
        spend = syn.group("spend")  # "what's my spend on taxis": the money words only rank
        money = [g for g in must.split() if syn.group(g) == spend]
        if money:
            m2, a2 = _target(" ".join(w for w in q.split() if syn.group(w.strip("?,.:;!")) != spend), names)
            if m2:
                must, about = m2, " ".join(dict.fromkeys(a2.split() + money))
        groups = must.split()
        if len(groups) > 1 and re.search(r"\b(?:and|plus|&)\b", q) and not names:
            must = "|".join(groups)  # "bike repairs and taxis combined": either one
        return Plan("sum", "sum_of", must, about, who)
    if _RX["count"].search(q) or plural:
        return Plan("count", "count_of", must, about, who)
    if _RX["date"].search(q):
        if names:  # "when did I adopt Biscuit": the name anchors, the rest ranks
            rest = [g for g in must.split() if g not in names]
            must, about = " ".join(names), " ".join(dict.fromkeys(rest + about.split()))
        return Plan("date", "day_of", must, about, who)
    if _RX["list"].search(q):
        return Plan("list", "values_of", must, about, who, any_time=bool(_PAST.search(q)))
    if _RX["yesno"].search(q):
        return Plan("yesno", "ever", must, about, who)
    helper = "earliest_of" if _SCOPE_FIRST.search(q) else "latest_of"
    return Plan("entity", helper, must, about, who)


_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_SINCE = re.compile(rf"\s*\b(?:since (?:{_MONTHS}|the (?:start|beginning) of (?:the year|{_MONTHS}))|"
                    rf"this year)\b", re.I)  # a scope from the history's start (not "in March": a month's)
_PAST = re.compile(r"\b(?:grew|grow up|growing up|childhood|as a kid|college|ever|originally|past)\b", re.I)
# everyday idioms, read as their plain words ("which office do I clock into" asks where I work)
_IDIOMS = [(re.compile(r"\bclock(?:s|ed|ing)? (?:in|on)\b", re.I), "work"),
           (re.compile(r",?\s*\bas (?:things|it) stands?\b", re.I), "")]


_SETTING = re.compile(r"^(?P<head>[^:;?]{4,90}?)(?:[:;]|,(?=\s+(?:what|which|when|where|who|how|tell|give|remind|can|"
                      r"could)\b))\s+(?P<rest>\S.*)$", re.I)


def _setting(q: str) -> str:
    """A leading clause that says why I ask ("Sorting out my diary: ...", "Doing my taxes: ...") is
    the asker's setting, not words of the statement sought: it is dropped when it names no one and the
    rest asks a question with a target of its own (a Name, or any word while the setting has no topic); "About
    the car, what was my outlay in all" keeps its topic."""
    m = _SETTING.match(q)
    if not m or not re.search(r"\b(?:my|I|I'm|me)\b", m["head"]) or _names(m["head"]) or \
            re.search(rf"\b(?:{_PEOPLE_RX}|how|what|which|when|where|who|number|total|date|day)\b", m["head"], re.I) or \
            not re.search(r"\b(?:how|what|which|when|where|who|whose|tell|give|remind|count|tally|add)\b|\?",
                          m["rest"], re.I):
        return q
    rest_names = _names(m["rest"])
    rest = _target(m["rest"], rest_names)[0].split()
    head = " ".join(_target(m["head"], [])).split()
    own = [w for w in rest if not syn.is_weak(w) and not _BILLS.search(w) and not _MONEY.search(w)]  # no money word
    if rest_names or (own and not any(syn.is_topic(w) for w in head)):
        return m["rest"]  # the rest names its own target: a Name, or a word while the setting has no topic
    return q


def _comparison(q: str, names: list[str], who: str | None) -> Plan:
    """A yes/no question that compares two things: "did I spend more on A than on B", "did A happen
    before B" (by the day), "was my biggest A more than my biggest B"."""
    m = _RX["compare"].search(q)
    if m:
        a, b = re.split(r"\bthan\b", q, maxsplit=1)
        by = ("largest" if re.search(r"\b(?:biggest|largest|most expensive|priciest|highest)\b", q, re.I) else
              "sum" if _MONEY.search(q) or re.search(r"\bmore (?:on|for)\b", q, re.I) else "count")
        if re.search(r"\b(?:less|fewer|smaller)\b", a, re.I):
            a, b = b, a
        return Plan("yesno", "compare", "", "", who, (_event_must(_strip_cmp(a)), _event_must(_strip_cmp(b))), of=by)
    first, later = re.split(r"\b(?:before|after|earlier than|later than)\b", q, maxsplit=1, flags=re.I)
    if re.search(r"\b(?:after|later than)\b", q, re.I):
        first, later = later, first
    return Plan("yesno", "compare", "", "", who, (_event_must(first), _event_must(later)), of="day")


def _strip_cmp(phrase: str) -> str:
    return re.sub(r"\b(?:more|less|fewer|bigger|larger|higher|smaller|times|spend|spent|pay|paid)\b", " ", phrase,
                  flags=re.I)


class ProgramWriter(ProgramPolicy):
    """The wording-robust teacher: the shared step machine (solve, scan, final) over programs
    written from the question's meaning (write_plan); core helpers only, no task pack."""

    backend = BACKEND
    pack = None

    def _program(self, question: str, messages: list[dict]) -> Plan:
        return write_plan(question)

    def describe(self) -> dict:
        return {"backend": BACKEND, "model": BACKEND, "version": VERSION,
                "policy": "scroll.policies.writer.ProgramWriter",
                "note": "deterministic non-LLM program writer that reads the question's meaning (answer type, "
                        "target words, time scope); its results are program-writer results, not model results",
                "token_counter": "approximate", "pack": None}
