"""Our small English thesaurus, defined in every kernel before the helpers of scroll/toolkit.py.

General English, written by us (not from any generator's wording tables): a word's synonym
group, found through its plural and tense variants. The kernel helpers match a lower-case
`must` / `about` word by its whole group, so a program names the question's own words and
the matching widens by itself:

    synonyms("runs")          -> ['run', 'ran', 'race', 'finish', ...]   (an unknown word: [word])
    widen("Leo run")          -> 'Leo run ran race finish ...'            (a query for ms.search)

Capitalised words (Names) and `_` phrases stand for themselves. `_CONTRARY` lists, per group, words
that turn a clause into something else (a trip is not where one lives); scroll/statements.py drops
such clauses. The program writer
(scroll.policies.writer) reads the same table on the host (scroll.policies.synonyms), so the
teacher and the kernel cannot drift apart. Standard library only: this file runs in the
sandboxed kernel (scroll.prompts.TOOLKIT_SOURCE).
"""
_SYNONYM_GROUPS = [
    # where one lives / works
    "live|living|lives|move|moved|relocate|relocation|home|based|settle|apartment|flat|address|lease|house|reside|resident|"
    "residence|new_place|movers|life_in|for_good",
    "work|job|employ|employer|employed|join|joined|hire|hired|role|position|payroll|onboard|"
    "onboarding|offer|firm|career|first_day|new_job|employee|started_at|start_at|day_one|first_week|sign_on|"
    "signed_on|colleagues|paycheck|salary|team|workplace|took_me_on|brought_me_on|gig|came_on_board|come_on_board",
    # everyday activities
    "dentist|dental|teeth|tooth|hygienist|orthodontist",
    "haircut|hair|barber|trim|hairdresser|salon|clippers|fade",
    "yoga|vinyasa|asana",
    "gym|workout|weights",
    "taxi|cab|cabbie|uber|lyft|rideshare|fare|driver",
    "grocery|groceries|supermarket|produce|big_shop|cart|stocked_up|stock_up|food|essentials|veggies",
    "bike|bicycle|cycle|cycling|mechanic|tune-up|brake|brakes|derailleur|chain|cassette|tire|tyre|wheel|puncture",
    "doctor|gp|physician",
    "meet|met|meetup|meetups|catch|caught|see|saw|hang|together",
    "adopt|adopted|adoption|rescue|rescued|shelter|gotcha",
    "run|ran|race|finish|finished|marathon|complete|completed",
    "spend|spent|pay|paid|payment|cost|charge|charged|buy|bought|outlay",
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
# words that make a statement about a group's meaning something else: a trip is not where one lives
_CONTRARY = {
    "live": "visit|visiting|visited|trip|briefly|hotel|conference|itinerary|layover|sightseeing",
}
# the members of a kind, for "what kind of dog", "which instrument" (kind_of in scroll/toolkit.py); general
# English, two-word members joined by `_`
KINDS = {
    "dog": "labrador|retriever|golden_retriever|beagle|poodle|labradoodle|cockapoo|greyhound|whippet|lurcher|corgi|"
           "dachshund|terrier|collie|border_collie|spaniel|cocker_spaniel|springer_spaniel|husky|boxer|bulldog|"
           "french_bulldog|pug|shepherd|german_shepherd|chihuahua|schnauzer|rottweiler|doberman|dalmatian|mastiff|"
           "pointer|setter|shiba|akita|samoyed|vizsla|weimaraner|basset|bloodhound|sheepdog|staffie|pit_bull|"
           "great_dane|newfoundland|st_bernard|maltese|shih_tzu|pomeranian|yorkie|mutt|mongrel",
    "cat": "tabby|siamese|persian|maine_coon|ragdoll|bengal|sphynx|calico|tortoiseshell|british_shorthair|burmese|"
           "abyssinian|norwegian_forest|russian_blue|savannah|tuxedo",
    "instrument": "piano|guitar|bass|violin|viola|cello|double_bass|drums|drum|percussion|flute|clarinet|oboe|bassoon|"
                  "saxophone|sax|trumpet|trombone|tuba|french_horn|ukulele|harp|banjo|mandolin|accordion|harmonica|"
                  "keyboard|synth|organ|recorder|bagpipes|sitar",
    "language": "Spanish|French|German|Italian|Portuguese|Japanese|Mandarin|Cantonese|Chinese|Korean|Arabic|Russian|"
                "Dutch|Greek|Hindi|Turkish|Swedish|Norwegian|Danish|Finnish|Polish|Czech|Hebrew|Latin|Welsh|Irish|"
                "Icelandic|Vietnamese|Thai|Indonesian|Swahili",
}
KIND_WORDS = {"breed": "dog", "dog": "dog", "puppy": "dog", "cat": "cat", "kitten": "cat", "instrument": "instrument",
              "language": "language"}


def _kind_members(kind):
    """The members of a kind (KINDS), two-word ones with a space; [] for an unknown kind."""
    return [m.replace("_", " ") for m in KINDS.get(KIND_WORDS.get(str(kind).lower(), ""), "").split("|") if m]


_SYNONYM_INDEX = {}
for _g in _SYNONYM_GROUPS:
    for _w in _g.split("|"):
        _SYNONYM_INDEX.setdefault(_w, _g.split("|"))


def variants(word):
    """The word and the forms it may be a plural or tense of ("cities" -> city; "moved" -> mov, move;
    "running" -> runn, runne, run)."""
    w = word.lower()
    out = [w]
    for suf, rep in (("ies", "y"), ("es", ""), ("s", ""), ("ied", "y"), ("ed", ""), ("ed", "e"), ("ing", ""),
                     ("ing", "e")):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            stem = w[: len(w) - len(suf)]
            out.append(stem + rep)
            if not rep and suf in ("ing", "ed") and stem[-1] == stem[-2] and stem[-1] in "bdgmnprt":
                out.append(stem[:-1])  # "running" -> run, "stopped" -> stop
    return out


def synonyms(word):
    """The synonym group of a lower-case word (through its variants), else [word]. A capitalised
    word (a Name) or a `_` phrase is only itself."""
    if not word or word[:1].isupper() or "_" in word:
        return [word]
    for v in variants(word):
        if v in _SYNONYM_INDEX:
            return list(_SYNONYM_INDEX[v])
    return [word]


def widen(words):
    """A query for ms.search: each word with its synonyms (`|` and `_` read as spaces), once each."""
    out = []
    for w in str(words or "").replace("|", " ").split():
        out += [s.replace("_", " ") for s in synonyms(w)]
    return " ".join(dict.fromkeys(" ".join(out).split()))


def _contrary(word):
    """Words that, in the same clause, make a statement using `word` (or a synonym) mean something
    else ("live": a visit, a trip, a hotel); [] for most words."""
    group = synonyms(word)
    return [c for head, alts in _CONTRARY.items() if head in group for c in alts.split("|")]
