"""BEAM and OOLONG-style data: generated files in the public formats read back exactly, import keeps every
label out of the log (the sidecar holds them), malformed files fail with a place, generation is
deterministic by seed, and every generated OOLONG answer is recomputed here from the labelled text."""
from __future__ import annotations

import ast
import calendar
import dataclasses
import datetime as dt
import json
import os
import re
from collections import Counter
from fractions import Fraction

import pytest

from scroll.bench.beam import (ABILITIES, ANSWER_FIELDS, anchor_to_iso, generate_beam, import_beam, load_beam,
                               write_beam)
from scroll.bench.oolong import LABELS, generate_window, import_oolong, load_oolong, write_oolong
from scroll.events import EventLog
from scroll.importers import BadInputError
from scroll.labels import LabelStore, sidecar_path


@pytest.fixture
def newlog(tmp_path):
    logs = []

    def make(name="t.db"):
        logs.append(EventLog(tmp_path / name, durability="normal"))
        return logs[-1]

    yield make
    for lg in logs:
        lg.close()


def _events(log):
    return list(log.events())


def _dump(ev) -> str:
    return json.dumps([ev.session, ev.role, ev.kind, ev.text, ev.meta], ensure_ascii=False)


# ---------------------------------------------------------------- BEAM
def test_beam_generated_roundtrip(tmp_path):
    chat_doc, probing_doc = generate_beam(seed=1, batches=4)
    chat, probing = write_beam(tmp_path / "chat.json", tmp_path / "probing.json", seed=1, batches=4)
    assert json.loads(chat.read_text()) == chat_doc and json.loads(probing.read_text()) == probing_doc
    beam = load_beam(chat, probing)
    assert [b.number for b in beam.batches] == [1, 2, 3, 4]
    flat = [m for b in chat_doc for g in b["turns"] for m in g]
    turns = [t for b in beam.batches for t in b.turns]
    assert [(t.role, t.content, t.id) for t in turns] == [(m["role"], m["content"], m["id"]) for m in flat]
    assert all(b.turns[0].time_anchor == b.turns[-1].time_anchor for b in beam.batches)  # inherited in a batch
    assert {q.ability for q in beam.questions} == set(ABILITIES)
    assert {q.answer_field for q in beam.questions} == set(ANSWER_FIELDS)
    by = {q.ability: q for q in beam.questions}
    assert [q.qid for q in beam.questions] == [f"{a}-0" for a in probing_doc]
    assert by["abstention"].abstention and by["abstention"].source_ids == []
    assert not any(q.abstention for q in beam.questions if q.ability != "abstention")
    src = probing_doc["knowledge_update"][0]["source_chat_ids"]
    assert by["knowledge_update"].source_ids == src["original_info"] + src["updated_info"]
    assert by["knowledge_update"].answer == probing_doc["knowledge_update"][0]["answer"]
    assert by["event_ordering"].rubric == probing_doc["event_ordering"][0]["rubric"]
    # every source id names a message whose text carries the fact
    ids = {m["id"]: m["content"] for m in flat}
    assert by["knowledge_update"].answer in ids[src["updated_info"][0]]
    gap = int(by["temporal_reasoning"].answer.split()[0])
    sprint, release = (ids[i] for i in by["temporal_reasoning"].source_ids)
    year = int(beam.batches[0].turns[0].time_anchor[-4:])
    on = re.compile(r"on (\w+ \d+)\.")
    days = [dt.datetime.strptime(on.search(s)[1] + f" {year}", "%B %d %Y") for s in (sprint, release)]
    assert (days[1] - days[0]).days == gap


def test_beam_generation_is_deterministic(tmp_path):
    a = write_beam(tmp_path / "a1.json", tmp_path / "a2.json", seed=5)
    b = write_beam(tmp_path / "b1.json", tmp_path / "b2.json", seed=5)
    c = write_beam(tmp_path / "c1.json", tmp_path / "c2.json", seed=6)
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    assert [p.read_bytes() for p in a] != [p.read_bytes() for p in c]
    with pytest.raises(ValueError):
        generate_beam(batches=1)


