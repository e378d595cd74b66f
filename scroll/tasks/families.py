"""Task families: each plants facts (and near-miss distractors) into chosen sessions and
asks one question whose answer needs the exact old details.

A family is `plant(rng, dates, qid) -> (plants, task)`: `dates[i]` is session i's date,
each `Plant` is one user turn (the fact, wrapped in small talk) plus the assistant's
reply, inserted into session `session`; `evidence=True` marks the turns that carry the
answer. Families:

* update_city / update_employer (knowledge_update): the value changes over time; the
  question asks for the current one; older values, other people's moves and plans are
  distractors.
* count_<activity> (count): the activity happens in k sessions; cancelled, planned and
  other people's visits are near misses.
* date_adopt / date_race (date): the event happens in one session ("today" or
  "yesterday", so the date may be the session's date minus one); plans and later mentions
  are distractors.
* sum_bike (sum): amounts paid over several sessions; quotes, other people's spending
  and hypothetical prices are distractors.
"""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from .task import Task

CITIES = ["Lisbon", "Porto", "Valencia", "Seville", "Denver", "Portland", "Austin", "Chicago",
          "Toronto", "Montreal", "Melbourne", "Edinburgh", "Dublin", "Vienna", "Munich", "Zurich",
          "Copenhagen", "Oslo", "Helsinki", "Prague", "Krakow", "Boston", "Seattle", "Atlanta"]
COMPANIES = ["Northwind Analytics", "Brightline Robotics", "Cobalt Health", "Tidewater Energy",
             "Juniper Logistics", "Halcyon Games", "Redwood Insurance", "Meridian Foods",
             "Lumen Biotech", "Quarry Software", "Saltmarsh Media", "Orchard Payments"]
PETS = ["Rocket", "Biscuit", "Mochi", "Pepper", "Juniper", "Waffles", "Ziggy", "Noodle", "Pickle", "Sprout"]
FRIENDS = ["Maya", "Leo", "Hannah", "Omar", "Clara", "Diego", "Ines", "Jonas"]
RELATIVES = ["sister", "brother", "mom", "dad", "cousin", "son", "daughter"]
BREEDS = ["beagle mix", "border collie", "terrier mix", "greyhound", "lab mix", "corgi", "spaniel"]
ASIDES = ["legs are toast", "the crowd was amazing", "it went better than I feared", "hot day for it"]
WHEN_DONE = ["today", "this morning", "earlier today", "yesterday"]


@dataclass
class Plant:
    session: int
    user: str
    assistant: str
    evidence: bool = False


def _sessions(rng: random.Random, n: int, k: int, lo: float = 0.03, hi: float = 0.97) -> list[int]:
    """k distinct sorted session indices spread over [lo, hi) of the history."""
    a, b = int(n * lo), max(int(n * lo) + k, int(n * hi))
    return sorted(rng.sample(range(a, min(b, n)), k))


def _wrap(rng: random.Random, fact: str) -> str:
    pre = rng.choice(["", "Morning! ", "Hey. ", "Quick one before we start: ", "Random update: ", "Oh, and: "])
    post = rng.choice(["", " Anyway.", " Anyway, back to the usual stuff.", " Life is busy.",
                       " Not much else new."])
    return f"{pre}{fact}{post}".strip()


def _ack(rng: random.Random, text: str) -> str:
    return text + " " + rng.choice(["How are you feeling about it?", "Let me know if I can help with anything.",
                                    "Sounds like a lot going on.", "Want to pick up where we left off?"])


def _task(qid, family, question, answer, kind, value, value_type, distractors, params) -> Task:
    return Task(question_id=qid, question=question, answer=answer, kind=kind, value=value,
                value_type=value_type, distractors=sorted(set(distractors) - {value}), family=family,
                params=params)


