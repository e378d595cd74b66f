"""docs/benchmarks.md's generated tables, from the committed result files.

    python scripts/benchmark_tables.py            # print the block
    python scripts/benchmark_tables.py --write    # replace it in docs/benchmarks.md between the markers
    python scripts/benchmark_tables.py --check    # exit 1 when the document and the result files disagree
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scroll.bench.search_tables import block, current, replace_in  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="Replace the block in docs/benchmarks.md.")
    mode.add_argument("--check", action="store_true", help="Exit 1 when docs/benchmarks.md disagrees.")
    args = ap.parse_args(argv)
    text = block(ROOT)
    if args.write:
        DOC.write_text(replace_in(DOC.read_text(), text))
    elif args.check:
        if current(DOC.read_text()) != text.strip("\n") + "\n":
            print("docs/benchmarks.md disagrees with the result files: run python scripts/benchmark_tables.py --write",
                  file=sys.stderr)
            return 1
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
