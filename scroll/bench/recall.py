"""Evidence recall@k: the share of a question's evidence turns found in the top k, averaged
over questions that have evidence. A *searcher* is `fn(question_text, session) -> [event
index, ...]` (best first); the loaders below turn events into one for each system:

- `scroll_searcher`: Scroll's `EventLog.search` (the system under test);
- `fts5_searcher`: the SQLite FTS5 peer;
- `Bm25Searcher`: bm25s directly, with the tokenization/scoring options we tune
  (speaker and date fields, neighbouring-turn context, k1/b, stemming, stopwords, query
  stop words), used to find what to recommend for the index.
"""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np

from scroll.bench import lexicon as L
from scroll.bench.fts5 import Fts5Log
from scroll.events import EventLog

Searcher = Callable[[str, str], list]


def recall_at_k(events: Sequence[dict], questions: Sequence, search: Searcher, k: int = 10,
                per_question: bool = False) -> dict:
    """{"recall", "n", "by_category"} over the questions with evidence; `per_question`: also each
    one's recall, in question order (for `paired_difference`)."""
    per_cat: dict[str, list[float]] = {}
    allr = []
    for q in questions:
        if not q.evidence:
            continue
        got = set(search(q.text, q.session)[:k])
        r = len(got & set(q.evidence)) / len(set(q.evidence))
        allr.append(r)
        per_cat.setdefault(str(q.category), []).append(r)
    out = {"recall": float(np.mean(allr)) if allr else 0.0, "n": len(allr),
           "by_category": {c: {"recall": float(np.mean(v)), "n": len(v)} for c, v in sorted(per_cat.items())}}
    if per_question:
        out["per_question"] = allr
    return out


