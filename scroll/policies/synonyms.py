"""The program writer's small English synonym table (ours, written from general English, not
from any generator's wording tables) and its word classes.

    group("taxis")   -> "taxi|cab|uber|lyft|rideshare"    (a `must` group for the kernel helpers)
    VERBS, WEAK, TYPES: how the writer reads a question's content words

A word maps to the group whose members it is a variant of (plural, tense); unknown words
stand for themselves. `WEAK` words are containers ("class", "visit", "time") that rank but
are never required; `TYPES` name the answer's type ("city", "company") and are not searched.
"""
from __future__ import annotations

GROUPS = [
    # where one lives / works
    "live|living|lives|move|moved|relocate|home|based|settle|apartment|flat|address|lease|house|reside|resident|"
    "residence|new_place|movers",
    "work|job|employ|employer|employed|join|joined|hire|hired|role|position|payroll|onboard|"
    "onboarding|offer|firm|career|first_day|new_job|employee|started_at|start_at|day_one|first_week|sign_on|"
    "signed_on|colleagues|paycheck|salary|team|workplace",
    # everyday activities
    "dentist|dental|teeth|tooth|hygienist|orthodontist",
    "haircut|hair|barber|trim|hairdresser|salon|clippers|fade",
    "yoga|vinyasa|asana",
    "gym|workout|weights",
    "taxi|cab|cabbie|uber|lyft|rideshare|fare|driver",
    "grocery|groceries|supermarket|produce|big_shop|cart|stocked_up|stock_up|food|essentials|veggies",
    "bike|bicycle|cycling|mechanic|tune-up",
    "doctor|gp|physician",
    "meet|met|meetup|meetups|catch|caught|see|saw|hang|together",
    "adopt|adopted|adoption|rescue|rescued|shelter",
    "run|ran|race|finish|finished|marathon|complete|completed",
    "spend|spent|pay|paid|cost|charge|charged|buy|bought",
    "manager|boss|supervisor|lead",
    "born|birth|birthplace",
    "married|wedding|marry",
    "university|college|degree|studied|study",
    "favourite|favorite|love|best",
    "holiday|vacation|getaway",
    "lesson|class|course",
    "middle",
    "grew|grow|childhood|raised",
    "pet|dog|cat|puppy|kitten",
]
_INDEX: dict[str, str] = {}
for _g in GROUPS:
    for _w in _g.split("|"):
        _INDEX.setdefault(_w, _g)

# verbs that say what happened; a question's nouns and names are required, its verbs only rank
VERBS = set(("live living lives move moved work worked go went going get got getting have had take took taking attend "
             "attended do did done visit visited meet met see saw spend spent pay paid cost run ran adopt adopted "
             "join joined start started say said mention mentioned tell told buy bought make made "
             "happen happened come came bring brought call called add put shelled gone become became fix fixing "
             "taken give gave keep kept cut cutting seen used play played playing find found received receive "
             "took doing").split())
# containers and measures: they rank but are never required
WEAK = set(("class classes session sessions visit visits trip trips appointment appointments time times "
            "repair repairs ride rides thing things stuff total amount money cost costs bill bills lesson lessons "
            "altogether overall far so all together shop shops store stores purchase purchases shopping bill bills "
            "spending expenses expense meetup meetups outing outings game games match matches round rounds "
            "trip trips").split())
# the answer's type: not searched for
TYPES = set(("city cities town place places country company companies employer name names date day days "
             "week weeks month months year years number much many long amount person who relative relatives "
             "people family member members metro area region organization organisation figure").split())
# people a question may ask about (the statement's subject, "my sister")
PEOPLE = set(("neighbor neighbour friend sister brother mom mum mother dad father parents cousin aunt uncle "
              "grandma grandmother grandpa grandfather wife husband partner colleague coworker boss son daughter "
              "niece nephew roommate flatmate boyfriend girlfriend stepbrother stepsister godmother "
              "godfather").split())


def _variants(word: str) -> list[str]:
    w = word.lower()
    out = [w]
    for suf, rep in (("ies", "y"), ("es", ""), ("s", ""), ("ied", "y"), ("ed", ""), ("ed", "e"), ("ing", ""),
                     ("ing", "e")):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            out.append(w[: len(w) - len(suf)] + rep)
    return out


def is_topic(word: str) -> bool:
    """A word of one of the synonym groups (a topic the writer knows)."""
    return group(word) != word.lower()


def group(word: str) -> str:
    """The `must` group for `word`: its synonym group, else the word itself."""
    for v in _variants(word):
        if v in _INDEX:
            return _INDEX[v]
    return word.lower()


def is_verb(word: str) -> bool:
    return any(v in VERBS for v in _variants(word))


def is_weak(word: str) -> bool:
    return any(v in WEAK for v in _variants(word))


def is_type(word: str) -> bool:
    return any(v in TYPES for v in _variants(word))