def test_beam_import_keeps_labels_in_the_sidecar(tmp_path, newlog):
    chat, probing = write_beam(tmp_path / "chat.json", tmp_path / "probing.json", seed=2, batches=3)
    beam = load_beam(chat, probing)
    log = newlog()
    probes = import_beam(beam, log)
    assert [f.name for f in dataclasses.fields(probes[0])] == ["qid", "question"]
    assert [(p.qid, p.question) for p in probes] == [(q.qid, q.question) for q in beam.questions]
    events = _events(log)
    turns = [(i, t) for b in beam.batches for i, t in enumerate(b.turns)]
    assert len(events) == len(turns)
    assert [e.session for e in events] == [f"s{b + 1:03d}" for b, bt in enumerate(beam.batches) for _ in bt.turns]
    for ev, (i, turn) in zip(events, turns):
        assert (ev.text, ev.role, ev.kind, str(ev.origin)) == (turn.content, turn.role, "message", "history")
        assert ev.meta == {"turn": i, "date": turn.time_anchor}
        assert ev.time == anchor_to_iso(turn.time_anchor)
    store = LabelStore(log.path)
    assert os.stat(sidecar_path(log.path)).st_mode & 0o777 == 0o600
    top = store.get("beam")
    assert top["sessions"] == {"s001": 1, "s002": 2, "s003": 3}
    text_of = {e.seq: e.text for e in events}
    for q in beam.questions:
        rec = store.get(f"beam/{q.qid}")
        assert (rec["answer"], rec["rubric"], rec["ability"]) == (q.answer, q.rubric, q.ability)
        assert rec["missing_source_ids"] == [] and len(rec["evidence_seqs"]) == len(q.source_ids)
        contents = {t.id: t.content for _, t in turns}
        assert [text_of[s] for s in rec["evidence_seqs"]] == [contents[i] for i in q.source_ids]
        assert rec["evidence_seqs"] == [top["message_seqs"][str(i)] for i in q.source_ids]
    # nothing only the labels hold is reachable from any event (event-ordering rubric items name
    # topics, and short answers like "227ms" are facts: both are in the chat as evidence)
    dump = "\n".join(_dump(e) for e in events)
    judged = [r for q in beam.questions if q.ability != "event_ordering" for r in q.rubric]
    secret = [q.qid for q in beam.questions] + judged + [q.answer for q in beam.questions if len(q.answer) > 30] + \
        list(ABILITIES)
    assert len(judged) >= 10
    assert [s for s in secret if s in dump] == []
    with pytest.raises(ValueError, match="already holds events"):
        import_beam(beam, log)


