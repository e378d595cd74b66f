"""How the program writer reads a question's words: the kernel's thesaurus (scroll/thesaurus.py,
the one table the helpers match with) and the writer's own word classes.

    group("taxis")   -> "taxi|cab|uber|lyft|rideshare|..."  (the word's synonym group)
    VERBS, LIGHT, WEAK, TYPES: how the writer reads a question's content words

A word maps to the group whose members it is a variant of (plural, tense); unknown words
stand for themselves. `WEAK` words are containers ("class", "visit", "time") that rank but
are never required; `TYPES` name the answer's type ("city", "company") and are not searched.
"""
from __future__ import annotations

from scroll.thesaurus import KIND_WORDS, synonyms, variants as _variants  # noqa: F401 (KIND_WORDS: the writer's)

# verbs that say what happened; a question's nouns and names are required, its verbs only rank
VERBS = set(("live living lives move moved work worked go went going get got getting have had take took taking attend "
             "attended do did done visit visited meet met see saw spend spent pay paid cost run ran adopt adopted "
             "join joined start started say said mention mentioned tell told buy bought make made "
             "happen happened come came bring brought call called add put shelled gone become became fix fixing "
             "taken give gave keep kept cut cutting seen used play played playing find found received receive "
             "took doing hang hung hanging share shared sharing enjoy enjoyed").split())
# verbs that say little on their own ("get hired"): another verb of the question is the better target
LIGHT = set("get got getting gotten have had do did done go went going gone make made take took taken come came "
            "keep kept give gave put".split())
# containers and measures: they rank but are never required
WEAK = set(("class classes session sessions visit visits trip trips appointment appointments time times "
            "repair repairs ride rides thing things stuff total amount money cost costs bill bills lesson lessons "
            "altogether overall far so all together shop shops store stores purchase purchases shopping bill bills "
            "spending expenses expense meetup meetups outing outings game games match matches round rounds "
            "trip trips workout workouts occasion occasions record records log logs tally").split())
# the answer's type: not searched for
TYPES = set(("city cities town place places country company companies employer name names date day days "
             "week weeks month months year years number much many long amount person who relative relatives "
             "people family member members metro area region organization organisation figure").split())
# people a question may ask about (the statement's subject, "my sister")
PEOPLE = set(("neighbor neighbour friend sister brother mom mum mother dad father parents cousin aunt uncle "
              "grandma grandmother grandpa grandfather wife husband partner colleague coworker boss son daughter "
              "niece nephew roommate flatmate boyfriend girlfriend stepbrother stepsister godmother "
              "godfather").split())


def is_topic(word: str) -> bool:
    """A word of one of the synonym groups (a topic the writer knows)."""
    return group(word) != word.lower()


def group(word: str) -> str:
    """The word's synonym group as one `must` group ("taxi|cab|..."), else the word itself."""
    return "|".join(synonyms(word.lower()))


def is_verb(word: str) -> bool:
    return any(v in VERBS for v in _variants(word))


def is_light(word: str) -> bool:
    return any(v in LIGHT for v in _variants(word))


def is_weak(word: str) -> bool:
    return any(v in WEAK for v in _variants(word))


def is_type(word: str) -> bool:
    return any(v in TYPES for v in _variants(word))
