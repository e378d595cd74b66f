"""The README's search tables are what the committed result files say."""
from scroll.bench import readme_tables as T


def test_readme_search_tables_match_the_result_files():
    readme = (T.ROOT / "README.md").read_text()
    assert T.current(readme) == T.block().strip("\n") + "\n", "run: python -m scroll.bench.readme_tables --write"
