"""Evaluation sets of fixed *shapes* for search recall@k (ours vs SQLite FTS5 vs bm25s).

"chat": short social turns (`corpus.generate`), keeping questions that share a content word with
every evidence turn. "long": planning chats, messages of 200-500 words in 3-6 paragraphs of
Zipf-ish domain prose; one sentence of one paragraph states a fact. "tool": agent sessions of tool
outputs (pytest, tracebacks, tsc, JSON, ls, grep, configs, SQL, server logs), Python/JS code files
and short turns; one tool event holds a fact. Questions paraphrase the fact around one or two anchor
words (component, person, identifier); in long/tool a quarter are scoped to their session. Deterministic
from (shape, n_words, seed); the evaluation sets (sizes, tune/report seeds): configs/recall-sets.yaml.
The generators: `long.py` and `tool.py` (on `gen._Gen`); chat is `scroll.bench.corpus`.
"""
from __future__ import annotations

import os
import re

from scroll.bench import lexicon as L
from scroll.bench.corpus import Corpus, generate
from scroll.bench.shapes.long import _Long
from scroll.bench.shapes.tool import _Tool
from scroll.env import read_yaml

SHAPES = ("chat", "long", "tool")
_TOK = re.compile(r"\b\w\w+\b")
_DROP = set(L.STOPWORDS) | set(L.QWORDS)


def content_words(text: str) -> set[str]:
    """Lower-cased `\\b\\w\\w+\\b` tokens (the search tokenizer's) minus stop and question words."""
    return {w for w in _TOK.findall(text.lower()) if w not in _DROP}


def load_sets(path: str = "configs/recall-sets.yaml") -> dict:
    """The evaluation sets (configs/recall-sets.yaml); a relative path missing here is read from the repo root."""
    if not os.path.exists(path) and not os.path.isabs(path):
        path = os.path.join(os.path.dirname(__file__), "..", "..", "..", path)
    return read_yaml(path)


def generate_shape(shape: str, n_words: int = 1_000_000, seed: int = 0) -> Corpus:
    """The `shape` set of about `n_words` words (cut at the event that reaches it; questions
    whose evidence falls past the cut are dropped)."""
    if shape == "chat":
        c = generate(n_words, seed)
        events, qs = c.events, [q for q in c.questions if all(
            content_words(q.text) & content_words(c.events[i]["text"]) for i in q.evidence)]
    elif shape in ("long", "tool"):
        events, qs = (_Long if shape == "long" else _Tool)(seed).build(n_words)
    else:
        raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")
    total, cut = 0, len(events)
    for i, e in enumerate(events):
        total += len(e["text"].split())
        if total >= n_words:
            cut = i + 1
            break
    events, qs = events[:cut], [q for q in qs if max(q.evidence) < cut]
    return Corpus(events, qs, dict(shape=shape, n_words=n_words, seed=seed, words=total, events=len(events),
                                   sessions=len({e["session"] for e in events}), questions=len(qs)))
