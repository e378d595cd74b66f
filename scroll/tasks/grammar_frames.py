"""One key's frames by role, as the wide grammars' data modules write them."""
from __future__ import annotations


def train_test(train: list[str], test: list[str]) -> dict[str, list[str]]:
    """The frames a train-role split writes with, and the disjoint ones only test-role splits use."""
    return {"train": train, "test": test}
