"""`scroll viewer`: the read-only session viewer, on a log made by the demo.

The log: the demo history (scroll.tasks.build_demo_log), two of its questions answered by
the reference policy through Agent.run with a small soft budget (each run evicts its first
step: a headline, and that step's truncated output has a payload), and a scripted
five-step run with tier_cap=2 (headlines merge: a tree). Route tests use starlette's
TestClient; the browser test drives Debian's chromium with Playwright.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import socket
import struct
import threading
import time
import zlib
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from scroll.capability import Capability  # noqa: E402
from scroll.events import EventLog  # noqa: E402
from scroll.surfaces.bind import loopback_hosts  # noqa: E402
from scroll.surfaces.viewer import ViewerConfig, create_app  # noqa: E402
from scroll.surfaces.viewer.access import AccessError, check_bind  # noqa: E402
from scroll.surfaces.viewer.timeline import LoggedEvent, headline_tree  # noqa: E402

pytestmark = pytest.mark.sandbox  # Agent.run uses the sandboxed kernel (as tests/test_agent.py)
ROOT = Path(__file__).resolve().parents[1]
SCRIPTED = "scripted-five"


def _png(w: int = 4, h: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"\xff\x80\x00" * w for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.llm.scripted import ScriptedLLM
    from scroll.policies.reference import ReferencePolicy
    from scroll.tasks import build_demo_log

    base = tmp_path_factory.mktemp("viewer")
    log, tasks = build_demo_log(base / "demo.db", seed=0, target_tokens=20_000)
    cfg = LoopConfig(max_steps=8, cell_timeout=20, max_output_chars=300, soft_budget=900, hard_budget=3000,
                     tier_cap=2)
    sessions = []
    for t in tasks[:2]:
        with Agent.open(log, ReferencePolicy(), cfg, session=f"q-{t.question_id}") as agent:
            res = agent.run(t.question)
        assert res.reason == "final" and res.evictions >= 1, res
        sessions.append(res.session)
    replies = [f"HEADLINE: count words | step {i} printed | next: step {i + 1}\n```python\nprint('line {i}: ' + 'w' * 40)\n```"
               for i in range(1, 5)] + ["```python\nfinal('done')\n```"]
    with Agent.open(log, ScriptedLLM(replies), cfg, session=SCRIPTED) as agent:
        res = agent.run("Print four lines, then finish.")
    assert res.reason == "final" and res.evictions == 4, res
    fact = next(e for e in log.events(kind="message") if e.origin.value == "history" and "I live in" in e.text)
    evicted = next(e for e in log.events(session=sessions[0], kind="headline"))
    output = next(e for e in log.expand(evicted.meta["lo"], evicted.meta["hi"]) if e.kind == "output")
    assert output.meta["truncated"] and output.meta["handle"]
    log.close()
    results = base / "results"
    (results / "bench").mkdir(parents=True)
    (results / "bench" / "table.json").write_text(json.dumps(
        {"what": "a table", "rows": [{"policy": "scroll", "accuracy": 0.93}, {"policy": "truncate", "accuracy": 0.41}]}))
    (results / "bench" / "table-plot.png").write_bytes(_png())
    (base / "secret.json").write_text('{"secret": 1}')
    return {"db": base / "demo.db", "results": results, "sessions": sessions, "fact": fact, "evicted": evicted,
            "output": output, "base": base}


@pytest.fixture(scope="module")
def client(demo):
    from starlette.testclient import TestClient

    app = create_app(ViewerConfig(db=demo["db"], results=demo["results"]))
    with TestClient(app) as c:
        yield c


def _sidecars(db: Path) -> dict[str, str]:
    """sha256 of the db file and everything beside it that belongs to it (-wal, -shm, payloads, index, labels)."""
    out = {}
    for p in sorted(db.parent.rglob("*")):
        rel = p.relative_to(db.parent).as_posix()
        if p.is_file() and rel.startswith(db.name):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _urls(demo, c) -> list[str]:
    s0, ev = demo["sessions"][0], demo["evicted"]
    with EventLog(demo["db"], readonly=True) as log:
        step = next(e for e in log.events(session=s0, kind="message"))
    return ["/", f"/session/{s0}", f"/session/{SCRIPTED}", f"/step/{step.seq}",
            f"/range?lo={ev.meta['lo']}&hi={ev.meta['hi']}&session={s0}", f"/seq/{demo['fact'].seq}",
            "/search?q=live+city", f"/search?q=live&session={s0}&origin=agent&kind=output&lo=1&hi=100000",
            f"/payload/{demo['output'].meta['handle']}", f"/payload/{demo['output'].meta['handle']}?offset=10&fragment=1",
            "/runs", "/runs/view/bench/table.json", "/runs/file/bench/table-plot.png", "/static/viewer.js",
            "/static/viewer.css"]


def test_every_page_renders_what_the_loop_logged(demo, client):
    for url in _urls(demo, client):
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code, r.text[:500])
        assert "script-src 'self'" in r.headers["content-security-policy"]
    s0, ev = demo["sessions"][0], demo["evicted"]
    home = client.get("/").text
    assert all(f"/session/{s}" in home for s in demo["sessions"])
    page = client.get(f"/session/{s0}").text
    assert "Headline index: 1 entries over 1 evicted ranges" in page
    assert f"[{ev.meta['lo']}..{ev.meta['hi']}]" in page and "task: Which" in page
    assert 'class="timeline"' in page and "/step/" in page
    step = client.get(f"/step/{ev.meta['lo']}").text
    assert "prompt sha256" in step and "the view the model saw" in step and "Exposure" in step
    assert "full output payload" in step  # the truncated output's handle opens in place
    scripted = client.get(f"/session/{SCRIPTED}").text
    assert scripted.count("<details") >= 3 and "tier 2" in scripted  # merged entries: a tree
    hits = client.get("/search", params={"q": "I live in", "origin": "history"}).text
    assert f'data-seq="{demo["fact"].seq}"' in hits
    r = client.get(f"/seq/{demo['fact'].seq}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].endswith(f"#seq-{demo['fact'].seq}")
    chunk = client.get(f"/payload/{demo['output'].meta['handle']}?fragment=1").text
    assert "payload-chunk" in chunk and "turns searched" in chunk
    table = client.get("/runs/view/bench/table.json").text
    assert "<th>policy</th>" in table and "truncate" in table and "table-plot.png" in table
    assert client.get("/runs/file/bench/table-plot.png").headers["content-type"] == "image/png"


def test_search_is_ms_search(demo, client):
    """The page's hits are Capability.search's, in its order, with the same filters."""
    with EventLog(demo["db"], readonly=True) as log:
        want = [h["seq"] for h in Capability(log).search("live city moved", k=7, origin="history", role="user")]
    page = client.get("/search", params={"q": "live city moved", "k": 7, "origin": "history", "role": "user"}).text
    got = [int(x.split('"')[0]) for x in page.split('class="hit" data-seq="')[1:]]
    assert got == want and got
    bad = client.get("/search", params={"q": "x", "since": "yesterday"})
    assert bad.status_code == 400 and "ISO date" in bad.text
    assert client.get("/search", params={"q": "x", "lo": 5}).status_code == 400


def test_no_route_writes_the_log(demo, client):
    before = _sidecars(demo["db"])
    assert any(k.endswith(".db") for k in before) and any(".payloads/" in k for k in before)
    for url in _urls(demo, client):
        assert client.get(url).status_code == 200
        assert client.head(url).status_code in (200, 303)
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            r = client.request(method, url.split("?")[0], content=b"x")
            assert r.status_code == 405, (method, url, r.status_code)
    for url in ("/nope", "/step/999999", "/payload/sha256:" + "0" * 64, "/session/nope", "/range?lo=x"):
        assert client.get(url).status_code in (400, 404), url
    assert _sidecars(demo["db"]) == before


def test_runs_serve_only_their_folder(demo, client):
    (demo["results"] / "escape.json").symlink_to(demo["base"] / "secret.json")
    for bad in ("/runs/file/../secret.json", "/runs/file/%2e%2e/secret.json", "/runs/file/..%2fsecret.json",
                "/runs/view/escape.json", "/runs/file/escape.json", f"/runs/file/{demo['db']}",
                "/runs/file//etc/passwd", "/runs/view/bench/../../demo.db"):
        r = client.get(bad)
        assert r.status_code == 404 and "secret" not in r.text.replace("secret.json", ""), bad
    assert "escape.json" not in client.get("/runs").text


def test_bind_needs_a_token_off_loopback_and_requests_carry_it(demo):
    from starlette.testclient import TestClient
    from typer.testing import CliRunner

    from scroll.cli import app as cli

    for host in ("127.0.0.1", "::1", "localhost"):
        check_bind(host, None)
    for host in ("0.0.0.0", "::", "192.168.1.5", "example.org"):
        with pytest.raises(AccessError, match="not a loopback address"):
            check_bind(host, None)
    check_bind("0.0.0.0", "t" * 24)
    runner = CliRunner()
    r = runner.invoke(cli, ["viewer", "--db", str(demo["db"]), "--host", "0.0.0.0", "--check"])
    assert r.exit_code == 2 and "not a loopback address" in r.output
    r = runner.invoke(cli, ["viewer", "--db", str(demo["db"]), "--host", "0.0.0.0", "--token", "t" * 24,
                            "--check", "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["token"] is True, r.output
    assert runner.invoke(cli, ["viewer", "--help"]).exit_code == 0

    token = "s3cret-token-0123456789"
    with TestClient(create_app(ViewerConfig(db=demo["db"], token=token))) as c:
        assert c.get("/").status_code == 401
        assert c.get("/", params={"token": "wrong-token-0123456789"}).status_code == 401
        assert c.get("/", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        assert c.get("/", headers={"X-Scroll-Token": token}).status_code == 200
        r = c.get("/", params={"token": token})
        assert r.status_code == 200 and "HttpOnly" in r.headers["set-cookie"]
        assert c.get("/static/viewer.css").status_code == 200  # the cookie now carries it
    hosts = loopback_hosts("127.0.0.1")
    with TestClient(create_app(ViewerConfig(db=demo["db"], allowed_hosts=hosts)), base_url="http://127.0.0.1") as c:
        assert c.get("/").status_code == 200
        assert c.get("/", headers={"host": "evil.example"}).status_code == 400  # DNS rebinding


def test_headline_tree_nests_merged_entries():
    def leaf(lo):
        return LoggedEvent(seq=lo + 10, session="s", time=None, kind="headline", role="scroll", origin="agent",
                           meta={"lo": lo, "hi": lo + 1, "task": "t", "state": f"s{lo}", "next": "n"},
                           payload=None, tokens=1, text="")
    tree = headline_tree([leaf(lo) for lo in (1, 3, 5, 7, 9)], tier_cap=2)
    assert [(n.headline.lo, n.headline.hi, n.headline.tier) for n in tree] == [(1, 8, 2), (9, 10, 0)]
    assert [(c.headline.lo, c.headline.hi) for c in tree[0].children] == [(1, 4), (5, 8)]
    assert [(c.headline.lo, c.headline.tier) for c in tree[0].children[0].children] == [(1, 0), (3, 0)]


# ---------------------------------------------------------------------------------- the browser
def _chromium() -> str | None:
    return next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)


@pytest.fixture
def served(demo):
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(ViewerConfig(db=demo["db"], results=demo["results"], allowed_hosts=loopback_hosts("127.0.0.1")))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    th.join(10)


@pytest.mark.slow
def test_browser_session_step_headline_range_payload_search(demo, served, tmp_path):
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no chromium installed (Debian: apt-get install chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the viewer-test extra (playwright) is not installed")
    s0, ev, fact = demo["sessions"][0], demo["evicted"], demo["fact"]
    before = _sidecars(demo["db"])
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served + "/")
        page.click(f"a[href='/session/{s0}']")
        assert page.locator("details.headline-index summary").inner_text().startswith("Headline index: 1 entries")
        page.screenshot(path=str(tmp_path / "session.png"), full_page=True)
        page.click("a.step-link >> nth=0")  # session -> step
        assert page.locator("h2", has_text="the view the model saw").count() == 1
        page.go_back()
        page.click("details.headline-index a.headline-range")  # the headline tree -> the evicted range
        page.wait_for_url(f"**/range?lo={ev.meta['lo']}&hi={ev.meta['hi']}**")
        out = page.locator(f"#seq-{demo['output'].seq}")
        assert out.locator(".kind").inner_text() == "output"
        out.locator("button.payload-open").click()  # the payload opens in place
        chunk = out.locator(".payload-chunk pre.payload-text")
        chunk.wait_for()
        with EventLog(demo["db"], readonly=True) as log:
            full = log.payloads.get(demo["output"].meta["handle"]).decode()
        assert chunk.inner_text().strip() == full.strip()[:64 << 10].strip()
        page.screenshot(path=str(tmp_path / "range.png"), full_page=True)
        headline_here = page.goto(served + f"/session/{s0}")
        assert headline_here.ok and page.locator(".headline-text").first.inner_text().startswith("task: ")
        page.fill("nav input[name=q]", " ".join(fact.text.split()[:8]))  # search from the top bar
        page.press("nav input[name=q]", "Enter")
        page.wait_for_url("**/search?q=**")
        hit = page.locator(f"li.hit[data-seq='{fact.seq}'] a.seq")
        hit.click()  # -> the event at its seq
        page.wait_for_url(f"**#seq-{fact.seq}")
        at = page.locator(f"article#seq-{fact.seq}")
        assert "focus" in at.get_attribute("class")
        assert " ".join(at.locator("pre.text").inner_text().split()) == " ".join(fact.text.split())
        page.screenshot(path=str(tmp_path / "search-hit.png"), full_page=True)
        page.goto(served + f"/session/{SCRIPTED}")  # merged headlines: a tree of <details>
        page.locator("details").evaluate_all("els => els.forEach(e => e.open = true)")
        assert page.locator(".headline-index .tier").first.inner_text() == "×4, tier 2"
        assert page.locator(".headline-index li").count() == 7  # the tier-2 entry, its 2 tier-1 entries, 4 leaves
        page.screenshot(path=str(tmp_path / "tree.png"), full_page=True)  # docs/viewer.png
        browser.close()
    assert not errors, errors
    assert all((tmp_path / n).stat().st_size > 10_000 for n in ("session.png", "range.png", "search-hit.png", "tree.png"))
    assert _sidecars(demo["db"]) == before
