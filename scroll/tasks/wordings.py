"""Question and planted-fact wordings, one template list per wording variant.

    WORDINGS["train"]["city_move"]        # what train, dev and unseen-entity tests use
    WORDINGS["paraphrase"]["city_move"]   # never used by the "train" wording

A family asks `say(rng, key, **slots)` (scroll.tasks.families.Gen) for a sentence: the
template list of its wording variant, falling back to the "train" list only for keys the
variant does not define. Every key a task's ANSWER rests on (the question, the evidence
statements) has its own "paraphrase" list (`EVIDENCE_KEYS`, checked by the tests), and so
do most near misses; no "paraphrase" template occurs in any "train" text (tests).

Two more variants are hand-written grammars (scroll.tasks.grammars, issue #27 item 3): many
frames per key, each a different sentence structure with slots and small `[a|b]` groups:

    WORDINGS["wide-train"]["city_move"]   # 9+ frames per answer-bearing key, for train splits
    WORDINGS["wide-test"]["city_move"]    # 5+ other frames, no word 4-gram shared with wide-train
    WORDINGS["wide-dev"]["city_move"]     # 8 development frames, no word 4-gram shared with either
    WORDINGS["wide-dev2"]["city_move"]    # 4-5 more development frames, shared with none of the three
    WORDINGS["wide-dev3"]["city_move"]    # 3-5 more (scroll/tasks/grammar_dev3.py), shared with none of the four

Each variant has a ROLE (`wording_role`): "train", "wide-train", "wide-dev", "wide-dev2" and "wide-dev3" (development
paraphrases for improving a program writer without touching the test set) may be used by any
split; "paraphrase" and "wide-test" by test-role splits only (TaskSetSpec.validate). The legacy
"train" / "paraphrase" lists are unchanged, so the histories they generate are too.
"""
from __future__ import annotations

import re

from .grammars import WIDE_DEV, WIDE_DEV2, WIDE_DEV3, WIDE_TEST, WIDE_TRAIN

