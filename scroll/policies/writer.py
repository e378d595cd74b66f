"""`ProgramWriter`: a deterministic program writer that reads the question's meaning, not a template.

It is NOT a model (no model available offline can do this job): a labelled rule system, like
the regex teacher (scroll.policies.reference), whose replies are what a student should learn
to write. Where the regex teacher recognises one generator's question templates and passes
that generator's evidence phrase as a cue, this writer never reads a generator's template
ids or wording tables (tests/test_writer.py checks its imports); it derives from the
question alone:

* the answer type: entity, date, count, sum, duration, yes/no, which-came-first, a list,
  what was said (and "not mentioned" when nothing qualifies: the helpers answer "unknown");
* the target: the question's own content words and names, with their variants and the
  small synonym table of scroll.policies.synonyms; names and nouns are required (`must`),
  verbs and containers only rank (`about`); "my sister" as the subject becomes who="sister";
* the time scope: now / latest, first / originally, every, or between two events.

and writes LOCATE -> COMPUTE -> EXPOSE cells over the core kernel helpers (scroll/toolkit.py):

    step 1  solve   hits = ms.search("<must and about words>", k=None, role="user")
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
             "happened happen did't yet already lately").split())
_PEOPLE_RX = "|".join(sorted(syn.PEOPLE))


@dataclass(frozen=True)
class Plan:
    """What the question asks, as the writer read it."""
    answer: str                      # entity | date | count | sum | duration | yesno | first | list | said
    helper: str                      # the kernel helper (scroll/toolkit.py)
    must: str = ""
    about: str = ""
    who: str | None = None
    options: tuple[str, ...] = field(default_factory=tuple)  # first / duration: one `must` per event

    @property
    def query(self) -> str:
        words = " ".join((self.must + " " + self.about + " " + " ".join(self.options)).replace("|", " ")
                         .replace("_", " ").split())
        return " ".join(dict.fromkeys(words.split())) or "the"

    def cell(self, plan: str) -> str:
        src = 'hits = ms.search({!r}, k=None, role="user")\n'.format(self.query) if plan == "solve" else ""
        hits = "hits" if plan == "solve" else "user_turns()"
        if plan not in ("solve", "scan"):
            raise ValueError(plan)
        kw = (f", about={self.about!r}" if self.about else "") + (f", who={self.who!r}" if self.who else "")
        if self.helper == "first_of":
            return src + f"first_of({hits}, {list(self.options)!r}{kw})"
        if self.helper == "days_apart":
            return src + f"days_apart({hits}, {self.options[0]!r}, {self.options[1]!r}{kw})"
        return src + f"{self.helper}({hits}, {self.must!r}{kw})"


def _names(question: str) -> list[str]:
    """Capitalised names in the question, multi-word names joined by `_` (not its first word unless it
    is followed by another capitalised word or is no common word)."""
    out = []
    for m in re.finditer(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*", question):
        words = [w for w in m.group().split() if w.lower() not in ("i", "i'm", "i've", "i'd")]
        if m.start() == 0 or question[:m.start()].rstrip().endswith((":", "?", ".", "!")):
            while words and words[0].lower() in _STOP | syn.VERBS | {"how", "what", "which", "remind", "quick"}:
                words = words[1:]
        words = [w.rstrip("'s").rstrip("?") if w.endswith("'s") else w.rstrip("?") for w in words]
        if words:
            out.append("_".join(words))
    return out


def _content(text: str, names: list[str]) -> list[str]:
    """Content words (lower case, in order) that are not names, stop words or answer types."""
    low_names = {w.lower() for n in names for w in n.split("_")}
    out, nouns = [], set()
    for m in re.finditer(r"\b(?:a|an|the|my|some)\s+([A-Za-z][A-Za-z'-]*)", text, re.I):
        nouns.add(m.group(1).lower())  # "for a run": a noun, whatever else the word can be
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
    strong = [w for w in words if (w in nouns or not syn.is_verb(w)) and not syn.is_weak(w)]
    verbs = [w for w in words if syn.is_verb(w) and w not in nouns]
    weak = [w for w in words if syn.is_weak(w)]
    must = list(names) + [syn.group(w) for w in strong]
    about = [syn.group(w) for w in verbs + weak]
    if not must and about:           # "where do I live": the verb is the target
        must, about = about[:1], about[1:]
    must = list(dict.fromkeys(must))
    about = [a for a in dict.fromkeys(about) if a not in must]
    return " ".join(must), " ".join(about)


_RX = {
    "said": re.compile(r"\bwhat (?:did|have) i (?:say|said|mention|mentioned|tell you|told you)\b|"
                       r"\bwhat do you know about\b|\bwhat have i told you about\b", re.I),
    "duration": re.compile(r"\bhow (?:many|much) (?:days|weeks|time)\b|\bhow long (?:after|before|between|since|"
                           r"was it|passed|did it take)\b|\bdays (?:passed|went by|between|after|before)\b", re.I),
    "first": re.compile(r"\b(?:first|earlier|sooner|before the other)\b.*\bor\b|\bor\b.*\b(?:first|earlier)\b", re.I),
    "sum": re.compile(r"\bhow much\b|\bset me back\b|\bcost me\b|\bspen[dt]\b.*\b(?:total|altogether|in all)\b|"
                      r"\bwhat did .* cost\b|\btotal (?:spend|spent|cost)\b", re.I),
    "count": re.compile(r"\bhow many\b|\bhow often\b|\bnumber of\b|\bhow frequently\b|\bcount\b", re.I),
    "date": re.compile(r"\bwhen\b|\bwhat (?:date|day)\b|\bwhich (?:date|day)\b|\bon what\b", re.I),
    "list": re.compile(r"\blist\b|\bevery\b|\ball (?:the )?(?:cities|places|companies|names|jobs)\b|"
                       r"\bwhich (?:cities|places|companies|towns)\b|\bname all\b", re.I),
    "yesno": re.compile(r"^(?:\W*(?:so|and|quick question|hey|remind me)\W*)*(?:did|have|has|do|does|was|were|"
                        r"am|is)\s+(?:i|my|we)\b", re.I),
}
_SCOPE_FIRST = re.compile(r"\b(?:first|originally|initially|earliest|before|previous|previously|used to|"
                          r"back then|at first|to begin with)\b", re.I)


def _events(q: str, names: list[str]) -> tuple[str, str] | None:
    """The two events of a duration / which-first question ("between A and B", "after A did B", "A or B")."""
    for rx in (r"\bbetween (.+?) and (.+?)(?:\?|$)", r"\bafter (.+?) (?:did|was|were|had) (.+?)(?:\?|$)",
               r"\bbefore (.+?) (?:did|was|were|had) (.+?)(?:\?|$)", r":\s*(.+?),? or (.+?)(?:\?|$)",
               r"\b(?:first|earlier),? (.+?),? or (.+?)(?:\?|$)", r"^(.+?),? or (.+?),? (?:first|earlier)\b"):
        m = re.search(rx, q, re.I)
        if m:
            return m.group(1), m.group(2)
    return None


def _event_must(phrase: str) -> str:
    names = _names(phrase)
    must, about = _target(phrase, names)
    return must or about


def write_plan(question: str) -> Plan:
    """The plan for a question (see the module docstring)."""
    q = " ".join(question.strip().split())
    names = _names(q)
    rel = re.search(rf"\bmy ({_PEOPLE_RX})\b(?!'s)", q, re.I)
    who = rel.group(1).lower() if rel and not re.search(r"\b(?:I|I'm|I've|me)\b", q) else None
    must, about = _target(q, names)
    if rel and who is None:  # "my sister" as an object: a required word
        must = " ".join(dict.fromkeys([rel.group(1).lower(), *must.split()]))
    if _RX["said"].search(q):
        return Plan("said", "said_about", must, about, who)
    if _RX["duration"].search(q):
        ev = _events(q, names)
        if ev:
            return Plan("duration", "days_apart", "", "", who, (_event_must(ev[0]), _event_must(ev[1])))
    if _RX["first"].search(q):
        ev = _events(q, names)
        if ev:
            return Plan("first", "first_of", "", "", who, (_event_must(ev[0]), _event_must(ev[1])))
    if _RX["sum"].search(q):
        return Plan("sum", "sum_of", must, about, who)
    if _RX["count"].search(q):
        return Plan("count", "count_of", must, about, who)
    if _RX["date"].search(q):
        return Plan("date", "day_of", must, about, who)
    if _RX["list"].search(q):
        return Plan("list", "values_of", must, about, who)
    if _RX["yesno"].search(q):
        return Plan("yesno", "ever", must, about, who)
    helper = "earliest_of" if _SCOPE_FIRST.search(q) else "latest_of"
    return Plan("entity", helper, must, about, who)


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
