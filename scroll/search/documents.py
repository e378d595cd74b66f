"""What gets indexed for an event, and the structured filters of a search."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from .words import identifier_parts  # noqa: F401 - re-exported (the index, the FTS5 peer)


@dataclass(frozen=True)
class IndexDoc:
    seq: int
    session: str
    kind: str
    role: str
    time: str
    text: str
    prev: str = ""  # the previous event of the same session (capped), filled by the index
    origin: str = ""  # scroll.origin.Origin value ("" for a v1 log, which has none)


@dataclass(frozen=True)
class Filters:
    """Structured filters; `sessions` / `origins` are the ALLOWED sets (None: all)."""

    sessions: frozenset[str] | None = None
    origins: frozenset[str] | None = None
    kind: str | None = None
    role: str | None = None
    since: str | None = None
    until: str | None = None
    seq_range: tuple[int, int] | None = None


# The fields an event's document can hold (DocModel weighs them):
#   text  the event's text;  role  the speaker's name;  date  month and year of its time;
#   prev  the previous event of the same session, capped at PREV_CHARS (issue 2 found it
#         helped on short chat; on long messages and tool output it costs recall: off by default);
#   parts the words inside the text's snake_case / camelCase identifiers.
PREV_CHARS = 2000
TIME_CHARS = 64  # the time filter column keeps this many characters of an event's time (ISO needs ~30)
_MONTHS = ("January February March April May June July August September October November December").split()


@dataclass(frozen=True)
class DocModel:
    """How an event becomes a BM25F document: each field's term counts and length are weighted
    (simplified BM25F: one k1 and b; a term's tf is the weighted sum over fields) and the weights
    are integers in units of 1/scale, so postings stay integers: the index stores
    tf' = sum(w_f * tf_f), |d|' = sum(w_f * |f|) and scores with k1' = scale * k1, which is
    exactly BM25F with weights w_f / scale (and exactly one bm25s index over documents that
    repeat each field w_f times, with k1 * scale: the tests' reference).

    `prev_max_tokens` > 0: the previous turn is indexed only with events whose own text has at
    most that many tokens (a short reply needs its question; a 300-word message does not).

    `separate`: short fields (speaker, month/year) scored on their own, as SQLite FTS5 scores a
    column: their terms are indexed as field terms (`field_term`, raw tf, nothing added to the
    document's length), and a query term also matches them, weighted w_f / scale, with their own
    saturation and no length normalisation: tf / (tf + k1). In plain BM25F a speaker match is
    damped by the length of what the speaker said; apart, it counts the same on a long turn."""

    weights: tuple[tuple[str, int], ...] = (("text", 4), ("role", 12), ("date", 4), ("parts", 4))
    scale: int = 4
    prev_max_tokens: int = 0
    separate: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [f for f, _ in self.weights]
        unknown = set(names) - set(FIELD_NAMES)
        if unknown or len(set(names)) != len(names):
            raise ValueError(f"doc model: unknown or repeated fields {sorted(unknown) or names}")
        if any(not isinstance(w, int) or w < 0 for _, w in self.weights) or not any(w for _, w in self.weights):
            raise ValueError("doc model: weights are integers >= 0, at least one > 0")
        if not isinstance(self.scale, int) or self.scale < 1 or self.prev_max_tokens < 0:
            raise ValueError("doc model: scale >= 1, prev_max_tokens >= 0")
        bad = [f for f in self.separate if f not in SEPARABLE or f not in self.fields]
        if bad or len(set(self.separate)) != len(self.separate):
            raise ValueError(f"doc model: separate fields must be weighted fields among {SEPARABLE}, once each: {bad}")

    @classmethod
    def of(cls, fields: tuple[str, ...] | Mapping[str, int], scale: int = 1, prev_max_tokens: int = 0,
           separate: tuple[str, ...] = ()) -> "DocModel":
        """From a field list (each weight 1) or a {field: weight} mapping."""
        items = tuple(fields.items()) if isinstance(fields, Mapping) else tuple((f, 1) for f in fields)
        return cls(items, scale, prev_max_tokens, tuple(separate))

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(f for f, w in self.weights if w)

    @property
    def separate_weights(self) -> tuple[tuple[str, float], ...]:
        """(field, query-side weight w_f / scale) of each separate field."""
        w = dict(self.weights)
        return tuple((f, w[f] / self.scale) for f in self.separate)

    @classmethod
    def from_spec(cls, spec: Mapping) -> "DocModel":
        """The inverse of `spec()` (a result file's or the command line's JSON)."""
        extra = set(spec) - {"weights", "scale", "prev_max_tokens", "separate"}
        if extra:
            raise ValueError(f"doc model: unknown keys {sorted(extra)}")
        return cls(tuple((str(f), int(w)) for f, w in spec["weights"]), int(spec.get("scale", 4)),
                   int(spec.get("prev_max_tokens", 0)), tuple(spec.get("separate", ())))

    def spec(self) -> dict:
        out = {"weights": [list(x) for x in self.weights], "scale": self.scale, "prev_max_tokens": self.prev_max_tokens}
        if self.separate:     # absent when empty: the specs (and indexes) of earlier models stay valid
            out["separate"] = list(self.separate)
        return out

    def counts(self, doc: "IndexDoc", count: Callable[[str], tuple[Counter, int]]) -> tuple[Counter, int]:
        """The weighted term counts and length of `doc`; `count(text)` -> (Counter, tokens)."""
        own: tuple[Counter, int] | None = None
        total: Counter = Counter()
        length = 0
        for f, w in self.weights:
            if not w:
                continue
            if f == "prev" and self.prev_max_tokens:
                if own is None:
                    own = count(doc.text)
                if own[1] > self.prev_max_tokens:
                    continue
            if f == "text" and own is not None:
                c, n = own
            else:
                c, n = count(field_value(doc, f))
                if f == "text":
                    own = (c, n)
            get = total.get               # (`total[t] += k` would call Counter.__missing__ per new term)
            if f in self.separate:          # field terms, raw tf, no length
                for t, k in c.items():
                    t = field_term(f, t)
                    total[t] = get(t, 0) + k
                continue
            if not total:                 # the first field: one C-level update (no per-term get)
                total.update(c if w == 1 else {t: w * k for t, k in c.items()})
            elif w == 1:
                total.update(c)
            else:
                for t, k in c.items():
                    total[t] = get(t, 0) + w * k
            length += w * n
        return total, length


FIELD_NAMES = ("text", "role", "date", "prev", "parts", "session", "kind")
SEPARABLE = ("role", "date")
_FIELD_MARK = {"role": "\x1fr", "date": "\x1fd"}   # no token holds \x1f: field terms never meet text terms


def field_term(field: str, term: str) -> str:
    """The index term of `term` in a separate field."""
    return _FIELD_MARK[field] + term


def field_value(doc: "IndexDoc", field: str) -> str:
    if field == "date":
        return month_year(doc.time)
    if field == "parts":
        return identifier_parts(doc.text)
    return getattr(doc, field)


def month_year(time: str) -> str:
    """'2023-05-17T18:28:59' -> 'May 2023'; anything else -> ''."""
    if len(time) >= 7 and time[:4].isdigit() and time[4] == "-" and time[5:7].isdigit():
        m = int(time[5:7])
        if 1 <= m <= 12:
            return f"{_MONTHS[m - 1]} {time[:4]}"
    return ""


def document_text(doc: IndexDoc, fields: tuple[str, ...]) -> str:
    """The string that is tokenized for an event: the chosen fields, joined by newlines."""
    parts = []
    for f in fields:
        value = field_value(doc, f)
        if value:
            parts.append(value)
    return "\n".join(parts)


def filter_mask(f: Filters, n: int, code_of: Callable[[str, str], int | None],
                column: Callable[[str], np.ndarray]) -> np.ndarray | None:
    """Which of the n indexed docs pass the filters (None: no filter). `code_of(field, value)`
    gives the integer code of a session/kind/role string; `column(name)` a per-doc array."""
    mask = None

    def both(m):
        nonlocal mask
        mask = m if mask is None else (mask & m)

    for field, value in (("kind", f.kind), ("role", f.role)):
        if value is not None:
            code = code_of(field, value)
            if code is None:
                return np.zeros(n, dtype=bool)
            both(column(field) == code)
    for field, allowed in (("sess", f.sessions), ("origin", f.origins)):
        if allowed is not None:
            codes = [c for c in (code_of(field, v) for v in allowed) if c is not None]
            if not codes:
                return np.zeros(n, dtype=bool)
            both(np.isin(column(field), codes))
    if f.seq_range is not None:
        lo, hi = f.seq_range
        seqs = column("seqs")
        both((seqs >= lo) & (seqs <= hi))
    if f.since is not None or f.until is not None:
        times = column("times")
        m = np.ones(n, dtype=bool)
        if f.since is not None:
            m &= times >= f.since
        if f.until is not None:  # inclusive at the granularity given ("2023-05-01")
            # times[:len(until)] <= until; an until at least as wide as the column cuts nothing,
            # so it is compared as is (never widen the column to the length of the filter)
            width = times.dtype.itemsize // 4 if times.dtype.kind == "U" else None
            if not f.until:
                pass  # every time starts with "" (numpy would read <U0 as "unsized")
            elif width is not None and len(f.until) < width:
                m &= times.astype(f"<U{len(f.until)}") <= f.until
            else:
                m &= times <= f.until
        both(m)
    return mask


# The default: `scroll bench tune` on the tune seeds of configs/recall-sets.yaml (issue 13):
# the previous turn off, identifier words and month/year (x1) in the BM25F sum, the speaker (x3)
# scored apart. Round 3 (results/bench/recall-tune-round3.json, sets cut to 300 k words) found
# the speaker apart (chat 0.972 -> 0.993 / 0.995) and preferred identifier words at x0.5; its two
# finalists at the sets' full 1 M words (results/bench/recall-tune-round3-full.json) keep x1:
# worst margin over the best peer -0.20 points against -1.71 (tool output needs the words).
DEFAULT_MODEL = DocModel((("text", 4), ("role", 12), ("date", 4), ("parts", 4)), separate=("role",))
