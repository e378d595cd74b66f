"""The grammar wordings "wide-train" / "wide-test" / "wide-dev" / "wide-dev2" (issue #27 item 3): frame counts,
train/test/dev disjointness down to word 4-grams, the semantics the labels rest on (checked on
every frame expansion and on generated text), roles in task-set specs, and the legacy wordings'
histories unchanged byte for byte.

Checks against the held-out "wide-test" frames report only keys and dev-frame indices, never
the text of a test frame."""
from __future__ import annotations

import json
import random
import re

import pytest

from scroll.tasks import build_history
from scroll.tasks.catalog import FAMILIES
from scroll.tasks.families import ASIDES, SUMS, WHEN_DONE, Gen
from scroll.tasks.grammars import FAMILY_KEYS, GRAMMARS, WIDE_DEV, WIDE_DEV2, WIDE_DEV3, WIDE_TEST, WIDE_TRAIN, expand, expansions
from scroll.tasks.pools import POOLS
from scroll.tasks.splits import TaskSetSpec, build_taskset
from scroll.tasks.wordings import PARAPHRASE, TRAIN, WORDINGS, get_wording, template_regex, wording_role

ROLE_FAMILIES = list(FAMILY_KEYS)          # the 12 role-split families
assert set(ROLE_FAMILIES) <= set(FAMILIES)
QUESTION_KEYS = [FAMILY_KEYS[f]["question"] for f in ROLE_FAMILIES]
EVIDENCE_KEYS = [k for f in ROLE_FAMILIES for k in FAMILY_KEYS[f]["evidence"]]
NEAR_KEYS = [k for f in ROLE_FAMILIES for k in FAMILY_KEYS[f]["near"]]
SLOT = re.compile(r"\{(\w+)\}")
VARIANTS = ("train", "test", "dev", "dev2", "dev3")  # GRAMMARS[key][variant]: wide-train, wide-test, wide-dev, wide-dev2, wide-dev3


def _tokens(text: str) -> list[str]:
    """Lowercased words, punctuation stripped, every slot one token <slot>."""
    text = SLOT.sub(" SLOTTOKEN ", text).lower().replace("'", "").replace("\u2019", "")
    return ["<slot>" if t == "slottoken" else t for t in re.findall(r"[a-z0-9]+", text)]


def _grams(text: str, n: int = 4) -> set[tuple]:
    t = _tokens(text)
    return {tuple(t[i:i + n]) for i in range(len(t) - n + 1)}


def _all(key: str, variant: str) -> list[str]:
    return [e for f in GRAMMARS[key][variant] for e in expansions(f)]


# ------------------------------------------------------------------ the legacy wordings did not move
# digests of histories written with the legacy "train" / "paraphrase" wordings, taken BEFORE the grammar
# wordings existed (benchmarks depend on these histories being byte-identical)
LEGACY = [
    (dict(seed=0, pool="all", wording="train", families=ROLE_FAMILIES), "7e5fda4e7fab49bd"),
    (dict(seed=0, pool="test", wording="paraphrase", families=ROLE_FAMILIES), "7913de6160847453"),
    (dict(seed=3, pool="train", wording="train", families=ROLE_FAMILIES), "39716ddf783829a0"),
    (dict(seed=5, pool="test", wording="paraphrase", families=ROLE_FAMILIES), "dbf258ddcb1b60c9"),
    (dict(seed=1, pool="all", wording="train", families=None), "10ff9bd4d0709dc2"),  # memory families below
]


@pytest.mark.parametrize("kw,digest", LEGACY)
def test_legacy_histories_unchanged(kw, digest):
    from scroll.tasks.families_memory import MEMORY_FAMILIES

    kw = dict(kw, families=kw["families"] or sorted(MEMORY_FAMILIES))
    assert build_history(target_tokens=20_000, min_sessions=16, **kw).digest() == digest


def test_legacy_default_and_distill_v1_histories_unchanged():
    assert build_history(seed=0).digest() == "a219368b19a2323c"        # the demo / benchmark default
    v1 = TaskSetSpec.load("distill-v1")
    for split, digest in (("train", "bb964e833bbf0e77"), ("test_paraphrase", "030899476b7d17fa")):
        params = v1.history_params(split, 0)
        params["exchanges"] = tuple(params["exchanges"])
        assert build_history(**params).digest() == digest, split


