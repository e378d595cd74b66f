"""LongMemEval JSON (a list of instances, or one instance) -> event rows + label records.

One instance per log, the way the benchmark is run: each question has its own haystack. One
event per turn, origin `history`. Label hygiene: events carry NO label data. Their `meta` is
only `{"turn": <index in its session>, "date": <the session's haystack date>}`, and sessions
get neutral names in haystack date order: `s001`, `s002`, ... (zero-padded to at least 3
digits; sessions with a date LongMemEval's "2023/05/30 (Tue) 23:40" form does not match, or
none, come after the dated ones; ties keep file order). Everything an evaluation scores
against - question_id, question_type, question, answer, question_date, answer_session_ids,
the evidence turns (`has_answer`) and, once appended, their seqs, and the map from neutral
names back to the data set's session ids - is the label record `longmemeval/<question_id>`.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .rows import BadInputError, Parsed, check_labels, history_row, utf8

_LME_DATE = re.compile(r"^(\d{4})/(\d{2})/(\d{2})(?: \(\w+\))? (\d{2}):(\d{2})$")


def lme_date_to_iso(value: str) -> str:
    """'2023/05/30 (Tue) 23:40' -> '2023-05-30T23:40:00'; other strings unchanged."""
    m = _LME_DATE.match(value.strip()) if isinstance(value, str) else None
    if not m:
        return value
    y, mo, d, h, mi = m.groups()
    return f"{y}-{mo}-{d}T{h}:{mi}:00"


def neutral_session_names(dates: list) -> list[str]:
    """Neutral names for sessions in haystack date order: names[i] is session i's name.
    Sessions whose date is not LongMemEval's form (or missing) come last; ties keep file order."""
    def key(i):
        d = dates[i]
        m = _LME_DATE.match(d.strip()) if isinstance(d, str) else None
        return (0, lme_date_to_iso(d), i) if m else (1, "", i)

    order = sorted(range(len(dates)), key=key)
    width = max(3, len(str(len(dates))))
    names = [""] * len(dates)
    for rank, i in enumerate(order, start=1):
        names[i] = f"s{rank:0{width}d}"
    return names


def parse(path: Path, doc: Any, instance: str | None) -> Parsed:
    """A LongMemEval document's one instance (or the one named by `instance`, a question_id)."""
    items = doc if isinstance(doc, list) else [doc]
    if not items:
        raise BadInputError(f"{path}: no LongMemEval instances")
    for i, inst in enumerate(items):
        if not isinstance(inst, dict) or "haystack_sessions" not in inst:
            raise BadInputError(f"{path}: instance {i}: not a LongMemEval instance (no 'haystack_sessions')")
        qid = inst.get("question_id")
        if isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == "":
            raise BadInputError(f"{path}: instance {i}: 'question_id' must be a non-empty string")
    if instance is None:
        if len(items) > 1:
            ids = ", ".join(str(x.get("question_id")) for x in items[:5])
            raise BadInputError(f"{path}: {len(items)} instances; choose one with --instance QID (e.g. {ids})")
        inst, idx = items[0], 0
    else:
        found = [(j, x) for j, x in enumerate(items) if str(x.get("question_id")) == instance]
        if not found:
            raise BadInputError(f"{path}: no instance with question_id {instance!r}")
        idx, inst = found[0]
    return longmemeval_instance(path, inst, idx, len(items))


def longmemeval_instance(path: Path, inst: dict, idx: int, n_items: int) -> Parsed:
    """One LongMemEval instance (already read, e.g. the idx-th of a file's n_items) ->
    Parsed rows + its label record (BadInputError `file: instance i (qid): reason`)."""
    qid = str(inst["question_id"])
    where = f"{path}: instance {idx} ({qid})"
    try:
        utf8(qid, "question_id")
    except ValueError as e:
        raise BadInputError(f"{where}: {e}") from None
    sessions, ids, dates = inst["haystack_sessions"], inst.get("haystack_session_ids"), inst.get("haystack_dates")
    if not isinstance(sessions, list):
        raise BadInputError(f"{where}: 'haystack_sessions' must be a list")
    ids = ids if isinstance(ids, list) else [f"session_{i}" for i in range(len(sessions))]
    dates = dates if isinstance(dates, list) else [None] * len(sessions)
    if not (len(ids) == len(dates) == len(sessions)):
        raise BadInputError(f"{where}: haystack_session_ids/dates/sessions differ in length "
                            f"({len(ids)}/{len(dates)}/{len(sessions)})")
    for s_i, (sid, date) in enumerate(zip(ids, dates)):
        if isinstance(sid, bool) or not isinstance(sid, (str, int)):
            raise BadInputError(f"{where}: haystack_session_ids[{s_i}] must be a string")
        if date is not None and not isinstance(date, str):
            raise BadInputError(f"{where}: haystack_dates[{s_i}] must be a string")
    names = neutral_session_names(dates)
    rows: list[dict] = []
    evidence_rows: list[int] = []
    evidence_turns: list[dict] = []
    for s_i in sorted(range(len(sessions)), key=lambda i: names[i]):
        turns, date, name = sessions[s_i], dates[s_i], names[s_i]
        if not isinstance(turns, list):
            raise BadInputError(f"{where}: session {s_i} ({ids[s_i]}) is not a list of turns")
        for t_i, turn in enumerate(turns):
            if not isinstance(turn, dict) or not isinstance(turn.get("role"), str) \
                    or not isinstance(turn.get("content"), str) or not turn.get("role"):
                raise BadInputError(f"{where}: session {s_i} ({ids[s_i]}) turn {t_i}: expected {{role, content}} strings")
            try:
                row = history_row(name, turn["role"], turn["content"], time=lme_date_to_iso(date) if date else None,
                                  meta={"turn": t_i, "date": date})
            except ValueError as e:
                raise BadInputError(f"{where}: session {s_i} ({ids[s_i]}) turn {t_i}: {e}") from None
            if turn.get("has_answer") is True:
                evidence_rows.append(len(rows))
                evidence_turns.append({"session": name, "turn": t_i})
            rows.append(row)
    if not rows:
        raise BadInputError(f"{where}: no turns")
    original = {names[i]: str(ids[i]) for i in range(len(ids))}
    to_neutral = {str(ids[i]): names[i] for i in range(len(ids))}
    answer_ids = inst.get("answer_session_ids")
    labels = {
        "source": "longmemeval", "file": str(path), "question_id": qid,
        "question_type": inst.get("question_type"), "question": inst.get("question"),
        "answer": inst.get("answer"), "question_date": inst.get("question_date"),
        "abstention": qid.endswith("_abs"),
        "answer_session_ids": answer_ids,
        "answer_sessions": sorted(to_neutral[str(a)] for a in answer_ids if str(a) in to_neutral)
        if isinstance(answer_ids, list) else None,
        "sessions": dict(sorted(original.items())),
        "evidence_turns": evidence_turns,
        "evidence_rows": evidence_rows,
    }
    key = f"longmemeval/{qid}"
    check_labels(where, {key: labels})
    info = {"instances_in_file": n_items, "sessions": len(sessions), "label_key": key}
    return Parsed(rows, "longmemeval", [], info, labels={key: labels})
