"""Task families: each plants facts (and near-miss distractors) into chosen sessions and
asks one question whose answer needs the exact old details.

A family is `plant(rng, dates, qid, g) -> (plants, task)`: `dates[i]` is session i's date,
`g` (a `Gen`) is the entity pool (scroll.tasks.pools) and the wording variant
(scroll.tasks.wordings) it writes with; each `Plant` is one user turn (the fact, wrapped in
small talk) plus the assistant's reply, inserted into session `session`; `evidence=True`
marks the turns that carry the answer. Every entity a family draws from the pool is
recorded (`Gen.used` -> `task.params["entities"]`) for the leakage checks. Families:

* update_city / update_employer (knowledge_update): the value changes over time; the
  question asks for the current one; older values, other people's moves and plans are
  distractors.
* relative_city (knowledge_update): "Where does my <relative> live now?": the relative
  moves; other relatives' moves, visits, plans and friends are near misses, so the
  program must carry the relative from the question into its search and pattern.
* count_<activity> (count): the activity happens in k sessions; cancelled, planned and
  other people's visits are near misses.
* meet_friend (count): "How many times did I meet <friend> for <activity>?": meetings with
  other friends, for other activities, plans, cancellations and relatives' meetings are
  near misses (the program must carry both words).
* date_adopt / date_race (date): the event happens in one session ("today" or
  "yesterday", so the date may be the session's date minus one); plans, other people's
  adoptions (other pet names) and later mentions are distractors.
* sum_bike / sum_taxi / sum_groceries (sum): amounts paid over several sessions; quotes,
  other people's spending and hypothetical prices are distractors.
"""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from .grammars import expand
from .pools import ALL, Pool
from .task import Task
from .wordings import TRAIN, get_wording

ASIDES = ["legs are toast", "the crowd was amazing", "it went better than I feared", "hot day for it"]
WHEN_DONE = ["today", "this morning", "earlier today", "yesterday"]


@dataclass
class Plant:
    session: int
    user: str
    assistant: str
    evidence: bool = False


@dataclass
class Gen:
    """What a family writes with: the entity pool, the wording variant, the entities used."""
    pool: Pool = ALL
    wording: str = "train"
    used: set = field(default_factory=set)

    def sample(self, rng: random.Random, kind: str, k: int, exclude=()) -> list[str]:
        items = [x for x in getattr(self.pool, kind) if x not in set(exclude)]
        out = rng.sample(items, k)
        self.used.update(out)
        return out

    def choice(self, rng: random.Random, kind: str, exclude=()) -> str:
        return self.sample(rng, kind, 1, exclude)[0]

    def say(self, rng: random.Random, key: str, **slots) -> str:
        templates = get_wording(self.wording).get(key) or TRAIN[key]
        template = rng.choice(templates)
        if "[" in template:  # a grammar frame (scroll.tasks.grammars): its [a|b] groups drawn with the same rng
            template = expand(template, rng)
        return template.format(**slots)


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


def _p(rng, session, fact, ack, evidence=False) -> Plant:
    return Plant(session, _wrap(rng, fact), _ack(rng, ack), evidence=evidence)


def _task(qid, family, question, answer, kind, value, value_type, distractors, params) -> Task:
    return Task(question_id=qid, question=question, answer=answer, kind=kind, value=value,
                value_type=value_type, distractors=sorted(set(distractors) - set(value if isinstance(value, list) else [value])), family=family,
                params=params)