def test_legacy_say_consumes_the_rng_as_before():
    # a legacy template has no [a|b] group, so Gen.say draws exactly one rng.choice, as it always did
    assert not any("[" in t for lst in list(TRAIN.values()) + list(PARAPHRASE.values()) for t in lst)
    for wording in ("train", "paraphrase"):
        g = Gen(POOLS["all"], wording)
        a, b = random.Random(5), random.Random(5)
        for key in ("city_move", "job_start", "rel_q", "manager_q"):
            slots = {"x": "Oslo", "rel": "aunt"}
            assert g.say(a, key, **slots) == b.choice(get_wording(wording).get(key) or TRAIN[key]).format(**slots)
        assert a.random() == b.random()


def test_sum_near_misses_keep_their_amounts():
    for spec in SUMS.values():
        assert all("${" in t for t in spec["neg"])


# ------------------------------------------------------------------ registration and roles
def test_wide_variants_registered_with_roles():
    assert get_wording("wide-train") is WIDE_TRAIN and get_wording("wide-test") is WIDE_TEST
    assert get_wording("wide-dev") is WIDE_DEV and get_wording("wide-dev2") is WIDE_DEV2
    assert get_wording("wide-dev3") is WIDE_DEV3
    assert {n: wording_role(n) for n in WORDINGS} == {"train": "train", "paraphrase": "test",
                                                      "wide-train": "train", "wide-test": "test",
                                                      "wide-dev": "train", "wide-dev2": "train",
                                                      "wide-dev3": "train"}
    with pytest.raises(ValueError, match="unknown wording"):
        wording_role("nope")
    for variant in (WIDE_TRAIN, WIDE_TEST, WIDE_DEV, WIDE_DEV2):
        assert all(isinstance(k, str) and isinstance(v, list) and all(isinstance(t, str) for t in v)
                   for k, v in variant.items())


def _recorded_calls(wording: str, seeds=range(6)) -> dict[str, set]:
    """key -> the slot names the families pass to Gen.say, over a few histories."""
    seen: dict[str, set] = {}
    orig = Gen.say

    def say(self, rng, key, **slots):
        seen.setdefault(key, set()).update(slots)
        return orig(self, rng, key, **slots)

    Gen.say = say
    try:
        for s in seeds:
            build_history(seed=s, target_tokens=3000, families=ROLE_FAMILIES, pool="train", wording=wording,
                          min_sessions=16, exchanges=(1, 2))
    finally:
        Gen.say = orig
    return seen


def test_every_key_the_families_say_has_frames_with_only_their_slots():
    calls = _recorded_calls("wide-train")
    assert set(calls) == set(QUESTION_KEYS + EVIDENCE_KEYS + NEAR_KEYS) == set(GRAMMARS)
    assert _recorded_calls("wide-dev", seeds=range(3)).keys() == calls.keys()
    for key, passed in calls.items():
        for variant in VARIANTS:
            for f in GRAMMARS[key][variant]:
                assert set(SLOT.findall(f)) <= passed, (key, f, passed)


# ------------------------------------------------------------------ counts and disjointness
def test_frame_counts_per_key_and_variant():
    for key in QUESTION_KEYS + EVIDENCE_KEYS:
        assert len(GRAMMARS[key]["train"]) >= 9 and len(GRAMMARS[key]["test"]) >= 5, key
        assert len(GRAMMARS[key]["train"]) + len(GRAMMARS[key]["test"]) >= 14, key
    for key in NEAR_KEYS:
        assert len(GRAMMARS[key]["train"]) >= 4 and len(GRAMMARS[key]["test"]) >= 4, key
    for key, v in GRAMMARS.items():
        assert WIDE_TRAIN[key] == v["train"] and WIDE_TEST[key] == v["test"]


