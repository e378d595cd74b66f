"""Task sets with train / dev / test splits that do not leak into each other.

    spec = TaskSetSpec.load("distill-v1")           # configs/tasks/distill-v1.yaml (or a path)
    ts = build_taskset(spec, "var/tasksets/distill-v1", progress=print)
    ts = TaskSet.load("var/tasksets/distill-v1")
    for ref in ts.splits["train"]:                   # TaskRef(task_id, split, db, task, sessions)
        ref.task.question, ref.db, ref.sessions

A spec names the seed, the history size (tokens per log, minimum sessions, exchanges per
filler session) and, per split, how many histories, which entity pool
(scroll.tasks.pools), which wording variant (scroll.tasks.wordings) and which task
families each history plants (one task per family per history). The rules that keep the
splits honest are checked before anything is written (`TaskSetSpec.validate`):

* a split whose role is "test" draws entities from a pool disjoint from every "train"-role
  split's pool (cities, companies, pets, friends, relatives, breeds, activities);
* families of a held-out kind (`heldout_kinds`, e.g. every `sum` family) appear in the
  `heldout_split` only;
* a "paraphrase" wording is used by test-role splits only.

Written: `out_dir/taskset.json` (the resolved spec, the seed, the split names, per history
its db file, seed, size and digest, per task a neutral `task_id` like `train-0007`, its
split, its history's db file and its index in that history's label sidecar; no answers,
questions or family names) and `out_dir/histories/<split>-<n>.db`, one EventLog per history
written by `build_demo_log` (events carry no labels; the tasks and the generator stamp are
in each log's label sidecar). Deterministic: the same spec gives a byte-identical
taskset.json and identical events. Resumable: a complete out_dir with the same spec is
reused as is; histories already written with the right stamp are kept, others rebuilt.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import env
from ..labels import LabelError, LabelStore
from .catalog import FAMILIES, KINDS
from .history import GENERATOR, build_demo_log
from .pools import get_pool
from .task import Task
from .wordings import get_wording, wording_role

FORMAT = "scroll.taskset/1"
MANIFEST = "taskset.json"


@dataclass
class SplitSpec:
    histories: int
    families: list[str]
    pool: str = "train"
    wording: str | list[str] = "train"   # a list: history n uses wording[n % len] (more wordings, same size)
    role: str = "train"              # train | test

    @property
    def wordings(self) -> list[str]:
        return [self.wording] if isinstance(self.wording, str) else list(self.wording)


@dataclass
class TaskSetSpec:
    name: str
    seed: int
    splits: dict[str, SplitSpec]
    history_tokens: int = 36_000
    min_sessions: int = 24
    exchanges: list[int] = field(default_factory=lambda: [5, 14])
    start: str = "2026-01-05"
    heldout_kinds: list[str] = field(default_factory=lambda: ["sum"])
    heldout_split: str | None = "test_heldout_kind"

    @classmethod
    def from_dict(cls, raw: dict) -> "TaskSetSpec":
        if not isinstance(raw, dict):
            raise ValueError("a task-set spec is a mapping")
        raw = dict(raw)
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ValueError(f"unknown task-set spec keys {unknown}; known: {sorted(known)}")
        splits = raw.pop("splits", None)
        if not isinstance(splits, dict) or not splits:
            raise ValueError("a task-set spec needs `splits`: {name: {histories, families, pool, wording, role}}")
        out = {}
        for name, s in splits.items():
            if not isinstance(s, dict):
                raise ValueError(f"split {name!r} must be a mapping")
            bad = sorted(set(s) - set(SplitSpec.__dataclass_fields__))
            if bad:
                raise ValueError(f"split {name!r}: unknown keys {bad}")
            out[str(name)] = SplitSpec(**s)
        spec = cls(splits=out, **raw)
        spec.validate()
        return spec

    @classmethod
    def load(cls, name_or_path: str | os.PathLike) -> "TaskSetSpec":
        """A YAML file path, or a name found as `tasks/<name>.yaml` on the config search path."""
        p = Path(name_or_path)
        if not p.is_file():
            found = env.config_file(f"tasks/{name_or_path}.yaml")
            if found is None:
                raise ValueError(f"no task-set spec {str(name_or_path)!r}: not a file, and no tasks/{name_or_path}.yaml "
                                 f"in {', '.join(str(d) for d in env.config_dirs())}")
            p = found
        return cls.from_dict(env.read_yaml(p))

    def to_dict(self) -> dict:
        return asdict(self)

    def validate(self) -> None:
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, not {self.seed!r}")
        if self.history_tokens < 1000:
            raise ValueError(f"history_tokens must be >= 1000, not {self.history_tokens}")
        if self.min_sessions < 16:
            raise ValueError(f"min_sessions must be >= 16, not {self.min_sessions}")
        if len(self.exchanges) != 2 or not 1 <= self.exchanges[0] <= self.exchanges[1]:
            raise ValueError(f"exchanges must be [lo, hi] with 1 <= lo <= hi, not {self.exchanges}")
        for name, s in self.splits.items():
            if not name.replace("_", "").replace("-", "").isalnum():
                raise ValueError(f"split name {name!r}: letters, digits, _ and - only")
            if not isinstance(s.histories, int) or s.histories < 1:
                raise ValueError(f"split {name!r}: histories must be >= 1")
            if not s.families:
                raise ValueError(f"split {name!r}: no families")
            bad = [f for f in s.families if f not in FAMILIES]
            if bad or len(set(s.families)) != len(s.families):
                raise ValueError(f"split {name!r}: unknown or repeated families {bad or s.families}; "
                                 f"known: {sorted(FAMILIES)}")
            get_pool(s.pool)
            if not s.wordings or not all(isinstance(w, str) for w in s.wordings):
                raise ValueError(f"split {name!r}: wording must be a name or a non-empty list of names")
            for w in s.wordings:
                get_wording(w)
            if s.role not in ("train", "test"):
                raise ValueError(f"split {name!r}: role must be train or test, not {s.role!r}")
            for w in s.wordings:
                if wording_role(w) == "test" and s.role != "test":
                    raise ValueError(f"split {name!r}: wording {w!r} is for test splits only")
        train_entities = set().union(*[get_pool(s.pool).entities() for s in self.splits.values() if s.role == "train"])
        for name, s in self.splits.items():
            shared = get_pool(s.pool).entities() & train_entities if s.role == "test" else set()
            if shared:
                raise ValueError(f"test split {name!r}: pool {s.pool!r} shares entities with the train splits' "
                                 f"pools: {sorted(shared)[:5]}")
        if self.heldout_kinds:
            if self.heldout_split is not None and self.heldout_split not in self.splits:
                raise ValueError(f"heldout_split {self.heldout_split!r} is not a split")
            for name, s in self.splits.items():
                held = [f for f in s.families if KINDS[f] in self.heldout_kinds]
                if held and name != self.heldout_split:
                    raise ValueError(f"split {name!r} has held-out-kind families {held} "
                                     f"(kinds {self.heldout_kinds} belong to {self.heldout_split!r} only)")
            if self.heldout_split is not None:
                s = self.splits[self.heldout_split]
                if s.role != "test" or any(KINDS[f] not in self.heldout_kinds for f in s.families):
                    raise ValueError(f"heldout split {self.heldout_split!r} must be a test split of held-out kinds only")

    def history_seed(self, split: str, n: int) -> int:
        digest = hashlib.sha256(f"{self.seed}:{split}:{n}".encode()).hexdigest()
        return int(digest[:8], 16)

    def history_params(self, split: str, n: int) -> dict:
        s = self.splits[split]
        return {"seed": self.history_seed(split, n), "target_tokens": self.history_tokens,
                "families": list(s.families), "start": self.start, "pool": s.pool,
                "wording": s.wordings[n % len(s.wordings)],
                "min_sessions": self.min_sessions, "exchanges": list(self.exchanges)}


@dataclass
class TaskRef:
    task_id: str
    split: str
    db: Path
    task: Task
    sessions: list[str]


@dataclass
class TaskSet:
    root: Path
    manifest: dict
    splits: dict[str, list[TaskRef]]

    @classmethod
    def load(cls, out_dir: str | os.PathLike) -> "TaskSet":
        root = Path(out_dir)
        path = root / MANIFEST
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"no task set at {root} (no {MANIFEST}; build it with `scroll tasks build`)") from None
        if manifest.get("format") != FORMAT:
            raise ValueError(f"{path}: not a {FORMAT} manifest")
        generated: dict[str, dict] = {}
        for h in manifest["histories"]:
            g = LabelStore(root / h["db"]).get("generated")
            if not isinstance(g, dict) or g.get("stamp", {}).get("digest") != h["digest"]:
                raise ValueError(f"{root / h['db']}: its label sidecar does not match {MANIFEST} (rebuild the task set)")
            generated[h["db"]] = g
        splits: dict[str, list[TaskRef]] = {name: [] for name in manifest["splits"]}
        for t in manifest["tasks"]:
            g = generated[t["db"]]
            task = Task(**g["tasks"][t["index"]])
            splits[t["split"]].append(TaskRef(task_id=t["task_id"], split=t["split"], db=root / t["db"], task=task,
                                              sessions=list(g["stamp"]["sessions"])))
        return cls(root=root, manifest=manifest, splits=splits)

    def summary(self) -> dict:
        """Counts per split and kind/family, history tokens per split (host side: reads labels)."""
        out: dict[str, Any] = {"name": self.manifest["spec"]["name"], "seed": self.manifest["seed"],
                               "root": str(self.root), "splits": {}}
        for name, refs in self.splits.items():
            hist = [h for h in self.manifest["histories"] if h["split"] == name]
            toks = [h["tokens"] for h in hist]
            kinds: dict[str, int] = {}
            fams: dict[str, int] = {}
            for r in refs:
                kinds[r.task.kind] = kinds.get(r.task.kind, 0) + 1
                fams[r.task.family] = fams.get(r.task.family, 0) + 1
            s = self.manifest["spec"]["splits"][name]
            out["splits"][name] = {"tasks": len(refs), "histories": len(hist), "pool": s["pool"],
                                   "wording": s["wording"], "role": s["role"], "kinds": dict(sorted(kinds.items())),
                                   "families": dict(sorted(fams.items())),
                                   "tokens_min": min(toks) if toks else 0, "tokens_max": max(toks) if toks else 0,
                                   "tokens_mean": round(sum(toks) / len(toks)) if toks else 0}
        out["tasks"] = sum(s["tasks"] for s in out["splits"].values())
        out["history_tokens_total"] = sum(h["tokens"] for h in self.manifest["histories"])
        return out


def _remove_log(db: Path) -> None:
    for p in db.parent.glob(db.name + "*"):
        if p.is_dir():
            import shutil

            shutil.rmtree(p)
        else:
            p.unlink()


def _stamp_matches(db: Path, params: dict) -> dict | None:
    if not db.exists():
        return None
    try:
        g = LabelStore(db).get("generated")
    except LabelError:
        return None
    if not isinstance(g, dict) or not isinstance(g.get("stamp"), dict):
        return None
    stamp = g["stamp"]
    if stamp.get("generator") != GENERATOR or any(stamp.get(k) != v for k, v in params.items()):
        return None
    return stamp


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def build_taskset(spec: TaskSetSpec, out_dir: str | os.PathLike,
                  progress: Callable[[dict], None] | None = None) -> TaskSet:
    """Write the task set (see the module docstring) and return it loaded.

    `progress(event)` gets {"split", "n", "done", "total", "reused", "tokens"} after each history."""
    spec.validate()
    root = Path(out_dir)
    manifest_path = root / MANIFEST
    spec_dict = spec.to_dict()
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        if old.get("spec") != spec_dict:
            raise FileExistsError(f"{root} holds a task set built from another spec ({old.get('spec', {}).get('name')!r});"
                                  f" use a new --out directory")
        if all(_stamp_matches(root / h["db"], spec.history_params(h["split"], h["n"])) for h in old["histories"]):
            if progress:
                progress({"split": None, "n": None, "done": len(old["histories"]), "total": len(old["histories"]),
                          "reused": True, "tokens": None})
            return TaskSet.load(root)
    (root / "histories").mkdir(parents=True, exist_ok=True)
    total = sum(s.histories for s in spec.splits.values())
    histories, tasks, done = [], [], 0
    for split, s in spec.splits.items():
        refs = []
        for n in range(s.histories):
            rel = f"histories/{split}-{n:03d}.db"
            db = root / rel
            params = spec.history_params(split, n)
            stamp = _stamp_matches(db, params)
            reused = stamp is not None
            if stamp is None:
                _remove_log(db)  # a partial or foreign file from an interrupted build
                log, _ = build_demo_log(db, seed=params["seed"], target_tokens=params["target_tokens"],
                                        families=params["families"], start=params["start"], pool=params["pool"],
                                        wording=params["wording"], min_sessions=params["min_sessions"],
                                        exchanges=tuple(params["exchanges"]))
                log.close()
                stamp = _stamp_matches(db, params)
                assert stamp is not None, db
            histories.append({"split": split, "n": n, "db": rel, "seed": params["seed"], "digest": stamp["digest"],
                              "events": stamp["events"], "tokens": stamp["tokens"], "sessions": len(stamp["sessions"])})
            refs += [(rel, i) for i in range(len(s.families))]
            done += 1
            if progress:
                progress({"split": split, "n": n, "done": done, "total": total, "reused": reused,
                          "tokens": stamp["tokens"]})
        random.Random(f"{spec.seed}:{split}:order").shuffle(refs)  # ids say nothing about the family
        tasks += [{"task_id": f"{split}-{k:04d}", "split": split, "db": rel, "index": i}
                  for k, (rel, i) in enumerate(refs)]
    manifest = {"format": FORMAT, "generator": GENERATOR, "name": spec.name, "seed": spec.seed, "spec": spec_dict,
                "splits": list(spec.splits), "histories": histories, "tasks": tasks}
    _write_atomic(manifest_path, json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return TaskSet.load(root)