TRAIN: dict[str, list[str]] = {
    # ---- update_city
    "city_q": ["Which city do I live in now?"],
    "city_live": ["For context, I live in {x} and work mostly from home.",
                  "I live in {x}, so the weather is always a factor for me."],
    "city_move": ["Big news: I just moved to {x}! Still surrounded by boxes.",
                  "We finally moved to {x} last weekend, the new apartment is tiny but bright.",
                  "Quick update, I relocated to {x} at the start of the month.",
                  "I moved to {x} a few days ago and I'm still figuring out the buses."],
    "city_restate": ["I've been living in {x} for a while now and I love the markets."],
    "city_neighbor": ["My neighbor just moved to {x} for a new job."],
    "city_maybe": ["Sometimes I think I might move to {x} one day, but not anytime soon."],
    "city_visit": ["I'm visiting {x} next week for a conference."],
    "city_past": ["I lived in {x} back in college, feels like ages ago."],
    "city_friend": ["My friend {f} moved to {x} last month, funny coincidence."],
    # ---- update_employer
    "job_q": ["Which company do I work for now?"],
    "job_now": ["I work at {x} on the platform team, so my days are mostly meetings."],
    "job_start": ["Today was my first day at {x}! Everyone seems nice.", "I started my new job at {x} this week."],
    "job_join": ["I just joined {x} as a senior engineer, first week done."],
    "job_interview": ["I had an interview at {x} but I don't think I'll take it."],
    "job_friend": ["My friend {f} got a job at {x}."],
    "job_recruiter": ["A recruiter from {x} reached out again, I ignored it."],
    "job_rel": ["My {rel} used to work at {x}, small world."],
    # ---- count_<activity> (see families.ACTIVITIES for the near misses)
    "dentist_q": ["How many times did I go to the dentist?"],
    "dentist_pos": ["I went to the dentist {when}, {aside}.", "Just got back from the dentist, {aside}.",
                    "I had a dentist appointment {when}; {aside}."],
    "yoga_q": ["How many yoga classes did I attend?"],
    "yoga_pos": ["I went to a yoga class {when}, {aside}.", "Did a yoga class {when} and my back feels better.",
                 "I made it to yoga class {when}, {aside}."],
    "haircut_q": ["How many haircuts did I get?"],
    "haircut_pos": ["I got a haircut {when}, {aside}.", "Finally got my hair cut {when}, {aside}."],
    # ---- date_adopt
    "adopt_q": ["On what date did I adopt {pet}?"],
    "adopt_pos": ["We adopted {pet} {when}! A {breed} with way too much energy.",
                  "I adopted {pet} {when}, a little {breed} from the shelter."],
    "adopt_think": ["I'm thinking about adopting a dog, maybe a {breed}."],
    "adopt_shelter": ["We visited the shelter and met a {breed} puppy. Not decided yet."],
    "adopt_chewed": ["{pet} chewed through my charger cable. Classic."],
    "adopt_neighbor": ["My neighbor adopted a cat named {other} {when}."],
    "adopt_rel": ["My {rel} adopted a puppy called {other} {when}."],
    "adopt_settled": ["{pet} has been with us for a while now and finally sleeps through the night."],
    # ---- date_race
    "race_q": ["On what date did I run the {race}?"],
    "race_pos": ["I ran the {race} {when}! Finished in {finish}.", "Just ran the {race} {when}, {aside}."],
    "race_signup": ["I signed up for the {race}. No turning back now."],
    "race_training": ["Training for the {race} is going okay, long runs are getting easier."],
    "race_rel": ["My {rel} ran the {race} last year and wants to do it again."],
    "race_sore": ["Still sore thinking about the {race}. Never again (until next year)."],
    # ---- meet_friend
    "meet_q": ["How many times did I meet {friend} for {act}?"],
    "meet_pos": ["I met {friend} for {act} {when}, {aside}.", "I caught up with {friend} over {act} {when}, {aside}."],
    "meet_plan": ["I'm meeting {friend} for {act} next week."],
    "meet_cancel": ["I was supposed to meet {friend} for {act} {when} but {friend} cancelled."],
    "meet_rel": ["My {rel} met {friend} for {act} {when}."],
    # ---- relative_city
    "rel_q": ["Where does my {rel} live now?"],
    "rel_lives": ["My {rel} lives in {x}, a short flight away."],
    "rel_moved": ["My {rel} just moved to {x}, we helped with the boxes.", "My {rel} finally moved to {x} for work."],
    "rel_visit": ["My {rel} is visiting {x} next week."],
    "rel_maybe": ["My {rel} keeps talking about moving to {x} someday."],
    "rel_friend": ["My {rel}'s best friend moved to {x}."],
    "rel_grew": ["My {rel} grew up in {x}, so the accent is strong."],
    # ---- sums (held-out kind: only the "train" wording exists)
    "bike_q": ["How much did I spend on bike repairs in total?"],
    "bike_paid": ["Paid ${amt} at the bike shop for {item}.", "The bike shop charged me ${amt} for {item}, ouch.",
                  "Spent ${amt} on bike repairs this week ({item})."],
    "taxi_q": ["How much did I spend on taxis in total?"],
    "taxi_paid": ["Paid ${amt} for a taxi to {item}.", "The taxi to {item} cost me ${amt}.",
                  "Took a taxi to {item}, ${amt} with the tip."],
    "grocery_q": ["How much did I spend on groceries in total?"],
    "grocery_paid": ["Spent ${amt} on groceries at {item}.", "The grocery run at {item} came to ${amt}.",
                     "Paid ${amt} for groceries at {item}."],
    # ---- scroll.tasks.families_memory (benchmark categories; only the "train" wording exists)
    "manager_q": ["Who is my manager now?"],
    "manager_now": ["My manager is {x}, {aside}."],
    "manager_new": ["My new manager is {x}, {aside}.", "Reorg news: my new manager is {x}, starting Monday."],
    "born_q": ["Which city was I born in?"],
    "born_pos": ["I was born in {x}, {aside}."],
    "dentist_name_q": ["What is my dentist's name?"],
    "dentist_name_pos": ["My dentist is Dr. {x}, {aside}."],
    "married_q": ["In which city did I get married?"],
    "married_pos": ["We got married in {x} six years ago, {aside}.", "I got married in {x}, {aside}."],
    "university_q": ["Which city did I go to university in?"],
    "university_pos": ["I went to university in {x}, {aside}."],
    "lesson_q": ["On what date did I have my first {inst} lesson?"],
    "lesson_pos": ["I had my first {inst} lesson {when}, {aside}."],
    "holiday_q": ["Which holiday did I take first: {a} or {b}?"],
    "holiday_pos": ["I got back from my holiday in {x} {when}, {aside}."],
    "trip_q": ["How many days passed between my business trip to {a} and my business trip to {b}?"],
    "trip_pos": ["I flew back from my business trip to {x} {when}, {aside}."],
    "middle_name_q": ["What is my middle name?"],
    "middle_name_pos": ["My middle name is {x}, {aside}."],
    "grew_up_q": ["Which city did I grow up in?"],
    "grew_up_pos": ["I grew up in {x}, {aside}."],
    "first_pet_q": ["What was my first pet called?"],
    "first_pet_pos": ["My first pet was a {animal} called {x}, {aside}."],
    "first_job_q": ["Where was my first job?"],
    "first_job_pos": ["My first job was at {x}, {aside}."],
    "cuisine_q": ["What is my favourite cuisine?"],
    "cuisine_pos": ["My favourite cuisine is {x}, {aside}."],
    "author_q": ["Who is my favourite author?"],
    "author_pos": ["My favourite author is {x}, {aside}."],
    "destination_q": ["What is my dream destination?"],
    "destination_pos": ["My dream destination is {x}, {aside}."],
    "board_game_q": ["What is my favourite board game?"],
    "board_game_pos": ["My favourite board game is {x}, {aside}."],
    "friend_city_q": ["Where does my friend {f} live now?"],
}