def test_dev_frame_counts():
    assert set(WIDE_DEV) == set(GRAMMARS) == set(QUESTION_KEYS + EVIDENCE_KEYS + NEAR_KEYS)
    for key in QUESTION_KEYS + EVIDENCE_KEYS:
        assert len(GRAMMARS[key]["dev"]) == 8, key
    for key in NEAR_KEYS:
        assert len(GRAMMARS[key]["dev"]) == 3, key
    for key, v in GRAMMARS.items():
        assert WIDE_DEV[key] == v["dev"] and len(set(v["dev"])) == len(v["dev"]), key


def test_dev2_frame_counts():
    assert set(WIDE_DEV2) == set(GRAMMARS)
    for key in QUESTION_KEYS:
        assert len(GRAMMARS[key]["dev2"]) == 5, key
    for key in EVIDENCE_KEYS:
        assert len(GRAMMARS[key]["dev2"]) == 4, key
    for key in NEAR_KEYS:
        assert len(GRAMMARS[key]["dev2"]) == 2, key
    for key, v in GRAMMARS.items():
        assert WIDE_DEV2[key] == v["dev2"] and len(set(v["dev2"])) == len(v["dev2"]), key


def test_dev3_frame_counts():
    assert set(WIDE_DEV3) == set(GRAMMARS)
    for key in QUESTION_KEYS:
        assert len(GRAMMARS[key]["dev3"]) == 5, key
    for key in EVIDENCE_KEYS:
        assert len(GRAMMARS[key]["dev3"]) == 3, key
    for key in NEAR_KEYS:
        assert len(GRAMMARS[key]["dev3"]) == 2, key
    for key, v in GRAMMARS.items():
        assert WIDE_DEV3[key] == v["dev3"] and len(set(v["dev3"])) == len(v["dev3"]), key


def test_frames_are_distinct_structures():
    for key, v in GRAMMARS.items():
        for variant in VARIANTS:
            sents = [tuple(_tokens(e)) for f in v[variant] for e in set(expansions(f))]
            assert len(sents) == len(set(sents)), (key, variant)          # no two frames write the same sentence
            grams = [set().union(*[_grams(e) for e in expansions(f)]) for f in v[variant]]
            for i in range(len(grams)):
                for j in range(i + 1, len(grams)):
                    if grams[i] and grams[j]:                             # not one sentence with synonyms swapped
                        share = len(grams[i] & grams[j]) / min(len(grams[i]), len(grams[j]))
                        assert share <= 0.6, (key, variant, v[variant][i], v[variant][j])


def test_train_and_test_frames_share_no_word_4gram():
    for key in GRAMMARS:
        train = [tuple(_tokens(e)) for e in _all(key, "train")]
        train_grams = set().union(*[_grams(e) for e in _all(key, "train")])
        assert not set(_all(key, "train")) & set(_all(key, "test")), key
        for e in _all(key, "test"):
            toks = tuple(_tokens(e))
            assert len(toks) >= 4, (key, e)
            shared = _grams(e) & train_grams
            assert not shared, (key, e, shared)
        assert train  # sanity


@pytest.mark.parametrize("dev,other", [("dev", "train"), ("dev", "test"),
                                       ("dev2", "train"), ("dev2", "test"), ("dev2", "dev"),
                                       ("dev3", "train"), ("dev3", "test"), ("dev3", "dev"), ("dev3", "dev2")])
def test_dev_frames_share_no_word_4gram_with_the_other_variants(dev, other):
    # only keys and dev-frame indices in the messages: never the text of a held-out test frame
    for key in GRAMMARS:
        other_sents = {tuple(_tokens(e)) for e in _all(key, other)}
        other_grams = set().union(*[_grams(e) for e in _all(key, other)])
        assert other_grams, key
        for i, f in enumerate(GRAMMARS[key][dev]):
            for e in expansions(f):
                same, shared = tuple(_tokens(e)) in other_sents, bool(_grams(e) & other_grams)  # bools: the
                assert len(_tokens(e)) >= 4, (key, i)                       # report never shows a test frame's words
                assert not same, (key, dev, "frame", i, "same sentence as", other)
                assert not shared, (key, dev, "frame", i, "shares a 4-gram with", other)


