"""Loader for LoCoMo-format JSON (`locomo10.json`) -> Scroll events + evidence questions.

The way the issue tests retrieval on real data: all conversations in one log, one
session per conversation (`sample_id`), one event per turn, `role` = the speaker's
name, the sitting's date in `meta.date` (and as ISO `time`), `meta.dia_id` = "D3:7".
Each QA item with evidence becomes a question with the same session filter; its
evidence dia_ids become event indices. Image turns carry a BLIP caption; with
`captions=True` (default) it is appended to the text as "[image: ...]" for every system
alike, since that is what a chat agent saw.

Format (see docs/stack-notes.md): a list of `{sample_id, conversation:
{speaker_a, speaker_b, session_N_date_time, session_N: [{speaker, dia_id, text,
img_url?, blip_caption?}]}, qa: [{question, answer|adversarial_answer, evidence:
[dia_id], category}]}`. The data is not shipped here (no download at run time): pass
the path of a local copy (`scroll bench search --locomo PATH`).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from scroll.bench.corpus import Question
from scroll.importers.locomo import CATEGORY, parse_date  # noqa: F401 (CATEGORY: re-exported)

_DIA = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"^session_(\d+)$")


def load(path: str | Path, captions: bool = True) -> tuple[list[dict], list[Question]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("conversations") or data.get("data") or [data]
    events: list[dict] = []
    questions: list[Question] = []
    for si, sample in enumerate(data):
        conv = sample["conversation"]
        sid = str(sample.get("sample_id") or sample.get("conversation_id") or f"locomo-{si}")
        index: dict[str, int] = {}
        sittings = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION.match(k)) and isinstance(conv[k], list))
        for n, key in sittings:
            date = conv.get(f"{key}_date_time")
            iso = parse_date(date)
            for turn in conv[key]:
                text = str(turn.get("text", ""))
                cap = turn.get("blip_caption")
                if captions and cap:
                    text = f"{text} [image: {cap}]"
                meta = {"date": date, "dia_id": turn.get("dia_id"), "sample_id": sid, "sitting": n}
                if turn.get("dia_id"):
                    index[turn["dia_id"]] = len(events)
                events.append({"session": sid, "role": str(turn.get("speaker", "")), "text": text,
                               "kind": "message", "time": iso, "meta": meta})
        for qi, qa in enumerate(sample.get("qa", [])):
            ids = [d for ev in qa.get("evidence", []) for d in _DIA.findall(str(ev))]
            evidence = sorted({index[d] for d in ids if d in index})
            cat = qa.get("category")
            questions.append(Question(f"{sid}-q{qi}", sid, str(qa["question"]), evidence,
                                      CATEGORY.get(cat, str(cat))))
    return events, questions
