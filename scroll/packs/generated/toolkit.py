"""The `generated` pack's helpers, defined in the kernel after the core prelude when a run names the pack.

They are plain Python over `ms` results, so a cell can say what to compute in one line:

    hits = ms.search("dentist", k=None, role="user")        # LOCATE every candidate turn
    count_sessions(hits, "I went to the dentist|I had a dentist appointment")
    # prints each session's first matching statement, then `ANSWER: 3 | evidence seqs: [...]`

A `cue` is a regular expression matched case-insensitively from a word boundary in each
hit's text; what the helper reads AFTER the cue is fixed by the helper:

    latest(hits, cue)          the Capitalised Name right after the latest match ("I moved to|I live in")
    count_sessions(hits, cue)  how many sessions hold a match
    date_of(hits, cue)         the date of the first match followed by today / this morning /
                               earlier today / yesterday / last night (yesterday: the day before)
    total(hits, cue)           the sum of the amounts; `$` in the cue stands for the amount ("paid $ for a taxi")
    earliest(hits, cue)        the Capitalised Name right after the earliest match (which came first)
    days_between(hits, cue)    days between the first and the last dated match (a when-word follows the cue)
    all_values(hits, cue)      every distinct Capitalised Name after a match, oldest first ("A; B"):
                               two values of one fact are a contradiction to surface, not to settle

Each helper prints a few compact evidence lines and one `ANSWER: <value> | evidence seqs:
[...]` line, and returns the answer as a string ("unknown" when nothing matches). This file
is executed inside the sandboxed kernel at every start of a run with `--pack generated`, so
it imports nothing but the standard library and finds `ms` as a global of the cell's
namespace.
"""
import datetime as _dt
import re as _re

_NAME = r"(?P<value>[A-Z][\w'&-]*(?: [A-Z][\w'&-]*)*)"
_WHEN = r"(?P<when>today|this morning|earlier today|yesterday|last night)"
_AMOUNT = r"\$(\d+(?:\.\d\d)?)"


def _rx(cue, tail=""):
    if not isinstance(cue, str) or not cue.strip():
        raise ValueError("cue must be a non-empty regular expression string")
    return _re.compile(r"\b(?i:" + cue + r")" + tail)


def _matches(hits, rx):
    """(hit, match) for every match, hits in log order."""
    out = []
    for h in sorted(hits, key=lambda h: h.seq):
        for m in rx.finditer(h.text or ""):
            out.append((h, m))
    return out


def _snip(text, m, width=90):
    i = max(0, m.start() - width // 4)
    return " ".join(text[i:i + width].split())


def _show(rows, limit=6):
    for h, m in rows[-limit:]:
        print(f"  seq={h.seq} {h.time[:10]} {_snip(h.text, m)!r}")


def _answer(answer, evidence, note=""):
    print(f"ANSWER: {answer} | evidence seqs: {evidence}{note}")
    return answer


def _named(hits, cue):
    """(hit, match) for every statement matching `cue` + a Capitalised Name, oldest first; prints the count."""
    found = sorted(_matches(hits, _rx(cue, r"\s+" + _NAME)), key=lambda x: (x[0].time, x[0].seq))
    print(f"{len(hits)} turns searched, {len(found)} statements match")
    return found


def latest(hits, cue):
    """The Capitalised Name right after the latest statement matching `cue`."""
    found = _named(hits, cue)
    _show(found, 4)
    if not found:
        return _answer("unknown", [], " (no statement matched)")
    h, m = found[-1]
    return _answer(m.group("value"), [h.seq])


def count_sessions(hits, cue):
    """How many sessions hold a statement matching `cue` (each session counted once)."""
    first = {}
    for h, m in _matches(hits, _rx(cue)):
        first.setdefault(h.session, (h, m))
    rows = list(first.values())
    print(f"{len(hits)} turns searched, {len(rows)} sessions match")
    _show(rows, 8)
    return _answer(str(len(rows)), [h.seq for h, _ in rows])


def date_of(hits, cue):
    """The date of the first statement matching `cue` + a when-word (yesterday: one day earlier)."""
    found = _matches(hits, _rx(cue, r"\s+" + _WHEN))
    print(f"{len(hits)} turns searched, {len(found)} statements match")
    _show(found, 4)
    if not found:
        return _answer("unknown", [], " (no statement matched)")
    h, m = found[0]
    day = _day(h, m)
    print(f"  seq={h.seq} was written {h.time[:16]} and says {m.group('when')!r}")
    return _answer(day.isoformat(), [h.seq])


def total(hits, cue):
    """The sum of the amounts in statements matching `cue` (`$` in the cue marks the amount)."""
    rx = _rx(cue.replace(r"\$", "$").replace("$", _AMOUNT) if isinstance(cue, str) else cue)
    found = _matches(hits, rx)
    print(f"{len(hits)} turns searched, {len(found)} amounts match")
    amounts = [float(next(g for g in m.groups() if g)) for _, m in found]
    for (h, m), a in list(zip(found, amounts))[-8:]:
        print(f"  seq={h.seq} {h.time[:10]} ${a:g} {_snip(h.text, m, 60)!r}")
    if not found:
        return _answer("unknown", [], " (no amount matched)")
    s = sum(amounts)
    return _answer(f"${s:,.2f}".replace(".00", ""), [h.seq for h, _ in found])


def earliest(hits, cue):
    """The Capitalised Name right after the earliest statement matching `cue`."""
    found = _named(hits, cue)
    _show(found[:4], 4)
    if not found:
        return _answer("unknown", [], " (no statement matched)")
    h, m = found[0]
    return _answer(m.group("value"), [h.seq for h, _ in found])


def _day(h, m):
    e = ms.expand(h.seq)  # noqa: F821 - `ms` is the kernel's global  (MATERIALIZE the exact event)
    day = _dt.date.fromisoformat(e.time[:10])
    if m.group("when").lower() in ("yesterday", "last night"):
        day -= _dt.timedelta(days=1)
    return day


def days_between(hits, cue):
    """Days between the first and the last statement matching `cue` + a when-word (their dates)."""
    found = _matches(hits, _rx(cue, r"\s+" + _WHEN))
    print(f"{len(hits)} turns searched, {len(found)} statements match")
    _show(found, 4)
    if len(found) < 2:
        return _answer("unknown", [h.seq for h, _ in found], " (need two dated statements)")
    days = sorted((_day(h, m), h.seq) for h, m in found)
    (d0, s0), (d1, s1) = days[0], days[-1]
    print(f"  first {d0} (seq={s0}), last {d1} (seq={s1})")
    return _answer(str((d1 - d0).days), [s0, s1])


def all_values(hits, cue):
    """Every distinct Capitalised Name after a statement matching `cue`, oldest first, joined by '; '."""
    found = _named(hits, cue)
    _show(found, 6)
    if not found:
        return _answer("unknown", [], " (no statement matched)")
    values, seqs = [], []
    for h, m in found:
        if m.group("value") not in values:
            values.append(m.group("value"))
            seqs.append(h.seq)
    note = " (the history states different values: a contradiction)" if len(values) > 1 else ""
    return _answer("; ".join(values), seqs, note)