def test_expand_is_deterministic_and_drops_empty_options():
    frame = "After weeks of packing, I [finally|] made the move to {x}."
    assert set(expansions(frame)) == {"After weeks of packing, I finally made the move to {x}.",
                                      "After weeks of packing, I made the move to {x}."}
    assert [expand(frame, random.Random(s)) for s in range(20)] == [expand(frame, random.Random(s)) for s in range(20)]
    assert {expand(frame, random.Random(s)) for s in range(40)} == set(expansions(frame))


# ------------------------------------------------------------------ semantics, on every expansion of every frame
TIME_WORDS = re.compile(r"\b(yesterday|today|tomorrow|tonight|morning|afternoon|evening|night|noon|midnight|weeks?|"
                        r"weekend|months?|years?|days?|ago|last|next|earlier|later|since|monday|tuesday|wednesday|"
                        r"thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|"
                        r"september|october|november|december)\b|\d", re.I)
NUMBER_WORDS = re.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|dozen|twice|half|couple|"
                          r"hundred|thousand)\b", re.I)
FIRST_PERSON = re.compile(r"\b(I|I'm|I've|[Mm]y|[Mm]e|[Mm]ine)\b")
COUNT_VOCAB = {"dentist": r"dentist|dental|teeth|hygienist|checkup|cleaning", "yoga": r"yoga|vinyasa",
               "haircut": r"hair|barber|haircut|trim|salon|clippers"}
NOT_DONE = re.compile(r"\b(will|going to|gonna|plan\w*|next|tomorrow|should|need|want\w*|cancel\w*|skip\w*|missed|"
                      r"might|maybe|hop(e|ing)|again|twice|every|always|usual\w*|sister|brother|mom|dad|friend|"
                      r"neighbou?r|\{rel\}|\{friend\})\b", re.I)
PAST = re.compile(r"\b(\w+ed|went|got|had|did|sat|saw|took|made|was|kept|came|let|dealt|done|back from|"
                  r"just finished)\b",
                  re.I)
CURRENT = re.compile(r"\b(now|currently|current|present|these days|at the moment|right now|nowadays|at present|"
                     r"as of today|"
                     r"today|at this point)\b", re.I)
SUM_Q = re.compile(r"\b(total|altogether|all told|overall|sum|summed|add up|tally|so far)\b", re.I)
AMOUNT = re.compile(r"\$\{amt\}|\{amt\} (dollars|bucks)\b")
VALUE_SLOTS = {"city_move": ["x"], "city_restate": ["x"], "job_start": ["x"], "job_join": ["x"],
               "rel_moved": ["rel", "x"], "meet_pos": ["friend", "act"], "adopt_pos": ["pet", "when"],
               "race_pos": ["race", "when"], "bike_paid": ["amt"], "taxi_paid": ["amt"], "grocery_paid": ["amt"]}
QUESTION_SLOTS = {"rel_q": ["rel"], "meet_q": ["friend", "act"], "adopt_q": ["pet"], "race_q": ["race"]}
NEAR_MARKERS = {
    "city_neighbor": r"neighbo|next door|across the hall|downstairs|upstairs|next to mine",
    "city_maybe": r"might|maybe|someday|if i ever|would|hypothetical|eventually|another life|not planning|i'd",
    "city_visit": r"visit|trip|conference|getaway|hotel|back home|back sunday|wedding|short stay",
    "city_past": r"used to|back in|ago|ages|once upon|twenties|student|as a kid|way back|university days",
    "city_friend": r"\{f\}",
    "job_interview": r"interview|hiring manager|offer|phone screen|round of calls|case study",
    "job_friend": r"\{f\}", "job_recruiter": r"recruit|linkedin|headhunter|\bhr\b|pitch|emailing",
    "job_rel": r"\{rel\}",
    "rel_visit": r"visit|trip|wedding|conference|holiday|hotel|getaway|sightseeing|touring",
    "rel_maybe": r"someday|might|dream|consider|maybe|if my|no real plans|one of these|fantasi",
    "rel_friend": r"friend|roommate|buddy|pal\b|someone",
    "rel_grew": r"grew up|childhood|raised|originally|born|kid|roots",
    "meet_plan": r"next|soon|plan|going to|should|sometime|penciled|wants to|hoping|upcoming|we'll see",
    "meet_cancel": r"cancel|bailed|called off|fell through|skip|stood|rained out|didn't|never happened",
    "meet_rel": r"my \{rel\}",
    "adopt_think": r"think|tempt|consider|on my mind|just looking|debating|nothing yet|daydream|should",
    "adopt_shelter": r"not decided|still thinking|not ready|we'll see|no commitment|nothing final|torn|haven't decided",
    "adopt_neighbor": r"neighbo|next door|upstairs", "adopt_rel": r"my \{rel\}",
    "race_signup": r"sign|regist|entry|start list|submit|calendar|bib|name down|committed",
    "race_training": r"train|prep|miles|mileage|tempo|practice|long way|long run", "race_rel": r"my \{rel\}",
}
# near misses that must not read as the family's evidence
NEAR_FORBIDDEN = {
    "city_live": r"\bmov|relocat", "rel_lives": r"\bmov|relocat", "job_now": r"start|join|hired|first day|new\b",
    "adopt_chewed": r"adopt|brought|took \{pet\} home|came home with|\{when\}",
    "adopt_settled": r"adopt|brought|came home with|\{when\}",
    "race_sore": r"\{when\}|today|yesterday|morning|\bran\b",
}


