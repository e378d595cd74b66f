"""Summaries of source code: an outline of classes and functions with line numbers.

Python is parsed with `ast` (up to SummaryLimits.parse_bytes; a file that does not parse,
or a larger one, is outlined by the regex fallback and says so); other languages use the
regex outline (def / class / function / func / fn / struct / interface / enum / trait /
impl / type declarations and C-style function heads). See scroll.files.summary.
"""
from __future__ import annotations

import ast
import re
from typing import BinaryIO

from .summary import SummaryLimits, clip, count_lines, text_lines


def _args(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    names += [x.arg for x in a.kwonlyargs]
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return clip(", ".join(names), 60)


def _doc(node: ast.AST) -> str:
    d = ast.get_docstring(node, clean=True) if isinstance(
        node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) else None
    return f"  # {clip(d.splitlines()[0], 70)}" if d else ""


def _python_outline(tree: ast.Module, offset: int, entries: list[str], counts: dict, limits: SummaryLimits) -> None:
    """Add the outline of one parsed block (its first line is file line offset + 1)."""

    def visit(body: list, depth: int, in_class: bool) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                counts["imports"] += 1
            elif isinstance(node, ast.ClassDef):
                counts["classes"] += 1
                if len(entries) < limits.outline_lines:
                    bases = ", ".join(clip(ast.unparse(b), 30) for b in node.bases[:3])
                    bases = f"({bases})" if bases else ""
                    entries.append(f"{'  ' * depth}L{node.lineno + offset} class {node.name}{bases}{_doc(node)}")
                visit(node.body, depth + 1, True)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                counts["methods" if in_class else "functions"] += 1
                if len(entries) < limits.outline_lines:
                    kw = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
                    entries.append(f"{'  ' * depth}L{node.lineno + offset} {kw} {node.name}({_args(node)}){_doc(node)}")
            elif isinstance(node, (ast.If, ast.Try)) and depth == 0:  # e.g. `if TYPE_CHECKING:` blocks
                visit(getattr(node, "body", []), depth, in_class)

    visit(tree.body, 0, False)


BLOCK_CHARS = 256 << 10  # ast parses a big module in blocks of about this size (its tree is ~100x the text)


def _blocks(source: str, target: int = BLOCK_CHARS):
    """(line offset, text) of consecutive blocks split before a top-level (column 0) line."""
    lines = source.splitlines(keepends=True)
    start, size = 0, 0
    for i, line in enumerate(lines):
        if size >= target and line[:1] not in (" ", "\t", "\r", "\n", "#", ")", "]", "}", "@") \
                and not lines[i - 1].lstrip().startswith("@"):
            yield start, "".join(lines[start:i])
            start, size = i, 0
        size += len(line)
    yield start, "".join(lines[start:])


def parse_outline(source: str, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    """The ast outline of a module, parsed block by block so memory stays bounded; a block
    that does not parse alone (a string spanning the cut) is joined to the next one."""
    entries: list[str] = []
    counts = {"classes": 0, "functions": 0, "methods": 0, "imports": 0}
    carry: tuple[int, str] | None = None
    for offset, text in _blocks(source):
        if carry is not None:
            offset, text = carry[0], carry[1] + text
        try:
            tree = ast.parse(text, filename=name)
        except SyntaxError:
            if len(text) > 8 * BLOCK_CHARS:
                raise
            carry = (offset, text)
            continue
        carry = None
        if offset == 0:
            doc = ast.get_docstring(tree, clean=True)
            counts["doc"] = clip(doc.splitlines()[0], 100) if doc else ""
        _python_outline(tree, offset, entries, counts, limits)
        del tree
    if carry is not None:
        ast.parse(carry[1], filename=name)  # raises the SyntaxError
    return entries, counts


_DECL = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?:export|public|private|protected|static|async|pub(?:\([^)]*\))?|abstract|final|"
    r"inline|extern|override|virtual|unsafe|const)\s+)*"
    r"(?P<kw>def|class|function|func|fn|struct|interface|enum|trait|impl|module|type|object|record)\s+"
    r"(?P<name>[A-Za-z_$][\w$]*)")
_CFUNC = re.compile(r"^(?P<indent>[ \t]*)[A-Za-z_][\w:<>,\*&\s]*?\b(?P<name>[A-Za-z_]\w*)\s*\([^;{}]*\)\s*"
                    r"(?:const\s*)?\{?\s*$")
_NOT_FUNC = frozenset({"if", "for", "while", "switch", "return", "catch", "sizeof", "else"})


def regex_outline(fh: BinaryIO, limits: SummaryLimits) -> tuple[list[str], dict]:
    entries: list[str] = []
    total = 0
    for n, raw in enumerate(text_lines(fh), 1):
        line = raw[:400].rstrip("\r\n")
        m = _DECL.match(line)
        kw = m.group("kw") if m else None
        if m is None:
            m = _CFUNC.match(line)
            if m is None or m.group("name") in _NOT_FUNC:
                continue
            kw = "function"
        total += 1
        if len(entries) < limits.outline_lines:
            depth = min(len(m.group("indent").expandtabs(4)) // 2, 6)
            entries.append(f"{'  ' * depth}L{n} {kw} {m.group('name')}")
    return entries, {"definitions": total}


def _outline_lines(entries: list[str], total: int, limits: SummaryLimits) -> list[str]:
    shown = entries[: limits.outline_lines]
    out = [f"  {e}" for e in shown] or ["  (no definitions found)"]
    if total > len(shown):
        out.append(f"  … {total - len(shown)} more definitions (read the file through ms.payload)")
    return out


def summarize_python(fh: BinaryIO, size: int, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    lines = count_lines(fh, size)
    why = f"larger than the {limits.parse_bytes}-byte parse limit"
    if size <= limits.parse_bytes:
        fh.seek(0)
        source = fh.read().decode("utf-8-sig", "replace")
        try:
            entries, counts = parse_outline(source, name, limits)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            why = f"does not parse: {clip(f'{type(e).__name__}: {e}', 120)}"
        else:
            del source
            doc = counts.pop("doc", "")
            total = counts["classes"] + counts["functions"] + counts["methods"]
            head = (f"Python, {lines} lines: {counts['classes']} classes, {counts['functions']} functions, "
                    f"{counts['methods']} methods, {counts['imports']} imports")
            out = [head] + ([f"module docstring: {doc}"] if doc else []) + ["outline (ast):"]
            return out + _outline_lines(entries, total, limits), {"lines": lines, **counts, "parser": "ast"}
    entries, counts = regex_outline(fh, limits)
    out = [f"Python, {lines} lines ({why}); {counts['definitions']} definitions", "outline (regex):"]
    return out + _outline_lines(entries, counts["definitions"], limits), {"lines": lines, **counts, "parser": "regex"}


def summarize_code(fh: BinaryIO, size: int, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    lines = count_lines(fh, size)
    entries, counts = regex_outline(fh, limits)
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else "?"
    out = [f"source code (.{ext}), {lines} lines; {counts['definitions']} definitions", "outline (regex):"]
    return out + _outline_lines(entries, counts["definitions"], limits), {"lines": lines, **counts, "parser": "regex"}
