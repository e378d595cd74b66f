"""BEAM (Tavakoli et al., "Beyond a Million Tokens", 2025) -> Scroll: loader, importer, generator.

    beam = load_beam("chats/1M/3/chat.json", "chats/1M/3/probing_questions/probing_questions.json")
    with EventLog("beam3.db") as log:
        probes = import_beam(beam, log)         # [Probe(qid, question)]: what a runner asks
    write_beam("chat.json", "probing.json", seed=0)   # a small generated pair in the same format

Format (read from mohammadtavakoli78/BEAM `chats/100K/1/chat.json`, `.../probing_questions/
probing_questions.json`; niceIrene/QwenPaw `harbor/beam/10M-1/tests/probing_questions.json`):
* chat.json: a list of batches `{"batch_number": 1, "turns": [[message, ...], ...]}` (`turns`: turn
  groups); a message is `{"role", "id", "content", "time_anchor"?, "index"?, "question_type"?}`.
  The anchor ("March-15-2024") sits on a group's first user message (a batch-level one is accepted
  too) and holds until the next. Message ids are integers, unique in the chat.
* probing_questions.json: `{ability: [question, ...]}` (ABILITIES). A question has `question`,
  `rubric` (strings), `difficulty`, its ideal answer under one of ANSWER_FIELDS, and
  `source_chat_ids`: ids as a list or a dict of lists (`{"original_info": [86], "updated_info":
  [114]}`); abstention questions have none. `qid` = the question's `id`, else "<ability>-<index>".

Label hygiene (as scroll.importers does for LongMemEval): events carry the turn's text and role, a
neutral session (s001.. one per batch, in file order), the time (from the anchor, when it parses)
and `meta = {"turn", "date"}` (date = the raw anchor). Message ids, answers, rubrics, source ids
and their seqs go to the label sidecar (scroll.labels) under "beam/<qid>"; sessions -> batch
numbers and message id -> seq under "beam". Errors: BadInputError `file: place: reason`, before any write.
"""
from __future__ import annotations

import datetime as dt
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..importers import BadInputError, check_row, read_json_file, type_name
from ..labels import LabelStore
from ..origin import Origin

if TYPE_CHECKING:
    from ..events import EventLog

ABILITIES = ("abstention", "contradiction_resolution", "event_ordering", "information_extraction",
             "instruction_following", "knowledge_update", "multi_session_reasoning",
             "preference_following", "summarization", "temporal_reasoning")
ANSWER_FIELDS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")
_KNOWN = {"id", "question", "rubric", "difficulty", "source_chat_ids", *ANSWER_FIELDS}
_ANCHOR_FORMATS = ("%B-%d-%Y", "%b-%d-%Y", "%Y-%m-%d", "%B %d, %Y", "%b %d, %Y")


@dataclass(frozen=True)
class BeamTurn:
    role: str
    content: str
    id: int | None               # the data set's message id (what source_chat_ids name)
    time_anchor: str | None      # the anchor in force: the message's own, or the last one before it


@dataclass
class BeamBatch:
    number: int                  # `batch_number` as in the file
    turns: list[BeamTurn] = field(default_factory=list)


@dataclass
class BeamQuestion:
    qid: str
    ability: str
    question: str
    rubric: list[str]
    answer: Any                  # the ideal answer, from `answer_field`
    answer_field: str | None
    difficulty: str | None
    source_ids: list[int]        # flattened from source_chat_ids, first-seen order, no repeats
    source_chat_ids: Any         # as in the file
    extra: dict = field(default_factory=dict)  # the question's other fields, kept for judges

    @property
    def abstention(self) -> bool:
        """True when the question names no source message (BEAM's abstention questions)."""
        return not self.source_ids


@dataclass
class BeamSet:
    batches: list[BeamBatch]
    questions: list[BeamQuestion]
    chat_path: str
    probing_path: str


@dataclass(frozen=True)
class Probe:  # what a runner asks: the question's id and text, nothing an evaluation scores against
    qid: str
    question: str


# ---------------------------------------------------------------- reading
def _read(path: Path) -> Any:
    if not path.is_file():
        raise BadInputError(f"{path}: no such file")
    return read_json_file(path)


def _fail(path: Path, where: str, msg: str) -> BadInputError:
    return BadInputError(f"{path}: {where}: {msg}")


