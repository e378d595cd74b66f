"""LCM's tools as a cell executor, for an agent loop whose only actions are LCM's tools.

    box = LcmToolbox(log, "run-1", llm, config=LcmConfig(context_tokens=4000, window=8192))
    box.capability.set_scope(["s001", "s002"])      # what Agent.run does with the granted sessions
    r = box.execute('grep("marathon")\\nexpand_query("sum_ab12...", "Where was the race?")')
    r.stdout, r.error, r.final, r.seqs                # the fields Agent reads from Kernel.execute

It stands where the loop's Python kernel stands (`Agent.open(..., kernel=box)`), but runs no
Python: a cell may only be a sequence of calls with literal arguments to `grep(pattern)`,
`describe(node_id)`, `expand_query(node_id, question)` and `final(answer)` (optionally
wrapped in `print(...)`); anything else is an error the model reads. Raw `expand` is not
offered: as in LCM, the main loop sees summaries and delegates deep reads to a sub-call.
The cell and its output are logged in the agent's own session (origin `agent`, kinds
`code` / `output`, like the kernel's), so trajectories look the same for both managers.
The DAG is built on the first cell (or `prepare()`); `system_prompt()` renders LCM's
instructions with the active context (summaries + recent turns) for the loop's view.
Model calls of the build and of expand_query are summed in `usage`. `timeout` is accepted
for the kernel's signature and not enforced (no model code runs; sub-calls are bounded by
`max_calls` per cell and the backend's own timeouts).
"""
from __future__ import annotations

import ast
from typing import Any, Iterable

from ..executor import ExecResult
from ..llm.base import LLMError
from ..origin import Origin
from .config import LcmConfig
from .dag import SummaryDag
from .store import DagStore
from .summarize import Usage
from .tools import describe, expand_query, grep

TOOLS = ("grep", "describe", "expand_query", "final")
INSTRUCTIONS = """You answer a question about a long chat history between a user and an assistant.
Below is your context: summaries of older parts of the history ([summary id | ... | seqs a-b | ...]) and
the most recent turns ([seq N | session | date | role]). Details may have been summarized away; the exact
turns are kept and you can reach them with these tools. Reply with one ```python block of tool calls:
  grep("regex")                        search every turn and summary; shows the summary covering each turn
  describe("sum_...")                  a summary's coverage, children and text
  expand_query("sum_...", "question")  a helper reads that summary's exact turns and answers, citing seqs
  final("answer")                      submit your answer (brief) and stop
Only these calls, with literal arguments; their outputs come back in the next message.

Context:
{context}"""


class _Scope:
    def __init__(self, box: "LcmToolbox"):
        self._box = box

    def set_scope(self, sessions: Iterable[str] | None) -> None:
        self._box.set_scope(sessions)


class LcmToolbox:
    def __init__(self, log: Any, session: str, llm: Any, *, config: LcmConfig, store_path: str | None = None,
                 token_cap: int = 400, max_calls: int = 8, max_output_chars: int = 8000):
        self.log, self.session, self.llm, self.config = log, session, llm, config
        self.store_path, self.token_cap, self.max_calls = store_path, token_cap, max_calls
        self.max_output_chars = max_output_chars
        self.capability = _Scope(self)
        self.usage = Usage()
        self.sessions: list[str] | None = None
        self.dag: SummaryDag | None = None
        self._store: DagStore | None = None

    def set_scope(self, sessions: Iterable[str] | None) -> None:
        """The granted history (None: every session holding history); drops a built DAG."""
        self.sessions = None if sessions is None else list(sessions)
        self._close_dag()

    def prepare(self) -> SummaryDag:
        """Build (or resume) the DAG of the granted history; its model calls go to `usage`."""
        if self.dag is None:
            self._store = DagStore.for_log(self.log, self.store_path)
            dag = SummaryDag(self.log, self.sessions, config=self.config, store=self._store)
            report = dag.build(self.llm)
            self.usage.add(report.usage)
            self.dag = dag
        return self.dag

    def system_prompt(self) -> str:
        """LCM's instructions and the active context, oldest first."""
        return INSTRUCTIONS.format(context="\n\n".join(text for _, text in self.prepare().context()))

    def execute(self, code: str, timeout: float | None = None) -> ExecResult:
        """Run one cell of tool calls; log it and its output; never raise for the model's mistakes."""
        code_seq = self.log.append(session=self.session, role="assistant", text=code, kind="code",
                                   meta={"executor": "lcm"}, sync=False, origin=Origin.AGENT)
        outputs, error, final = [], None, None
        try:
            calls = parse_cell(code, self.max_calls)
            dag = self.prepare()
            for name, args in calls:
                if name == "final":
                    final = str(args[0]) if args else ""
                    outputs.append(f"final answer submitted: {final}")
                    break
                outputs.append(f">>> {name}({', '.join(repr(a) for a in args)})\n{self._run(dag, name, args)}")
        except ValueError as e:
            error = str(e)
        except LLMError as e:  # the build's model calls failed: say so, never an empty history
            error = f"the model backend failed while summarizing the history: {e}"
        stdout = "\n\n".join(outputs)
        truncated = len(stdout) > self.max_output_chars
        if truncated:
            stdout = stdout[:self.max_output_chars] + "\n[... output cut]"
        out_seq = self.log.append(session=self.session, role="kernel", text=stdout + (f"\n{error}" if error else ""),
                                  kind="output", origin=Origin.AGENT,
                                  meta={"code_seq": code_seq, "error": error, "truncated": truncated,
                                        "executor": "lcm"})
        return ExecResult(stdout, error, seqs=[code_seq, out_seq], truncated=truncated, final=final)

    def _run(self, dag: SummaryDag, name: str, args: tuple) -> str:
        try:
            if name == "grep":
                return grep(dag, *args)
            if name == "describe":
                return describe(dag, *args)
            return expand_query(dag, args[0], args[1], self.llm, self.token_cap, usage=self.usage,
                                window=self.config.window)
        except (TypeError, IndexError) as e:
            return f"{name}: bad arguments ({e})"

    def _close_dag(self) -> None:
        self.dag = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def close(self) -> None:
        self._close_dag()


def parse_cell(code: str, max_calls: int = 8) -> list[tuple[str, tuple]]:
    """The tool calls of a cell: [(name, literal args)], or ValueError saying what is wrong."""
    try:
        tree = ast.parse(code or "")
    except SyntaxError as e:
        raise ValueError(f"SyntaxError: {e.msg} (line {e.lineno})") from None
    calls = []
    for stmt in tree.body:
        node = stmt.value if isinstance(stmt, ast.Expr) else None
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
                and len(node.args) == 1 and not node.keywords):
            node = node.args[0]
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in TOOLS):
            raise ValueError(f"line {stmt.lineno}: only calls to {', '.join(TOOLS)} are allowed")
        if node.keywords:
            raise ValueError(f"line {stmt.lineno}: pass arguments by position")
        try:
            args = tuple(ast.literal_eval(a) for a in node.args)
        except ValueError:
            raise ValueError(f"line {stmt.lineno}: arguments must be literals (strings, numbers)") from None
        calls.append((node.func.id, args))
    if not calls:
        raise ValueError("the cell has no tool call")
    if len(calls) > max_calls:
        raise ValueError(f"at most {max_calls} tool calls per cell")
    return calls


__all__ = ["LcmToolbox", "parse_cell", "INSTRUCTIONS", "TOOLS"]
