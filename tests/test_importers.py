"""scroll.importers: strict JSON, robust format detection, and LongMemEval rows that carry
no labels (neutral session names in date order; labels in Parsed.labels for the sidecar)."""
from __future__ import annotations

import json

import pytest

from scroll.importers import (MAX_DEPTH, BadInputError, labels_with_seqs, neutral_session_names,
                              parse_file)


def _lme(qid="q1", dates=("2023/05/28 (Sun) 14:05", "2023/05/20 (Sat) 02:21", "2023/05/24 (Wed) 08:00")):
    ids = ["answer_4be1b6b4_2", "sharegpt_yhr_0", "ultrachat_1"]
    sessions = [
        [{"role": "user", "content": "I moved to Globex as a data engineer.", "has_answer": True},
         {"role": "assistant", "content": "Nice move."}],
        [{"role": "user", "content": "I started at Initech today."},
         {"role": "assistant", "content": "Congrats!", "has_answer": False}],
        [{"role": "user", "content": "Recipe for pancakes?"},
         {"role": "assistant", "content": "Flour, eggs, milk.", "has_answer": True}],
    ]
    return {"question_id": qid, "question_type": "knowledge-update", "question": "Where do I work now?",
            "answer": "Globex", "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ids[:len(dates)], "haystack_dates": list(dates),
            "haystack_sessions": sessions[:len(dates)], "answer_session_ids": ["answer_4be1b6b4_2"]}


def _write(tmp_path, content, name="in.json"):
    f = tmp_path / name
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    return f


def test_longmemeval_rows_carry_no_labels(tmp_path):
    f = _write(tmp_path, json.dumps([_lme("q7")]))
    p = parse_file(f)
    assert p.format == "longmemeval"
    # date order: 05/20 (file #1) -> s001, 05/24 (file #2) -> s002, 05/28 (file #0) -> s003; rows follow it
    assert [r["session"] for r in p.rows] == ["s001", "s001", "s002", "s002", "s003", "s003"]
    assert [r["text"] for r in p.rows][:2] == ["I started at Initech today.", "Congrats!"]
    assert p.rows[4]["meta"] == {"turn": 0, "date": "2023/05/28 (Sun) 14:05"}
    assert p.rows[4]["time"] == "2023-05-28T14:05:00"
    assert all(set(r["meta"]) == {"turn", "date"} for r in p.rows)
    assert all(str(r["origin"]) == "history" for r in p.rows)
    blob = json.dumps(p.rows, default=str)
    for leak in ("answer_", "sharegpt", "has_answer", "q7", "Globex\"", "knowledge-update", "question"):
        assert leak not in blob, leak
    assert list(p.labels) == ["longmemeval/q7"]
    lab = p.labels["longmemeval/q7"]
    assert lab["question_id"] == "q7" and lab["answer"] == "Globex"
    assert lab["sessions"] == {"s001": "sharegpt_yhr_0", "s002": "ultrachat_1", "s003": "answer_4be1b6b4_2"}
    assert lab["answer_sessions"] == ["s003"] and lab["answer_session_ids"] == ["answer_4be1b6b4_2"]
    assert lab["evidence_rows"] == [3, 4]  # only `has_answer: true` turns
    assert lab["evidence_turns"] == [{"session": "s002", "turn": 1}, {"session": "s003", "turn": 0}]
    assert "answer" not in json.dumps(p.info).replace("label_key", "")
    rec = labels_with_seqs(p, [10, 11, 12, 13, 14, 15])["longmemeval/q7"]
    assert rec["evidence_seqs"] == [13, 14] and rec["seq_range"] == [10, 15] and "evidence_rows" not in rec


def test_neutral_names_stable_and_padded():
    assert neutral_session_names(["2023/01/02 (Mon) 10:00", None, "2023/01/01 (Sun) 10:00", "garbage"]) == \
        ["s002", "s003", "s001", "s004"]
    assert neutral_session_names([None] * 3) == ["s001", "s002", "s003"]  # no dates: file order
    names = neutral_session_names(["2023/01/01 (Sun) 10:00"] * 1200)  # ties keep file order
    assert names[0] == "s0001" and names[-1] == "s1200"


