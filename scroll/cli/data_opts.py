"""The options that read a data file instead of a task set, shared by `scroll bench run --data`,
`scroll collect --data` and `scroll distill eval --data`: one reading, one judge setup."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import fail

DATA_HELP = ("A data file instead of --taskset: LongMemEval (longmemeval_s/m/oracle JSON, or `scroll tasks write`'s), "
             "LoCoMo (locomo10.json), BEAM (a chat.json, or its folder; the probing questions beside it or "
             "--probing), OOLONG (rows JSON) or jsonl-qa (your own questions over an imported log, with --db; "
             "scroll.bench.qa_file). Each history is imported into its own log under OUT/histories "
             "(answers in its label sidecar, never in the log).")
FORMAT_HELP = "With --data: longmemeval | locomo | beam | oolong | jsonl-qa [default: detected from the content]."
DB_QA_HELP = "With a jsonl-qa --data file: the event log it asks about (scroll import)."
JUDGE_HELP = ("With --data: an OpenAI-compatible server URL for the judge model (LongMemEval's yes/no judge, BEAM's "
              "rubric judge). Without one: LongMemEval by normalised exact/contains match, BEAM by a deterministic "
              "rubric-word overlap (a proxy). LoCoMo (token F1) and OOLONG (numeric partial credit) need none.")
IMPORT_DIR_HELP = ("With --data: where the imported history logs go [default: OUT/histories]; runs of one file "
                   "(bench, collect, eval) may share it.")

# the --data options, one definition each for every command that takes them (`data: DataOpt = None`)
DataOpt = Annotated[Optional[Path], typer.Option("--data", help=DATA_HELP)]
FormatOpt = Annotated[Optional[str], typer.Option("--format", help=FORMAT_HELP)]
DbQaOpt = Annotated[Optional[Path], typer.Option("--db", help=DB_QA_HELP)]
ImportDirOpt = Annotated[Optional[Path], typer.Option("--import-dir", help=IMPORT_DIR_HELP)]
JudgeUrlOpt = Annotated[Optional[str], typer.Option("--judge-url", help=JUDGE_HELP)]
JudgeLlmOpt = Annotated[Optional[str], typer.Option("--judge-llm", help="With --data: the judge model's LLM config "
                                                    "name/path (instead of --judge-url).")]
JudgeModelOpt = Annotated[Optional[str], typer.Option("--judge-model", help="The judge's model name on its server.")]


def data_refs(data: Path, fmt: Optional[str], probing: Optional[Path], import_dir: Path, limit: Optional[int],
              judge_url: Optional[str], judge_llm: Optional[str], judge_model: Optional[str],
              db: Optional[Path] = None):
    """(refs, what was prepared, the judge backend or None) for `--data`; ValueError on bad input."""
    from scroll.bench.datasets import prepare
    from scroll.bench.judges import LLMJudge

    backend = None
    if judge_url and judge_llm:
        raise ValueError("give --judge-url or --judge-llm, not both")
    if judge_url or judge_llm:
        from scroll.llm import LLMConfig, make_llm
        from scroll.runner import Serialized

        backend = Serialized(make_llm(LLMConfig.from_flags(judge_url, judge_llm, model=judge_model)))
    elif judge_model:
        raise ValueError("--judge-model goes with --judge-url / --judge-llm")
    try:
        prep = prepare(data, import_dir, fmt=fmt, probing=probing, limit=limit, db=db,
                       llm_judge=LLMJudge(backend, rubric_tokens=64) if backend is not None else None)
    except BaseException:
        if backend is not None:
            backend.close()
        raise
    return prep.refs, prep, backend


@dataclass
class DataChoice:
    """`--data FILE` and its options: which file, which of its parts (scroll.bench.data_parts)."""

    data: Path
    parts: list[str]
    fmt: Optional[str] = None
    db: Optional[Path] = None
    import_dir: Optional[Path] = None
    judge_url: Optional[str] = None
    judge_llm: Optional[str] = None
    judge_model: Optional[str] = None

    def refs(self, out: Path, limit: Optional[int]):
        """(refs of the chosen parts, first `limit`; the record of what was chosen; the judge backend)."""
        from scroll.bench import data_parts
        refs, prep, backend = data_refs(self.data, self.fmt, None, self.import_dir or out / "histories", None,
                                        self.judge_url, self.judge_llm, self.judge_model, db=self.db)
        try:
            refs, chosen = data_parts.split(refs, self.parts)
        except ValueError:
            if backend is not None:
                backend.close()
            raise
        refs = refs[:limit] if limit else refs
        return refs, {"file": str(self.data), "format": prep.format, "histories": prep.histories,
                      "questions_in_file": prep.questions_in_file, "judge": refs[0].task.judge_name, **chosen}, backend


def data_choice(data, parts, default_parts, fmt, db, import_dir, judge_url, judge_llm, judge_model, taskset,
                 split, questions, as_json) -> Optional[DataChoice]:
    """The --data choice (None with --taskset); refuses a mix of the two."""
    if (taskset is None) == (data is None):
        fail("give --taskset DIR or --data FILE, one of them", as_json=as_json)
    if data is None:
        if parts or fmt or db or import_dir or judge_url or judge_llm or judge_model:
            fail("--part, --format, --db, --import-dir and --judge-* go with --data", as_json=as_json)
        return None
    if split or questions is not None:
        fail("--split and --questions go with --taskset; --data takes --part", as_json=as_json)
    from scroll.bench.data_parts import check_parts

    parts = list(parts or default_parts)
    try:
        check_parts(parts)   # before any import
    except ValueError as e:
        fail(str(e), as_json=as_json)
    return DataChoice(data, parts, fmt, db, import_dir, judge_url, judge_llm, judge_model)
