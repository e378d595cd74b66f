"""The type-aware exploration summaries (scroll.files.summary) on hand-made files: each type,
and malformed, binary, empty and huge inputs -> a clear, bounded result, never a crash."""
from __future__ import annotations

import io
import json

import pytest

from scroll.events import estimate_tokens
from scroll.files import FileType, SummaryLimits, detect_type, summarize


def _sum(name: str, data: bytes, **limits):
    return summarize(io.BytesIO(data), len(data), name, SummaryLimits(**limits) if limits else None)


def test_csv_columns_types_rows_and_samples():
    rows = "".join(f"{i},item {i % 7},{i * 1.5},2024-01-{i % 28 + 1:02d},{'yes' if i % 2 else 'no'},\"a, {i}\"\n"
                   for i in range(3000))
    s = _sum("sales.csv", ("id,name,price,day,paid,note\n" + rows).encode())
    assert s.type is FileType.CSV and s.facts["rows"] == 3000 and s.facts["columns"] == 6
    lines = s.text.splitlines()
    assert lines[0] == "3000 rows x 6 columns (comma-separated; header row not counted)"
    assert "  id: int [0..999]" in lines           # types from the first 1000 rows
    assert "  price: float [0..1498.5]" in lines
    assert "  day: date [2024-01-01..2024-01-28]" in lines
    assert "  paid: bool" in lines
    assert any(x.startswith("  name: str (7 distinct") for x in lines)
    assert "  0 | item 0 | 0.0 | 2024-01-01 | no | a, 0" in lines   # quoted comma kept in its field


def test_tsv_and_ragged_rows_and_empty_cells():
    s = _sum("t.tsv", b"a\tb\n1\t\n2\tx\n3\n")
    assert s.type is FileType.TSV and s.facts == {**s.facts, "rows": 3, "ragged_rows": 1}
    assert "1 rows with another number of fields" in s.text and "b: str (1 distinct, e.g. x), 1 empty" in s.text


def test_jsonl_schema_outline_counts_and_samples():
    recs = [{"id": i, "user": {"name": f"u{i}", "tags": ["a"] * (i % 3)}, **({"x": 1.5} if i % 2 else {})}
            for i in range(200)]
    data = "\n".join(json.dumps(r) for r in recs).encode() + b"\nnot json\n"
    s = _sum("events.jsonl", data)
    assert s.type is FileType.JSONL and s.facts == {"records": 201, "bad_lines_sampled": 1}
    for line in ("record: object(3 keys)", "  id: int", "  user: object(2 keys)", "      tags: list[0..2]",
                 "        []: str", "    x (100/200): float"):
        assert line in s.text, s.text
    assert '{"id": 0, "user": {"name": "u0", "tags": []}}' in s.text


def test_json_document_outline_and_samples():
    doc = [{"sku": f"s{i}", "price": i, "dims": {"w": 1, "h": 2}} for i in range(50)] + [{"sku": "z"}]
    s = _sum("catalog.json", json.dumps(doc).encode())
    assert s.type is FileType.JSON and s.facts == {"top": "list", "count": 51, "parsed": True}
    assert "top level: list with 51 items" in s.text
    assert "    price (50/51): int" in s.text and "      w: int" in s.text
    assert '[0] {"dims": {"h": 2, "w": 1}, "price": 0, "sku": "s0"}' in s.text


def test_python_outline_by_ast_with_line_numbers():
    src = ('"""Tools for X."""\nimport os\n\n\nclass A(Base):\n    """An A."""\n    def m(self, x, *a, k=1, **kw):\n'
           '        pass\n\n    async def n(self):\n        pass\n\n\ndef f(y):\n    return y\n')
    s = _sum("tools.py", src.encode())
    assert s.type is FileType.PYTHON and s.facts["parser"] == "ast"
    assert s.facts["classes"] == 1 and s.facts["methods"] == 2 and s.facts["functions"] == 1
    assert "module docstring: Tools for X." in s.text
    assert "  L5 class A(Base)  # An A." in s.text
    assert "    L7 def m(self, x, *a, k, **kw)" in s.text and "    L10 async def n(self)" in s.text
    assert "  L14 def f(y)" in s.text


def test_a_big_python_module_is_parsed_in_blocks_with_true_line_numbers():
    unit = "class C{i}:\n    '''doc\n{i}\n'''\n    def m(self):\n        return {i}\n\n\ndef f{i}():\n    pass\n\n\n"
    src = "".join(unit.format(i=i) for i in range(40_000))  # ~1.4 MB: several 256 KB blocks
    s = _sum("big.py", src.encode())
    assert s.facts["parser"] == "ast" and s.facts["classes"] == 40_000 and s.facts["functions"] == 40_000
    assert s.tokens <= SummaryLimits().max_tokens
    assert "  L13 class C1  # doc" in s.text


