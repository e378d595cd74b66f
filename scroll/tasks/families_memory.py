"""Task families for the benchmark's memory categories (LongMemEval / BEAM kinds of question).

Same contract as scroll.tasks.families (`plant(rng, dates, qid, g) -> (plants, task)`);
each question has a reference program (scroll.packs.generated.programs) and a checker
(scroll.tasks.check). Kinds (the table's categories, with `CATEGORIES` in families.py):

* recall: one fact stated once ("I was born in X"); other people's values, plans and
  almost-facts ("I almost went to university in Y") are near misses.
* knowledge_update (update_manager): the value changes; the latest statement wins.
* temporal: a first time (date_lesson, kind `date`), which of two holidays came first
  (holiday_order) and how many days passed between two business trips (trip_gap); the
  dates come from the sessions' dates and the when-word (yesterday = the day before).
* contradiction: the history states two different values of one fact without saying it
  changed ("My middle name is A" ... "My middle name is B"); the right answer names BOTH
  (value_type "set"), the way BEAM's contradiction-resolution probes expect the conflict
  to be surfaced rather than settled.
* abstention: the question's subject occurs in the history, but never with what is asked
  (a godmother who visits and dreams of moving, a neighbour's cat, a race signed up for and
  cancelled); right answers say the history does not say (value_type "abstain"). Its
  subjects come from lists no other family uses, so no other task can answer them by accident.
* preference: a stated favourite; other people's favourites, dislikes and things tried
  once are near misses.

Fixed value lists (cuisines, authors, board games, instruments, the abstention subjects)
are not entity-pool entries: they are not split by role (like the count families'
activities), so use these families in benchmark task sets, not in train/test splits.
"""
from __future__ import annotations

import datetime as dt
import random

from .families import WHEN_DONE, Gen, _p, _sessions, _task

ASIDES = ["it comes up more than you'd think", "funny how that works", "long story", "I think about it a lot",
          "just so you know", "people are always surprised"]
CUISINES = ("Thai", "Ethiopian", "Georgian", "Peruvian", "Korean", "Lebanese", "Vietnamese", "Sichuan")
AUTHORS = ("Ursula Le Guin", "Octavia Butler", "Italo Calvino", "Terry Pratchett", "Toni Morrison",
           "Kazuo Ishiguro", "Zadie Smith", "Haruki Murakami")
BOARD_GAMES = ("Catan", "Carcassonne", "Azul", "Wingspan", "Pandemic", "Codenames", "Dominion", "Splendor")
INSTRUMENTS = ("piano", "guitar", "cello", "violin", "drums", "saxophone")
ANIMALS = ("cat", "hamster", "rabbit", "goldfish", "parrot", "dog")
ABSENT_RELATIVES = ("godmother", "stepbrother", "grandpa", "stepsister", "godfather")
ABSENT_PETS = ("Juniper", "Maple", "Ollie", "Pumpkin", "Scout", "Truffle")
ABSENT_FRIENDS = ("Priya", "Tomasz", "Keiko", "Alvaro", "Nadia", "Soren")


def _values(rng: random.Random, g: Gen, source, k: int) -> list[str]:
    """k distinct values: an entity-pool field name (recorded as used) or a fixed tuple."""
    return g.sample(rng, source, k) if isinstance(source, str) else rng.sample(list(source), k)