def test_beam_reads_the_real_shape(tmp_path, newlog):
    """The shape of BEAM's chats/100K/1 files: anchors on group heads, extra message fields,
    nested and repeated source ids, string ids, extra question fields, an id not in the chat."""
    chat = [{"batch_number": 1, "turns": [
        [{"role": "user", "id": 0, "time_anchor": "March-15-2024", "index": "1,1", "question_type": "main_question",
          "content": "I have a deadline on March 15, 2024. ->-> 1,1"}, {"role": "assistant", "id": 1, "content": "Ok."}],
        [{"role": "user", "id": 2, "question_type": "answer_ai_question", "content": "Flask it is."},
         {"role": "assistant", "id": 3, "content": "Good."}]]},
        {"batch_number": 2, "turns": [[{"role": "user", "id": 4, "time_anchor": "Apr-02-2024", "content": "Now 250ms."},
                                       {"role": "assistant", "id": 5, "content": "Nice."}]]},
        {"batch_number": 3, "turns": [[{"role": "user", "id": 6, "content": "No anchor: the last one holds."}]]}]
    probing = {"temporal_reasoning": [{"question": "How long?", "answer": "18 days", "difficulty": "easy",
                                       "time_points": ["a", "b"],
                                       "source_chat_ids": {"first_event": [0], "second_event": ["4", 4, 0]},
                                       "rubric": ["LLM response should state: 18 days"]}],
               "summarization": [{"question": "Summarize.", "ideal_summary": "It went well.",
                                  "conversation_sessions": [0, 4], "source_chat_ids": [0, 2, 2, 99],
                                  "rubric": ["LLM response should contain: went well"]}],
               "abstention": [{"question": "My background?", "ideal_response": "No information.",
                               "abstention_type": "missing_detail", "rubric": ["No information"]}]}
    (tmp_path / "c.json").write_text(json.dumps(chat))
    (tmp_path / "p.json").write_text(json.dumps(probing))
    beam = load_beam(tmp_path / "c.json", tmp_path / "p.json")
    assert [t.time_anchor for t in beam.batches[0].turns] == ["March-15-2024"] * 4
    assert anchor_to_iso("March-15-2024") == "2024-03-15T00:00:00" and anchor_to_iso("Apr-02-2024")[:10] == "2024-04-02"
    assert anchor_to_iso("someday") is None and anchor_to_iso(None) is None
    tr, su, ab = beam.questions
    assert tr.source_ids == [0, 4] and tr.extra == {"time_points": ["a", "b"]} and tr.answer_field == "answer"
    assert su.source_ids == [0, 2, 99] and su.answer == "It went well." and su.extra == {"conversation_sessions": [0, 4]}
    assert ab.abstention and ab.answer_field == "ideal_response" and ab.extra == {"abstention_type": "missing_detail"}
    log = newlog()
    import_beam(beam, log)
    rec = LabelStore(log.path).get(f"beam/{su.qid}")
    assert rec["missing_source_ids"] == [99] and rec["evidence_sessions"] == ["s001"]
    assert [e.meta for e in _events(log)][2:] == [{"turn": 2, "date": "March-15-2024"},
                                                  {"turn": 3, "date": "March-15-2024"},
                                                  {"turn": 0, "date": "Apr-02-2024"}, {"turn": 1, "date": "Apr-02-2024"},
                                                  {"turn": 0, "date": "Apr-02-2024"}]
    assert [e.session for e in _events(log)] == ["s001"] * 4 + ["s002"] * 2 + ["s003"]
    assert all("index" not in e.meta and "question_type" not in e.meta for e in _events(log))


_GOOD_CHAT = [{"batch_number": 1, "turns": [[{"role": "user", "id": 0, "content": "hi"},
                                             {"role": "assistant", "id": 1, "content": "hello"}]]}]
_GOOD_PROBING = {"knowledge_update": [{"question": "q?", "answer": "a", "rubric": ["a"],
                                       "source_chat_ids": {"original_info": [0], "updated_info": [1]}}]}


def _chat(**patch):
    doc = json.loads(json.dumps(_GOOD_CHAT))
    for path, value in patch.items():
        doc[0]["turns"][0][1][path] = value
    return doc


