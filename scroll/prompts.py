"""The system prompt: the rules of the environment and the `ms` API the model codes against.

The core prompt and prelude document `ms`, Python and the question-agnostic helpers of
scroll/toolkit.py (over scroll/thesaurus.py) only; a task pack (scroll.packs) adds its own text and helpers:
`system_prompt(pack)`, `kernel_prelude(pack)`."""
from __future__ import annotations

from pathlib import Path

# Defined in the kernel at every start (not logged, not exposed): `final(answer)` ends the task.
# The answer travels to the host through the capability (`ms.final`), never through the
# printout, so no text in history can end a task by looking like an answer.
FINAL_PRELUDE = '''
def final(answer):
    """End the task with this answer (converted to str)."""
    ms.final(str(answer))
'''

# The question-agnostic helpers of scroll/toolkit.py, over the thesaurus of scroll/thesaurus.py and the
# statement reading of scroll/statements.py,
# defined in the kernel after `final` (one source of truth: the host tests exec the same files).
TOOLKIT_SOURCE = "\n".join((Path(__file__).with_name(f)).read_text(encoding="utf-8")
                           for f in ("thesaurus.py", "statements.py", "toolkit.py"))
KERNEL_PRELUDE = FINAL_PRELUDE + "\n" + TOOLKIT_SOURCE

SYSTEM_PROMPT = """You are an agent whose whole history lives in an append-only event log outside this prompt.
You see only a bounded working view. You act by replying with ONE ```python code block; it runs in a persistent
Python kernel (variables survive between cells) and ONLY what the cell prints comes back to you.

The capability object `ms` (read-only toward history; every result carries its `seq` address):
  ms.search(query, k=10, session=None, kind=None, role=None, since=None, until=None, seq_range=None, origin="history")
      -> hits, best first (k=None: every match), each with .seq .score .session .role .kind .time .text .meta (BM25 over the history;
         your own task, replies, cells and outputs only with origin="agent", everything with origin="*")
  ms.expand(seq) -> the exact event;  ms.expand(lo, hi) -> events lo..hi inclusive, in order
  ms.recent(n=10, session=None) -> the last n history events     ms.sessions() -> one dict per session
  ms.payload(handle, offset=0, length=None) -> a payload's text (e.g. an output that was cut), or a byte range of it
  ms.attach(path) -> stores a file of your working dir whole; print it for its summary (.seq .handle .name .type)
  ms.headlines() -> the index of steps evicted from your view (each with lo, hi): ms.expand(lo, hi) brings them back
  ms.llm_map(items, prompt, schema=None, concurrency=16, retries=3) -> one stateless model call per item, in parallel
      on the host; a list in item order of {"index","ok","value"|"error"} (schema: a JSON schema the value must match);
      wait=False -> a job: job.wait(timeout), job.results(), job.cancel(); .handle is the full JSONL (ms.payload)
  ms.agent_map(items, task, retain="work you keep", delegate="work each sub-session does", chunk=1) -> a sub-agent
      per chunk of items (strictly fewer items than you pass), each answer in item order; wait=False -> a job
  final(answer) -> ends the task with your answer
Helpers over hits (question-agnostic; `must`: the words a statement must hold, `|` between alternatives, `_` joins a
phrase, a lower-case word also matches its synonyms; `about`: words that rank; who=None: my own statements,
who="sister": my sister's; plans, wishes, negations and other people's statements never qualify; each prints evidence
and `ANSWER: ... | evidence seqs: [...]`):
  widen(words) -> the words and their synonyms, a query for ms.search   synonyms(word) -> the words it also matches
  latest_of(hits, must, about="", who=None) -> the Name in the newest statement   earliest_of(...) -> in the oldest
  values_of(hits, must, besides=()) -> every distinct Name ("A; B")   count_of(hits, must) -> sessions with a statement
  day_of(hits, must, about="") -> the day it happened      sum_of(hits, must) -> the sum of the amounts spent
  first_of(hits, [a, b] or {label: must}) -> which happened first     days_apart(hits, a, b) -> days between two events
  ever(hits, must) -> "yes"/"no"                           said_about(hits, must) -> the newest statement itself
  previous_of(hits, must, than) -> the Name before `than`  who_of(hits, must) -> who else did it ("sister", a Name)
  largest_of(hits, must) / smallest_of(hits, must) -> one amount spent     difference(hits, a, b, of="sum") -> a - b
  compare(hits, a, b, by="sum"|"count"|"largest"|"day") -> "yes" when a beats b (day: a happened first)
  kind_of(hits, must, kind="dog"|"breed"|"cat"|"instrument"|"language") -> the member my statement names ("beagle")
  facts(hits, must, about="", who=None) -> the qualifying statements (.seq .day .text .names .amounts)
  user_turns() -> every user turn of the history (no search)

Rules:
- LOCATE with ms.search, MATERIALIZE with ms.expand, COMPUTE in Python over resident variables, EXPOSE by printing
  only what you need (print compact lines with seq numbers, not whole histories).
- Exact details (dates, numbers, names) must come from the events, not from memory. Prefer the latest event when facts change;
  when the history never says, answer final("unknown").
- Optionally start your reply with one line `HEADLINE: <task> | <state> | <next action>`: it labels this step if it is
  later evicted from your view.
- When you know the answer, call final(answer) in a cell."""


