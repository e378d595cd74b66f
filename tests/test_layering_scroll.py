"""The layering inside scroll/: every module belongs to one declared layer and imports only from
its own layer or a lower one; there is no import cycle; the imports hidden inside functions are
few and each says why. The scan reads every import form (top-level, in functions, relative);
imports under `if TYPE_CHECKING:` load nothing at run time and are left out."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# lowest first; a unit is scroll/<name>.py or the package scroll/<name>/ (scroll/__init__.py is "scroll")
LAYERS: list[tuple[str, set[str]]] = [
    ("foundations", {"scroll", "origin", "env", "provenance", "stats", "reply", "controls", "thesaurus", "toolkit",
                     "statements", "payloads", "migrations", "log_copy", "labels", "records", "headlines", "prompts",
                     "packs", "config", "view"}),
    ("backends", {"llm"}),
    ("search", {"search"}),
    ("log", {"events", "log_migrate", "importers"}),
    ("capability", {"capability"}),
    ("parts", {"executor", "files", "operators", "kernel", "lcm"}),
    ("session", {"session"}),
    ("agent", {"agent"}),
    ("loops", {"managers", "runner", "policies", "tasks"}),
    ("clients", {"bench", "surfaces"}),
    ("cli", {"cli"}),
]
LAYER = {unit: i for i, (_, units) in enumerate(LAYERS) for unit in units}
MAX_LAZY = 10  # function-level imports of scroll modules outside scroll/cli


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    out = {}
    for p in sorted((root / "scroll").rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)
    return out


def imports(root: Path) -> list[tuple[str, int, str, bool, str]]:
    """(module, line, imported scroll module, inside a function?, the statement) for every import
    of a scroll module; `from pkg import sub` counts as an import of pkg.sub when that is a module."""
    mods = modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    out = []
    for mod, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        base = mod if is_pkg else mod.rpartition(".")[0]

        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    continue
                inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                targets: list[str] = []
                if isinstance(child, ast.Import):
                    targets = [a.name for a in child.names]
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        parts = base.split(".")
                        parts = parts[:len(parts) - (child.level - 1)] if child.level > 1 else parts
                        where = ".".join(parts + ([child.module] if child.module else []))
                    else:
                        where = child.module or ""
                    targets = [f"{where}.{a.name}" if f"{where}.{a.name}" in mods else where for a in child.names]
                for t in dict.fromkeys(targets):
                    hit = resolve(t) if t.split(".")[0] == "scroll" else None
                    if hit and hit != mod:
                        out.append((mod, child.lineno, hit, in_function, ast.unparse(child)))
                visit(child, inner)

        visit(tree, False)
    return out


def unit(mod: str) -> str:
    return mod.split(".")[1] if "." in mod else "scroll"


def layer_violations(root: Path) -> list[str]:
    bad = []
    for mod, line, target, _, stmt in imports(root):
        a, b = unit(mod), unit(target)
        if a != b and LAYER[b] > LAYER[a]:
            bad.append(f"{mod}:{line} ({LAYERS[LAYER[a]][0]}) imports {target} ({LAYERS[LAYER[b]][0]}): {stmt}")
    return bad


def cycles(root: Path) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {m: set() for m in modules(root)}
    for mod, _, target, _, _ in imports(root):
        graph[mod].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def lazy_imports(root: Path) -> list[tuple[str, int, str]]:
    return [(m, line, stmt) for m, line, _, inner, stmt in imports(root) if inner and unit(m) != "cli"]


def test_every_unit_has_a_layer():
    units = {unit(m) for m in modules(ROOT)}
    assert units - set(LAYER) == set(), "place the new module in LAYERS"
    assert set(LAYER) - units == set(), "LAYERS names a unit that no longer exists"


def test_scroll_imports_only_downwards():
    assert layer_violations(ROOT) == []


def test_no_import_cycles_inside_scroll():
    assert cycles(ROOT) == []


def test_function_level_imports_are_few_and_each_says_why():
    lazy = lazy_imports(ROOT)
    assert len(lazy) <= MAX_LAZY, lazy
    paths = modules(ROOT)
    for mod, line, stmt in lazy:
        path = paths[mod][0]
        lines = path.read_text().splitlines()
        said = "#" in lines[line - 1] or lines[line - 2].strip().startswith("#")
        assert said, f"{path.relative_to(ROOT)}:{line} `{stmt}` needs a one-line reason (a comment)"


def test_the_scan_sees_layers_cycles_and_lazy_imports(tmp_path):
    pkg = tmp_path / "scroll"
    (pkg / "search").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "origin.py").write_text("from .search import x\n")                       # upwards
    (pkg / "search" / "__init__.py").write_text("from . import tokens\nfrom ..origin import y\n")
    (pkg / "payloads.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                     "    from scroll.search import Index\n")                  # type-only: left out
    (pkg / "search" / "tokens.py").write_text("\n\n\n\ndef f():\n    from scroll.search import z\n")  # a cycle, lazily
    assert [v.split(" ")[0] for v in layer_violations(tmp_path)] == ["scroll.origin:1"]
    assert cycles(tmp_path) == [["scroll.origin", "scroll.search", "scroll.search.tokens"]]
    assert lazy_imports(tmp_path) == [("scroll.search.tokens", 6, "from scroll.search import z")]
