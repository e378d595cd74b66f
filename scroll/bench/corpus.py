"""Seeded generator of chat-like multi-session conversations with known evidence turns.

Shape (modelled on LoCoMo): each *conversation* is one Scroll session between two named
speakers, split into dated sittings (`meta.sitting`, `meta.date` like "4:33 pm on 12 July,
2023"); one event per turn, `role` = the speaker's name. Speakers state personal facts in
evidence turns (often answering the other's prompt, then echoed back with the owner's
name), while unrelated turns reuse the same words (distractors). Questions ask about a
fact in other words (synonyms, other word forms, the owner's *name*, which the owner's
own turn rarely contains), so stemming, speaker and context all matter. `long_share`
adds long pasted passages of Zipf-distributed background words, for volume benchmarks.

Deterministic: the same arguments give the same corpus (text, questions, order).
"""
from __future__ import annotations

import datetime as _dt
import random
import re
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from scroll.bench import lexicon as L

_SLOT = re.compile(r"\{([^{}]*)\}")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]


@dataclass
class Question:
    qid: str
    session: str
    text: str
    evidence: list[int]          # indices into Corpus.events
    category: str                # single | temporal | multi (LoCoMo: 1..5 as strings)


@dataclass
class Corpus:
    events: list[dict]           # {"session","role","text","time","kind","meta"}
    questions: list[Question]
    params: dict = field(default_factory=dict)

    @property
    def n_words(self) -> int:
        return sum(len(e["text"].split()) for e in self.events)


def fill(tpl: str, slots: dict, rng: random.Random) -> str:
    """Expand `{a|b}` alternatives and `{slot}` names (`{When}` = capitalised slot)."""
    def rep(m: re.Match) -> str:
        s = m.group(1)
        if "|" in s or s == "":
            return rng.choice(s.split("|"))
        if s in slots:
            return slots[s]
        low = s[:1].lower() + s[1:]
        if low in slots:
            v = slots[low]
            return v[:1].upper() + v[1:]
        raise KeyError(f"no slot {s!r} in template {tpl!r}")
    return _SLOT.sub(rep, tpl)


def pseudo_vocab(n: int, seed: int = 7) -> list[str]:
    """`n` distinct pronounceable pseudo-words (the long tail of a big corpus)."""
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        w = "".join(rng.choice(L.SYLLABLES) for _ in range(rng.choice((2, 2, 3, 3, 4))))
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


