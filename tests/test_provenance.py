"""git_sha: dirty means code changed; a written result file is not a code change."""
from __future__ import annotations

import subprocess

from scroll.provenance import git_sha


def _repo(tmp_path):
    run = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], check=True, capture_output=True)
    run("init", "-q")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text("{}")
    (tmp_path / "code.py").write_text("x = 1\n")
    run("add", ".")
    run("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init")
    return tmp_path


def test_results_do_not_make_the_tree_dirty_but_code_does(tmp_path):
    root = _repo(tmp_path)
    clean = git_sha(root)
    assert clean and not clean.endswith("+dirty") and len(clean) == 40
    (root / "results" / "r.json").write_text('{"a": 1}')
    assert git_sha(root) == clean
    (root / "code.py").write_text("x = 2\n")
    assert git_sha(root) == clean + "+dirty"


def test_outside_a_checkout_is_none(tmp_path):
    assert git_sha(tmp_path) is None
