"""Entity pools, split by role so a task set can keep train and test entities disjoint.

    pool = POOLS["train"]          # train and dev draw from here
    pool = POOLS["test"]           # every test split draws from here (disjoint from "train")
    pool = POOLS["all"]            # the demo: both parts together

What is an entity (split by role, disjoint between "train" and "test"): cities (also in race
names, "<City> Half Marathon"), companies, pet names, friends' names, relatives (the role
word: sister, aunt, ...), dog breeds, and the activities one meets a friend for.

What is NOT split (it overlaps across roles on purpose, since it is not an entity a model
could memorise as an answer): amounts of money (uniform ranges), dates (every history
starts on the same day and moves forward 1-3 days per session), counts, the "when" words
(today, yesterday), the count families' activities (dentist, yoga, haircut: a whole
family, not a value), taxi destinations and grocery stores (background words of the sum
families, which live only in the held-out-kind test set), and the filler bank
(scroll.tasks.filler): no pool entry occurs in it.
"""
from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Pool:
    name: str
    cities: tuple[str, ...]
    companies: tuple[str, ...]
    pets: tuple[str, ...]
    friends: tuple[str, ...]
    relatives: tuple[str, ...]
    breeds: tuple[str, ...]
    activities: tuple[str, ...]

    def entities(self) -> set[str]:
        out: set[str] = set()
        for f in fields(self):
            if f.name != "name":
                out.update(getattr(self, f.name))
        return out


# cities: one or two capitalised words of plain letters (the reference programs' city regex)
TRAIN = Pool(
    name="train",
    cities=("Lisbon", "Porto", "Valencia", "Seville", "Denver", "Portland", "Austin", "Chicago", "Toronto",
            "Montreal", "Melbourne", "Edinburgh", "Dublin", "Vienna", "Munich", "Zurich", "Copenhagen", "Oslo"),
    companies=("Northwind Analytics", "Brightline Robotics", "Cobalt Health", "Tidewater Energy",
               "Juniper Logistics", "Halcyon Games", "Redwood Insurance", "Meridian Foods", "Lumen Biotech",
               "Quarry Software", "Saltmarsh Media", "Orchard Payments"),
    pets=("Rocket", "Biscuit", "Mochi", "Pepper", "Waffles", "Ziggy", "Noodle", "Pickle", "Sprout", "Bandit"),
    friends=("Maya", "Leo", "Hannah", "Omar", "Clara", "Diego", "Ines", "Jonas", "Rosa", "Theo"),
    relatives=("sister", "brother", "mom", "dad", "cousin"),
    breeds=("beagle mix", "border collie", "terrier mix", "greyhound", "lab mix", "corgi"),
    activities=("coffee", "lunch", "tennis", "climbing", "a run", "board games"),
)

TEST = Pool(
    name="test",
    cities=("Helsinki", "Prague", "Krakow", "Boston", "Seattle", "Atlanta", "Glasgow", "Antwerp", "Bologna",
            "Winnipeg", "Adelaide", "Nairobi", "Santiago", "Halifax", "Tampere", "Gdansk", "Lyon", "Bilbao"),
    companies=("Pinecrest Labs", "Bluefin Capital", "Stonegate Systems", "Ironbark Mining", "Silverline Transit",
               "Kestrel Aerospace", "Marigold Pharma", "Driftwood Studios", "Copperleaf Energy", "Ember Security",
               "Foxglove Retail", "Granite Cloud"),
    pets=("Pretzel", "Nacho", "Tofu", "Marble", "Clover", "Gizmo", "Dumpling", "Pistachio", "Wasabi", "Yeti"),
    friends=("Anika", "Rafael", "Greta", "Malik", "Yusuf", "Elena", "Bruno", "Lucia", "Hugo", "Freya"),
    relatives=("aunt", "uncle", "niece", "nephew", "grandma"),
    breeds=("dachshund", "poodle mix", "husky", "shepherd mix", "whippet", "schnauzer"),
    activities=("dinner", "squash", "chess", "brunch", "a bike ride", "karaoke"),
)

ALL = Pool(name="all", **{f.name: getattr(TRAIN, f.name) + getattr(TEST, f.name)
                          for f in fields(Pool) if f.name != "name"})

POOLS: dict[str, Pool] = {"train": TRAIN, "test": TEST, "all": ALL}


def get_pool(name: str) -> Pool:
    try:
        return POOLS[name]
    except KeyError:
        raise ValueError(f"unknown entity pool {name!r}; known: {sorted(POOLS)}") from None
