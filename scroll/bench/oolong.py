"""OOLONG-style aggregation over long windows of labelled items: generator, file format, importer.

    write_oolong("oolong.json", seed=0, n_items=[500, 20_000])   # two context windows
    data = load_oolong("oolong.json")
    with EventLog("w1.db") as log:
        probes = import_oolong(data, log, window_id=1)   # one event per item; labels in the sidecar

OOLONG-synth (Bertsch et al. 2025; HF `oolongbench/oolong-synth`, generator abertsch72/oolong
`src/data_gen/oolong-synth/generate_dataset.py`) has one row per question: `{id, context_len,
dataset, context_window_id, num_labels, context_window_text, context_window_text_with_labels,
question, task_group (counting | user | timeline), task ("TASK_TYPE.MOST_FREQ"...), answer (a Python
list literal: "[28]", "['human being']"), answer_type ("ANSWER_TYPE.NUMERIC" | LABEL | COMPARISON |
USER | DATE | MONTH_YEAR), input_subset}`. A window is instruction lines plus one item per line,
`Date: Jun 16, 2024 || User: 98779 || Instance: Where is Glasgow ?` (`... || Label: location` in
the labelled text): an item's label is not in its plain text but follows from reading it.

FILE FORMAT (`write_oolong`): the same fields, each window stored once:
    {"format": "scroll-oolong/1", "seed": 0, "windows": [{context_window_id, dataset, context_len,
     num_labels, labels, context_window_text, context_window_text_with_labels}],
     "rows": [{id, context_window_id, dataset, context_len, question, task_group, task, answer,
               answer_type, input_subset}]}
`context_len` counts whitespace words of the plain text. `load_oolong` reads this, or a JSON list
of OOLONG-synth rows (e.g. the HF split exported with `to_json(orient="records")`).

Generated windows: items are short general-knowledge questions, each with a date (2022-2024), a
5-digit user id and one of LABELS (TREC coarse classes, skewed frequencies), its text drawn from
per-label templates, so a reader can recover the label. Questions (known answers): count of each
label; most / least frequent label; label comparisons; per-user label counts; the user with most
items of a label; label counts before / after a date; before-vs-after relative frequency; label
count within a month of any year. Sizes from tens to tens of thousands of items.

Label hygiene: imported events carry the plain item line only, `meta = {"item", "date"}`; the item
labels, questions' answers, tasks and types go to the label sidecar ("oolong", "oolong/<qid>").
"""
from __future__ import annotations

import ast
import calendar
import datetime as dt
import itertools
import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..importers import BadInputError, check_row, type_name
from ..labels import LabelStore
from ..origin import Origin
from .beam import Probe, _fail, _read

if TYPE_CHECKING:
    from ..events import EventLog

FORMAT = "scroll-oolong/1"
DATASET = "scroll_trec_like"
LABELS = ("abbreviation", "entity", "description and abstract concept", "human being", "location",
          "numeric value")
_LINE = re.compile(r"^Date: (?P<date>[^|]+?) \|\| User: (?P<user>[^|]+?) \|\| Instance: (?P<text>.*?)"
                   r"(?: \|\| Label: (?P<label>[^|]+?))?\s*$")
_DATE_FORMATS = ("%b %d, %Y", "%B %d, %Y", "%Y-%m-%d")

_ABBR = ("NATO", "NASA", "UNESCO", "HTML", "GDP", "DNA", "RAM", "ATM", "FAQ", "CEO", "UFO", "SCUBA",
         "LASER", "RADAR", "OPEC", "BBC")