def test_python_that_does_not_parse_falls_back_to_regex_and_says_so():
    s = _sum("bad.py", b"def f(:\n    pass\nclass X:\n    def y(self): pass\n")
    assert s.facts["parser"] == "regex" and "does not parse: SyntaxError" in s.text
    assert "  L1 def f" in s.text and "  L3 class X" in s.text and "    L4 def y" in s.text


def test_other_languages_outline_by_regex():
    s = _sum("main.go", b"package main\n\nfunc main() {\n}\n\ntype Server struct {\n}\n")
    assert s.type is FileType.CODE and "L3 func main" in s.text and "L6 type Server" in s.text
    s = _sum("x.c", b"#include <stdio.h>\nstatic int add(int a, int b)\n{\n  if (a) {\n  }\n}\n")
    assert "L2 function add" in s.text and "if" not in s.text.split("outline")[1]


def test_markdown_headings_outline_ignores_code_fences():
    md = b"# Title\ntext\n## Part one\n```\n# not a heading\n```\n### Detail\n## Part two\n"
    s = _sum("notes.md", md)
    assert s.type is FileType.MARKDOWN and s.facts["headings"] == 4 and s.facts["code_blocks"] == 1
    assert "  L1 # Title\n    L3 ## Part one\n      L7 ### Detail\n    L8 ## Part two" in s.text


def test_plain_text_lines_first_lines_and_extractive_summary():
    text = ("Rockets need fuel to reach orbit. " * 3 + "\nThe orbit of a rocket depends on its fuel and speed. "
            "Cats sleep a lot.\nOrbit insertion burns the most rocket fuel of all.\n")
    s = _sum("notes.txt", text.encode())
    assert s.type is FileType.TEXT and s.facts["lines"] == 3
    assert "first lines:" in s.text and "key sentences (extractive):" in s.text
    summary = s.text.split("key sentences (extractive):")[1]
    assert summary.count("Rockets need fuel to reach orbit.") == 1   # repeated sentences once
    assert "orbit of a rocket depends on its fuel" in summary


@pytest.mark.parametrize("name,data,expect", [
    ("empty.csv", b"", "empty file (0 bytes)"),
    ("img.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "binary: PNG image"),
    ("blob.csv", b"a,b\n\x00\x01\x02", "binary: unknown binary data"),
    ("latin1.txt", "café".encode("latin-1") * 10, "binary"),
    ("bad.json", b'{"a": 1,,}', "could not be read as json: JSONDecodeError"),
    ("bad.jsonl", b"nope\nnever\n", "could not be read as jsonl"),
    ("only.csv", b"\n", "could not be read as csv"),
    ("huge-field.csv", b"a,b\n1,\"" + b"x" * 300_000 + b"\"\n", "could not be read as csv: ValueError: CSV: field larger than field limit"),
])
def test_malformed_binary_and_empty_files_are_clear_and_bounded(name, data, expect):
    s = _sum(name, data)
    assert expect in s.text, s.text
    assert s.tokens <= SummaryLimits().max_tokens


def test_the_summary_is_bounded_whatever_the_file():
    wide = ",".join(f"col{i}" for i in range(500)) + "\n" + ",".join("x" * 200 for _ in range(500)) + "\n"
    one_line = b"y" * 5_000_000
    deep = ("[" * 60 + "1" + "]" * 60).encode()
    md = "".join(f"# heading {i}\n" for i in range(5000)).encode()
    for name, data in (("wide.csv", wide.encode()), ("one.txt", one_line), ("deep.json", deep), ("h.md", md)):
        for cap in (64, 600):
            s = _sum(name, data, max_tokens=cap)
            assert estimate_tokens(s.text) <= cap, (name, cap, estimate_tokens(s.text))
    assert "summary cut at its token cap" in _sum("h.md", md, max_tokens=64).text


def test_type_detection_by_extension_and_content():
    assert detect_type("x.bin", b"\x00abc", 4) is FileType.BINARY
    assert detect_type("noext", b'{"a": 1}\n{"a": 2}\n', 18) is FileType.JSONL
    assert detect_type("noext", b'[1, 2]', 6) is FileType.JSON
    assert detect_type("run", b"#!/usr/bin/env python3\nprint(1)\n", 30) is FileType.PYTHON
    assert detect_type("a.txt", "é".encode() * 3 + "é".encode()[:1], 7) is FileType.TEXT  # a char cut at the end