def _single(name: str, kind: str, key: str, source, near: list[str], ack: str):
    """A fact stated once (restated with the same value in a later session half the time);
    `near` templates ({y} another value, {rel} a relative, {f} a friend, {when}) are near misses."""

    def family(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
        x, *others = _values(rng, g, source, 1 + len(near))
        s = _sessions(rng, len(dates), 2 + len(near))
        plants = [_p(rng, s[0], g.say(rng, f"{key}_pos", x=x, aside=rng.choice(ASIDES)), ack.format(x=x), True)]
        for i, (tpl, y) in enumerate(zip(near, others)):
            text = tpl.format(y=y, rel=g.choice(rng, "relatives"), f=g.choice(rng, "friends"),
                              when=rng.choice(WHEN_DONE))
            plants.append(_p(rng, s[2 + i], text, "Noted."))
        if rng.random() < 0.5:
            plants.append(_p(rng, s[1], g.say(rng, f"{key}_pos", x=x, aside=rng.choice(ASIDES)), "You mentioned.", True))
        return plants, _task(qid, name, g.say(rng, f"{key}_q"), x, kind, x, "entity", others, {"value_source": key})

    family.__name__ = name
    return family


def update_manager(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    a, b, c, d, e = g.sample(rng, "friends", 5)
    s = _sessions(rng, len(dates), 6)
    rng.shuffle(s[2:])
    aside = lambda: rng.choice(["we get along fine", "very organised", "lots of one-on-ones", "new to the company"])  # noqa: E731
    plants = [
        _p(rng, s[0], g.say(rng, "manager_now", x=a, aside=aside()), "Good to have a decent manager."),
        _p(rng, s[1], g.say(rng, "manager_new", x=b, aside=aside()), f"Hope {b} works out!", True),
        _p(rng, s[2], f"My {g.choice(rng, 'relatives')}'s manager is {c}, apparently very strict.", "Ha, noted."),
        _p(rng, s[3], f"{d} from the other team might become my manager next year.", "We'll see."),
        _p(rng, s[4], f"My friend {g.choice(rng, 'friends', exclude=(a, b, c, d))}'s new manager is {e}.", "Small world."),
    ]
    current, hist = b, [a, b]
    later = [x for x in s[2:] if x > s[1]]
    if later and rng.random() < 0.5:  # a second change, later than the first
        j = g.choice(rng, "friends", exclude=(a, b, c, d, e))
        plants[1].evidence = False
        plants.append(_p(rng, later[-1], g.say(rng, "manager_new", x=j, aside=aside()), "Another change!", True))
        current, hist = j, [a, b, j]
    return plants, _task(qid, "update_manager", g.say(rng, "manager_q"), current, "knowledge_update", current,
                         "entity", [a, b, c, d, e], {"history": hist})


def date_lesson(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    inst = rng.choice(INSTRUMENTS)
    s = _sessions(rng, len(dates), 5, 0.1, 0.9)
    when = rng.choice(WHEN_DONE)
    day = dates[s[1]] - dt.timedelta(days=1 if when == "yesterday" else 0)
    aside = lambda: rng.choice(["my fingers hurt", "the teacher is patient", "harder than it looks"])  # noqa: E731
    plants = [
        _p(rng, s[0], f"I'm thinking about taking {inst} lessons this year.", "Go for it!"),
        _p(rng, s[1], g.say(rng, "lesson_pos", inst=inst, when=when, aside=aside()), "A great start!", True),
        _p(rng, s[2], f"I had my second {inst} lesson {rng.choice(WHEN_DONE)}, {aside()}.", "Progress!"),
        _p(rng, s[3], f"My {g.choice(rng, 'relatives')} had a {inst} lesson {rng.choice(WHEN_DONE)} too.", "Fun."),
        _p(rng, rng.choice(s[2:]), f"Practising {inst} every evening now.", "Consistency pays off."),
    ]
    return plants, _task(qid, "date_lesson", g.say(rng, "lesson_q", inst=inst), day.isoformat(), "date",
                         day.isoformat(), "date", [], {"instrument": inst, "said": when,
                                                        "session_date": dates[s[1]].isoformat()})


def _two_dated(rng, dates, n_extra: int):
    """Two sessions at least 3 days apart (no when-word can make them tie) and n_extra others."""
    for _ in range(100):
        s = _sessions(rng, len(dates), 2 + n_extra, 0.05, 0.95)
        i, j = sorted(rng.sample(s, 2))
        if (dates[j] - dates[i]).days >= 3:
            return i, j, [x for x in s if x not in (i, j)]
    raise ValueError("history too short for two sessions 3 days apart")


def _dated(rng, dates, session) -> tuple[str, dt.date]:
    when = rng.choice(WHEN_DONE)
    return when, dates[session] - dt.timedelta(days=1 if when == "yesterday" else 0)


def holiday_order(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    a, b, c, d = g.sample(rng, "cities", 4)
    i, j, rest = _two_dated(rng, dates, 3)
    aside = lambda: rng.choice(["already planning the next one", "the food was incredible", "too short"])  # noqa: E731
    plants = [
        _p(rng, i, g.say(rng, "holiday_pos", x=a, when=_dated(rng, dates, i)[0], aside=aside()), "Welcome back!", True),
        _p(rng, j, g.say(rng, "holiday_pos", x=b, when=_dated(rng, dates, j)[0], aside=aside()), "Welcome back!", True),
        _p(rng, rest[0], f"I'm planning a holiday in {c} in the spring.", "Sounds lovely."),
        _p(rng, rest[1], f"My {g.choice(rng, 'relatives')} got back from a holiday in {d} {rng.choice(WHEN_DONE)}.",
           "Nice for them."),
        _p(rng, rest[2], f"I'd happily go back to {rng.choice([a, b])} someday.", "Understandable."),
    ]
    first, second = (a, b) if rng.random() < 0.5 else (b, a)
    return plants, _task(qid, "holiday_order", g.say(rng, "holiday_q", a=first, b=second), a, "temporal", a,
                         "entity", [b, c, d], {"order": [a, b]})


def trip_gap(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    a, b, c, d = g.sample(rng, "cities", 4)
    i, j, rest = _two_dated(rng, dates, 2)
    (wa, da), (wb, db) = _dated(rng, dates, i), _dated(rng, dates, j)
    aside = lambda: rng.choice(["jet lag is brutal", "the client meeting went well", "too many meetings"])  # noqa: E731
    plants = [
        _p(rng, i, g.say(rng, "trip_pos", x=a, when=wa, aside=aside()), "Rest up.", True),
        _p(rng, j, g.say(rng, "trip_pos", x=b, when=wb, aside=aside()), "Rest up.", True),
        _p(rng, rest[0], f"My {g.choice(rng, 'relatives')} flew back from a business trip to {c} "
                         f"{rng.choice(WHEN_DONE)}.", "Busy family."),
        _p(rng, rest[1], f"I have another business trip to {d} coming up next month.", "Pack light."),
    ]
    days = (db - da).days
    first, second = (a, b) if rng.random() < 0.5 else (b, a)
    return plants, _task(qid, "trip_gap", g.say(rng, "trip_q", a=first, b=second), str(days), "temporal", days,
                         "number", [], {"trips": [[a, da.isoformat()], [b, db.isoformat()]]})


def _conflict(name: str, key: str, source, near: list[str], **slots):
    """The same fact stated with two different values in two sessions (no "changed" cue)."""

    def family(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
        x, y, *others = _values(rng, g, source, 2 + len(near))
        s = _sessions(rng, len(dates), 2 + len(near))
        i, j = sorted(rng.sample(s, 2))
        rest = [v for v in s if v not in (i, j)]
        fill = {k: rng.choice(v) for k, v in slots.items()}
        plants = [_p(rng, i, g.say(rng, f"{key}_pos", x=x, aside=rng.choice(ASIDES), **fill), "Good to know.", True),
                  _p(rng, j, g.say(rng, f"{key}_pos", x=y, aside=rng.choice(ASIDES), **fill), "Noted.", True)]
        for tpl, (v, z) in zip(near, zip(rest, others)):
            plants.append(_p(rng, v, tpl.format(z=z, rel=g.choice(rng, "relatives"), **fill), "Interesting."))
        return plants, _task(qid, name, g.say(rng, f"{key}_q"), f"{x}; {y}", "contradiction", [x, y], "set",
                             others, {"values": [x, y]})

    family.__name__ = name
    return family


def _absent(name: str, question, plant_texts: list[str], subjects: tuple[str, ...], cities: int):
    """A question about `subject` that the history never answers; `plant_texts` mention the
    subject ({s}) with near misses ({c0}, {c1}, ... cities; {rel}; {when})."""

    def family(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
        subject = rng.choice(subjects)
        cs = g.sample(rng, "cities", cities)
        s = _sessions(rng, len(dates), len(plant_texts))
        slots = {f"c{k}": c for k, c in enumerate(cs)}
        plants = [_p(rng, v, tpl.format(s=subject, rel=g.choice(rng, "relatives"), when=rng.choice(WHEN_DONE),
                                        **slots), "Noted.")
                  for v, tpl in zip(s, plant_texts)]
        q = question(rng, g, subject, cs)
        wrong = [c for c in cs if c not in q]  # a city the question itself names may be repeated
        return plants, _task(qid, name, q, "unknown", "abstention", "unknown", "abstain", wrong, {"subject": subject})

    family.__name__ = name
    return family


MEMORY_FAMILIES = {
    "update_manager": update_manager,
    "recall_born": _single("recall_born", "recall", "born", "cities", [
        "My {rel} was born in {y}.", "My friend {f} was born in {y}, we joke about it.",
        "I've never been to {y}, though everyone says I'd love it."], "Good to know you're from {x}."),
    "recall_dentist": _single("recall_dentist", "recall", "dentist_name", "friends", [
        "My {rel}'s dentist is Dr. {y}.", "A friend recommended a dentist, Dr. {y}, but I'm staying put.",
        "Dr. {y} is the dentist my coworkers go to."], "Dr. {x}, noted."),
    "recall_married": _single("recall_married", "recall", "married", "cities", [
        "My {rel} got married in {y} last summer.", "My friend {f} is getting married in {y} next year.",
        "We almost got married in {y} instead."], "{x} sounds like a lovely place for it."),
    "recall_university": _single("recall_university", "recall", "university", "cities", [
        "My {rel} went to university in {y}.", "I almost went to university in {y}.",
        "My friend {f} teaches at a university in {y}."], "{x}, nice."),
    "pref_cuisine": _single("pref_cuisine", "preference", "cuisine", CUISINES, [
        "My {rel}'s favourite cuisine is {y}.", "I tried {y} food {when} and honestly didn't love it.",
        "My friend {f} can't stop talking about {y} food."], "{x} food is great."),
    "pref_author": _single("pref_author", "preference", "author", AUTHORS, [
        "My {rel}'s favourite author is {y}.", "I couldn't get into {y}, tried twice.",
        "Book club picked {y} this month, not really my taste."], "{x} is a great pick."),
    "pref_destination": _single("pref_destination", "preference", "destination", "cities", [
        "My {rel}'s dream destination is {y}.", "Everyone keeps telling me to visit {y}, but it's not for me.",
        "I've been to {y} twice, once would have been enough."], "{x} would be amazing."),
    "pref_board_game": _single("pref_board_game", "preference", "board_game", BOARD_GAMES, [
        "My {rel}'s favourite board game is {y}.", "We played {y} {when} and I found it boring.",
        "I keep meaning to try {y} someday."], "{x} is a classic."),
    "date_lesson": date_lesson,
    "holiday_order": holiday_order,
    "trip_gap": trip_gap,
    "conflict_middle_name": _conflict("conflict_middle_name", "middle_name", "friends", [
        "My {rel}'s middle name is {z}.", "If we ever have a kid, {z} would be a nice middle name."]),
    "conflict_grew_up": _conflict("conflict_grew_up", "grew_up", "cities", [
        "My {rel} grew up in {z}.", "I spent one summer in {z} as a teenager."]),
    "conflict_first_pet": _conflict("conflict_first_pet", "first_pet", "pets", [
        "My {rel}'s first pet was a dog called {z}.", "I almost named a kitten {z} once."], animal=ANIMALS),
    "conflict_first_job": _conflict("conflict_first_job", "first_job", "companies", [
        "My {rel}'s first job was at {z}.", "I almost took a job at {z} after school."]),
    "abs_relative": _absent("abs_relative", lambda rng, g, s, cs: g.say(rng, "rel_q", rel=s), [
        "My {s} is visiting {c0} next week.", "My {s} keeps talking about moving to {c1} someday.",
        "My {s}'s best friend moved to {c2}."], ABSENT_RELATIVES, 3),
    "abs_friend": _absent("abs_friend", lambda rng, g, s, cs: g.say(rng, "friend_city_q", f=s), [
        "My friend {s} is visiting {c0} next week.", "{s} keeps talking about moving to {c1} someday.",
        "{s}'s sister moved to {c2} last year."], ABSENT_FRIENDS, 3),
    "abs_adopt": _absent("abs_adopt", lambda rng, g, s, cs: g.say(rng, "adopt_q", pet=s), [
        "My neighbor adopted a cat named {s} {when}.", "{s}, my neighbor's cat, keeps sitting on our windowsill.",
        "We might adopt a dog someday, but not yet."], ABSENT_PETS, 0),
    "abs_race": _absent("abs_race", lambda rng, g, s, cs: g.say(rng, "race_q", race=f"{cs[0]} {s}"), [
        "I signed up for the {c0} {s}. No turning back now.", "Training for the {c0} {s} is going okay.",
        "The {c0} {s} got cancelled because of the storm, so annoying.", "My {rel} ran the {c0} {s} last year."],
        ("10K", "Trail Run", "Night Run"), 1),
}

MEMORY_KINDS = {"update_manager": "knowledge_update", "date_lesson": "date", "holiday_order": "temporal",
                "trip_gap": "temporal",
                **{n: "recall" for n in MEMORY_FAMILIES if n.startswith("recall_")},
                **{n: "preference" for n in MEMORY_FAMILIES if n.startswith("pref_")},
                **{n: "contradiction" for n in MEMORY_FAMILIES if n.startswith("conflict_")},
                **{n: "abstention" for n in MEMORY_FAMILIES if n.startswith("abs_")}}