class _Background:
    """Zipf(1.0) sampler over real chat words + pseudo-words, for long passages."""

    def __init__(self, rng: np.random.Generator, vocab_size: int = 120_000):
        common = sorted({w.lower() for t in L.CHAT for w in re.findall(r"[A-Za-z']+", fill(t, _AnySlots(), random.Random(0)))})
        self.words = np.array(common + pseudo_vocab(vocab_size), dtype=object)
        ranks = np.arange(1, len(self.words) + 1, dtype=np.float64)
        p = 1.0 / (ranks + 2.7)
        self.cdf = np.cumsum(p / p.sum())
        self.rng = rng

    def passage(self, n: int, topic: list[str]) -> str:
        idx = np.searchsorted(self.cdf, self.rng.random(n))
        idx = np.minimum(idx, len(self.words) - 1)
        words = self.words[idx].tolist()
        for j in self.rng.integers(0, n, size=max(1, n // 12)):   # keep it on topic
            words[j] = topic[int(j) % len(topic)]
        return " ".join(words)


class _AnySlots(dict):
    def __contains__(self, k):  # every slot exists (used to harvest template words)
        return True

    def __getitem__(self, k):
        return ""


def _pick_slots(frame: dict, rng: random.Random, p_para: float) -> dict:
    slots = {}
    for name, pairs in frame["slots"].items():
        w, q = rng.choice(pairs)
        slots[name] = w
        slots[name + "_q"] = q if rng.random() < p_para else w
    return slots


def _date_str(d: _dt.datetime) -> str:
    h = d.hour % 12 or 12
    return f"{h}:{d.minute:02d} {'am' if d.hour < 12 else 'pm'} on {d.day} {_MONTHS[d.month - 1]}, {d.year}"


def generate(n_words: int = 200_000, seed: int = 0, *, turns_per_conversation: int = 400,
             facts_per_conversation: int = 40, long_share: float = 0.0, p_paraphrase: float = 0.6,
             p_multi: float = 0.2, session_prefix: str = "conv") -> Corpus:
    """Generate conversations until the corpus holds at least `n_words` words."""
    rng = random.Random(seed)
    bg = _Background(np.random.default_rng(seed)) if long_share > 0 else None
    events: list[dict] = []
    questions: list[Question] = []
    words = 0
    c = 0
    topic_pool = sorted({w for f in L.FRAMES for pairs in f["slots"].values() for p in pairs
                         for w in p[0].replace('"', "").split() if len(w) > 3} |
                        set("work school music kids travel health fitness family career adoption "
                            "therapy running weekend friends coffee movies art books".split()))
    while words < n_words:
        ev, qs = _conversation(c, rng, bg, topic_pool, turns_per_conversation, facts_per_conversation,
                               long_share, p_paraphrase, p_multi, session_prefix, base=len(events))
        events.extend(ev)
        questions.extend(qs)
        words += sum(len(e["text"].split()) for e in ev)
        c += 1
    params = dict(n_words=n_words, seed=seed, turns_per_conversation=turns_per_conversation,
                  facts_per_conversation=facts_per_conversation, long_share=long_share,
                  p_paraphrase=p_paraphrase, p_multi=p_multi, conversations=c, words=words,
                  events=len(events), questions=len(questions))
    return Corpus(events, questions, params)


def _conversation(c, rng, bg, topic_pool, n_turns, n_facts, long_share, p_para, p_multi, prefix, base):
    female = rng.random() < 0.5
    a = rng.choice(L.FEMALE if female else L.MALE)
    b = rng.choice([n for n in L.FEMALE + L.MALE if n != a])
    pron = {a: ("she", "her") if a in L.FEMALE else ("he", "his"),
            b: ("she", "her") if b in L.FEMALE else ("he", "his")}
    session = f"{prefix}-{c:05d}"
    topic = rng.sample(topic_pool, 12)
    n_sit = max(2, n_turns // 20)
    start = _dt.datetime(2022, 1, 1) + _dt.timedelta(days=rng.randrange(0, 900))
    dates, d = [], start
    for _ in range(n_sit):
        d = d + _dt.timedelta(days=rng.randint(2, 20), hours=rng.randint(0, 23), minutes=rng.randint(0, 59))
        dates.append(d.replace(hour=rng.randint(9, 21)))
    sits: list[list[tuple]] = [[] for _ in range(n_sit)]   # blocks of (speaker, text, tag)
    facts = []                                             # (frame, owner, slots, sitting, group)
    group = 0
    while len(facts) < n_facts:
        frame = rng.choice(L.FRAMES)
        owner = rng.choice((a, b))
        k = rng.choice((2, 2, 3)) if rng.random() < p_multi else 1
        for s in rng.sample(range(n_sit), min(k, n_sit)):
            facts.append((frame, owner, _pick_slots(frame, rng, p_para), s, group if k > 1 else None))
        group += 1
    for fi, (frame, owner, slots, s, grp) in enumerate(facts):
        other = b if owner == a else a
        sl = dict(slots, S=owner, O=other, their=pron[owner][1], they=pron[owner][0],
                  when=rng.choice(L.WHEN), month=_MONTHS[dates[s].month - 1], year=str(dates[s].year))
        block = []
        if rng.random() < 0.6:
            block.append((other, fill(rng.choice(frame["prompt"]), sl, rng), None))
        say = fill(rng.choice(frame["say"]), sl, rng)
        if rng.random() < 0.4:
            say = fill(rng.choice(L.CHAT), dict(sl, O=other, t=rng.choice(topic), t2=rng.choice(topic)), rng) + " " + say
        block.append((owner, say, ("ev", fi)))
        if rng.random() < 0.5:
            key = slots[next(iter(frame["slots"]))]
            block.append((other, fill("{Wow|Aww|Oh nice}, {S}! {K} {sounds|seems} {amazing|wonderful|like a lot}. "
                                      "{Tell me more|How did it go}?", dict(sl, K=key), rng), None))
        sits[s].append(block)
        for _ in range(rng.choice((1, 2))):                 # distractors: same words, no answer
            ds = _pick_slots(frame, rng, 0.0)
            if rng.random() < 0.5:
                ds.update({k: v for k, v in slots.items()})
            spk = rng.choice((other, other, owner))
            dsl = dict(ds, S=spk, O=a if spk == b else b, when=rng.choice(L.WHEN),
                       their=pron[spk][1], they=pron[spk][0])
            sits[rng.randrange(n_sit)].append([(spk, fill(rng.choice(frame["distract"]), dsl, rng), None)])
    used = sum(len(bl) for sit in sits for bl in sit)
    for _ in range(max(0, n_turns - used)):                # small talk fills the rest
        spk = rng.choice((a, b))
        oth = b if spk == a else a
        text = " ".join(fill(rng.choice(L.CHAT), dict(O=oth, t=rng.choice(topic), t2=rng.choice(topic)), rng)
                        for _ in range(rng.choice((1, 2, 2, 3))))
        sits[rng.randrange(n_sit)].append([(spk, text, None)])
    events, ev_index = [], {}
    for s, blocks in enumerate(sits):
        rng.shuffle(blocks)
        t = dates[s]
        turn = 0
        for block in blocks:
            for spk, text, tag in block:
                turn += 1
                t = t + _dt.timedelta(seconds=rng.randint(20, 240))
                if bg is not None and rng.random() < long_share:
                    text = text + " " + bg.passage(int(rng.lognormvariate(5.5, 0.5)), topic)
                if tag:
                    ev_index[tag[1]] = base + len(events)
                events.append({"session": session, "role": spk, "text": text, "kind": "message",
                               "time": t.isoformat(timespec="seconds"),
                               "meta": {"date": _date_str(dates[s]), "sitting": s + 1,
                                        "dia_id": f"D{s + 1}:{turn}"}})
    questions = []
    groups: dict[int, list[int]] = {}
    for fi, (frame, owner, slots, s, grp) in enumerate(facts):
        if grp is not None:
            groups.setdefault(grp, []).append(fi)
            continue
        sl = dict(slots, S=owner, their=pron[owner][1], they=pron[owner][0],
                  month=_MONTHS[dates[s].month - 1], year=str(dates[s].year))
        cat = "temporal" if rng.random() < 0.3 else "single"
        text = fill(rng.choice(frame["ask_when"] if cat == "temporal" else frame["ask"]), sl, rng)
        questions.append(Question(f"{session}-q{fi}", session, text, [ev_index[fi]], cat))
    for grp, fis in groups.items():
        frame, owner, slots, s, _ = facts[fis[0]]
        sl = dict(slots, S=owner, their=pron[owner][1], they=pron[owner][0])
        text = fill(rng.choice(frame["ask_multi"]), sl, rng)
        questions.append(Question(f"{session}-g{grp}", session, text, sorted(ev_index[f] for f in fis), "multi"))
    return events, questions


_DROP = set(L.QWORDS) | set(L.STOPWORDS)


def iter_words(corpus: Corpus) -> Iterator[int]:
    for e in corpus.events:
        yield len(e["text"].split())


def queries(corpus: Corpus, n: int = 300, seed: int = 0) -> list[dict]:
    """`n` realistic queries (3-8 content words) with their session: half are questions
    without question words, half are words drawn from an evidence turn."""
    rng = random.Random(seed)
    qs = rng.sample(corpus.questions, min(n, len(corpus.questions)))
    out = []
    for i, q in enumerate(qs):
        if i % 2 == 0:
            words = [w for w in re.findall(r"[\w']+", q.text) if w.lower() not in _DROP and len(w) > 2]
        else:
            words = [w for w in re.findall(r"[\w']+", corpus.events[q.evidence[0]]["text"])
                     if len(w) > 3 and w.lower() not in _DROP]
            rng.shuffle(words)
        k = rng.randint(3, 8)
        words = words[:k] if len(words) >= 3 else words + ["weekend", "family", "friends"][: 3 - len(words)]
        out.append({"query": " ".join(words), "session": q.session})
    return out