@pytest.mark.parametrize("which,doc,expect", [
    ("chat", {"turns": []}, r"c\.json: top level: expected a non-empty list of batches, got dict"),
    ("chat", [], r"top level: expected a non-empty list"),
    ("chat", [{"batch_number": 1}], r"c\.json: \[0\]: expected a batch object with a 'turns' list"),
    ("chat", [{"batch_number": "one", "turns": []}], r"\[0\]\.batch_number: expected an integer, got str"),
    ("chat", [{"turns": ["x"]}], r"\[0\]\.turns\[0\]: expected a list of messages, got str"),
    ("chat", _chat(content=5), r"\[0\]\.turns\[0\]\[1\]\.content: expected a string, got int"),
    ("chat", _chat(role=""), r"\[0\]\.turns\[0\]\[1\]\.role: expected a non-empty string"),
    ("chat", _chat(id=0), r"\[0\]\.turns\[0\]\[1\]\.id: duplicate message id 0 \(first at \[0\]\.turns\[0\]\[0\]\)"),
    ("chat", _chat(id="abc"), r"\.id: expected a message id \(an integer\), got str 'abc'"),
    ("chat", _chat(time_anchor=3), r"\[0\]\.turns\[0\]\[1\]\.time_anchor: expected a string, got int"),
    ("probing", [], r"p\.json: top level: expected an object mapping ability"),
    ("probing", {"abstention": {}}, r"p\.json: abstention: expected a list of questions, got dict"),
    ("probing", {"abstention": [{"rubric": []}]}, r"abstention\[0\]\.question: expected a non-empty string, got null"),
    ("probing", {"x": [{"question": "q", "rubric": "r"}]}, r"x\[0\]\.rubric: expected a list of strings"),
    ("probing", {"x": [{"question": "q", "source_chat_ids": {"a": [1, ["2", None]]}}]},
     r"x\[0\]\.source_chat_ids\.a\[1\]\[1\]: expected a message id \(an integer\), got null"),
    ("probing", {"x": [{"question": "q", "source_chat_ids": [1.5]}]}, r"source_chat_ids\[0\]: .* got float"),
    ("probing", {"x": [{"question": "q", "id": "a"}, {"question": "r", "id": "a"}]}, r"x\[1\]\.id: duplicate"),
    ("probing", {"x": [{"question": "q", "difficulty": 3}]}, r"x\[0\]\.difficulty: expected a string"),
])
def test_beam_malformed_files_name_the_place(tmp_path, which, doc, expect):
    (tmp_path / "c.json").write_text(json.dumps(doc if which == "chat" else _GOOD_CHAT))
    (tmp_path / "p.json").write_text(json.dumps(doc if which == "probing" else _GOOD_PROBING))
    with pytest.raises(BadInputError, match=expect):
        load_beam(tmp_path / "c.json", tmp_path / "p.json")


def test_beam_unreadable_files(tmp_path):
    (tmp_path / "p.json").write_text(json.dumps(_GOOD_PROBING))
    with pytest.raises(BadInputError, match=r"c\.json: no such file"):
        load_beam(tmp_path / "c.json", tmp_path / "p.json")
    (tmp_path / "c.json").write_text('[\n {"batch_number": 1,\n  "turns": [}\n]')
    with pytest.raises(BadInputError, match=r"c\.json:3: invalid JSON"):
        load_beam(tmp_path / "c.json", tmp_path / "p.json")
    (tmp_path / "c.json").write_text('[{"batch_number": NaN, "turns": []}]')
    with pytest.raises(BadInputError, match=r"c\.json:1: NaN is not allowed"):
        load_beam(tmp_path / "c.json", tmp_path / "p.json")


# ---------------------------------------------------------------- OOLONG
_ITEM = re.compile(r"^Date: (.+?) \|\| User: (\d+) \|\| Instance: (.*) \|\| Label: (.+)$")