# ---------------------------------------------------------------- knowledge updates
def update_city(rng: random.Random, dates: list[dt.date], qid: str):
    n = len(dates)
    a, b, c, d, e, f, g = rng.sample(CITIES, 7)
    s = _sessions(rng, n, 9)
    rng.shuffle(s[3:])
    plants = [
        Plant(s[0], _wrap(rng, rng.choice([f"For context, I live in {a} and work mostly from home.",
                                            f"I live in {a}, so the weather is always a factor for me."])),
              _ack(rng, f"Good to know you're in {a}."), evidence=False),
        Plant(s[1], _wrap(rng, rng.choice([f"Big news: I just moved to {b}! Still surrounded by boxes.",
                                            f"We finally moved to {b} last weekend, the new apartment is tiny but bright."])),
              _ack(rng, f"Congrats on the move to {b}!"), evidence=False),
        Plant(s[2], _wrap(rng, rng.choice([f"Quick update, I relocated to {c} at the start of the month.",
                                            f"I moved to {c} a few days ago and I'm still figuring out the buses."])),
              _ack(rng, f"Another move! {c} should be a nice change."), evidence=True),
    ]
    # distractors (anywhere after the first statement): other people, plans, visits, the past
    plants += [
        Plant(s[3], _wrap(rng, f"My {rng.choice(RELATIVES)} just moved to {d} for a new job."),
              _ack(rng, f"{d} is a big change for them.")),
        Plant(s[4], _wrap(rng, f"Sometimes I think I might move to {e} one day, but not anytime soon."),
              _ack(rng, f"{e} has a lot going for it.")),
        Plant(s[5], _wrap(rng, f"I'm visiting {f} next week for a conference.")
              , _ack(rng, f"Enjoy {f}!")),
        Plant(s[6], _wrap(rng, f"I lived in {g} back in college, feels like ages ago."),
              _ack(rng, f"{g} must have been fun as a student.")),
        Plant(s[7], _wrap(rng, f"My friend {rng.choice(FRIENDS)} moved to {b} last month, funny coincidence."),
              _ack(rng, "Small world.")),
    ]
    # s[8]: a restatement of the current value after the move (also evidence) if it is later
    if s[8] > s[2]:
        plants.append(Plant(s[8], _wrap(rng, f"I've been living in {c} for a while now and I love the markets."),
                            _ack(rng, f"{c} suits you."), evidence=True))
    task = _task(qid, "update_city", "Which city do I live in now?", c, "knowledge_update", c, "entity",
                 [a, b, d, e, f, g], {"history": [a, b, c]})
    return plants, task


def update_employer(rng: random.Random, dates: list[dt.date], qid: str):
    n = len(dates)
    a, b, c, d, e, f = rng.sample(COMPANIES, 6)
    s = _sessions(rng, n, 7)
    rng.shuffle(s[2:])
    plants = [
        Plant(s[0], _wrap(rng, f"I work at {a} on the platform team, so my days are mostly meetings."),
              _ack(rng, f"Platform work at {a} sounds busy.")),
        Plant(s[1], _wrap(rng, rng.choice([f"Today was my first day at {b}! Everyone seems nice.",
                                            f"I started my new job at {b} this week."])),
              _ack(rng, f"Congratulations on joining {b}!"), evidence=True),
        Plant(s[2], _wrap(rng, f"I had an interview at {c} but I don't think I'll take it."),
              _ack(rng, "Interviews are tiring even when they go well.")),
        Plant(s[3], _wrap(rng, f"My friend {rng.choice(FRIENDS)} got a job at {d}."),
              _ack(rng, "Good for them!")),
        Plant(s[4], _wrap(rng, f"A recruiter from {e} reached out again, I ignored it."),
              _ack(rng, "Fair enough.")),
        Plant(s[5], _wrap(rng, f"My {rng.choice(RELATIVES)} used to work at {f}, small world."),
              _ack(rng, "Funny coincidence.")),
    ]
    current, hist = b, [a, b]
    if rng.random() < 0.7:  # a second change, later than the first
        later = [x for x in s[2:] if x > s[1]]
        if later:
            at = later[-1]
            g = rng.choice([x for x in COMPANIES if x not in (a, b, c, d, e, f)])
            plants[1].evidence = False
            plants.append(Plant(at, _wrap(rng, f"I just joined {g} as a senior engineer, first week done."),
                                _ack(rng, f"{g}, nice!"), evidence=True))
            current, hist = g, [a, b, g]
    task = _task(qid, "update_employer", "Which company do I work for now?", current, "knowledge_update",
                 current, "entity", [a, b, c, d, e, f], {"history": hist})
    return plants, task