_ANIMALS = ("okapi", "axolotl", "pangolin", "wombat", "narwhal", "quokka", "tapir", "ibex", "gecko", "lynx")
_COUNTRIES = ("Peru", "Kenya", "Norway", "Vietnam", "Chile", "Ghana", "Finland", "Nepal", "Portugal", "Fiji")
_FRUITS = ("mango", "papaya", "lychee", "quince", "guava", "persimmon", "fig", "kiwi")
_CONCEPTS = ("serendipity", "irony", "entropy", "nostalgia", "democracy", "karma", "utopia", "stoicism")
_DEVICES = ("telephone", "barometer", "printing press", "microscope", "steam engine", "phonograph", "sextant")
_BOOKS = ("Moby Dick", "War and Peace", "Don Quixote", "Middlemarch", "The Odyssey", "Hamlet", "Walden")
_CITIES = ("Glasgow", "Lagos", "Osaka", "Quito", "Tbilisi", "Perth", "Bergen", "Valparaiso", "Hanoi", "Lyon")
_MOUNTAINS = ("Mount Kenya", "Aconcagua", "Denali", "Mont Blanc", "Kilimanjaro", "Mount Fuji", "Elbrus")
_TEMPLATES: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "abbreviation": [("What does {} stand for ?", _ABBR), ("What is the full form of {} ?", _ABBR)],
    "entity": [("What kind of animal is a {} ?", _ANIMALS), ("Which language is spoken in {} ?", _COUNTRIES),
               ("What color is a ripe {} ?", _FRUITS)],
    "description and abstract concept": [("What is the meaning of {} ?", _CONCEPTS),
                                         ("How does a {} work ?", _DEVICES)],
    "human being": [("Who invented the {} ?", _DEVICES), ("Who wrote {} ?", _BOOKS),
                    ("Who was the first president of {} ?", _COUNTRIES)],
    "location": [("Where is {} ?", _CITIES), ("In which country is {} ?", _CITIES),
                 ("Where do wild {}s live ?", _ANIMALS)],
    "numeric value": [("How many legs does a {} have ?", _ANIMALS), ("How tall is {} ?", _MOUNTAINS),
                      ("What year was {} first published ?", _BOOKS), ("How far is {} from the sea ?", _CITIES)],
}


@dataclass(frozen=True)
class OolongItem:
    date: dt.date | None         # parsed from date_text (None if it does not parse)
    date_text: str               # as written: "Jun 16, 2024"
    user: str
    text: str                    # the instance
    label: str | None            # None when the file has no labelled text

    @property
    def line(self) -> str:
        """The item as the plain context window (and the event) shows it: no label."""
        return f"Date: {self.date_text} || User: {self.user} || Instance: {self.text}"


@dataclass
class OolongWindow:
    window_id: int
    dataset: str
    labels: list[str]            # the label set (public: questions name it)
    items: list[OolongItem]
    instructions: str            # the window's non-item lines

    def text(self, with_labels: bool = False) -> str:
        lines = [i.line + (f" || Label: {i.label}" if with_labels else "") for i in self.items]
        return "\n".join([self.instructions, *lines] if self.instructions else lines)


@dataclass
class OolongQuestion:
    qid: str
    window_id: int
    question: str
    task_group: str
    task: str
    answer: list                 # the gold values (OOLONG's list literal, parsed)
    answer_type: str
    input_subset: bool = False


@dataclass
class OolongSet:
    windows: dict[int, OolongWindow]
    questions: list[OolongQuestion]
    path: str = ""


def parse_date(s: str) -> dt.date | None:
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(s.strip(), fmt).date()
        except ValueError:
            pass
    return None


# ---------------------------------------------------------------- generating
def _instructions(n: int, labels: Sequence[str]) -> str:
    return (f"The data is a list of {n} items, one per line. Each line gives a date, a user ID and an "
            "instance: a general-knowledge question. Each instance can be labelled with the kind of "
            f"answer it asks for, one of: {', '.join(labels)}.")


