"""Layering (shared design note): the library `scroll/` (outside `scroll/cli/`) imports neither
`serve/` nor `distill/`; `serve/` and `distill/` do not import each other; the CLI composes
them. Config folders are found by ONE function, `scroll.env.config_dirs()`, for every kind
of config (loop, LLM presets, model presets), and the configs ship inside the wheel."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# package (folder) -> top-level packages its modules must not import
FORBIDDEN = {
    "scroll": {"serve", "distill"},   # the library; scroll/cli/ is exempt (it composes)
    "serve": {"distill"},
    "distill": {"serve"},
}


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import in a file: `import x`, `from x import y`, and
    `importlib.import_module("x")` / `__import__("x")` with a literal name."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("import_module", "__import__"):
                out.append((node.lineno, node.args[0].value))
    return out


def _violations(package: str) -> list[str]:
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[:2] == ("scroll", "cli"):
            continue
        for line, mod in _imports(path):
            if mod.split(".")[0] in FORBIDDEN[package]:
                bad.append(f"{rel}:{line} imports {mod}")
    return bad


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_rules(package):
    assert _violations(package) == []


def test_the_scan_sees_every_import_form(tmp_path, monkeypatch):
    (tmp_path / "serve").mkdir()
    (tmp_path / "serve" / "x.py").write_text(
        "import os\nimport distill.tiny\nfrom distill import tiny\nfrom . import env\n"
        "def f():\n    import importlib\n    importlib.import_module('distill.tiny')\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert [v.split(":")[1].split()[0] for v in _violations("serve")] == ["2", "3", "7"]


def test_one_config_search_path(tmp_path, monkeypatch):
    """Each kind of config is looked up through scroll.env.config_dirs (patched here)."""
    import scroll.env
    from scroll.config import LoopConfig
    from scroll.llm.config import LLMConfig
    from serve.presets import list_presets, load_preset

    only = tmp_path / "only"
    (only / "llm").mkdir(parents=True)
    (only / "models").mkdir()
    (only / "llm" / "mine.yaml").write_text("backend: scripted\nresponses: ['x']\n")
    (only / "models" / "mymodel.yaml").write_text(
        "model: /m\nserved_model_name: mm\nmax_model_len: 2048\nsampling: {max_tokens: 64}\n")
    (only / "loop.yaml").write_text("loop:\n  max_steps: 3\n")
    monkeypatch.setattr(scroll.env, "config_dirs", lambda environ=None: [only])
    assert LLMConfig.from_yaml("mine").backend == "scripted"
    assert load_preset("mymodel").served_model_name == "mm" and list_presets() == ["mymodel"]
    assert LoopConfig.load().max_steps == 3
    with pytest.raises(ValueError, match="no such file or preset"):
        LLMConfig.from_yaml("openai")  # the checkout's preset is not consulted behind its back
    with pytest.raises(ValueError, match="no preset named"):
        load_preset("tiny")


def test_lookup_order_env_then_checkout(tmp_path, monkeypatch):
    import scroll.env
    from scroll.config import LoopConfig
    from scroll.llm.config import LLMConfig
    from serve.presets import load_preset

    mine = tmp_path / "site-configs"
    (mine / "llm").mkdir(parents=True)
    (mine / "models").mkdir()
    (mine / "llm" / "openai.yaml").write_text("backend: openai\nmodel: site-model\n")
    (mine / "models" / "tiny.yaml").write_text(
        "model: /site/tiny\nserved_model_name: site-tiny\nmax_model_len: 2048\nsampling: {max_tokens: 64}\n")
    monkeypatch.setenv("SCROLL_CONFIG_DIR", str(mine))
    dirs = scroll.env.config_dirs()
    assert dirs[0] == mine.resolve() and dirs[1] == ROOT / "configs"
    assert LLMConfig.from_yaml("openai").model == "site-model"           # SCROLL_CONFIG_DIR first
    assert load_preset("tiny").served_model_name == "site-tiny"
    assert LLMConfig.from_yaml("scripted").backend == "scripted"         # the checkout next
    assert load_preset("qwen3-8b").name == "qwen3-8b"
    assert scroll.env.config_file("loop.yaml") == ROOT / "configs" / "loop.yaml"
    assert LoopConfig.load().max_steps == LoopConfig.from_yaml(ROOT / "configs" / "loop.yaml").max_steps
    monkeypatch.chdir(tmp_path)  # the working directory plays no part
    assert scroll.env.config_dirs() == dirs
    monkeypatch.delenv("SCROLL_CONFIG_DIR")
    assert scroll.env.config_dirs() == [ROOT / "configs"]


def test_serve_has_no_config_search_of_its_own():
    import serve.env

    assert not hasattr(serve.env, "config_dirs")
    for path in (ROOT / "serve").glob("*.py"):  # no env lookups of Scroll's own variables here
        names = {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)}
        assert not names & {"SCROLL_CONFIG_DIR", "SCROLL_MODELS_DIR"}, path


def test_pyproject_lists_every_package_and_ships_the_configs():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts)
               for top in ("scroll", "serve", "distill") for p in (ROOT / top).rglob("__init__.py")}
    assert set(cfg["packages"]) == on_disk | {"scroll.defaults"}
    assert cfg["package-dir"]["scroll.defaults"] == "configs"
    shipped = {p.relative_to(ROOT / "configs").as_posix() for p in (ROOT / "configs").rglob("*.yaml")}
    patterns = cfg["package-data"]["scroll.defaults"]
    assert all(any(Path(f).match(pat) and f.count("/") == pat.count("/") for pat in patterns) for f in shipped)


@pytest.mark.slow
def test_wheel_install_finds_the_packaged_defaults(tmp_path):
    """`pip install .` (not editable) into a fresh venv: run outside any checkout, no
    SCROLL_CONFIG_DIR, and every kind of config resolves from scroll/defaults/."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("scroll", "serve", "distill", "configs"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "defaults"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(pip + ["wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-w",
                          str(tmp_path / "wheels"), str(src)], check=True, capture_output=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    wheel = next((tmp_path / "wheels").glob("*.whl"))
    subprocess.run(pip + ["--python", str(py), "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCROLL_")}
    env["PYTHONPATH"] = sysconfig.get_paths()["purelib"]  # the dependencies, not the checkout
    probe = (
        "import scroll, scroll.env as e\n"
        "from scroll.config import LoopConfig, default_path\n"
        "from scroll.llm.config import LLMConfig, find_preset\n"
        "from serve.presets import load_preset, find_preset as model_preset\n"
        "d = e.config_dirs(); assert len(d) == 1 and d[0].name == 'defaults', d\n"
        "assert 'site-packages' in scroll.__file__, scroll.__file__\n"
        "assert find_preset('openai').parent.parent == d[0]\n"
        "assert model_preset('tiny').parent.parent == d[0] and load_preset('qwen3-8b').name\n"
        "assert default_path().parent == d[0] and LoopConfig.load().max_steps\n"
        "assert LLMConfig.from_yaml('scripted').backend == 'scripted'\n"
        "print('ok')\n")
    r = subprocess.run([str(py), "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]
    r = subprocess.run([str(venv / "bin" / "scroll"), "serve", "presets", "--json"], cwd=tmp_path,
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
