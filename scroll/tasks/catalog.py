"""Every task family by name and its kind, and the benchmark's categories: the core families
(scroll.tasks.families) and the memory categories' (scroll.tasks.families_memory) in one table."""
from __future__ import annotations

from .families import CORE_FAMILIES, CORE_KINDS
from .families_memory import MEMORY_FAMILIES, MEMORY_KINDS

FAMILIES = {**CORE_FAMILIES, **MEMORY_FAMILIES}
KINDS = {**CORE_KINDS, **MEMORY_KINDS}
DEFAULT_FAMILIES = ["update_city", "update_employer", "count_dentist", "count_yoga", "date_adopt",
                    "date_race", "sum_bike"]
# the table's categories: kinds that answer the same kind of question are grouped
CATEGORIES = {"date": "temporal", "count": "aggregation", "sum": "aggregation"}


def category_of(kind: str) -> str:
    """The benchmark category of a task kind (date -> temporal, count/sum -> aggregation)."""
    return CATEGORIES.get(kind, kind)


# every category 4 times (the benchmark's history: configs/tasks/bench-200k.yaml, `scroll bench retrieval`,
# `scroll tasks write`)
BENCH_FAMILIES = ("update_city", "update_employer", "relative_city", "update_manager", "count_dentist", "meet_friend",
                  "sum_bike", "count_yoga", "date_adopt", "date_race", "holiday_order", "trip_gap", "recall_born",
                  "recall_dentist", "recall_married", "recall_university", "conflict_middle_name",
                  "conflict_grew_up", "conflict_first_pet", "conflict_first_job", "abs_relative", "abs_friend",
                  "abs_adopt", "abs_race", "pref_cuisine", "pref_author", "pref_destination", "pref_board_game")