def _msg_id(v: Any, path: Path, where: str) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    raise _fail(path, where, f"expected a message id (an integer), got {type_name(v)} {v!r:.60}")


def _flatten_ids(v: Any, path: Path, where: str, out: list[int]) -> list[int]:
    """Message ids from a list / dict of lists (nested any way), in order."""
    if isinstance(v, list):
        for i, x in enumerate(v):
            _flatten_ids(x, path, f"{where}[{i}]", out)
    elif isinstance(v, dict):
        for k, x in v.items():
            _flatten_ids(x, path, f"{where}.{k}", out)
    else:
        out.append(_msg_id(v, path, where))
    return out


def anchor_to_iso(value: str | None) -> str | None:
    """'March-15-2024' (also 'Mar-15-2024', '2024-03-15', 'March 15, 2024') -> '2024-03-15T00:00:00'."""
    for fmt in _ANCHOR_FORMATS if isinstance(value, str) else ():
        try:
            return dt.datetime.strptime(value.strip(), fmt).isoformat(timespec="seconds")
        except ValueError:
            pass
    return None


def _opt_str(obj: dict, key: str, path: Path, where: str) -> str | None:
    v = obj.get(key)
    if v is not None and not isinstance(v, str):
        raise _fail(path, f"{where}.{key}", f"expected a string, got {type_name(v)}")
    return v


def load_chat(path: str | Path) -> list[BeamBatch]:
    path = Path(path)
    doc = _read(path)
    if not isinstance(doc, list) or not doc:
        raise _fail(path, "top level", f"expected a non-empty list of batches, got {type_name(doc)}")
    batches: list[BeamBatch] = []
    seen: dict[int, str] = {}
    anchor: str | None = None    # a batch with no anchor of its own keeps the last one
    for b_i, raw in enumerate(doc):
        w = f"[{b_i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("turns"), list):
            raise _fail(path, w, "expected a batch object with a 'turns' list")
        number = raw.get("batch_number", b_i + 1)
        if isinstance(number, bool) or not isinstance(number, int):
            raise _fail(path, f"{w}.batch_number", f"expected an integer, got {type_name(number)}")
        groups = [[g] if isinstance(g, dict) else g for g in raw["turns"]]
        anchor = _opt_str(raw, "time_anchor", path, w) or next(
            (m["time_anchor"] for g in groups if isinstance(g, list) for m in g
             if isinstance(m, dict) and isinstance(m.get("time_anchor"), str) and m["time_anchor"]), anchor)
        batch = BeamBatch(number)
        for g_i, group in enumerate(groups):
            if not isinstance(group, list):
                raise _fail(path, f"{w}.turns[{g_i}]", f"expected a list of messages, got {type_name(group)}")
            for m_i, msg in enumerate(group):
                mw = f"{w}.turns[{g_i}][{m_i}]"
                if not isinstance(msg, dict):
                    raise _fail(path, mw, f"expected a message object, got {type_name(msg)}")
                role, content = msg.get("role"), msg.get("content")
                if not isinstance(role, str) or not role:
                    raise _fail(path, f"{mw}.role", f"expected a non-empty string, got {type_name(role)}")
                if not isinstance(content, str):
                    raise _fail(path, f"{mw}.content", f"expected a string, got {type_name(content)}")
                mid = None if msg.get("id") is None else _msg_id(msg["id"], path, f"{mw}.id")
                if mid is not None:
                    if mid in seen:
                        raise _fail(path, f"{mw}.id", f"duplicate message id {mid} (first at {seen[mid]})")
                    seen[mid] = mw
                anchor = _opt_str(msg, "time_anchor", path, mw) or anchor
                batch.turns.append(BeamTurn(role, content, mid, anchor))
        batches.append(batch)
    return batches


