"""docs/benchmarks.md's generated search tables are what the committed result files say, and the
script that writes them notices when they do not."""
import importlib.util
from pathlib import Path

from scroll.bench import search_tables as T

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "benchmark_tables.py"


def _script():
    spec = importlib.util.spec_from_file_location("benchmark_tables", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_search_tables_match_the_result_files():
    doc = (ROOT / "docs" / "benchmarks.md").read_text()
    assert T.current(doc) == T.block(ROOT).strip("\n") + "\n", "run: python scripts/benchmark_tables.py --write"
    assert _script().main(["--check"]) == 0


def test_check_fails_on_a_stale_document(tmp_path, monkeypatch):
    mod = _script()
    stale = tmp_path / "benchmarks.md"
    stale.write_text(f"# x\n{T.BEGIN}\n| an old table |\n{T.END}\n")
    monkeypatch.setattr(mod, "DOC", stale)
    assert mod.main(["--check"]) == 1
    assert mod.main(["--write"]) == 0 and mod.main(["--check"]) == 0
    assert T.current(stale.read_text()) == T.block(ROOT).strip("\n") + "\n"
