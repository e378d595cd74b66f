"""Words as the index sees them: the token pattern, stopwords, identifier words, and the analysis
of one distinct word. Standard library only: the splitter's helper process loads this file by
path (scroll/search/splitter.py), so the parent and the helper run the very same code.

    analyse(["Running", "parseHTTPResponse", "the"], stem_words)
    # -> (["run", "parsehttprespons"], [1, 1, 0], ["pars", "http", "respons"], [0, 3, 0])
"""
from __future__ import annotations

import re
from itertools import chain
from typing import Callable

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
split = re.compile(TOKEN_PATTERN).findall

# bm25s 0.3's English stopwords (`bm25s.stopwords.STOPWORDS_EN`), copied so that searching
# does not import bm25s (which pulls in numba: ~0.6 s per process). A test checks they match.
STOPWORDS_EN = ("a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
                "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
                "they", "this", "to", "was", "will", "with")
STOP = frozenset(STOPWORDS_EN)

# An identifier is one bm25s token ("metrics_exporter", "computeInvoiceTotal"); the `parts`
# field holds its words ("metrics exporter", "compute Invoice Total") so that a question in
# plain words finds tool output and code. The text field keeps bm25s's tokens unchanged.
_CORE = re.compile(r"[A-Za-z0-9]_+[A-Za-z0-9]|[a-z][A-Z]")   # what makes a token an identifier
_WORD = re.compile(r"\w+")
_WORD_CHAR = re.compile(r"\w")
_PIECE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_ONE_WORD = re.compile(r"\w\w+").fullmatch


# ASCII letters, digits and "_" to one class byte each, everything else (non-ASCII bytes too: the
# core's classes are ASCII) to a space: a core ("x_", "aB") can only be where these bytes show one
_CLASSES = bytes(b"a"[0] if chr(i).islower() and i < 128 else b"A"[0] if chr(i).isupper() and i < 128
                 else b"d"[0] if chr(i).isdigit() and i < 128 else b"_"[0] if i == 95 else 32 for i in range(256))


def _may_hold_core(text: str) -> bool:
    """False only if `text` has no identifier core (`_CORE`); ~100x cheaper than the regex scan."""
    m = text.encode("utf-8", "surrogatepass").translate(_CLASSES)
    return b"aA" in m or b"a_" in m or b"A_" in m or b"d_" in m


def identifier_parts(text: str) -> str:
    """The words inside snake_case / camelCase identifiers of `text` ('' if it has none).
    Linear: the regex finds identifier cores, and each core is widened to its token."""
    if not _may_hold_core(text):     # most prose: no scan (the regex took ~0.35 ms a 5 KB message)
        return ""
    out: list[str] = []
    end = -1
    for m in _CORE.finditer(text):
        if m.start() < end:                  # inside an identifier already taken
            continue
        start = m.start()
        while start > 0 and _WORD_CHAR.match(text, start - 1):
            start -= 1
        token = _WORD.match(text, start)
        end = token.end()
        out.extend(_PIECE.findall(token.group(0)))
    return " ".join(out)


def analyse(words: list[str], stem_words: Callable[[list[str]], list[str]],
            stop: frozenset[str] = STOP) -> tuple[list[str], list[int], list[str], list[int]]:
    """For each word as the text's split gives it (a maximal run of 2+ word characters): its
    terms (lower-cased, re-split, stopwords dropped, stemmed; usually one or none) and the
    terms of its identifier words. Returns (terms, terms per word, part terms, part terms per word).

    Lower-casing a word and re-splitting it gives exactly the tokens bm25s takes from the
    lower-cased text: no character outside `\\w` lower-cases into `\\w` (checked over all of
    Unicode), and inside a word only U+0130 changes length (to "i" + a combining dot, not `\\w`)."""
    text = [([] if (low := w.lower()) in stop else [low]) if w.isascii() and _ONE_WORD(w)
            else [t for t in split(w.lower()) if t not in stop] for w in words]
    # only a word with "_" or an upper-case letter can hold an identifier core
    parts = [[t for t in split(p.lower()) if t not in stop]
             if ("_" in w or not w.islower()) and (p := identifier_parts(w)) else [] for w in words]
    distinct = list(set(chain(chain.from_iterable(text), chain.from_iterable(parts))))
    stems = dict(zip(distinct, stem_words(distinct)))
    return ([stems[t] for row in text for t in row], [len(row) for row in text],
            [stems[t] for row in parts for t in row], [len(row) for row in parts])


__all__ = ["TOKEN_PATTERN", "STOPWORDS_EN", "STOP", "split", "identifier_parts", "analyse"]