def load_probing(path: str | Path) -> list[BeamQuestion]:
    path = Path(path)
    doc = _read(path)
    if not isinstance(doc, dict) or not doc:
        raise _fail(path, "top level", f"expected an object mapping ability -> questions, got {type_name(doc)}")
    out: list[BeamQuestion] = []
    qids: set[str] = set()
    for ability, items in doc.items():
        if not isinstance(items, list):
            raise _fail(path, ability, f"expected a list of questions, got {type_name(items)}")
        for i, q in enumerate(items):
            w = f"{ability}[{i}]"
            if not isinstance(q, dict):
                raise _fail(path, w, f"expected a question object, got {type_name(q)}")
            text = q.get("question")
            if not isinstance(text, str) or not text.strip():
                raise _fail(path, f"{w}.question", f"expected a non-empty string, got {type_name(text)}")
            rubric = q.get("rubric", [])
            if not isinstance(rubric, list) or not all(isinstance(r, str) for r in rubric):
                raise _fail(path, f"{w}.rubric", "expected a list of strings")
            qid = q.get("id", f"{ability}-{i}")
            if isinstance(qid, bool) or not isinstance(qid, (str, int)) or str(qid) == "":
                raise _fail(path, f"{w}.id", f"expected a non-empty string, got {type_name(qid)}")
            if str(qid) in qids:
                raise _fail(path, f"{w}.id", f"duplicate question id {qid!r}")
            qids.add(str(qid))
            answer_field = next((f for f in ANSWER_FIELDS if f in q), None)
            ids = _flatten_ids(q.get("source_chat_ids") or [], path, f"{w}.source_chat_ids", [])
            out.append(BeamQuestion(
                qid=str(qid), ability=ability, question=text, rubric=list(rubric),
                answer=q.get(answer_field) if answer_field else None, answer_field=answer_field,
                difficulty=_opt_str(q, "difficulty", path, w), source_ids=list(dict.fromkeys(ids)),
                source_chat_ids=q.get("source_chat_ids"), extra={k: v for k, v in q.items() if k not in _KNOWN}))
    return out


def load_beam(chat_path: str | Path, probing_path: str | Path) -> BeamSet:
    """Read and validate a BEAM chat.json + probing questions pair (nothing is written)."""
    return BeamSet(load_chat(chat_path), load_probing(probing_path), str(chat_path), str(probing_path))


# ---------------------------------------------------------------- importing
def import_beam(beam: BeamSet, log: "EventLog", labels: LabelStore | None = None) -> list[Probe]:
    """Append the conversation to an EMPTY `log` as history (one transaction), then write the
    labels to `labels` (default: the log's sidecar). Returns the probes a runner asks, in file order."""
    if log.max_seq() != 0:
        raise ValueError(f"{log.path}: the log already holds events; import BEAM into a new log")
    width = max(3, len(str(len(beam.batches))))
    names = [f"s{i:0{width}d}" for i in range(1, len(beam.batches) + 1)]
    rows: list[dict] = []
    row_of: dict[int, int] = {}
    for b_i, batch in enumerate(beam.batches):
        for t_i, turn in enumerate(batch.turns):
            row = {"session": names[b_i], "role": turn.role, "text": turn.content, "kind": "message",
                   "time": anchor_to_iso(turn.time_anchor), "meta": {"turn": t_i, "date": turn.time_anchor},
                   "origin": Origin.HISTORY}
            try:
                check_row(row)
            except ValueError as e:
                raise BadInputError(f"{beam.chat_path}: batch {b_i} turn {t_i}: {e}") from None
            if turn.id is not None:
                row_of[turn.id] = len(rows)
            rows.append(row)
    if not rows:
        raise BadInputError(f"{beam.chat_path}: no turns")
    seqs = log.append_many(rows)
    records: dict[str, Any] = {"beam": {
        "source": "beam", "chat_file": beam.chat_path, "probing_file": beam.probing_path,
        "sessions": {names[i]: b.number for i, b in enumerate(beam.batches)},
        "message_seqs": {str(mid): seqs[r] for mid, r in row_of.items()},
        "questions": [q.qid for q in beam.questions], "seq_range": [seqs[0], seqs[-1]]}}
    for q in beam.questions:
        found = [i for i in q.source_ids if i in row_of]
        records[f"beam/{q.qid}"] = {
            "source": "beam", "qid": q.qid, "ability": q.ability, "question": q.question,
            "answer": q.answer, "answer_field": q.answer_field, "rubric": q.rubric,
            "difficulty": q.difficulty, "abstention": q.abstention, "source_ids": q.source_ids,
            "source_chat_ids": q.source_chat_ids, "evidence_seqs": [seqs[row_of[i]] for i in found],
            "evidence_sessions": sorted({rows[row_of[i]]["session"] for i in found}),
            "missing_source_ids": [i for i in q.source_ids if i not in row_of], "extra": q.extra}
    (labels if labels is not None else LabelStore(log.path)).put_many(records)
    return [Probe(q.qid, q.question) for q in beam.questions]


