"""Benchmarks and retrieval-quality evaluation for Scroll.

- `corpus`: seeded generator of chat-like multi-session conversations with known
  evidence turns and paraphrased questions (no downloads).
- `locomo`: loader for LoCoMo-format JSON (events + questions), opt-in real data.
- `beam`: BEAM `chat.json` + probing questions: reader, importer (labels to the sidecar), generator.
- `oolong`: OOLONG-style aggregation sets: generator, reader, importer (labels to the sidecar).
- `judges`: exact match, LoCoMo stemmed token F1, OOLONG numeric partial credit, LongMemEval
  yes/no and BEAM rubric LLM judges (one `Verdict` contract).
- `fts5`: the SQLite FTS5 peer (`porter unicode61`, OR query, `ORDER BY bm25`).
- `recall`: evidence recall@k of any search function over a question set.
- `search_bench`: the search benchmark (ours vs FTS5, each in its own subprocess).
- `report`: machine/version facts, rich tables and JSON.

Nothing here is imported by `import scroll`.
"""
