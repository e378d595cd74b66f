"""What the generated shapes share: Zipf-ish picks, paraphrase pairs, plurals, and `_Gen`
(sessions of events with timestamps, questions with one evidence event each)."""
from __future__ import annotations

import datetime as _dt
import random

from scroll.bench import lexicon as L
from scroll.bench.corpus import Question

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = "Monday Tuesday Wednesday Thursday Friday".split()
NAMES = [n for n in L.FEMALE + L.MALE if n not in ("Sam", "Evan", "Nate", "Jon", "Quinn")]
COMPS = ("billing ledger checkout inventory payments auth gateway scheduler reporting analytics ingest export catalog "
         "pricing shipping invoice onboarding telemetry audit identity recommendations fraud loyalty warehouse routing "
         "media upload notifications webhooks profile geo tax refunds subscriptions").split()


def _z(rng: random.Random, seq):
    """Zipf(1)-ish pick: the item of rank r with probability ~ 1/r."""
    return seq[min(len(seq) - 1, int((len(seq) + 1) ** rng.random()) - 1)]


def _pair(rng: random.Random, items, p_para: float = 0.75) -> tuple[str, str]:
    """(words in the evidence, words in the question) from "evidence=question|other" items."""
    ev, _, q = rng.choice(items).partition("=")
    return ev, (rng.choice(q.split("|")) if q and rng.random() < p_para else ev)


def _pl(w: str) -> str:
    return w[:-1] + "ies" if w[-1] == "y" and w[-2] not in "aeiou" else w + ("es" if w.endswith(("s", "sh", "ch", "x")) else "s")


class _Gen:
    prefix, span, per_event = "s", (20, 60), 100       # per_event: rough words, sizes the last session

    def __init__(self, seed: int):
        self.rng = random.Random(f"{type(self).__name__}:{seed}")
        self.used: set = set()                         # fact keys: every question has one answer
        self.clock = _dt.datetime(2023, 1, 2, 9) + _dt.timedelta(days=self.rng.randrange(200))

    def build(self, n_words: int):
        events, qs, words, s = [], [], 0, 0
        while words < n_words:
            n = min(self.rng.randint(*self.span), (n_words - words) // self.per_event + 3)
            ev, q = self.session(f"{self.prefix}-{s:04d}", n, len(events))
            events, qs, s = events + ev, qs + q, s + 1
            words += sum(len(e["text"].split()) for e in ev)
        return events, qs

    def times(self, n: int, lo: int, hi: int) -> list[str]:
        r = self.rng
        self.clock = (self.clock + _dt.timedelta(days=r.randint(1, 4))).replace(hour=r.randint(8, 16), minute=r.randint(0, 59))
        out, t = [], 0
        for _ in range(n):
            t += r.randint(lo, hi)
            out.append((self.clock + _dt.timedelta(seconds=t)).isoformat(timespec="seconds"))
        self.clock += _dt.timedelta(seconds=t)
        return out

    def question(self, sid: str, i: int, text: str, ev: int, cat: str) -> Question:
        return Question(f"{sid}-q{i}", sid if self.rng.random() < 0.25 else None, text, [ev], cat)
