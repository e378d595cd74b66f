"""Hand-written grammars for the "wide-train", "wide-test", "wide-dev", "wide-dev2" (and "wide-dev3") wording variants
(issue #27 item 3).

    WIDE_TRAIN["city_move"]     # frames a train-role split writes with
    WIDE_TEST["city_move"]      # frames only test-role splits write with (disjoint from WIDE_TRAIN)
    WIDE_DEV["city_move"]       # development frames (train role), disjoint from both of the above
    WIDE_DEV2["city_move"]      # a second development set (train role), disjoint from all three
    expand("I [just|finally] moved to {x}.", rng)  -> "I finally moved to {x}."

A grammar per key is a list of FRAMES: distinct sentence structures (a statement, a fragment,
a question opening with another word...), each one wording. A frame holds the family's slots
(`{x}`, `{f}`, `{rel}`, `{pet}`, `{breed}`, `{other}`, `{race}`, `{finish}`, `{aside}`,
`{when}`, `{friend}`, `{act}`, `{amt}`, `{item}`: the names scroll.tasks.families passes to
`Gen.say`) and small alternation groups `[a|b|c]` (an empty option drops the group), which do
not make a new wording. `Gen.say` picks a frame with the rng it is given, then `expand` draws
every group, left to right, with the same rng, then the slots are filled.

Per key, the "train" frames and the "test" frames are disjoint down to word 4-grams: no
4-gram of any expansion of a test frame (lowercased, punctuation stripped, every slot one
token `<slot>`) occurs in any expansion of a train frame of the same key (tests/test_grammars.py).
The "dev" frames (`WIDE_DEV`, 8 per question / evidence key, 3 per near-miss key; defined after
`GRAMMARS` and added to it as `GRAMMARS[key]["dev"]`) share no such 4-gram with either of them.
What the labels rest on holds in every frame (also tested): the value slot occurs exactly once
in each evidence sentence; date evidence carries `{when}` and no other time word; sum evidence
carries the amount as `${amt}`, `{amt} dollars` or `{amt} bucks` and no other number; count
evidence says that I did the activity, once, in the past; entity questions ask for the current
value; near misses stay near misses (someone else, a plan, a hypothetical, a visit, the past).

The frames are data modules beside this one: grammar_wide_updates.py, grammar_wide_counts.py and
grammar_wide_dates_sums.py (train / test), grammar_dev.py, grammar_dev2.py, grammar_dev3.py.

`FAMILY_KEYS` names, per family, its question key, its answer-bearing evidence keys and its
near-miss keys (the count and sum families' near misses are scroll.tasks.families'
ACTIVITIES / SUMS "neg" lists, shared by every wording).
"""
from __future__ import annotations

import random
import re

from scroll.tasks.grammar_dev import DEV
from scroll.tasks.grammar_dev2 import DEV2
from scroll.tasks.grammar_dev3 import DEV3
from scroll.tasks.grammar_wide_counts import WIDE_COUNTS
from scroll.tasks.grammar_wide_dates_sums import WIDE_DATES_SUMS
from scroll.tasks.grammar_wide_updates import WIDE_UPDATES

FAMILY_KEYS: dict[str, dict] = {
    "update_city": {"question": "city_q", "evidence": ["city_move", "city_restate"],
                    "near": ["city_live", "city_neighbor", "city_maybe", "city_visit", "city_past", "city_friend"]},
    "update_employer": {"question": "job_q", "evidence": ["job_start", "job_join"],
                        "near": ["job_now", "job_interview", "job_friend", "job_recruiter", "job_rel"]},
    "relative_city": {"question": "rel_q", "evidence": ["rel_moved"],
                      "near": ["rel_lives", "rel_visit", "rel_maybe", "rel_friend", "rel_grew"]},
    "count_dentist": {"question": "dentist_q", "evidence": ["dentist_pos"], "near": []},
    "count_yoga": {"question": "yoga_q", "evidence": ["yoga_pos"], "near": []},
    "count_haircut": {"question": "haircut_q", "evidence": ["haircut_pos"], "near": []},
    "meet_friend": {"question": "meet_q", "evidence": ["meet_pos"], "near": ["meet_plan", "meet_cancel", "meet_rel"]},
    "date_adopt": {"question": "adopt_q", "evidence": ["adopt_pos"],
                   "near": ["adopt_think", "adopt_shelter", "adopt_chewed", "adopt_neighbor", "adopt_rel",
                            "adopt_settled"]},
    "date_race": {"question": "race_q", "evidence": ["race_pos"],
                  "near": ["race_signup", "race_training", "race_rel", "race_sore"]},
    "sum_bike": {"question": "bike_q", "evidence": ["bike_paid"], "near": []},
    "sum_taxi": {"question": "taxi_q", "evidence": ["taxi_paid"], "near": []},
    "sum_groceries": {"question": "grocery_q", "evidence": ["grocery_paid"], "near": []},
}

GRAMMARS: dict[str, dict[str, list[str]]] = {**WIDE_UPDATES, **WIDE_COUNTS, **WIDE_DATES_SUMS}


def _variant(name: str, frames: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """One variant's frames per key (`GRAMMARS[key][name]`); `frames`, a development set written
    apart, are first added under that name."""
    for key, fs in (frames or {}).items():
        GRAMMARS[key][name] = fs
    return {k: list(v[name]) for k, v in GRAMMARS.items()}


WIDE_TRAIN: dict[str, list[str]] = _variant("train")
WIDE_TEST: dict[str, list[str]] = _variant("test")

WIDE_DEV: dict[str, list[str]] = _variant("dev", DEV)   # scroll/tasks/grammar_dev.py
WIDE_DEV2: dict[str, list[str]] = _variant("dev2", DEV2)  # scroll/tasks/grammar_dev2.py
WIDE_DEV3: dict[str, list[str]] = _variant("dev3", DEV3)  # scroll/tasks/grammar_dev3.py

_GROUP = re.compile(r"\[([^\[\]]*)\]")


def _tidy(text: str) -> str:
    text = re.sub(r" {2,}", " ", text)
    return re.sub(r" +([,.!?;:])", r"\1", text).strip()


def expand(frame: str, rng: random.Random) -> str:
    """Draw every `[a|b|...]` group of `frame`, left to right, with `rng` (slots stay unfilled)."""
    return _tidy(_GROUP.sub(lambda m: rng.choice(m.group(1).split("|")), frame))


def expansions(frame: str) -> list[str]:
    """Every sentence `frame` can expand to (slots unfilled), in a fixed order."""
    m = _GROUP.search(frame)
    if m is None:
        return [_tidy(frame)]
    out: list[str] = []
    for option in m.group(1).split("|"):
        out += expansions(frame[:m.start()] + option + frame[m.end():])
    return out