PARAPHRASE: dict[str, list[str]] = {
    "city_q": ["What's my current home city?", "These days, what city am I based in?"],
    "city_live": ["Context: home for me is {x}, and I mostly work remotely.",
                  "Being based in {x}, I always end up checking the forecast."],
    "city_move": ["New address alert: my place is in {x} as of this week, boxes everywhere.",
                  "Settled into a flat in {x} at the start of the month, still learning the bus routes.",
                  "Home is officially {x} now, we signed the lease and carried everything up."],
    "city_restate": ["{x} has grown on me since I settled here, I adore the markets."],
    "city_neighbor": ["My neighbor took a job and packed up for {x}."],
    "city_maybe": ["Part of me daydreams about settling in {x} someday."],
    "city_visit": ["Conference trip to {x} coming up next week."],
    "city_past": ["College years were spent in {x}, feels like ages ago."],
    "city_friend": ["{f} relocated to {x} last month, funny coincidence."],
    "job_q": ["Who is my current employer?", "Where am I employed these days?"],
    "job_now": ["My days at {x} on the platform team are mostly meetings."],
    "job_start": ["Badge and laptop picked up, I'm officially on the payroll at {x}.",
                  "Onboarding at {x} kicked off this week, everyone seems nice."],
    "job_join": ["First week as a senior engineer at {x} is done, signed the offer last month."],
    "job_interview": ["Interviewed with {x}, though I doubt I'll accept."],
    "job_friend": ["{f} landed a role at {x}."],
    "job_recruiter": ["{x} keeps sending recruiters my way, I ignore them."],
    "job_rel": ["Years ago my {rel} was employed by {x}, small world."],
    "dentist_q": ["How many dental visits have I had?"],
    "dentist_pos": ["Dental checkup done {when}, {aside}.", "Sat in the dentist's chair {when}, {aside}."],
    "yoga_q": ["How many yoga sessions have I done?"],
    "yoga_pos": ["Rolled out my mat at the studio {when} for a yoga session, {aside}.",
                 "Yoga session at the studio {when}, {aside}."],
    "haircut_q": ["How many times have I been to the barber?"],
    "haircut_pos": ["Barber appointment {when}, {aside}.", "Had the barber trim everything {when}, {aside}."],
    "adopt_q": ["What day did {pet} come home with us?", "When did {pet} join the family?"],
    "adopt_pos": ["{pet} came home with us from the shelter {when}, a {breed} with way too much energy.",
                  "Brought {pet} home {when}, a little {breed} from the rescue."],
    "adopt_think": ["Been browsing shelter listings for a {breed}."],
    "adopt_neighbor": ["The neighbors brought home a cat, {other}, {when}."],
    "adopt_rel": ["A puppy named {other} moved in with my {rel} {when}."],
    "race_q": ["Which day was the {race} that I ran?"],
    "race_pos": ["Crossed the finish line at the {race} {when}, {finish} on the clock.",
                 "Finished the {race} {when}, {aside}."],
    "race_signup": ["Registration for the {race} is paid, no backing out."],
    "race_rel": ["Last year my {rel} did the {race} and wants another go."],
    "meet_q": ["How often did {friend} and I get together for {act}?"],
    "meet_pos": ["{friend} and I got together for {act} {when}, {aside}.",
                 "Spent a couple of hours with {friend}, {act} {when}, {aside}."],
    "meet_plan": ["Next week {friend} and I plan to do {act}."],
    "meet_cancel": ["{act} with {friend} {when} fell through, {friend} cancelled."],
    "meet_rel": ["My {rel} and {friend} went for {act} {when}."],
    "rel_q": ["What city is my {rel} based in these days?"],
    "rel_lives": ["My {rel} has a place in {x}, a short flight away."],
    "rel_moved": ["My {rel} packed up and resettled in {x}.", "Home for my {rel} is {x} now, new job and all."],
    "rel_visit": ["My {rel} has a trip to {x} planned for next week."],
    "rel_maybe": ["My {rel} dreams of relocating to {x} one day."],
    "rel_friend": ["The best friend of my {rel} resettled in {x}."],
}

