"""distill.export: runs -> TRL prompt-completion JSONL (prompts rebuilt from the log, sha-checked),
notebooks nbclient can replay, and filters.json."""
from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from scroll.agent import prompt_sha256
from scroll.config import LoopConfig
from scroll.llm import ScriptedLLM
from scroll.policies.reference import ReferencePolicy
from scroll.runner import load_records, run_tasks
from tests.test_runner import make_refs

CFG = LoopConfig(max_steps=6, cell_timeout=20)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Teacher runs over a train and a dev split, plus a scripted run that answers wrong."""
    tmp = tmp_path_factory.mktemp("export-runs")
    refs = make_refs(tmp, seeds=(0,), tokens=10_000)
    for r in refs[4:]:
        r.split = "dev"
    teacher = tmp / "teacher"
    run_tasks(refs, ReferencePolicy, CFG, teacher, concurrency=2, label="teacher", progress=False)
    wrong = tmp / "wrong"
    run_tasks(refs[:2], lambda: ScriptedLLM(lambda m: "Let me answer.\n```python\nprint('guess')\nfinal('Atlantis')\n```"),
              CFG, wrong, concurrency=1, label="scripted", progress=False)
    return {"tmp": tmp, "refs": refs, "teacher": teacher, "wrong": wrong}


def _read(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_export_loads_with_datasets_in_trl_prompt_completion_format(runs, tmp_path):
    from datasets import load_dataset
    from trl.data_utils import is_conversational

    out = tmp_path / "sft"
    rep = export_runs([runs["teacher"], runs["wrong"]], out)
    recs = load_records(runs["teacher"])
    n_train = sum(r.steps for r in recs if r.split == "train")
    n_dev = sum(r.steps for r in recs if r.split == "dev")
    assert rep["files"]["train"]["lines"] == n_train and rep["files"]["dev"]["lines"] == n_dev
    assert rep["mismatches"] == 0 and rep["exported_steps"] == n_train + n_dev
    ds = load_dataset("json", data_files={"train": str(out / "train.jsonl"), "dev": str(out / "dev.jsonl")})
    assert ds["train"].num_rows == n_train and ds["dev"].num_rows == n_dev
    assert set(ds["train"].column_names) == {"prompt", "completion"}
    row = ds["train"][0]
    assert is_conversational(row)
    assert row["prompt"][0]["role"] == "system" and row["prompt"][1]["content"].startswith("Task: ")
    assert row["prompt"][-1]["role"] == "user"
    assert row["completion"] == [{"role": "assistant", "content": row["completion"][0]["content"]}]
    assert row["completion"][0]["content"].startswith("HEADLINE: ") and "ms.search(" in row["completion"][0]["content"]
    # the meta file is line for line beside the data, and its sha is the prompt's
    data, meta = _read(out / "train.jsonl"), _read(out / "train.meta.jsonl")
    assert len(data) == len(meta)
    for d, m in zip(data, meta):
        assert prompt_sha256(d["prompt"]) == m["prompt_sha256"]
        assert m["split"] == "train" and m["label"] == "teacher" and m["step"] >= 1
        assert m["prompt_tokens"] > 0 and m["token_counter"].startswith("chars/4")
    steps_of_first = [m["step"] for m in meta if m["session"] == meta[0]["session"]]
    assert steps_of_first == list(range(1, len(steps_of_first) + 1))
    # filters.json: the wrong answers were filtered out, and said so
    f = json.loads((out / "filters.json").read_text())
    by = {x["name"]: x for x in f["filters"]}
    assert by["success"]["before"] == len(recs) + 2 and by["success"]["after"] == len(recs)
    assert by["prompt_match"]["dropped"] == 0 and f["git_sha"] and len(f["source_runs"]) == 2
    assert {s["label"] for s in f["source_runs"]} == {"teacher", "scripted"}


def test_trajectory_rows_chain_every_step_of_a_trajectory(runs, tmp_path):
    from trl.data_utils import is_conversational

    steps = export_runs([runs["teacher"]], tmp_path / "steps", notebooks=False)
    rep = export_runs([runs["teacher"]], tmp_path / "traj", notebooks=False, trajectories=True)
    assert rep["exported_steps"] == steps["exported_steps"] and "language-modeling" in rep["format"]
    assert rep["rows"] == rep["exported_trajectories"]                 # no view was rebuilt: one row each
    for split in ("train", "dev"):
        by_step = _read(tmp_path / "steps" / f"{split}.jsonl")
        data, meta = _read(tmp_path / "traj" / f"{split}.jsonl"), _read(tmp_path / "traj" / f"{split}.meta.jsonl")
        assert len(data) == len(meta) == rep["files"][split]["lines"] and rep["files"][split]["steps"] == len(by_step)
        k = 0
        for d, m in zip(data, meta):
            msgs = d["messages"]
            assert set(d) == {"messages"} and is_conversational(d) and msgs[-1]["role"] == "assistant"
            # each step's exact prompt (its logged sha256) is a prefix of the row, followed by its reply
            assert m["steps"] == list(range(1, len(m["steps"]) + 1))
            for sha in m["prompt_sha256s"]:
                row = by_step[k]
                n = len(row["prompt"])
                assert prompt_sha256(msgs[:n]) == sha == prompt_sha256(row["prompt"])
                assert msgs[n] == row["completion"][0]
                k += 1
        assert k == len(by_step)
    with pytest.raises(ValueError, match="dedup_trajectories"):
        export_runs([runs["teacher"]], tmp_path / "x", notebooks=False, trajectories=True, dedup=True)


def test_all_max_steps_max_tokens_and_dedup(runs, tmp_path):
    everything = export_runs([runs["teacher"], runs["wrong"]], tmp_path / "all", success_only=False,
                             notebooks=False)
    assert everything["exported_trajectories"] == len(runs["refs"]) + 2
    assert not any(x["name"] == "success" for x in everything["filters"])
    short = export_runs([runs["teacher"], runs["wrong"]], tmp_path / "short", success_only=False,
                        max_steps=1, notebooks=False)
    assert short["exported_trajectories"] == 2  # the scripted answers took one step, the teacher three
    sizes = sorted(m["prompt_tokens"] + m["completion_tokens"] for m in _read(tmp_path / "all" / "train.meta.jsonl"))
    cap = sizes[len(sizes) // 2]
    capped = export_runs([runs["teacher"]], tmp_path / "cap", max_tokens=cap, notebooks=False)
    meta = _read(tmp_path / "cap" / "train.meta.jsonl")
    assert meta and all(m["prompt_tokens"] + m["completion_tokens"] <= cap for m in meta)
    assert {x["name"]: x for x in capped["filters"]}["max_tokens"]["dropped"] > 0
    # the deterministic teacher run twice on the same tasks writes the same steps: dedup keeps one
    again = runs["tmp"] / "teacher-again"
    run_tasks(runs["refs"][:2], ReferencePolicy, CFG, again, concurrency=1, label="teacher", progress=False)
    dup = export_runs([runs["teacher"], again], tmp_path / "dup", notebooks=False)
    ded = export_runs([runs["teacher"], again], tmp_path / "ded", dedup=True, notebooks=False)
    d = {x["name"]: x for x in ded["filters"]}["dedup"]
    assert d["dropped"] > 0 and ded["exported_steps"] == dup["exported_steps"] - d["dropped"]


def test_a_tampered_reply_is_refused_as_a_mismatch(runs, tmp_path):
    from scroll.events import EventLog

    # a copy of the runs and their log, so the other tests keep the intact one
    work = tmp_path / "copy"
    shutil.copytree(runs["tmp"], work, ignore=shutil.ignore_patterns("*.index"))
    old = str(runs["tmp"])
    text = (runs["teacher"] / "runs.jsonl").read_text().replace(old, str(work))
    (work / "teacher" / "runs.jsonl").write_text(text)
    rec = next(r for r in load_records(work / "teacher") if r.steps == 2)
    with EventLog(rec.db, readonly=True) as log:
        first_reply = next(e for e in log.events(session=rec.session) if e.kind == "message" and e.role == "assistant")
    con = sqlite3.connect(rec.db)  # past the log's guards: drop the no-update trigger and edit a reply
    con.execute("DROP TRIGGER events_no_update")
    con.execute("UPDATE events SET text = text || ' # edited' WHERE seq = ?", (first_reply.seq,))
    con.commit()
    con.close()
    rep = export_runs([work / "teacher"], tmp_path / "sft", notebooks=False)
    # step 1's prompt is intact; step 2 was shown the original reply, not the edited one
    mism = [m for m in rep["mismatched_steps"] if m["session"] == rec.session]
    assert [m["step"] for m in mism] == [2] and rep["mismatches"] == 1
    pm = {x["name"]: x for x in rep["filters"]}["prompt_match"]
    assert pm["dropped"] == 1
    meta = [m for f in ("train", "dev") for m in _read(tmp_path / "sft" / f"{f}.meta.jsonl")]
    assert [m["step"] for m in meta if m["session"] == rec.session] == [1]
    assert rep["exported_steps"] == sum(r.steps for r in load_records(work / "teacher")) - 1


def test_exported_notebook_replays_in_nbclient(runs, tmp_path):
    import nbformat
    from nbclient import NotebookClient

    rep = export_runs([runs["teacher"]], tmp_path / "sft")
    assert len(rep["notebooks"]) == rep["exported_trajectories"]
    info = rep["notebooks"][0]
    assert info["path"] and info["cells"] == 2
    nb = nbformat.read(info["path"], as_version=4)

    def streams(nb):
        return ["".join(o.get("text", "") for o in c.get("outputs", []) if o.output_type == "stream")
                for c in nb.cells if c.cell_type == "code"]
    logged = streams(nb)
    nb.cells.append(nbformat.v4.new_code_cell("print(FINAL_ANSWER)"))
    NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    replayed = streams(nb)
    # every cell ran; the computed answer and the submitted one are the session's. (The printed
    # top-k search snippets may differ: BM25 statistics now include the events appended since.)
    answer_line = [ln for s in logged for ln in s.splitlines() if ln.startswith("ANSWER:")]
    assert answer_line and answer_line[0] in "".join(replayed)
    rec = next(r for r in load_records(runs["teacher"]) if r.session == info["session"])
    assert replayed[-1] == f"{rec.answer}\n"


def test_tokenizer_counts(runs, tmp_path, tiny_model_dir):
    rep = export_runs([runs["teacher"]], tmp_path / "sft", tokenizer=tiny_model_dir, notebooks=False)
    meta = _read(tmp_path / "sft" / "train.meta.jsonl")
    assert rep["token_counter"].startswith("tokenizer:") and meta[0]["token_counter"] == rep["token_counter"]
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    data = _read(tmp_path / "sft" / "train.jsonl")
    assert meta[0]["completion_tokens"] == len(tok(data[0]["completion"][0]["content"],
                                                   add_special_tokens=False)["input_ids"])


def test_refuses_a_folder_without_runs(tmp_path):
    with pytest.raises(FileNotFoundError):
        export_runs([tmp_path], tmp_path / "out")


from distill.export import export_runs  # noqa: E402


def test_cli_export(runs, tmp_path):
    from typer.testing import CliRunner

    from scroll.cli import app

    out = tmp_path / "sft"
    res = CliRunner().invoke(app, ["distill", "export", "--runs", str(runs["teacher"]), "--runs", str(runs["wrong"]),
                                   "--out", str(out), "--dedup", "--no-notebooks", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["options"]["dedup"] and rep["options"]["success_only"] and rep["mismatches"] == 0
    assert (out / "train.jsonl").is_file() and (out / "dev.jsonl").is_file() and (out / "filters.json").is_file()
    res = CliRunner().invoke(app, ["distill", "export", "--runs", str(tmp_path), "--out", str(out), "--json"])
    assert res.exit_code == 1 and "runs.jsonl" in json.loads(res.stdout)["error"]