# The same contract in ~420 SmolLM2 tokens instead of ~1,210 (LoopConfig.prompt = "compact"): for small students, whose
# training cost and step cost grow with every prompt token (a fine-tuned student learns the helpers from its
# trajectories, not from their documentation). It names every core helper; the full prompt stays the default.
COMPACT_PROMPT = """Your history lives in an event log outside this prompt. Reply with ONE ```python block: it runs in a
persistent kernel and ONLY what it prints comes back to you.
  ms.search(query, k=10, role=None, session=None) -> hits, best first (.seq .time .session .text)
  ms.expand(seq) / ms.expand(lo, hi) -> exact events      final(answer) -> ends the task
Helpers over hits (must: words a statement must hold, | between alternatives, _ joins a phrase; about: words that
rank; who="sister": my sister's statements; each prints evidence and `ANSWER: ...`):
  widen(words) -> a query with synonyms   synonyms(word)   latest_of(hits, must) / earliest_of(...) -> a Name
  values_of(hits, must) -> every Name   count_of(hits, must)   day_of(hits, must)   sum_of(hits, must)
  first_of(hits, [a, b])   days_apart(hits, a, b)   ever(hits, must)   said_about(hits, must)
  previous_of(hits, must, than)   who_of(hits, must)   largest_of(hits, must) / smallest_of(hits, must)
  difference(hits, a, b, of="sum")   compare(hits, a, b, by="sum")   kind_of(hits, must, kind="dog")
  facts(hits, must) -> the statements   user_turns() -> every user turn
Rules: exact details come from the events; prefer the latest when facts change; when the history never says,
final("unknown"). Optional first line: HEADLINE: <task> | <state> | <next action>."""
PROMPTS = {"full": SYSTEM_PROMPT, "compact": COMPACT_PROMPT}


def system_prompt(pack=None, style: str = "full") -> str:
    """The core prompt of `style` ("full" | "compact"), plus the pack's text when a run names one
    (scroll.packs.TaskPack)."""
    if style not in PROMPTS:
        raise ValueError(f"unknown prompt style {style!r} (known: {sorted(PROMPTS)})")
    core = PROMPTS[style]
    return core if pack is None else core + "\n\n" + pack.prompt


def kernel_prelude(pack=None) -> str:
    """The core prelude (`final` and scroll/toolkit.py), plus the pack's helpers."""
    return KERNEL_PRELUDE if pack is None else KERNEL_PRELUDE + "\n" + pack.prelude