def _every(keys, variants=VARIANTS):
    for key in keys:
        for variant in variants:
            for f in GRAMMARS[key][variant]:
                for e in expansions(f):
                    yield key, variant, e


def test_sentences_are_clean():
    for key, _, e in _every(GRAMMARS):
        assert "[" not in e and "]" not in e and "|" not in e and "  " not in e, (key, e)
        assert e[-1] in ".!?)" and (e[0].isupper() or e[0] in "{$"), (key, e)
        assert re.match(r"\{(x|f|pet|friend|other|race|finish|amt)\}|[^{]", e), (key, e)  # no lowercase slot first


def test_value_slots_exactly_once():
    for key, _, e in _every(VALUE_SLOTS):
        for slot in VALUE_SLOTS[key]:
            assert e.count("{" + slot + "}") == 1, (key, slot, e)
    for key, _, e in _every(QUESTION_SLOTS):
        for slot in QUESTION_SLOTS[key]:
            assert e.count("{" + slot + "}") == 1, (key, slot, e)
    for key, _, e in _every(NEAR_KEYS):
        for slot in set(SLOT.findall(e)):
            assert e.count("{" + slot + "}") == 1, (key, slot, e)
        if key.startswith(("rel_", "city_", "job_")):
            assert e.count("{x}") == 1, (key, e)
    for key, _, e in _every([k for k in GRAMMARS if k.startswith("rel_")]):
        assert e.count("{rel}") == 1, (key, e)


def test_date_evidence_has_when_and_no_other_time_word():
    for key, _, e in _every(["adopt_pos", "race_pos"]):
        rest = SLOT.sub(" ", e)
        assert "{when}" in e and not TIME_WORDS.search(rest), (key, e, TIME_WORDS.search(rest))


def test_sum_evidence_has_one_amount_and_no_other_number():
    for key, _, e in _every(["bike_paid", "taxi_paid", "grocery_paid"]):
        assert len(AMOUNT.findall(e)) == 1 and e.count("{amt}") == 1, (key, e)
        assert not NUMBER_WORDS.search(SLOT.sub(" ", e)), (key, e)
    for key, _, e in _every(["bike_q", "taxi_q", "grocery_q"]):
        assert SUM_Q.search(e) and FIRST_PERSON.search(e) and not NUMBER_WORDS.search(e), (key, e)


def test_count_evidence_says_i_did_it_once_in_the_past():
    for act in COUNT_VOCAB:
        for key, _, e in _every([f"{act}_pos"]):
            rest = SLOT.sub(" ", e)
            assert FIRST_PERSON.search(rest), (key, e)
            assert re.search(COUNT_VOCAB[act], rest, re.I), (key, e)
            assert PAST.search(rest), (key, e)
            assert not NOT_DONE.search(e) and not NUMBER_WORDS.search(rest), (key, e)
        for key, _, e in _every([f"{act}_q"]):
            assert re.search(r"how many|how often|number|count|tally|total", e, re.I), (key, e)
            assert FIRST_PERSON.search(e) and re.search(COUNT_VOCAB[act], e, re.I), (key, e)
    for key, _, e in _every(["meet_pos"]):
        assert re.search(r"\b(I|me|we)\b", e) and not NOT_DONE.search(e.replace("{friend}", "")), (key, e)
    for key, _, e in _every(["meet_q"]):
        assert re.search(r"how many|how often|number|count|tally", e, re.I) and FIRST_PERSON.search(e), (key, e)


