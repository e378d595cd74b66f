"""Recall evaluation sets of fixed shapes (scroll.bench.shapes): deterministic, sized, with
answerable questions, and the committed tune/report seed split."""
from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from pathlib import Path

import pytest

from scroll.bench.corpus import generate
from scroll.bench.shapes import SHAPES, content_words, generate_shape, load_sets

ROOT = Path(__file__).resolve().parents[1]
N = 40_000


@lru_cache(maxsize=None)
def _set(shape: str, n: int = N, seed: int = 3):
    return generate_shape(shape, n, seed)


@pytest.mark.parametrize("shape", SHAPES)
def test_same_arguments_give_the_same_set_and_another_seed_another(shape):
    a, b = generate_shape(shape, N, 3), _set(shape)
    assert a.events == b.events and a.questions == b.questions and a.params == b.params
    c = generate_shape(shape, N, 4)
    assert [e["text"] for e in c.events] != [e["text"] for e in a.events]
    assert [q.text for q in c.questions] != [q.text for q in a.questions]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n", [30_000, 60_000])
def test_size_and_valid_questions(shape, n):
    c = _set(shape, n)
    assert abs(c.n_words - n) <= 0.1 * n and c.params["words"] == c.n_words
    assert len(c.questions) * 1_000_000 / c.n_words >= 350          # >= 300 questions at 1 M words
    assert len({q.qid for q in c.questions}) == len(c.questions)
    sessions = {e["session"] for e in c.events}
    for e in c.events:
        assert set(e) == {"session", "role", "text", "time", "kind", "meta"} and e["text"].strip()
        dt.datetime.fromisoformat(e["time"])
    for q in c.questions:
        assert q.evidence and all(0 <= i < len(c.events) for i in q.evidence) and q.category
        assert q.session is None or (q.session in sessions and all(c.events[i]["session"] == q.session for i in q.evidence))


@pytest.mark.parametrize("shape", SHAPES)
def test_every_question_shares_a_content_word_with_each_evidence_event_but_is_no_copy(shape):
    c = _set(shape)
    for q in c.questions:
        assert content_words(q.text), q.text
        for i in q.evidence:
            text = c.events[i]["text"]
            assert content_words(q.text) & content_words(text), (q.text, text[:300])
            assert q.text.rstrip("?") not in text


def test_chat_delegates_to_the_corpus_generator():
    c, ref = _set("chat"), generate(N, 3)
    assert c.events == ref.events[:len(c.events)]
    assert {q.qid for q in c.questions} <= {q.qid for q in ref.questions}
    assert all(q.session for q in c.questions)


def test_long_messages_are_long_with_the_fact_in_one_paragraph():
    c = _set("long")
    for e in c.events:
        assert 200 <= len(e["text"].split()) <= 500 and e["role"] in ("user", "assistant") and e["kind"] == "message"
        assert 3 <= len(e["text"].split("\n\n")) <= 6
    cats = {q.category for q in c.questions}
    assert cats <= {"decision", "owner", "number", "fact"} and len(cats) >= 3
    scoped = sum(q.session is not None for q in _set("long", 60_000).questions)
    assert 0 < scoped < len(_set("long", 60_000).questions)
    sizes = [len(c.events[q.evidence[0]]["text"].split()) for q in c.questions]
    assert min(sizes) >= 200 and sum(sizes) / len(sizes) > 250


def test_tool_sessions_hold_tool_outputs_code_and_short_turns():
    c = _set("tool")
    kinds = {e["kind"] for e in c.events}
    assert kinds == {"tool", "message"}
    assert all(len(e["text"].split()) < 60 for e in c.events if e["kind"] == "message")
    code = [e for e in c.events if e["meta"].get("tool") == "read_file" and e["text"].startswith(("# src/", "// src/"))]
    assert code and any(re.search(r"^def \w+_\w+\(", e["text"], re.M) for e in code)
    for e in code:
        for fn in re.split(r"\n\n", e["text"]):
            lines = [x for x in fn.splitlines() if not x.startswith(("# src/", "// src/"))]
            if lines:
                assert 20 <= len(lines) <= 80, fn[:200]
    outputs = " ".join(e["text"] for e in c.events if e["kind"] == "tool")
    for marker in ("$ pytest", "Traceback", "$ grep -rn", "$ curl", "$ ls -la", "# config/", "$ psql", "listening on"):
        assert marker in outputs, marker
    assert all(c.events[i]["kind"] == "tool" for q in c.questions for i in q.evidence)
    assert {q.category for q in _set("tool", 60_000).questions} == {"error", "port", "test", "config", "function"}


def test_unknown_shape_is_refused():
    with pytest.raises(ValueError):
        generate_shape("poetry", 1000, 0)


def test_recall_sets_file_splits_tune_and_report_seeds():
    sets = load_sets(str(ROOT / "configs/recall-sets.yaml"))
    assert sets == load_sets()                                       # default path, from the repo root
    assert set(sets["shapes"]) == set(SHAPES)
    for shape, s in sets["shapes"].items():
        assert s["words"] >= 1_000_000 and s["tune"] and s["report"]
        assert not set(s["tune"]) & set(s["report"]), shape
    assert "never" in (ROOT / "configs/recall-sets.yaml").read_text().lower()
