"""Constraints from the image's own installed packages, so installing Scroll never
replaces the image's torch, vllm, transformers, CUDA wheels, ...

    python3 docker/freeze_constraints.py > /opt/scroll/constraints.txt      # at build time
    python3 docker/freeze_constraints.py --check /opt/scroll/constraints.txt torch vllm

Unlike `pip freeze`, it writes `name==version` for every distribution (no `@ file://` or
editable lines, which pip does not accept as constraints). `--check` exits 1 when any named
package's installed version differs from the constraints file (i.e. something replaced it).
"""
from __future__ import annotations

import re
import sys
from importlib.metadata import distributions


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed() -> dict[str, str]:
    out: dict[str, str] = {}
    for d in distributions():
        name = d.metadata["Name"]
        if name:
            out.setdefault(_norm(name), d.version)
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        pinned = {}
        for line in open(argv[1]):
            line = line.split("#")[0].strip()
            if "==" in line:
                n, v = line.split("==", 1)
                pinned[_norm(n)] = v
        now = installed()
        bad = [f"{n}: image {pinned.get(_norm(n))} -> now {now.get(_norm(n))}"
               for n in argv[2:] if pinned.get(_norm(n)) != now.get(_norm(n))]
        for b in bad:
            print("replaced:", b, file=sys.stderr)
        return 1 if bad else 0
    for name, version in sorted(installed().items()):
        print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
