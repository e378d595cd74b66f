"""The kernel's output collector: an output that fits the cap comes back whole, whatever its
length relative to the head/tail halves and however it was chunked; a longer one is head +
note + tail with the full text in a payload."""
from __future__ import annotations

import pytest

from scroll.kernel.output import OutputCollector


def _collect(chunks, max_chars=1500):
    c = OutputCollector(max_chars=max_chars, max_bytes=1 << 20)
    for ch in chunks:
        c.write("stdout", ch)
    stored = {}
    exp = c.finish(lambda data: stored.setdefault("h1", data) and "h1")
    return exp, stored


@pytest.mark.parametrize("n", [0, 1, 749, 750, 751, 843, 1499, 1500])
@pytest.mark.parametrize("chunk", [1, 7, 100, 10_000])
def test_output_within_the_cap_is_whole(n, chunk):
    text = "".join(chr(ord("a") + i % 26) if i % 50 else "\n" for i in range(n))
    exp, stored = _collect([text[i:i + chunk] for i in range(0, n, chunk)])
    assert exp.text == text and not exp.truncated and exp.full_chars == n and not stored


def test_output_over_the_cap_is_head_note_tail():
    text = "".join(str(i % 10) for i in range(5000))
    exp, stored = _collect([text[i:i + 333] for i in range(0, 5000, 333)])
    assert exp.truncated and exp.handle == "h1" and stored["h1"].decode() == text
    assert exp.text.startswith(text[:750]) and exp.text.endswith(text[-750:]) and "ms.payload('h1')" in exp.text


def test_lone_surrogates_kept_in_the_exposure():
    text = "a\udcff" * 300
    exp, _ = _collect([text[i:i + 10] for i in range(0, len(text), 10)])
    assert exp.text == text