def _recompute(question: str, items: list[tuple[dt.date, str, str, str]], labels: list[str]):
    """The gold answer of a generated question, from the labelled items alone (None: unknown form)."""
    count = Counter(lab for *_, lab in items)
    day = lambda s: dt.datetime.strptime(s, "%b %d, %Y").date()  # noqa: E731
    if m := re.fullmatch(r"In the data, how many items carry the label '(.+?)'\? .*", question):
        return [count[m[1]]]
    if m := re.fullmatch(r"In the data, which label is the (most|least) common\? .*", question):
        best = (max if m[1] == "most" else min)(count[lab] for lab in labels)
        return [lab for lab in labels if count[lab] == best]
    if m := re.fullmatch(r"In the data, is label '(.+?)' more common, less common, or the same frequency as "
                         r"label '(.+?)'\? .*", question):
        a, b = count[m[1]], count[m[2]]
        return ["more common than" if a > b else "less common than" if a < b else "same frequency as"]
    if m := re.fullmatch(r"In the data, how many items from user (\d+) carry the label '(.+?)'\? .*", question):
        return [sum(1 for _, u, _, lab in items if u == m[1] and lab == m[2])]
    if m := re.fullmatch(r"In the data, which user has the most items with the label '(.+?)'\? .*", question):
        (top, n), (_, runner_up) = Counter(u for _, u, _, lab in items if lab == m[1]).most_common(2)
        assert n > runner_up   # asked only when one user leads
        return [int(top)]
    if m := re.fullmatch(r"In the data, how many items dated (before|after) (\w{3} \d\d, \d{4}) carry the label "
                         r"'(.+?)'\? .*", question):
        pivot = day(m[2])
        return [sum(1 for d, _, _, lab in items if lab == m[3] and (d < pivot if m[1] == "before" else d > pivot))]
    if m := re.fullmatch(r"In the data, is the label '(.+?)' more common, less common, or the same frequency among "
                         r"items dated before (.+?) as among items dated after .*", question):
        pivot = day(m[2])
        before = [lab for d, _, _, lab in items if d < pivot]
        after = [lab for d, _, _, lab in items if d > pivot]
        fb, fa = Fraction(before.count(m[1]), len(before)), Fraction(after.count(m[1]), len(after))
        assert fb == fa or abs(fb - fa) > Fraction(1, 50)   # asked only when the answer is clear
        return ["more common" if fb > fa else "less common" if fb < fa else "the same frequency"]
    if m := re.fullmatch(r"Counting only items dated in (\w+) of any year, how many carry the label '(.+?)'\? .*",
                         question):
        month = list(calendar.month_name).index(m[1])
        return [sum(1 for d, _, _, lab in items if d.month == month and lab == m[2])]
    return None


def test_oolong_answers_recomputed_independently(tmp_path):
    path = write_oolong(tmp_path / "o.json", seed=11, n_items=[60, 400, 3000])
    doc = json.loads(path.read_text())
    assert doc["format"] == "scroll-oolong/1" and len(doc["windows"]) == 3
    tasks = Counter()
    for w in doc["windows"]:
        lines = [ln for ln in w["context_window_text_with_labels"].split("\n") if ln.startswith("Date:")]
        items = [(dt.datetime.strptime(m[1], "%b %d, %Y").date(), m[2], m[3], m[4])
                 for m in map(_ITEM.match, lines)]
        plain = [ln for ln in w["context_window_text"].split("\n") if ln.startswith("Date:")]
        assert plain == [ln.rsplit(" || Label: ", 1)[0] for ln in lines]
        assert not any(lab in ln.lower() for ln in plain for lab in LABELS)   # labels are not in the text...
        per_text = {}
        for _, _, text, lab in items:                                        # ...but the text determines them
            per_text.setdefault(text, set()).add(lab)
        assert all(len(v) == 1 for v in per_text.values())
        assert w["context_len"] == len(w["context_window_text"].split()) and w["labels"] == list(LABELS)
        assert len(items) == [60, 400, 3000][w["context_window_id"]]
        for row in (r for r in doc["rows"] if r["context_window_id"] == w["context_window_id"]):
            expected = _recompute(row["question"], items, w["labels"])
            assert expected is not None, row["question"]
            assert ast.literal_eval(row["answer"]) == expected, row["question"]
            tasks[(row["task_group"], row["task"], row["answer_type"])] += 1
    assert {g for g, _, _ in tasks} == {"counting", "user", "timeline"}
    assert {t for _, _, t in tasks} == {"ANSWER_TYPE.NUMERIC", "ANSWER_TYPE.LABEL", "ANSWER_TYPE.COMPARISON",
                                        "ANSWER_TYPE.USER"}