# ---------------------------------------------------------------- generating
_PROJECTS = ["budget tracker", "recipe planner", "fitness log", "book catalog", "trip journal"]
_LIBS = [("Flask", "2.3.2"), ("SQLAlchemy", "2.0.19"), ("Redis", "5.0.1"), ("Celery", "5.3.4"),
         ("pytest", "8.1.0"), ("Pandas", "2.1.0"), ("Alembic", "1.12.0"), ("Jinja2", "3.1.2")]
_TOPICS = ["user login", "database schema", "error handling", "unit tests", "deployment",
           "caching", "request logging", "data export", "input validation", "rate limiting"]
_ABSENT = ["marine biology", "jazz piano", "chess openings", "pottery classes"]


class _Chat:
    def __init__(self) -> None:
        self.batches: list[dict] = []
        self.next_id, self.anchor = 0, None

    def batch(self, day: dt.date) -> None:
        self.batches.append({"batch_number": len(self.batches) + 1, "turns": []})
        self.anchor = f"{day:%B}-{day.day:02d}-{day.year}"   # BEAM's form: "March-05-2024"

    def say(self, user: str, reply: str) -> int:
        """One turn group (a user message, the reply); the batch's first carries the time anchor."""
        u: dict[str, Any] = {"role": "user", "id": self.next_id, "content": user}
        if self.anchor:
            u["time_anchor"], self.anchor = self.anchor, None
        self.batches[-1]["turns"].append([u, {"role": "assistant", "id": self.next_id + 1, "content": reply}])
        self.next_id += 2
        return u["id"]


def _q(question: str, rubric: list[str], sources: Any, difficulty: str = "easy", **answer: str) -> list[dict]:
    """One probing question as BEAM writes it (abstention questions have no source_chat_ids)."""
    q = {"question": question, **answer, "difficulty": difficulty, "rubric": rubric}
    return [q | {"source_chat_ids": sources}] if sources is not None else [q]


