"""`scroll tasks write`: a generated history in LongMemEval / LoCoMo format, read back by the
project's own loaders (scroll.importers, scroll.bench.locomo)."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from scroll.cli import app


def _write(tmp_path, *args):
    r = CliRunner().invoke(app, ["tasks", "write", *args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_longmemeval_file_round_trips_through_the_importer(tmp_path):
    from scroll.importers import parse_file

    out = tmp_path / "lme.json"
    s = _write(tmp_path, str(out), "--tokens", "1e4", "--seed", "3")
    assert 10_000 <= s["tokens"] <= 20_000 and s["questions"] == 28
    data = json.loads(out.read_text())
    types = {d["question_type"] for d in data}
    assert types == {"knowledge-update", "multi-session", "temporal-reasoning", "single-session-user",
                     "single-session-preference"}
    abs_ = [d for d in data if d["question_id"].endswith("_abs")]
    assert len(abs_) == 4 and all(d["answer_session_ids"] == [] for d in abs_)
    assert all(d["answer_session_ids"] for d in data if not d["question_id"].endswith("_abs"))
    parsed = parse_file(out, instance=data[0]["question_id"])
    text = " ".join(r["text"] for r in parsed.rows)
    assert len(parsed.rows) == sum(len(s) for s in data[0]["haystack_sessions"])
    assert "has_answer" not in text and data[0]["question"] not in text


def test_questions_limit_and_locomo(tmp_path):
    from scroll.bench.locomo import load

    s = _write(tmp_path, str(tmp_path / "two.json"), "--tokens", "2e4", "--questions", "2")
    assert s["questions"] == 2 and len(json.loads((tmp_path / "two.json").read_text())) == 2
    loc = tmp_path / "loc.json"
    s = _write(tmp_path, str(loc), "--tokens", "1e4", "--format", "locomo", "--families",
               "update_city,abs_friend,trip_gap")
    events, questions = load(loc)
    assert s["questions"] == 3 and len(questions) == 3 and len(events) == s["events"]
    cats = sorted(q.category for q in questions)
    assert cats == ["adversarial", "single-hop", "temporal"], cats


def test_bad_input_is_a_clear_error(tmp_path):
    for args in (["--tokens", "lots"], ["--tokens", "10"], ["--format", "csv"], ["--families", "nope"]):
        r = CliRunner().invoke(app, ["tasks", "write", str(tmp_path / "x.json"), *args])
        assert r.exit_code != 0 and "Traceback" not in r.output, (args, r.output)
    assert not (tmp_path / "x.json").exists()