def paired_difference(a: Sequence[float], b: Sequence[float], n_boot: int = 2000, seed: int = 0) -> dict:
    """System a minus system b on the same questions (per-question recalls, same order): the mean
    difference in recall points, how many questions each does better on, and a 95 % paired
    bootstrap interval of the difference (questions resampled with replacement, `n_boot` times,
    a fixed seed: the same numbers on every run)."""
    if len(a) != len(b):
        raise ValueError(f"paired_difference: {len(a)} vs {len(b)} questions")
    if len(a) == 0:
        raise ValueError("paired_difference: no questions")
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    for i in range(0, n_boot, 250):                  # 250 resamples at a time: bounded memory
        idx = rng.integers(0, len(d), size=(min(250, n_boot - i), len(d)))
        means[i:i + len(idx)] = d[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {"diff_points": round(100 * float(d.mean()), 3), "better": int((d > 0).sum()), "worse": int((d < 0).sum()),
            "ci95_points": [round(100 * float(lo), 3), round(100 * float(hi), 3)], "n": len(d)}


def fts5_searcher(events: Sequence[dict], path: str | os.PathLike, k: int = 10) -> Searcher:
    log = Fts5Log(path)
    seqs = log.append_many(events)
    pos = {s: i for i, s in enumerate(seqs)}
    return lambda text, session: [pos[h.seq] for h in log.search(text, k=k, session=session)]


def scroll_searcher(events: Sequence[dict], path: str | os.PathLike, k: int = 10) -> Searcher:
    log = EventLog(str(path))
    seqs = log.append_many(events)
    pos = {s: i for i, s in enumerate(seqs)}
    return lambda text, session: [pos[h.seq] for h in log.search(text, k=k, sessions=None if session is None
                                                                   else {session})]


_MONTH = re.compile(r"(January|February|March|April|May|June|July|August|September|October|November|December)"
                    r"|\b(19|20)\d\d\b")


@dataclass(frozen=True)
class Bm25Config:
    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"
    stem: bool = True
    stopwords: str = "en"          # none | en (bm25s' 33 words) | full (lexicon.STOPWORDS)
    speaker: bool = False          # index the speaker's name (role) with the text
    date: str = "none"             # none | month_year (from meta.date / time)
    context: str = "none"          # none | concat | concat_prev (neighbours' text in the doc) | score
    ctx_weight: float = 0.3        # score mode: s + w * (s_prev + s_next), same session
    query_stop: str = "index"      # index (same as index) | qwords (also drop question words)

    def label(self) -> str:
        d = asdict(self)
        base = asdict(Bm25Config())
        return ",".join(f"{k}={v}" for k, v in d.items() if v != base[k]) or "plain"


# What the measurements recommend for Scroll's index (all append-compatible: the previous
# turn exists when an event is appended). See tune.py and the issue-2 report.
RECOMMENDED = Bm25Config(speaker=True, context="concat_prev", query_stop="qwords", date="month_year")


def _stops(kind: str) -> list[str] | None:
    if kind == "none":
        return []
    if kind == "en":
        from bm25s.stopwords import STOPWORDS_EN
        return list(STOPWORDS_EN)
    return sorted(set(L.STOPWORDS))


def _date_words(e: dict) -> str:
    src = (e.get("meta") or {}).get("date") or e.get("time") or ""
    if "T" in src and src[:4].isdigit():   # ISO time -> month name + year
        import datetime as dt
        try:
            d = dt.datetime.fromisoformat(src)
            return d.strftime("%B %Y")
        except ValueError:
            return ""
    return " ".join(m.group(0) for m in _MONTH.finditer(src))


class Bm25Searcher:
    """One global bm25s index over all events; session filter applied to the score vector."""

    def __init__(self, events: Sequence[dict], cfg: Bm25Config = Bm25Config()):
        import bm25s
        import Stemmer
        self.cfg = cfg
        self.stemmer = Stemmer.Stemmer("english") if cfg.stem else None
        self.stop = _stops(cfg.stopwords)
        sess = np.array([e["session"] for e in events], dtype=object)
        self.session_ids = {s: i for i, s in enumerate(dict.fromkeys(sess.tolist()))}
        self.sess = np.array([self.session_ids[s] for s in sess], dtype=np.int32)
        n = len(events)
        same_prev = np.zeros(n, bool)
        same_prev[1:] = self.sess[1:] == self.sess[:-1]
        self.same_prev, self.same_next = same_prev, np.append(same_prev[1:], False)
        docs = []
        for i, e in enumerate(events):
            parts = [e["text"]]
            if cfg.speaker:
                parts.append(e.get("role") or "")
            if cfg.date == "month_year":
                parts.append(_date_words(e))
            if cfg.context in ("concat", "concat_prev"):
                if same_prev[i]:
                    parts.append(events[i - 1]["text"])
                if cfg.context == "concat" and i + 1 < n and self.same_next[i]:
                    parts.append(events[i + 1]["text"])
            docs.append(" ".join(parts))
        toks = bm25s.tokenize(docs, stopwords=self.stop, stemmer=self.stemmer, show_progress=False)
        self.bm = bm25s.BM25(k1=cfg.k1, b=cfg.b, method=cfg.method)
        self.bm.index(toks, show_progress=False)
        qstop = list(self.stop) + (list(L.QWORDS) if cfg.query_stop == "qwords" else [])
        self.qstop = qstop

    def scores(self, text: str) -> np.ndarray:
        import bm25s
        q = bm25s.tokenize([text], stopwords=self.qstop, stemmer=self.stemmer, return_ids=False,
                           show_progress=False)[0]
        s = self.bm.get_scores(q) if q else np.zeros(len(self.sess), np.float32)
        if self.cfg.context == "score" and self.cfg.ctx_weight:
            w = self.cfg.ctx_weight
            prev = np.where(self.same_prev, np.roll(s, 1), 0)
            nxt = np.where(self.same_next, np.roll(s, -1), 0)
            s = s + w * (prev + nxt)
        return s

    def __call__(self, text: str, session: str | None, k: int = 10) -> list[int]:
        s = self.scores(text)
        if session is not None:
            s = np.where(self.sess == self.session_ids.get(session, -1), s, 0)
        top = np.argsort(-s, kind="stable")[:k]
        return [int(i) for i in top if s[i] > 0]