def test_oolong_roundtrip_and_determinism(tmp_path):
    a = write_oolong(tmp_path / "a.json", seed=4, n_items=[50, 500])
    assert a.read_bytes() == write_oolong(tmp_path / "b.json", seed=4, n_items=[50, 500]).read_bytes()
    assert a.read_bytes() != write_oolong(tmp_path / "c.json", seed=5, n_items=[50, 500]).read_bytes()
    data = load_oolong(a)
    for wid, n in enumerate([50, 500]):
        window, questions = generate_window(seed=4, n_items=n, window_id=wid)
        assert data.windows[wid] == window
        assert [q for q in data.questions if q.window_id == wid] == questions
    big, questions = generate_window(seed=0, n_items=20_000)
    assert len(big.items) == 20_000 and len({i.user for i in big.items}) > 100 and len(questions) >= 15
    with pytest.raises(ValueError):
        generate_window(n_items=5)


def test_oolong_import_keeps_labels_in_the_sidecar(tmp_path, newlog):
    data = load_oolong(write_oolong(tmp_path / "o.json", seed=2, n_items=[300, 80]))
    with pytest.raises(BadInputError, match=r"2 context windows; choose one with window_id"):
        import_oolong(data, newlog("x.db"))
    with pytest.raises(BadInputError, match=r"no context window 7"):
        import_oolong(data, newlog("y.db"), window_id=7)
    log = newlog()
    probes = import_oolong(data, log, window_id=0)
    window = data.windows[0]
    events = _events(log)
    assert [e.text for e in events] == [i.line for i in window.items]
    assert {e.session for e in events} == {"s001"} and {str(e.origin) for e in events} == {"history"}
    assert [e.meta for e in events] == [{"item": k, "date": i.date_text} for k, i in enumerate(window.items)]
    assert [e.time[:10] for e in events] == [i.date.isoformat() for i in window.items]
    dump = "\n".join(_dump(e) for e in events).lower()
    assert [lab for lab in LABELS if lab in dump] == [] and "label" not in dump
    store = LabelStore(log.path)
    top = store.get("oolong")
    assert top["item_labels"] == [i.label for i in window.items] and top["seqs"] is None
    assert top["seq_range"] == [events[0].seq, events[-1].seq]
    questions = [q for q in data.questions if q.window_id == 0]
    assert [p.qid for p in probes] == [q.qid for q in questions] == top["questions"]
    for p, q in zip(probes, questions):
        assert p.question == f"{window.instructions}\n\n{q.question}"
        rec = store.get(f"oolong/{q.qid}")
        assert (rec["answer"], rec["task"], rec["answer_type"]) == (q.answer, q.task, q.answer_type)
    with pytest.raises(ValueError, match="already holds events"):
        import_oolong(data, log, window_id=1)


def test_oolong_reads_synth_rows(tmp_path):
    """A list of OOLONG-synth rows as the HF split exports them: the window repeated per row,
    answers as list literals (a date answer stays as given), input_subset as a string."""
    text = "Instructions here.\n\nDate: Jun 16, 2024 || User: 98779 || Instance: Where is Glasgow ?\n\n" \
           "Date: Apr 05, 2025 || User: 34204 || Instance: Who wrote Hamlet ?\nReminder."
    labelled = text.replace("Glasgow ?", "Glasgow ? || Label: location") \
        .replace("Hamlet ?", "Hamlet ? || Label: human being")
    row = {"context_len": 1024, "dataset": "trec_coarse", "context_window_id": 7, "num_labels": 6,
           "context_window_text": text, "context_window_text_with_labels": labelled,
           "task_group": "counting", "task": "TASK_TYPE.NUMERIC_ONE_CLASS", "answer_type": "ANSWER_TYPE.NUMERIC"}
    rows = [row | {"id": 13000023, "question": "How many?", "answer": "[1]", "input_subset": "False"},
            row | {"id": 13000024, "question": "Which?", "answer": "['human being']", "input_subset": "True"},
            row | {"id": 13000025, "question": "When?", "answer": "[datetime.date(2024, 6, 16)]"}]
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    data = load_oolong(tmp_path / "rows.json")
    w = data.windows[7]
    assert [(i.date, i.user, i.text, i.label) for i in w.items] == [
        (dt.date(2024, 6, 16), "98779", "Where is Glasgow ?", "location"),
        (dt.date(2025, 4, 5), "34204", "Who wrote Hamlet ?", "human being")]
    assert w.instructions == "Instructions here.\nReminder." and w.labels == ["human being", "location"]
    assert [(q.qid, q.answer, q.input_subset) for q in data.questions] == [
        ("13000023", [1], False), ("13000024", ["human being"], True),
        ("13000025", ["[datetime.date(2024, 6, 16)]"], False)]