def generate_window(seed: int = 0, n_items: int = 1000, window_id: int = 0,
                    dataset: str = DATASET) -> tuple[OolongWindow, list[OolongQuestion]]:
    """One context window of `n_items` labelled items and its questions, deterministic by
    (seed, window_id)."""
    if n_items < 20:
        raise ValueError("n_items must be >= 20")
    rng = random.Random(f"oolong:{seed}:{window_id}")
    weights = [rng.uniform(0.5, 3.0) for _ in LABELS]
    users = rng.sample(range(10000, 100000), max(4, min(500, n_items // 20)))
    user_weights = [rng.uniform(0.2, 2.0) for _ in users]
    start, span = dt.date(2022, 1, 1), (dt.date(2024, 12, 31) - dt.date(2022, 1, 1)).days
    items = []
    for label, user in zip(rng.choices(LABELS, weights, k=n_items), rng.choices(users, user_weights, k=n_items)):
        template, pool = rng.choice(_TEMPLATES[label])
        day = start + dt.timedelta(days=rng.randrange(span + 1))
        items.append(OolongItem(day, f"{day:%b %d, %Y}", str(user), template.format(rng.choice(pool)), label))
    window = OolongWindow(window_id, dataset, list(LABELS), items, _instructions(n_items, LABELS))
    return window, _questions(window, rng)


def _cmp(a: Any, b: Any, more: str, less: str, same: str) -> str:
    return more if a > b else less if a < b else same


def _questions(w: OolongWindow, rng: random.Random) -> list[OolongQuestion]:
    out: list[OolongQuestion] = []

    def ask(group: str, task: str, atype: str, text: str, answer: list, subset: bool = False) -> None:
        out.append(OolongQuestion(str(w.window_id * 1000 + len(out)), w.window_id, text, group,
                                  f"TASK_TYPE.{task}", answer, f"ANSWER_TYPE.{atype}", subset))

    items, labels, num = w.items, w.labels, "Reply in the form 'Answer: number'."
    count = {lab: 0 for lab in labels} | Counter(i.label for i in items)
    for lab in labels:
        ask("counting", "NUMERIC_ONE_CLASS", "NUMERIC", f"In the data, how many items carry the label '{lab}'? {num}",
            [count[lab]])
    for task, word, pick in (("MOST_FREQ", "most", max), ("LEAST_FREQ", "least", min)):
        best = [lab for lab in labels if count[lab] == pick(count.values())]
        if task == "LEAST_FREQ" or len(best) == 1:   # a tie for least lists every tied label as gold
            ask("counting", task, "LABEL", f"In the data, which label is the {word} common? Reply in the form "
                f"'Label: answer', where answer is one of: {', '.join(labels)}.", best)
    for a, b in rng.sample(list(itertools.combinations(labels, 2)), 3):
        ask("counting", "RELATIVE_FREQ", "COMPARISON",
            f"In the data, is label '{a}' more common, less common, or the same frequency as label '{b}'? Reply in "
            f"the form 'Answer: {a} is [X] {b}', where [X] is 'more common than', 'less common than' or "
            "'same frequency as'.", [_cmp(count[a], count[b], "more common than", "less common than",
                                          "same frequency as")])
    present = sorted({i.user for i in items})
    for user in rng.sample(present, min(3, len(present))):
        lab = rng.choice(labels)
        ask("user", "NUMERIC_ONE_CLASS", "NUMERIC", f"In the data, how many items from user {user} carry the "
            f"label '{lab}'? {num}", [sum(1 for i in items if i.user == user and i.label == lab)])
    for lab in rng.sample(labels, 2):
        per = Counter(i.user for i in items if i.label == lab)
        top = [u for u, n in per.items() if n == max(per.values(), default=0)]
        if len(top) == 1:
            ask("user", "MOST_FREQ", "USER", f"In the data, which user has the most items with the label '{lab}'? "
                "Reply in the form 'User: [X]', where [X] is the user ID.", [int(top[0])])
    dated = sorted(i.date for i in items if i.date)
    pivot = dated[rng.randint(len(dated) // 4, 3 * len(dated) // 4)]
    when, lab = f"{pivot:%b %d, %Y}", rng.choice(labels)
    before = [i.label for i in items if i.date and i.date < pivot]
    after = [i.label for i in items if i.date and i.date > pivot]
    for side, group in (("before", before), ("after", after)):
        ask("timeline", "NUMERIC_ONE_CLASS", "NUMERIC", f"In the data, how many items dated {side} {when} carry "
            f"the label '{lab}'? {num}", [group.count(lab)], True)
    for lab in rng.sample(labels, len(labels)):
        f_before = Fraction(before.count(lab), max(1, len(before)))
        f_after = Fraction(after.count(lab), max(1, len(after)))
        if before and after and (f_before == f_after or abs(f_before - f_after) > Fraction(1, 50)):
            ask("timeline", "RELATIVE_FREQ", "COMPARISON", f"In the data, is the label '{lab}' more common, less "
                f"common, or the same frequency among items dated before {when} as among items dated after {when}? "
                f"Reply in the form 'Answer: {lab} is [X] before {when}', where [X] is 'more common', 'less common' "
                "or 'the same frequency'.", [_cmp(f_before, f_after, "more common", "less common",
                                                  "the same frequency")])
            break
    month, lab = rng.choice(sorted({d.month for d in dated})), rng.choice(labels)
    ask("timeline", "NUMERIC_ONE_CLASS", "NUMERIC", f"Counting only items dated in {calendar.month_name[month]} of "
        f"any year, how many carry the label '{lab}'? {num}",
        [sum(1 for i in items if i.date and i.date.month == month and i.label == lab)], True)
    return out


def write_oolong(path: str | Path, *, seed: int = 0, n_items: int | Sequence[int] = 1000,
                 dataset: str = DATASET) -> Path:
    """Write generated windows (one per entry of `n_items`) and their questions in FILE FORMAT.
    The file IS a data set: it carries labels and answers, as OOLONG-synth does."""
    windows, rows = [], []
    for wid, n in enumerate([n_items] if isinstance(n_items, int) else list(n_items)):
        w, questions = generate_window(seed, n, wid, dataset)
        plain = w.text()
        size = len(plain.split())
        windows.append({"context_window_id": wid, "dataset": dataset, "context_len": size,
                        "num_labels": len(w.labels), "labels": w.labels, "context_window_text": plain,
                        "context_window_text_with_labels": w.text(with_labels=True)})
        rows += [{"id": int(q.qid), "context_window_id": wid, "dataset": dataset, "context_len": size,
                  "question": q.question, "task_group": q.task_group, "task": q.task, "answer": repr(q.answer),
                  "answer_type": q.answer_type, "input_subset": q.input_subset} for q in questions]
    p = Path(path)
    p.write_text(json.dumps({"format": FORMAT, "seed": seed, "windows": windows, "rows": rows},
                            ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return p


# ---------------------------------------------------------------- reading
def _int(v: Any, path: Path, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(path, where, f"expected an integer, got {type_name(v)}")
    return v


def _window(path: Path, where: str, w: dict) -> OolongWindow:
    key = "context_window_text_with_labels" if isinstance(w.get("context_window_text_with_labels"), str) \
        else "context_window_text"
    text = w.get(key)
    if not isinstance(text, str):
        raise _fail(path, f"{where}.context_window_text", f"expected a string, got {type_name(text)}")
    items, other = [], []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.startswith("Date:"):
            other.append(line.strip())
            continue
        m = _LINE.match(line)
        if m is None:
            raise _fail(path, f"{where}.{key} line {n}",
                        f"not 'Date: ... || User: ... || Instance: ...': {line[:80]!r}")
        items.append(OolongItem(parse_date(m["date"]), m["date"], m["user"], m["text"], m["label"]))
    if not items:
        raise _fail(path, f"{where}.{key}", "no item lines ('Date: ... || User: ... || Instance: ...')")
    labels = w.get("labels") or sorted({i.label for i in items if i.label})
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise _fail(path, f"{where}.labels", "expected a list of strings")
    dataset = w.get("dataset") if isinstance(w.get("dataset"), str) else ""
    return OolongWindow(_int(w.get("context_window_id"), path, f"{where}.context_window_id"), dataset, labels,
                        items, "\n".join(x for x in other if x))


def _answer(v: Any) -> list:
    """OOLONG stores gold as a Python list literal ("[28]", "['location']"); others stay as given."""
    if isinstance(v, str) and len(v) < 10_000:
        try:
            v = ast.literal_eval(v.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return [v]
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _question(path: Path, where: str, r: Any) -> OolongQuestion:
    if not isinstance(r, dict):
        raise _fail(path, where, f"expected a question row object, got {type_name(r)}")
    rid = r.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (int, str)) or rid == "":
        raise _fail(path, f"{where}.id", f"expected an integer or string id, got {type_name(rid)}")
    if not isinstance(r.get("question"), str) or not r["question"].strip():
        raise _fail(path, f"{where}.question", f"expected a non-empty string, got {type_name(r.get('question'))}")
    if "answer" not in r:
        raise _fail(path, f"{where}.answer", "missing")
    fields = {}
    for k in ("task_group", "task", "answer_type"):
        if not isinstance(r.get(k, ""), str):
            raise _fail(path, f"{where}.{k}", f"expected a string, got {type_name(r[k])}")
        fields[k] = r.get(k, "")
    subset = r.get("input_subset", False)
    return OolongQuestion(str(rid), _int(r.get("context_window_id"), path, f"{where}.context_window_id"),
                          r["question"], answer=_answer(r["answer"]), input_subset=subset in (True, "True", "true"),
                          **fields)


def load_oolong(path: str | Path) -> OolongSet:
    """Read FILE FORMAT or a list of OOLONG-synth rows; BadInputError `file: place: reason`."""
    path = Path(path)
    doc = _read(path)
    windows: dict[int, OolongWindow] = {}
    if isinstance(doc, dict) and isinstance(doc.get("windows"), list) and isinstance(doc.get("rows"), list):
        for i, w in enumerate(doc["windows"]):
            if not isinstance(w, dict):
                raise _fail(path, f"windows[{i}]", f"expected a window object, got {type_name(w)}")
            win = _window(path, f"windows[{i}]", w)
            if win.window_id in windows:
                raise _fail(path, f"windows[{i}].context_window_id", f"duplicate window {win.window_id}")
            windows[win.window_id] = win
        rows, prefix = doc["rows"], "rows"
    elif isinstance(doc, list):
        rows, prefix = doc, ""
        for i, r in enumerate(rows):   # OOLONG-synth rows repeat their window: read each window once
            if isinstance(r, dict) and isinstance(r.get("context_window_id"), int) \
                    and r["context_window_id"] not in windows:
                windows[r["context_window_id"]] = _window(path, f"[{i}]", r)
    else:
        raise _fail(path, "top level", f"expected {{'windows': [...], 'rows': [...]}} or a list of OOLONG-synth "
                                       f"rows, got {type_name(doc)}")
    questions, seen = [], set()
    for i, r in enumerate(rows):
        q = _question(path, f"{prefix}[{i}]", r)
        if q.window_id not in windows:
            raise _fail(path, f"{prefix}[{i}].context_window_id", f"no window {q.window_id}")
        if q.qid in seen:
            raise _fail(path, f"{prefix}[{i}].id", f"duplicate question id {q.qid}")
        seen.add(q.qid)
        questions.append(q)
    if not windows:
        raise _fail(path, "top level", "no context windows")
    return OolongSet(windows, questions, str(path))


# ---------------------------------------------------------------- importing
def import_oolong(data: OolongSet, log: "EventLog", labels: LabelStore | None = None,
                  window_id: int | None = None) -> list[Probe]:
    """Append one window's items to an EMPTY `log` (session s001, one history event per item, one
    transaction), then its labels to `labels` (default: the log's sidecar). Returns the probes: each
    question preceded by the window's instructions (what the data is, the label set), as OOLONG's
    prompt has them; the items themselves are only in the log."""
    if window_id is None:
        if len(data.windows) != 1:
            raise BadInputError(f"{data.path}: {len(data.windows)} context windows; choose one with window_id "
                                f"(one of {sorted(data.windows)[:10]})")
        window_id = next(iter(data.windows))
    w = data.windows.get(window_id)
    if w is None:
        raise BadInputError(f"{data.path}: no context window {window_id}")
    if log.max_seq() != 0:
        raise ValueError(f"{log.path}: the log already holds events; import an OOLONG window into a new log")
    rows = []
    for k, item in enumerate(w.items):
        row = {"session": "s001", "role": "user", "text": item.line, "kind": "message",
               "time": f"{item.date.isoformat()}T00:00:00" if item.date else None,
               "meta": {"item": k, "date": item.date_text}, "origin": Origin.HISTORY}
        try:
            rows.append(check_row(row))
        except ValueError as e:
            raise BadInputError(f"{data.path}: window {window_id} item {k}: {e}") from None
    seqs = log.append_many(rows)
    questions = [q for q in data.questions if q.window_id == window_id]
    records: dict[str, Any] = {"oolong": {
        "source": "oolong", "file": data.path, "window_id": window_id, "dataset": w.dataset, "labels": w.labels,
        "item_labels": [i.label for i in w.items], "seq_range": [seqs[0], seqs[-1]],
        "seqs": None if seqs == list(range(seqs[0], seqs[-1] + 1)) else seqs,
        "questions": [q.qid for q in questions]}}
    for q in questions:
        records[f"oolong/{q.qid}"] = {"source": "oolong", "qid": q.qid, "window_id": window_id,
                                      "question": q.question, "task_group": q.task_group, "task": q.task,
                                      "answer": q.answer, "answer_type": q.answer_type, "input_subset": q.input_subset}
    (labels if labels is not None else LabelStore(log.path)).put_many(records)
    prefix = f"{w.instructions}\n\n" if w.instructions else ""
    return [Probe(q.qid, prefix + q.question) for q in questions]