# ---------------------------------------------------------------- counts over sessions
ACTIVITIES = {
    "dentist": {
        "question": "How many times did I go to the dentist?",
        "pos": ["I went to the dentist {when}, {aside}.", "Just got back from the dentist, {aside}.",
                "I had a dentist appointment {when}; {aside}."],
        "neg": ["I need to book a dentist appointment soon.", "I cancelled my dentist appointment {when} because of work.",
                "My {rel} went to the dentist {when} and it was fine.",
                "I should really go to the dentist, my tooth has been sensitive."],
        "ack": "Glad that's taken care of.",
        "asides": ["nothing dramatic", "all fine", "the waiting room was packed", "no cavities"],
    },
    "yoga": {
        "question": "How many yoga classes did I attend?",
        "pos": ["I went to a yoga class {when}, {aside}.", "Did a yoga class {when} and my back feels better.",
                "I made it to yoga class {when}, {aside}."],
        "neg": ["I skipped yoga class {when}, too tired.", "I'm thinking of signing up for a yoga class.",
                "My {rel} went to a yoga class {when} and loved it.", "The yoga class was cancelled {when}."],
        "ack": "Nice, consistency is the hard part.",
        "asides": ["the teacher was great", "the room was packed", "my hamstrings hate me", "very calm"],
    },
    "haircut": {
        "question": "How many haircuts did I get?",
        "pos": ["I got a haircut {when}, {aside}.", "Finally got my hair cut {when}, {aside}."],
        "neg": ["I need a haircut badly.", "My {rel} got a haircut {when}.",
                "I was going to get a haircut {when} but the place was closed."],
        "ack": "A fresh haircut always helps.",
        "asides": ["shorter than I wanted", "feels so much lighter", "new barber, good one"],
    },
}


def _count(activity: str):
    spec = ACTIVITIES[activity]

    def family(rng: random.Random, dates: list[dt.date], qid: str):
        k = rng.randint(3, 7)
        n_neg = rng.randint(3, 5)
        s = _sessions(rng, len(dates), k + n_neg)
        rng.shuffle(s)
        pos_s, neg_s = sorted(s[:k]), s[k:]
        plants = []
        for i in pos_s:
            fact = rng.choice(spec["pos"]).format(when=rng.choice(WHEN_DONE), aside=rng.choice(spec["asides"]),
                                                 rel=rng.choice(RELATIVES))
            plants.append(Plant(i, _wrap(rng, fact), _ack(rng, spec["ack"]), evidence=True))
        negs = list(spec["neg"])
        rng.shuffle(negs)
        for j, i in enumerate(neg_s):
            fact = negs[j % len(negs)].format(when=rng.choice(WHEN_DONE), aside=rng.choice(spec["asides"]),
                                              rel=rng.choice(RELATIVES))
            plants.append(Plant(i, _wrap(rng, fact), _ack(rng, "Noted.")))
        task = _task(qid, f"count_{activity}", spec["question"], str(k), "count", k, "number", [],
                     {"activity": activity, "near_misses": n_neg})
        return plants, task

    family.__name__ = f"count_{activity}"
    return family


# ---------------------------------------------------------------- dates
def date_adopt(rng: random.Random, dates: list[dt.date], qid: str):
    pet, other = rng.sample(PETS, 2)
    breed = rng.choice(BREEDS)
    s = _sessions(rng, len(dates), 6, 0.1, 0.9)
    at = s[2]
    when = rng.choice(WHEN_DONE)
    day = dates[at] - dt.timedelta(days=1 if when == "yesterday" else 0)
    plants = [
        Plant(s[0], _wrap(rng, f"I'm thinking about adopting a dog, maybe a {breed}."), _ack(rng, "Exciting!")),
        Plant(s[1], _wrap(rng, f"We visited the shelter and met a {breed} puppy. Not decided yet."),
              _ack(rng, "Take your time.")),
        Plant(at, _wrap(rng, rng.choice([f"We adopted {pet} {when}! A {breed} with way too much energy.",
                                         f"I adopted {pet} {when}, a little {breed} from the shelter."])),
              _ack(rng, f"Welcome home, {pet}!"), evidence=True),
        Plant(s[3], _wrap(rng, f"{pet} chewed through my charger cable. Classic."), _ack(rng, "Puppies!")),
        Plant(s[4], _wrap(rng, f"My neighbor adopted a cat named {other} {rng.choice(WHEN_DONE)}."),
              _ack(rng, "Cute name.")),
        Plant(s[5], _wrap(rng, f"{pet} has been with us for a while now and finally sleeps through the night."),
              _ack(rng, f"Good {pet}.")),
    ]
    task = _task(qid, "date_adopt", f"On what date did I adopt {pet}?", day.isoformat(), "date",
                 day.isoformat(), "date", [], {"pet": pet, "said": when, "session_date": dates[at].isoformat()})
    return plants, task