def test_questions_ask_for_the_current_value_or_the_date():
    for key, _, e in _every(["city_q", "job_q", "rel_q"]):
        assert CURRENT.search(e), (key, e)
        assert "?" in e or e.lower().startswith(("remind", "tell", "name", "current")), (key, e)
    for key, _, e in _every(["adopt_q", "race_q"]):
        assert re.search(r"\b(date|day|when)\b", e, re.I), (key, e)


def test_near_misses_stay_near_misses():
    for key, _, e in _every(NEAR_MARKERS):
        assert re.search(NEAR_MARKERS[key], e, re.I), (key, e)
    for key, _, e in _every(NEAR_FORBIDDEN):
        assert not re.search(NEAR_FORBIDDEN[key], e, re.I), (key, e)
    for key, _, e in _every([k for k in NEAR_KEYS if k.startswith("city_") and k != "city_maybe"]):
        assert not re.search(r"\bI(\s+\w+)?\s+(moved|relocated)\b", e), (key, e)   # never my own move


# ------------------------------------------------------------------ semantics, on generated histories
def _hist(wording: str, seed: int):
    pool = "test" if wording == "wide-test" else "train"
    return build_history(seed=seed, target_tokens=8000, families=ROLE_FAMILIES, pool=pool, wording=wording,
                         min_sessions=16, exchanges=(1, 3))


def _n(word: str, text: str) -> int:
    return len(re.findall(rf"(?<![\w$]){re.escape(word)}(?!\w)", text))


@pytest.mark.parametrize("wording", ["wide-train", "wide-test", "wide-dev", "wide-dev2"])
def test_generated_evidence_and_questions(wording):
    for seed in range(12):
        h = _hist(wording, seed)
        for t in h.tasks:
            texts = [h.rows[i]["text"] for i in t.evidence_idx]
            assert texts, t.family
            q = t.question
            if t.value_type == "entity":
                assert all(_n(t.value, x) == 1 for x in texts), (t.family, t.value, texts)
                assert CURRENT.search(q), q
            if t.family == "relative_city":
                assert all(_n(t.params["relative"], x) == 1 for x in texts) and _n(t.params["relative"], q) == 1
            if t.family == "meet_friend":
                f, a = t.params["friend"], t.params["activity"]
                assert all(_n(f, x) == 1 and _n(a, x) == 1 for x in texts), texts
                assert _n(f, q) == 1 and _n(a, q) == 1, q
            if t.family.startswith("count_"):
                act = t.params["activity"]
                assert all(re.search(COUNT_VOCAB[act], x, re.I) and FIRST_PERSON.search(x) for x in texts), texts
            if t.kind == "date":
                (x,) = texts
                name = t.params.get("pet") or t.params["race"]
                assert _n(name, x) == 1 and _n(name, q) == 1, (x, q)
                assert t.params["said"] in WHEN_DONE and _n(t.params["said"], x) == 1, x
                rest = x.replace(t.params["said"], " ", 1)
                for aside in ASIDES:
                    rest = rest.replace(aside, " ")
                rest = re.sub(r"\b\d:\d\d\b", " ", rest.replace(name, " "))           # the race's finish time
                rest = re.sub(r"^Morning! ", "", rest)                               # families._wrap's greeting
                assert not TIME_WORDS.search(rest), x
            if t.kind == "sum":
                for amt, x in zip(t.params["amounts"], texts):
                    assert re.findall(r"\d+", x) == [str(amt)], x
                    assert re.search(rf"\${amt}\b|\b{amt} (dollars|bucks)\b", x), x


def _regexes(keys, variant):
    return {k: [template_regex(e) for e in _all(k, variant)] for k in keys}