def _oolong_doc(**patch):
    w = {"context_window_id": 0, "context_window_text": "Date: Jun 16, 2024 || User: 1 || Instance: Why ?"}
    r = {"id": 1, "context_window_id": 0, "question": "q", "answer": "[1]"}
    doc = {"windows": [w], "rows": [r]}
    for key, value in patch.items():
        part, field = key.split("__")
        (w if part == "w" else r)[field] = value
    return doc


@pytest.mark.parametrize("doc,expect", [
    ("text", r"o\.json: top level: expected \{'windows': \[\.\.\.\], 'rows': \[\.\.\.\]\} or a list"),
    ({"windows": [3], "rows": []}, r"windows\[0\]: expected a window object, got int"),
    (_oolong_doc(w__context_window_text=None), r"windows\[0\]\.context_window_text: expected a string, got null"),
    (_oolong_doc(w__context_window_text="hello\nDate: x || Userr: 1"),
     r"windows\[0\]\.context_window_text line 2: not 'Date: \.\.\. \|\| User"),
    (_oolong_doc(w__context_window_text="no items"), r"windows\[0\]\.context_window_text: no item lines"),
    (_oolong_doc(w__context_window_id=True), r"windows\[0\]\.context_window_id: expected an integer, got bool"),
    (_oolong_doc(w__labels="abc"), r"windows\[0\]\.labels: expected a list of strings"),
    (_oolong_doc(r__context_window_id=3), r"rows\[0\]\.context_window_id: no window 3"),
    (_oolong_doc(r__question=""), r"rows\[0\]\.question: expected a non-empty string"),
    (_oolong_doc(r__id=None), r"rows\[0\]\.id: expected an integer or string id, got null"),
    (_oolong_doc(r__task=4), r"rows\[0\]\.task: expected a string, got int"),
    ({"windows": _oolong_doc()["windows"], "rows": [{"id": 1, "context_window_id": 0, "question": "q"}]},
     r"rows\[0\]\.answer: missing"),
    ({"windows": _oolong_doc()["windows"] * 2, "rows": []}, r"windows\[1\]\.context_window_id: duplicate window 0"),
    ({"windows": _oolong_doc()["windows"], "rows": _oolong_doc()["rows"] * 2}, r"rows\[1\]\.id: duplicate question"),
    ([{"id": 1, "context_window_id": 0, "question": "q", "answer": "[1]"}],
     r"o\.json: \[0\]\.context_window_text: expected a string, got null"),
    ([{"id": 1, "context_window_id": "0", "question": "q", "answer": "[1]"}],
     r"o\.json: \[0\]\.context_window_id: expected an integer, got str"),
    ([], r"o\.json: top level: no context windows"),
])
def test_oolong_malformed_files_name_the_place(tmp_path, doc, expect):
    (tmp_path / "o.json").write_text(json.dumps(doc))
    with pytest.raises(BadInputError, match=expect):
        load_oolong(tmp_path / "o.json")