def test_jsonl_keeps_user_meta_and_long_first_line(tmp_path):
    long = "word " * 2000  # > 4 KiB on line 1: auto-detect must still say jsonl
    lines = [{"session": "a", "role": "u", "text": long, "meta": {"mine": [1, 2]}},
             {"session": "a", "role": "v", "text": "short"}]
    f = _write(tmp_path, "\n".join(json.dumps(x) for x in lines) + "\n", "ev.jsonl")
    assert len(f.read_bytes().split(b"\n")[0]) > 4096
    p = parse_file(f)
    assert p.format == "jsonl" and len(p.rows) == 2 and p.rows[0]["meta"] == {"mine": [1, 2]}
    assert p.labels == {} and str(p.rows[1]["origin"]) == "history"


def test_one_long_line_longmemeval_object_and_bom(tmp_path):
    inst = _lme()
    inst["haystack_sessions"][0][1]["content"] = "x" * 10_000  # one line, far over 4 KiB
    assert parse_file(_write(tmp_path, json.dumps(inst))).format == "longmemeval"
    assert parse_file(_write(tmp_path, b"\xef\xbb\xbf" + json.dumps([inst]).encode())).format == "longmemeval"
    f = _write(tmp_path, b'\xef\xbb\xbf{"session":"s","role":"u","text":"hi"}\n', "bom.jsonl")
    assert parse_file(f).format == "jsonl"


@pytest.mark.parametrize("content,needle", [
    ("[" * 100_000 + "]" * 100_000, ":1: nested deeper than"),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, ":1: nested deeper than"),
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), ":1: nested deeper than"),
    ('[{"question_id": ' + "7" * 5000 + "}]", ":1: an integer with 5000 digits"),
    ('[\n {"question_id": "q", "answer": NaN}]', ":2: NaN is not allowed"),
    ('[\n\n {"question_id": "q", "answer": -Infinity}]', ":3: -Infinity is not allowed"),
    ('[{"question_id": "q", "answer": 1e999}]', ":1: number 1e999 is out of range"),
    ('[{"question_id": "q", "x": "NaN Infinity ' + "9" * 5000 + '"}, NaN]', ":1: NaN is not allowed"),
])
def test_strict_json_refusals_with_a_place(tmp_path, content, needle):
    with pytest.raises(BadInputError) as e:
        parse_file(_write(tmp_path, content))
    assert needle in str(e.value), str(e.value)


@pytest.mark.parametrize("line,needle", [
    ('{"session":"s","role":"u","text":"x","meta":' + '{"a":' * 100_000 + "1" + "}" * 100_001, ":2: nested deeper"),
    ('{"session":"s","role":"u","text":"x","meta":{"v":NaN}}', ":2: NaN is not allowed"),
    ('{"session":"s","role":"u","text":"x","meta":{"v":1e400}}', ":2: number 1e400 is out of range"),
    ('{"session":"s","role":"u","text":"x","meta":{"v":' + "1" * 5000 + "}}", ":2: an integer with 5000 digits"),
    ('{"session":"s","role":"u","text":"\\ud800"}', ":2: field 'text' is not valid Unicode"),
    ('{"session":"\\udfff","role":"u","text":"x"}', ":2: field 'session' is not valid Unicode"),
])
def test_jsonl_refusals_name_the_line(tmp_path, line, needle):
    f = _write(tmp_path, '{"session":"s","role":"u","text":"fine"}\n' + line + "\n", "ev.jsonl")
    with pytest.raises(BadInputError) as e:
        parse_file(f)
    assert needle in str(e.value), str(e.value)
    p = parse_file(f, skip_bad=True)
    assert len(p.rows) == 1 and len(p.skipped) == 1


def test_longmemeval_field_checks(tmp_path):
    bad_date = _lme()
    bad_date["haystack_dates"][1] = {"nested": "date"}
    no_qid = _lme()
    del no_qid["question_id"]
    surrogate = _lme()
    surrogate["haystack_sessions"][0][0]["content"] = "\ud800"
    for inst, needle in ((bad_date, "haystack_dates[1] must be a string"),
                         (no_qid, "'question_id' must be a non-empty string"),
                         (surrogate, "turn 0: field 'text' is not valid Unicode")):
        with pytest.raises(BadInputError) as e:
            parse_file(_write(tmp_path, json.dumps([inst])))
        assert needle in str(e.value), str(e.value)