@pytest.mark.parametrize("wording,own,others", [("wide-test", "test", ("train", "dev", "dev2", "dev3")),
                                                ("wide-dev", "dev", ("train", "test", "dev2", "dev3")),
                                                ("wide-dev2", "dev2", ("train", "test", "dev", "dev3")),
                                                ("wide-dev3", "dev3", ("train", "test", "dev", "dev2"))])
def test_wide_histories_write_only_their_own_frames(wording, own, others):
    keys = QUESTION_KEYS + EVIDENCE_KEYS
    own_rx = _regexes(keys, own)
    other_rx = {k: [rx for o in others for rx in _regexes(keys, o)[k]] for k in keys}

    def show(text):  # a failure names a held-out test sentence by its family only
        return text if own != "test" else "(held-out sentence)"

    for seed in range(4):
        h = _hist(wording, seed)
        for t in h.tasks:
            key = FAMILY_KEYS[t.family]["question"]
            assert any(rx.fullmatch(t.question) for rx in own_rx[key]), (t.family, show(t.question))
            assert not any(rx.search(t.question) for rx in other_rx[key]), (t.family, show(t.question))
            ev = FAMILY_KEYS[t.family]["evidence"]
            for i in t.evidence_idx:
                x = h.rows[i]["text"]
                assert any(rx.search(x) for k in ev for rx in own_rx[k]), (t.family, show(x))
                assert not any(rx.search(x) for k in ev for rx in other_rx[k]), (t.family, show(x))


def test_other_families_still_write_with_the_wide_variants():
    from scroll.tasks.families_memory import MEMORY_FAMILIES

    for wording in ("wide-train", "wide-test", "wide-dev", "wide-dev2", "wide-dev3"):  # keys the grammars do not define: the "train" list
        h = build_history(seed=2, target_tokens=5000, families=sorted(MEMORY_FAMILIES), pool="all", wording=wording,
                          min_sessions=16, exchanges=(1, 2))
        assert all(t.evidence_idx for t in h.tasks if t.value_type != "abstain")


# ------------------------------------------------------------------ task-set specs
def test_distill_v2_spec():
    spec = TaskSetSpec.load("distill-v2")
    v1 = TaskSetSpec.load("distill-v1")
    assert list(spec.splits) == list(v1.splits)
    assert {n: (s.wording, s.pool, s.role) for n, s in spec.splits.items()} == {
        "train": ("wide-train", "train", "train"), "dev": ("wide-train", "train", "train"),
        "test_unseen": ("wide-train", "test", "test"), "test_paraphrase": ("wide-test", "test", "test"),
        "test_heldout_kind": ("wide-train", "test", "test")}
    for n, s in spec.splits.items():
        assert s.histories == v1.splits[n].histories and s.families == v1.splits[n].families
    assert (spec.history_tokens, spec.min_sessions, spec.exchanges, spec.heldout_kinds) == \
        (v1.history_tokens, v1.min_sessions, v1.exchanges, v1.heldout_kinds)


def test_distill_v2_dev_spec():
    spec, v2 = TaskSetSpec.load("distill-v2-dev"), TaskSetSpec.load("distill-v2")
    assert spec.seed != v2.seed and spec.heldout_kinds == [] and spec.heldout_split is None
    assert (spec.history_tokens, spec.min_sessions, spec.exchanges) == (36000, 24, [5, 14])
    assert {n: (s.histories, s.wording, s.pool, s.role) for n, s in spec.splits.items()} == {
        "dev": (12, "wide-dev", "train", "train")}
    assert spec.splits["dev"].families == ROLE_FAMILIES             # all 12, the sums included
    assert wording_role("wide-dev") == "train"
    raw = json.loads(json.dumps(spec.to_dict()))
    raw["splits"]["test_x"] = dict(raw["splits"]["dev"], role="test", pool="test")
    TaskSetSpec.from_dict(raw)                                      # a train-role wording: any split may use it


def test_distill_v2_dev2_spec():
    spec, dev = TaskSetSpec.load("distill-v2-dev2"), TaskSetSpec.load("distill-v2-dev")
    assert spec.seed not in (dev.seed, TaskSetSpec.load("distill-v2").seed)
    assert (spec.history_tokens, spec.min_sessions, spec.exchanges, spec.heldout_kinds) == \
        (dev.history_tokens, dev.min_sessions, dev.exchanges, dev.heldout_kinds)
    assert {n: (s.histories, s.wording, s.pool, s.role) for n, s in spec.splits.items()} == {
        "dev": (12, "wide-dev2", "train", "train")}
    assert spec.splits["dev"].families == ROLE_FAMILIES