def date_race(rng: random.Random, dates: list[dt.date], qid: str):
    city = rng.choice(CITIES)
    race = f"{city} Half Marathon"
    s = _sessions(rng, len(dates), 5, 0.1, 0.95)
    at = s[2]
    when = rng.choice(WHEN_DONE)
    day = dates[at] - dt.timedelta(days=1 if when == "yesterday" else 0)
    finish = f"{rng.randint(1, 2)}:{rng.randint(0, 59):02d}"
    plants = [
        Plant(s[0], _wrap(rng, f"I signed up for the {race}. No turning back now."), _ack(rng, "You've got this.")),
        Plant(s[1], _wrap(rng, f"Training for the {race} is going okay, long runs are getting easier."),
              _ack(rng, "Steady progress.")),
        Plant(at, _wrap(rng, rng.choice([f"I ran the {race} {when}! Finished in {finish}.",
                                         f"Just ran the {race} {when}, {rng.choice(ASIDES)}."])),
              _ack(rng, "Congratulations, that's a big milestone!"), evidence=True),
        Plant(s[3], _wrap(rng, f"My {rng.choice(RELATIVES)} ran the {race} last year and wants to do it again."),
              _ack(rng, "Maybe you can run it together.")),
        Plant(s[4], _wrap(rng, f"Still sore thinking about the {race}. Never again (until next year)."),
              _ack(rng, "Ha, the classic runner's promise.")),
    ]
    task = _task(qid, "date_race", f"On what date did I run the {race}?", day.isoformat(), "date",
                 day.isoformat(), "date", [], {"race": race, "said": when, "session_date": dates[at].isoformat()})
    return plants, task


# ---------------------------------------------------------------- sums
REPAIRS = ["a new chain and cassette", "new brake pads", "a wheel truing", "a full tune-up", "a new tube and tire",
           "a derailleur adjustment"]


def sum_bike(rng: random.Random, dates: list[dt.date], qid: str):
    k = rng.randint(3, 6)
    amounts = [rng.randint(12, 260) for _ in range(k)]
    s = _sessions(rng, len(dates), k + 4)
    rng.shuffle(s)
    pos_s, neg_s = sorted(s[:k]), s[k:]
    plants = []
    for i, amt in zip(pos_s, amounts):
        rep = rng.choice(REPAIRS)
        fact = rng.choice([f"Paid ${amt} at the bike shop for {rep}.",
                           f"The bike shop charged me ${amt} for {rep}, ouch.",
                           f"Spent ${amt} on bike repairs this week ({rep})."])
        plants.append(Plant(i, _wrap(rng, fact), _ack(rng, "Bikes are never free, are they?"), evidence=True))
    negs = [f"The bike shop quoted me ${rng.randint(150, 400)} for {rng.choice(REPAIRS)} but I said no.",
            f"My {rng.choice(RELATIVES)} spent ${rng.randint(100, 900)} on his bike this year.",
            f"A new bike like the one I want would cost ${rng.randint(900, 3000)}.",
            f"I might need to spend ${rng.randint(40, 200)} on bike stuff next month."]
    for i, text in zip(neg_s, negs):
        plants.append(Plant(i, _wrap(rng, text), _ack(rng, "Worth thinking about.")))
    total = sum(amounts)
    task = _task(qid, "sum_bike", "How much did I spend on bike repairs in total?", f"${total}", "sum",
                 total, "number", [], {"amounts": amounts})
    return plants, task


FAMILIES = {
    "update_city": update_city,
    "update_employer": update_employer,
    "count_dentist": _count("dentist"),
    "count_yoga": _count("yoga"),
    "count_haircut": _count("haircut"),
    "date_adopt": date_adopt,
    "date_race": date_race,
    "sum_bike": sum_bike,
}
DEFAULT_FAMILIES = ["update_city", "update_employer", "count_dentist", "count_yoga", "date_adopt",
                    "date_race", "sum_bike"]