def generate_beam(seed: int = 0, batches: int = 3, filler: int = 2) -> tuple[list[dict], dict]:
    """A small BEAM-format conversation and its probing questions (one per ability), by seed.
    `batches` (2..7) sessions, each with `filler` extra turn groups to make it longer."""
    if not 2 <= batches <= len(_LIBS) - 1:
        raise ValueError(f"batches must be 2..{len(_LIBS) - 1} (use filler for a longer chat)")
    rng = random.Random(seed)
    project = rng.choice(_PROJECTS)
    libs = rng.sample(_LIBS, batches + 1)
    (lib_x, ver_x), added = libs[0], libs[1:]
    topics = rng.sample(_TOPICS, batches)
    n1, n2 = rng.randint(400, 900), rng.randint(120, 380)
    day = dt.date(2024, rng.randint(1, 6), rng.randint(1, 28))
    sprint_end = day + dt.timedelta(days=rng.randint(10, 20))
    release = sprint_end + dt.timedelta(days=rng.randint(5, 40))
    chat, ids = _Chat(), {}
    for b in range(batches):
        chat.batch(day)
        if b == 0:
            ids["plan"] = chat.say(f"I'm starting my {project} today and want a plan for the first weeks.",
                                   "Let's split it into setup, core features and testing.")
            ids["sprint"] = chat.say(f"My first sprint ends on {sprint_end:%B} {sprint_end.day}.",
                                     "Noted; we can plan the sprint backwards from that date.")
            ids["lat1"] = chat.say(f"The dashboard API currently averages {n1}ms per request.",
                                   "That is slow; caching could help.")
            ids["never"] = chat.say(f"I have never used {lib_x} in this project.", "Understood.")
            ids["pref"] = chat.say("I prefer simple tools with minimal dependencies.", "I'll keep that in mind.")
            ids["rule"] = chat.say("Always include version numbers when I ask about libraries.", "Will do.")
        ids[f"topic{b}"] = chat.say(f"Can you help me with {topics[b]} for my {project}?",
                                    f"Sure, let's go through {topics[b]} step by step.")
        ids[f"lib{b}"] = chat.say(f"I added {added[b][0]} {added[b][1]} to the {project}.", "Good choice.")
        for _ in range(filler):
            t = rng.choice(_TOPICS)
            chat.say(f"Could you review my {t} code once more?",
                     f"Sure. For {t}, keep functions small, test the edge cases and log failures.")
        if b == batches - 1:
            ids["lat2"] = chat.say(f"After some caching tweaks the dashboard API now averages {n2}ms.", "Big gain!")
            ids["used"] = chat.say(f"I integrated {lib_x} {ver_x} for background jobs last week.", "Nice.")
            ids["release"] = chat.say(f"We released version 1.0 on {release:%B} {release.day}.", "Congratulations!")
        day += dt.timedelta(days=rng.randint(7, 30))
    gap, said = (release - sprint_end).days, "LLM response should state: "
    names = ", ".join(f"{n} {v}" for n, v in added)
    topic_ids = [ids[f"topic{b}"] for b in range(batches)]
    probing = {
        "abstention": _q(f"What did I tell you about my background in {rng.choice(_ABSENT)}?",
                         ["Based on the provided chat, there is no information"], None,
                         ideal_response="Based on the provided chat, there is no information about that."),
        "contradiction_resolution": _q(
            f"Have I used {lib_x} in this project?", [said + "there is contradictory information",
                                                      f"{said}never used {lib_x}", f"{said}integrated {lib_x} {ver_x}"],
            {"first_statement": [ids["never"]], "second_statement": [ids["used"]]}, "clear",
            ideal_answer=f"You said you never used {lib_x}, but also that you integrated {lib_x} {ver_x}. "
                         "Which is correct?"),
        "event_ordering": _q(f"In what order did I bring up topics for my {project}? Mention ONLY and ONLY "
                             f"{len(topics)} items.", list(topics), topic_ids, "medium",
                             answer="; ".join(f"{i}) {t}" for i, t in enumerate(topics, 1))),
        "information_extraction": _q("When does my first sprint end?", [f"{said}{sprint_end:%B} {sprint_end.day}"],
                                     [ids["sprint"]], answer=f"{sprint_end:%B} {sprint_end.day}"),
        "instruction_following": _q(
            f"Which libraries does my {project} use?", ["LLM response should contain: version numbers"],
            [ids["rule"]], "medium", expected_compliance="Response should give each library's version number."),
        "knowledge_update": _q("What is the average response time of the dashboard API?", [f"{said}{n2}ms"],
                               {"original_info": [ids["lat1"]], "updated_info": [ids["lat2"]]}, answer=f"{n2}ms"),
        "multi_session_reasoning": _q(
            f"How many libraries did I add to the {project} across our conversations?",
            [f"{said}{len(added)}"] + [said + n for n, _ in added], [ids[f"lib{b}"] for b in range(batches)],
            answer=f"{len(added)}: {names}"),
        "preference_following": _q(
            "What would you suggest for adding background jobs?", ["LLM response should contain: lightweight options"],
            [ids["pref"]], "medium", expected_compliance="Response should recommend lightweight options."),
        "summarization": _q(
            f"Can you summarize how my {project} progressed?", [f"LLM response should contain: {t}" for t in topics],
            [ids["plan"], *topic_ids, ids["lat2"], ids["release"]], "medium",
            ideal_summary=f"You planned the {project}, worked on {', '.join(topics)}, added {names}, "
                          f"cut the dashboard API from {n1}ms to {n2}ms and released version 1.0."),
        "temporal_reasoning": _q(
            "How many days passed between the end of my first sprint and the 1.0 release?", [f"{said}{gap} days"],
            {"first_event": [ids["sprint"]], "second_event": [ids["release"]]}, answer=f"{gap} days"),
    }
    return chat.batches, probing


def write_beam(chat_path: str | Path, probing_path: str | Path, *, seed: int = 0, batches: int = 3,
               filler: int = 2) -> tuple[Path, Path]:
    """Write a generated BEAM-format pair (chat.json, probing questions), deterministic by seed.
    These files ARE a data set, so they carry answers as BEAM does; importing them does not."""
    chat, probing = generate_beam(seed, batches, filler)
    paths = Path(chat_path), Path(probing_path)
    for p, doc in zip(paths, (chat, probing)):
        p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return paths