# ---------------------------------------------------------------- knowledge updates
def update_city(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    n = len(dates)
    a, b, c, d, e, f, h = g.sample(rng, "cities", 7)
    s = _sessions(rng, n, 9)
    rng.shuffle(s[3:])
    plants = [
        _p(rng, s[0], g.say(rng, "city_live", x=a), f"Good to know you're in {a}."),
        _p(rng, s[1], g.say(rng, "city_move", x=b), f"Congrats on the move to {b}!"),
        _p(rng, s[2], g.say(rng, "city_move", x=c), f"Another move! {c} should be a nice change.", True),
        # distractors (anywhere after the first statement): other people, plans, visits, the past
        _p(rng, s[3], g.say(rng, "city_neighbor", x=d), f"{d} is a big change for them."),
        _p(rng, s[4], g.say(rng, "city_maybe", x=e), f"{e} has a lot going for it."),
        _p(rng, s[5], g.say(rng, "city_visit", x=f), f"Enjoy {f}!"),
        _p(rng, s[6], g.say(rng, "city_past", x=h), f"{h} must have been fun as a student."),
        _p(rng, s[7], g.say(rng, "city_friend", f=g.choice(rng, "friends"), x=b), "Small world."),
    ]
    # s[8]: a restatement of the current value after the move (also evidence) if it is later
    if s[8] > s[2]:
        plants.append(_p(rng, s[8], g.say(rng, "city_restate", x=c), f"{c} suits you.", True))
    task = _task(qid, "update_city", g.say(rng, "city_q"), c, "knowledge_update", c, "entity",
                 [a, b, d, e, f, h], {"history": [a, b, c]})
    return plants, task


def update_employer(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    n = len(dates)
    a, b, c, d, e, f = g.sample(rng, "companies", 6)
    s = _sessions(rng, n, 7)
    rng.shuffle(s[2:])
    plants = [
        _p(rng, s[0], g.say(rng, "job_now", x=a), f"Work at {a} sounds busy."),
        _p(rng, s[1], g.say(rng, "job_start", x=b), f"Congratulations on joining {b}!", True),
        _p(rng, s[2], g.say(rng, "job_interview", x=c), "Interviews are tiring even when they go well."),
        _p(rng, s[3], g.say(rng, "job_friend", f=g.choice(rng, "friends"), x=d), "Good for them!"),
        _p(rng, s[4], g.say(rng, "job_recruiter", x=e), "Fair enough."),
        _p(rng, s[5], g.say(rng, "job_rel", rel=g.choice(rng, "relatives"), x=f), "Funny coincidence."),
    ]
    current, hist = b, [a, b]
    if rng.random() < 0.7:  # a second change, later than the first
        later = [x for x in s[2:] if x > s[1]]
        if later:
            j = g.choice(rng, "companies", exclude=(a, b, c, d, e, f))
            plants[1].evidence = False
            plants.append(_p(rng, later[-1], g.say(rng, "job_join", x=j), f"{j}, nice!", True))
            current, hist = j, [a, b, j]
    task = _task(qid, "update_employer", g.say(rng, "job_q"), current, "knowledge_update",
                 current, "entity", [a, b, c, d, e, f], {"history": hist})
    return plants, task


def relative_city(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    rel, rel2, rel3 = g.sample(rng, "relatives", 3)
    a, b, c, d, e, f, h = g.sample(rng, "cities", 7)
    s = _sessions(rng, len(dates), 8)
    rng.shuffle(s[2:])
    plants = [
        _p(rng, s[0], g.say(rng, "rel_lives", rel=rel, x=a), f"{a} is close enough for visits."),
        _p(rng, s[1], g.say(rng, "rel_moved", rel=rel, x=b), f"A fresh start in {b}!", True),
        # near misses: other relatives' moves, visits, plans, friends, the past
        _p(rng, s[2], g.say(rng, "rel_moved", rel=rel2, x=c), f"{c} will be a change for them."),
        _p(rng, s[3], g.say(rng, "rel_visit", rel=rel, x=d), f"{d} is nice this time of year."),
        _p(rng, s[4], g.say(rng, "rel_maybe", rel=rel, x=e), "Maybe one day."),
        _p(rng, s[5], g.say(rng, "rel_friend", rel=rel, x=f), "Friends scatter, it happens."),
        _p(rng, s[6], g.say(rng, "rel_grew", rel=rel3, x=h), f"Growing up in {h} must have been fun."),
    ]
    current, hist = b, [a, b]
    later = [x for x in s[2:] if x > s[1]]
    if later and rng.random() < 0.5:  # a second move, later than the first
        j = g.choice(rng, "cities", exclude=(a, b, c, d, e, f, h))
        plants[1].evidence = False
        plants.append(_p(rng, later[-1], g.say(rng, "rel_moved", rel=rel, x=j), f"Another move, {j} this time!",
                         True))
        current, hist = j, [a, b, j]
    task = _task(qid, "relative_city", g.say(rng, "rel_q", rel=rel), current, "knowledge_update", current,
                 "entity", [a, b, c, d, e, f, h], {"relative": rel, "history": hist})
    return plants, task


# ---------------------------------------------------------------- counts over sessions
ACTIVITIES = {
    "dentist": {
        "neg": ["I need to book a dentist appointment soon.", "I cancelled my dentist appointment {when} because of work.",
                "My {rel} went to the dentist {when} and it was fine.",
                "I should really go to the dentist, my tooth has been sensitive."],
        "ack": "Glad that's taken care of.",
        "asides": ["nothing dramatic", "all fine", "the waiting room was packed", "no cavities"],
    },
    "yoga": {
        "neg": ["I skipped yoga class {when}, too tired.", "I'm thinking of signing up for a yoga class.",
                "My {rel} went to a yoga class {when} and loved it.", "The yoga class was cancelled {when}."],
        "ack": "Nice, consistency is the hard part.",
        "asides": ["the teacher was great", "the room was packed", "my hamstrings hate me", "very calm"],
    },
    "haircut": {
        "neg": ["I need a haircut badly.", "My {rel} got a haircut {when}.",
                "I was going to get a haircut {when} but the place was closed."],
        "ack": "A fresh haircut always helps.",
        "asides": ["shorter than I wanted", "feels so much lighter", "new barber, good one"],
    },
}


def _count(activity: str):
    spec = ACTIVITIES[activity]

    def family(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
        k = rng.randint(3, 7)
        n_neg = rng.randint(3, 5)
        s = _sessions(rng, len(dates), k + n_neg)
        rng.shuffle(s)
        pos_s, neg_s = sorted(s[:k]), s[k:]
        plants = []
        for i in pos_s:
            fact = g.say(rng, f"{activity}_pos", when=rng.choice(WHEN_DONE), aside=rng.choice(spec["asides"]))
            plants.append(_p(rng, i, fact, spec["ack"], True))
        negs = list(spec["neg"])
        rng.shuffle(negs)
        for j, i in enumerate(neg_s):
            fact = negs[j % len(negs)].format(when=rng.choice(WHEN_DONE), aside=rng.choice(spec["asides"]),
                                              rel=g.choice(rng, "relatives"))
            plants.append(_p(rng, i, fact, "Noted."))
        task = _task(qid, f"count_{activity}", g.say(rng, f"{activity}_q"), str(k), "count", k, "number", [],
                     {"activity": activity, "near_misses": n_neg})
        return plants, task

    family.__name__ = f"count_{activity}"
    return family


MEET_ASIDES = ["good to catch up", "we talked for hours", "it was overdue", "fun as always"]


def meet_friend(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    friend, other = g.sample(rng, "friends", 2)
    act, other_act = g.sample(rng, "activities", 2)
    k = rng.randint(2, 6)
    n_neg = rng.randint(4, 6)
    s = _sessions(rng, len(dates), k + n_neg)
    rng.shuffle(s)
    pos_s, neg_s = sorted(s[:k]), s[k:]

    def meet(who, what):
        return g.say(rng, "meet_pos", friend=who, act=what, when=rng.choice(WHEN_DONE), aside=rng.choice(MEET_ASIDES))

    plants = [_p(rng, i, meet(friend, act), "Sounds like a good time.", True) for i in pos_s]
    near = [lambda: meet(other, act), lambda: meet(friend, other_act),
            lambda: g.say(rng, "meet_plan", friend=friend, act=act),
            lambda: g.say(rng, "meet_cancel", friend=friend, act=act, when=rng.choice(WHEN_DONE)),
            lambda: g.say(rng, "meet_rel", rel=g.choice(rng, "relatives"), friend=friend, act=act,
                          when=rng.choice(WHEN_DONE))]
    rng.shuffle(near)
    for j, i in enumerate(neg_s):
        plants.append(_p(rng, i, near[j % len(near)](), "Noted."))
    task = _task(qid, "meet_friend", g.say(rng, "meet_q", friend=friend, act=act), str(k), "count", k, "number",
                 [], {"friend": friend, "activity": act, "near_misses": n_neg})
    return plants, task


# ---------------------------------------------------------------- dates
def date_adopt(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    pet, other, other2 = g.sample(rng, "pets", 3)
    breed = g.choice(rng, "breeds")
    s = _sessions(rng, len(dates), 7, 0.1, 0.9)
    at = s[2]
    when = rng.choice(WHEN_DONE)
    day = dates[at] - dt.timedelta(days=1 if when == "yesterday" else 0)
    plants = [
        _p(rng, s[0], g.say(rng, "adopt_think", breed=breed), "Exciting!"),
        _p(rng, s[1], g.say(rng, "adopt_shelter", breed=breed), "Take your time."),
        _p(rng, at, g.say(rng, "adopt_pos", pet=pet, when=when, breed=breed), f"Welcome home, {pet}!", True),
        _p(rng, s[3], g.say(rng, "adopt_chewed", pet=pet), "Puppies!"),
        _p(rng, s[4], g.say(rng, "adopt_neighbor", other=other, when=rng.choice(WHEN_DONE)), "Cute name."),
        _p(rng, s[5], g.say(rng, "adopt_settled", pet=pet), f"Good {pet}."),
        _p(rng, rng.choice(s), g.say(rng, "adopt_rel", rel=g.choice(rng, "relatives"), other=other2,
                                     when=rng.choice(WHEN_DONE)), f"{other2} is a great name."),
    ]
    task = _task(qid, "date_adopt", g.say(rng, "adopt_q", pet=pet), day.isoformat(), "date",
                 day.isoformat(), "date", [], {"pet": pet, "said": when, "session_date": dates[at].isoformat()})
    return plants, task


def date_race(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
    race = f"{g.choice(rng, 'cities')} Half Marathon"
    s = _sessions(rng, len(dates), 5, 0.1, 0.95)
    at = s[2]
    when = rng.choice(WHEN_DONE)
    day = dates[at] - dt.timedelta(days=1 if when == "yesterday" else 0)
    finish = f"{rng.randint(1, 2)}:{rng.randint(0, 59):02d}"
    plants = [
        _p(rng, s[0], g.say(rng, "race_signup", race=race), "You've got this."),
        _p(rng, s[1], g.say(rng, "race_training", race=race), "Steady progress."),
        _p(rng, at, g.say(rng, "race_pos", race=race, when=when, finish=finish, aside=rng.choice(ASIDES)),
           "Congratulations, that's a big milestone!", True),
        _p(rng, s[3], g.say(rng, "race_rel", rel=g.choice(rng, "relatives"), race=race),
           "Maybe you can run it together."),
        _p(rng, s[4], g.say(rng, "race_sore", race=race), "Ha, the classic runner's promise."),
    ]
    task = _task(qid, "date_race", g.say(rng, "race_q", race=race), day.isoformat(), "date",
                 day.isoformat(), "date", [], {"race": race, "said": when, "session_date": dates[at].isoformat()})
    return plants, task


# ---------------------------------------------------------------- sums (the held-out kind)
SUMS = {
    "bike": {"items": ["a new chain and cassette", "new brake pads", "a wheel truing", "a full tune-up",
                       "a new tube and tire", "a derailleur adjustment"],
             "ack": "Bikes are never free, are they?",
             "neg": ["The bike shop quoted me ${q} for {item} but I said no.",
                     "My {rel} spent ${o} on a bike this year.",
                     "A new bike like the one I want would cost ${big}.",
                     "I might need to spend ${m} on bike stuff next month."]},
    "taxi": {"items": ["the airport", "the office", "the station", "the stadium", "the old town", "the harbor"],
             "ack": "Taxis add up quickly.",
             "neg": ["A taxi to {item} would be about ${q}, so I took the train.",
                     "My {rel} spent ${o} on taxis last month.",
                     "The app quoted ${q} for a taxi to {item} but I walked.",
                     "Taxis might cost me ${m} next week if the trains strike."]},
    "grocery": {"items": ["the farmers market", "the corner shop", "the big supermarket", "the co-op",
                          "the discount store", "the organic place"],
                "ack": "Food prices are wild lately.",
                "neg": ["My {rel} spends about ${o} a week on groceries.",
                        "If prices keep rising, groceries could cost me ${big} a month.",
                        "{item} had a ${m} coupon for groceries that I forgot to use.",
                        "A meal kit would be ${q} a week instead of groceries."]},
}


def _sum(what: str, family_name: str):
    spec = SUMS[what]

    def family(rng: random.Random, dates: list[dt.date], qid: str, g: Gen):
        k = rng.randint(3, 6)
        amounts = [rng.randint(12, 260) for _ in range(k)]
        s = _sessions(rng, len(dates), k + 4)
        rng.shuffle(s)
        pos_s, neg_s = sorted(s[:k]), s[k:]
        plants = [_p(rng, i, g.say(rng, f"{what}_paid", amt=amt, item=rng.choice(spec["items"])), spec["ack"], True)
                  for i, amt in zip(pos_s, amounts)]
        for i, text in zip(neg_s, spec["neg"]):
            fact = text.format(q=rng.randint(150, 400), o=rng.randint(100, 900), big=rng.randint(900, 3000),
                               m=rng.randint(40, 200), item=rng.choice(spec["items"]), rel=g.choice(rng, "relatives"))
            plants.append(_p(rng, i, fact[0].upper() + fact[1:], "Worth thinking about."))
        total = sum(amounts)
        task = _task(qid, family_name, g.say(rng, f"{what}_q"), f"${total}", "sum", total, "number", [],
                     {"amounts": amounts})
        return plants, task

    family.__name__ = family_name
    return family


CORE_FAMILIES = {  # the core kinds; every family by name: scroll.tasks.catalog.FAMILIES
    "update_city": update_city,
    "update_employer": update_employer,
    "relative_city": relative_city,
    "count_dentist": _count("dentist"),
    "count_yoga": _count("yoga"),
    "count_haircut": _count("haircut"),
    "meet_friend": meet_friend,
    "date_adopt": date_adopt,
    "date_race": date_race,
    "sum_bike": _sum("bike", "sum_bike"),
    "sum_taxi": _sum("taxi", "sum_taxi"),
    "sum_groceries": _sum("grocery", "sum_groceries"),
}
CORE_KINDS = {"update_city": "knowledge_update", "update_employer": "knowledge_update",
              "relative_city": "knowledge_update", "count_dentist": "count", "count_yoga": "count",
              "count_haircut": "count", "meet_friend": "count", "date_adopt": "date", "date_race": "date",
              "sum_bike": "sum", "sum_taxi": "sum", "sum_groceries": "sum"}