WORDINGS: dict[str, dict[str, list[str]]] = {"train": TRAIN, "paraphrase": PARAPHRASE,
                                              "wide-train": WIDE_TRAIN, "wide-test": WIDE_TEST, "wide-dev": WIDE_DEV,
                                              "wide-dev2": WIDE_DEV2, "wide-dev3": WIDE_DEV3}
# what a split of each role may write with: test-role wordings never reach a train-role split
ROLES: dict[str, str] = {"train": "train", "paraphrase": "test", "wide-train": "train", "wide-test": "test",
                         "wide-dev": "train", "wide-dev2": "train", "wide-dev3": "train"}

# keys whose templates carry the answer (question + evidence): every variant defines them
EVIDENCE_KEYS = ["city_q", "city_move", "city_restate", "job_q", "job_start", "job_join", "dentist_q", "dentist_pos",
                 "yoga_q", "yoga_pos", "haircut_q", "haircut_pos", "adopt_q", "adopt_pos", "race_q", "race_pos",
                 "meet_q", "meet_pos", "rel_q", "rel_moved"]


def get_wording(name: str) -> dict[str, list[str]]:
    try:
        return WORDINGS[name]
    except KeyError:
        raise ValueError(f"unknown wording {name!r}; known: {sorted(WORDINGS)}") from None


def wording_role(name: str) -> str:
    """The role of wording `name`: "train" (any split may use it) or "test" (test-role splits only)."""
    get_wording(name)
    return ROLES[name]


def template_regex(template: str) -> re.Pattern:
    """A regex that finds any sentence written from `template` (slots match anything short)."""
    parts = re.split(r"\{\w+\}", template)
    return re.compile(r".{1,60}?".join(re.escape(p) for p in parts))