def test_distill_v2_dev3_spec():
    spec, dev2 = TaskSetSpec.load("distill-v2-dev3"), TaskSetSpec.load("distill-v2-dev2")
    seeds = {TaskSetSpec.load(n).seed for n in ("distill-v2", "distill-v2-dev", "distill-v2-dev2")}
    assert spec.seed not in seeds
    assert (spec.history_tokens, spec.min_sessions, spec.exchanges, spec.heldout_kinds) == \
        (dev2.history_tokens, dev2.min_sessions, dev2.exchanges, dev2.heldout_kinds)
    assert {n: (s.histories, s.wording, s.pool, s.role) for n, s in spec.splits.items()} == {
        "dev": (12, "wide-dev3", "train", "train")}
    assert spec.splits["dev"].families == ROLE_FAMILIES


def test_test_role_wordings_refused_in_train_role_splits():
    raw = json.loads(json.dumps(TaskSetSpec.load("distill-v2").to_dict()))
    for split in ("train", "dev"):
        for wording in ("wide-test", "paraphrase"):
            bad = json.loads(json.dumps(raw))
            bad["splits"][split]["wording"] = wording
            with pytest.raises(ValueError, match="test splits only"):
                TaskSetSpec.from_dict(bad)
    ok = json.loads(json.dumps(raw))
    ok["splits"]["test_unseen"]["wording"] = "train"
    ok["splits"]["dev"]["wording"] = "train"
    TaskSetSpec.from_dict(ok)


def test_small_wide_taskset_does_not_leak_test_wordings(tmp_path):
    from scroll.events import EventLog

    raw = TaskSetSpec.load("distill-v2").to_dict()
    raw.update(history_tokens=3000, min_sessions=16, exchanges=[1, 2])
    for s in raw["splits"].values():
        s["histories"] = 1
    ts = build_taskset(TaskSetSpec.from_dict(raw), tmp_path / "ts")
    test_rx = [rx for rxs in _regexes(list(GRAMMARS), "test").values() for rx in rxs]

    def user_texts(split):
        out = []
        for h in ts.manifest["histories"]:
            if h["split"] == split:
                with EventLog(ts.root / h["db"], readonly=True) as log:
                    out += [e.text for e in log.expand(1, log.max_seq()) if e.role == "user"]
        return out

    for split in ("train", "dev", "test_unseen"):
        texts = user_texts(split) + [r.task.question for r in ts.splits[split]]
        assert texts and not any(rx.search(x) for rx in test_rx for x in texts), split
    para = user_texts("test_paraphrase")
    assert sum(any(rx.search(x) for rx in test_rx) for x in para) >= 20


def test_small_dev_taskset_writes_dev_frames_only(tmp_path):
    from scroll.events import EventLog

    raw = TaskSetSpec.load("distill-v2-dev").to_dict()
    raw.update(history_tokens=3000, min_sessions=16, exchanges=[1, 2])
    raw["splits"]["dev"]["histories"] = 1
    ts = build_taskset(TaskSetSpec.from_dict(raw), tmp_path / "ts")
    refs = ts.splits["dev"]
    assert sorted(r.task.family for r in refs) == sorted(ROLE_FAMILIES)
    texts = [r.task.question for r in refs]
    for h in ts.manifest["histories"]:
        with EventLog(ts.root / h["db"], readonly=True) as log:
            texts += [e.text for e in log.expand(1, log.max_seq()) if e.role == "user"]
    test_rx = [rx for rxs in _regexes(list(GRAMMARS), "test").values() for rx in rxs]
    assert not any(rx.search(x) for rx in test_rx for x in texts)    # no held-out wording (text not shown)
    dev_rx = [rx for rxs in _regexes(QUESTION_KEYS + EVIDENCE_KEYS, "dev").values() for rx in rxs]
    assert sum(any(rx.search(x) for rx in dev_rx) for x in texts) >= 30
