"""Host-side denial of service through `ms` (kernel threat-model suite, issue 8).

Each attack runs in a fresh host process (so its peak RSS is its own) that builds a log,
starts a sandboxed Kernel and runs the hostile cell with a short timeout. What must hold,
whatever a cell asks of `ms`: the host's peak RSS stays < 1 GB above where it started, and
the cell's wall time stays under its timeout + 2 s (the restart of a kernel that ignores
SIGINT included).
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

TIMEOUT = 2.0
HOST = r'''
import json, sys, time
from scroll import EventLog
from scroll.kernel import Kernel

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0

db, n_events, text_kind, cell, timeout = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
log = EventLog(db, durability="normal")
if text_kind == "emoji":
    rows = [{"session": "s", "role": "user", "text": "\N{GRINNING FACE}" * 65_000} for _ in range(n_events)]
else:
    words = "you are the one who asked about the harbour and the lighthouse keeper".split()
    rows = [{"session": "s", "role": "user", "text": " ".join(words[(i + j) % len(words)] for j in range(40))}
            for i in range(n_events)]
for i in range(0, len(rows), 2000):
    log.append_many(rows[i:i + 2000])
del rows
if text_kind == "payload":
    log.append(session="s", role="tool", kind="output", text="x" * (60 << 20))
log.search("warm up the index", k=1)
with Kernel(log, "s", timeout=timeout) as k:
    k.execute("print(1)")
    start = hwm()
    t0 = time.monotonic()
    r = k.execute(cell)
    wall = time.monotonic() - t0
    after = k.execute("print('alive')")
print(json.dumps({"start": start, "peak": hwm(), "wall": wall, "error": r.error, "stdout": r.stdout[-400:],
                  "alive": after.stdout.strip()}))
'''


def _attack(tmp_path, cell: str, n_events: int = 20_000, text: str = "words", timeout: float = TIMEOUT) -> dict:
    p = subprocess.run([sys.executable, "-c", HOST, str(tmp_path / "dos.db"), str(n_events), text,
                        textwrap.dedent(cell), str(timeout)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(p.stdout.strip().splitlines()[-1])
    grown = res["peak"] - res["start"]
    assert grown < 1 << 30, f"host peak RSS grew {grown / 2**20:.0f} MB: {res}"
    assert res["wall"] < timeout + 2.0, f"cell took {res['wall']:.1f}s with a {timeout}s timeout: {res}"
    assert res["alive"] == "alive", res
    return res


def test_repeated_query_words(tmp_path):
    res = _attack(tmp_path, """
        for q in ('you ' * 20000, 'you ' * 4000, ' '.join(f'w{i}' for i in range(3000))):
            try:
                print(len(ms.search(q, k=1000)))
            except Exception as e:
                print('refused', str(e)[:80])
    """)
    assert res["error"] is None


def test_huge_filter_strings(tmp_path):
    res = _attack(tmp_path, """
        for kw in ({'until': '9' * 200_000}, {'since': '2' * 200_000}, {'session': 's' * 200_000},
                   {'kind': 'k' * 200_000}):
            try:
                print(len(ms.search('harbour', **kw)))
            except Exception as e:
                print('refused', str(e)[:80])
    """)
    assert res["stdout"].count("refused") == 4


def test_expand_of_large_events_is_paged_by_bytes(tmp_path):
    # 500 events of 65,000 emoji (260 KB each in UTF-8, 130 MB together)
    res = _attack(tmp_path, """
        evs = ms.expand(1, 500)
        print(len(evs), sum(len(e.text) for e in evs))
    """, n_events=500, text="emoji", timeout=30)
    assert res["stdout"].strip().endswith(f"500 {500 * 65_000}"), res


def test_payload_reads_are_chunked(tmp_path):
    res = _attack(tmp_path, """
        ev = ms.recent(1)[0]  # the newest history event: the 60 MiB output
        print(len(ms.payload(ev.payload)))
    """, n_events=10, text="payload", timeout=30)
    assert res["stdout"].strip().endswith(str(60 << 20)), res


def test_many_connections_that_never_read_and_ignore_sigint(tmp_path):
    _attack(tmp_path, """
        import json, signal, socket, time
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        req = (json.dumps({"id": 1, "method": "expand", "params": {"lo": 1, "hi": 10001}}) + "\\n").encode()
        socks = []
        for _ in range(15):
            s = socket.socket(socket.AF_UNIX)
            s.connect(ms._path)
            s.sendall(req * 16)
            socks.append(s)
        time.sleep(120)
    """)


def test_many_requests_in_one_write(tmp_path):
    _attack(tmp_path, """
        import json, socket
        s = socket.socket(socket.AF_UNIX)
        s.connect(ms._path)
        req = (json.dumps({"id": 1, "method": "expand", "params": {"lo": 1, "hi": 10001}}) + "\\n").encode()
        s.sendall(req * 240)
        f = s.makefile("rb")
        replies = [json.loads(f.readline()) for _ in range(240)]
        print(sum(r["ok"] for r in replies), "answered;", sum(not r["ok"] for r in replies), "refused")
    """)
