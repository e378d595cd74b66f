"""The long multi-session history: filler sessions until the token target, facts planted.

    h = build_history(seed=0, target_tokens=200_000)   # History(rows, tasks, ...)
    log, tasks = build_demo_log("demo.db", seed=0)     # rows appended to an EventLog

Token counts are `scroll.events.estimate_tokens` (characters / 4, rounded up per event),
the same estimate the EventLog stores; `History.n_words` gives words too (words x 1.3 is
the other common estimate, usually a little lower for this text).

Deterministic: the same (seed, target_tokens, families, start, pool, wording, min_sessions,
exchanges) give the same rows and tasks, byte for byte (one `random.Random(seed)`, no
global state, no clock). `pool` names the entity pool (scroll.tasks.pools: "all" for the
demo, "train" / "test" for task-set splits) and `wording` the template variant
(scroll.tasks.wordings: "train", "paraphrase").
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from dataclasses import dataclass, field

from ..events import EventLog, estimate_tokens
from ..labels import LabelStore
from ..origin import Origin
from .catalog import DEFAULT_FAMILIES, FAMILIES
from .families import Gen
from .filler import session_turns
from .pools import get_pool
from .task import Task
from .wordings import get_wording

GENERATOR = "scroll.tasks/2"


@dataclass
class History:
    rows: list[dict]                  # EventLog rows: session, role, text, kind, time, meta
    tasks: list[Task]
    sessions: list[dict]              # [{"session", "date", "first_idx", "last_idx"}]
    params: dict = field(default_factory=dict)

    @property
    def n_tokens(self) -> int:
        return sum(estimate_tokens(r["text"]) for r in self.rows)

    @property
    def n_words(self) -> int:
        return sum(len(r["text"].split()) for r in self.rows)

    def digest(self) -> str:
        h = hashlib.sha256()
        for r in self.rows:
            h.update(json.dumps(r, sort_keys=True).encode())
        return h.hexdigest()[:16]


def build_history(seed: int = 0, target_tokens: int = 200_000, families: list[str] | None = None,
                  start: str = "2026-01-05", *, pool: str = "all", wording: str = "train",
                  min_sessions: int = 40, exchanges: tuple[int, int] = (5, 14)) -> History:
    """Generate filler sessions (at least `min_sessions`, each `exchanges` user/assistant
    pairs) until `target_tokens`, then plant every family's facts."""
    rng = random.Random(seed)
    names = list(families or DEFAULT_FAMILIES)
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown task families {unknown}; known: {sorted(FAMILIES)}")
    entity_pool = get_pool(pool)
    get_wording(wording)
    if min_sessions < 16:
        raise ValueError(f"min_sessions must be >= 16 (families spread facts over many sessions), not {min_sessions}")
    exchanges = (int(exchanges[0]), int(exchanges[1]))
    if not 1 <= exchanges[0] <= exchanges[1]:
        raise ValueError(f"exchanges must be (lo, hi) with 1 <= lo <= hi, not {exchanges}")
    # 1. filler sessions, ~1.5-3 days apart, until the target (planted facts add a little more)
    sessions: list[list[tuple[str, str, str]]] = []
    dates: list[dt.date] = []
    day = dt.date.fromisoformat(start)
    total = 0
    while total < target_tokens or len(sessions) < min_sessions:
        turns = session_turns(rng, exchanges)
        sessions.append(turns)
        dates.append(day)
        total += sum(estimate_tokens(t[2]) for t in turns)
        day += dt.timedelta(days=rng.choice([1, 1, 1, 2, 2, 3]))
    # 2. plant facts: each family gets its own child rng so adding a family leaves others alone
    tasks: list[Task] = []
    inserts: dict[int, list] = {}
    for qi, name in enumerate(names):
        frng = random.Random(f"{seed}:{name}")
        gen = Gen(entity_pool, wording)
        plants, task = FAMILIES[name](frng, dates, f"q{qi + 1:02d}-{name}", gen)
        task.params["entities"] = sorted(gen.used)
        task.params["wording"] = wording
        tasks.append(task)
        for p in plants:
            pos = frng.randint(0, len(sessions[p.session]) // 2) * 2  # keep user/assistant alternation
            inserts.setdefault(p.session, []).append((pos, p, task))
    # 3. flatten to rows with times: sessions start 07:00-21:00, turns 1-6 minutes apart
    rows: list[dict] = []
    info: list[dict] = []
    evidence: dict[str, list[int]] = {t.question_id: [] for t in tasks}
    for si, turns in enumerate(sessions):
        sid = f"s{si + 1:03d}"
        extra = sorted(inserts.get(si, []), key=lambda x: x[0])
        merged: list[tuple[str, str, str, object]] = []
        k = 0
        for ti in range(0, len(turns) + 1, 2):
            while k < len(extra) and extra[k][0] <= ti:
                _, p, task = extra[k]
                merged.append(("user", "message", p.user, task if p.evidence else None))
                merged.append(("assistant", "message", p.assistant, None))
                k += 1
            merged.extend((r, kd, tx, None) for r, kd, tx in turns[ti:ti + 2])
        t = dt.datetime.combine(dates[si], dt.time(rng.randint(7, 20), rng.randint(0, 59)))
        first = len(rows)
        for ti, (role, kind, text, ev_task) in enumerate(merged):
            if ev_task is not None:
                evidence[ev_task.question_id].append(len(rows))
            rows.append({"session": sid, "role": role, "kind": kind, "text": text,
                         "time": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "meta": {"turn": ti}})
            t += dt.timedelta(minutes=rng.randint(1, 6), seconds=rng.randint(0, 59))
        info.append({"session": sid, "date": dates[si].isoformat(), "first_idx": first, "last_idx": len(rows) - 1})
    qdate = (dates[-1] + dt.timedelta(days=1)).isoformat() + "T12:00:00Z"
    for task in tasks:
        task.evidence_idx = evidence[task.question_id]
        task.question_date = qdate
    params = {"generator": GENERATOR, "seed": seed, "target_tokens": target_tokens, "families": names,
              "start": start, "pool": pool, "wording": wording, "min_sessions": min_sessions,
              "exchanges": list(exchanges)}
    return History(rows=rows, tasks=tasks, sessions=info, params=params)


def sized(target_tokens: int) -> dict:
    """Session settings that keep a history near `target_tokens` down to ~10 k (the defaults'
    40 sessions of 5-14 exchanges alone make ~50 k tokens)."""
    if target_tokens < 40_000:
        return {"min_sessions": 16, "exchanges": (2, 5)}
    return {"min_sessions": 40, "exchanges": (5, 14)}


def build_demo_log(path, seed: int = 0, target_tokens: int = 200_000, families: list[str] | None = None,
                   durability: str = "normal", **history_kw):
    """Generate the history and append it to a NEW EventLog at `path` -> (EventLog, tasks).

    The events carry no labels: the generator's parameters, the tasks (answers, evidence
    seqs) and the stamp that identifies this history live in the label sidecar
    (scroll.labels, key "generated"), which `ms` never reads. If `path` already holds
    exactly this generated history (same stamp in its sidecar), it is reused as is; any
    other non-empty log is refused (FileExistsError) rather than mixed with generated events.
    """
    h = build_history(seed=seed, target_tokens=target_tokens, families=families, **history_kw)
    stamp = dict(h.params, digest=h.digest(), events=len(h.rows), tokens=h.n_tokens,
                 sessions=[x["session"] for x in h.sessions])
    log = EventLog(path, durability=durability)
    labels = LabelStore(log.path)
    try:
        if log.max_seq() == 0:
            seqs = log.append_many([dict(r, origin=Origin.HISTORY) for r in h.rows])
            for task in h.tasks:
                task.evidence_seqs = [seqs[i] for i in task.evidence_idx]
            labels.put("generated", {"stamp": stamp, "tasks": [t.to_dict() for t in h.tasks]})
        else:
            known = labels.get("generated")
            if not isinstance(known, dict) or known.get("stamp") != stamp:
                raise FileExistsError(f"{path} already holds other events; use a new path")
            seqs = list(range(1, len(h.rows) + 1))
    except BaseException:
        log.close()
        raise
    for task in h.tasks:
        task.evidence_seqs = [seqs[i] for i in task.evidence_idx]
    return log, h.tasks
