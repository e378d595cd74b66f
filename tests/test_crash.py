"""Crash safety: SIGKILL a writer at random moments; nothing returned is ever lost."""
from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from scroll import EventLog

WRITER = r"""
import sys
from scroll import EventLog
path, start = sys.argv[1], int(sys.argv[2])
log = EventLog(path, inline_max=3000, index_options={"flush_docs": 40, "max_segments": 3})
log.search("warm")  # keep the index up to date on every append, flushing segments often
print("ready", flush=True)
i = start
while True:
    body = ("filler%d " % (i % 7)) * (1000 if i % 9 == 0 else 5)  # every 9th goes to the payload store
    seq = log.append(session="s%d" % (i % 3), role="user", text="tok%d %s" % (i, body), meta={"i": i})
    print(i, seq, flush=True)
    i += 1
"""


def _expected_text(i: int) -> str:
    body = ("filler%d " % (i % 7)) * (1000 if i % 9 == 0 else 5)
    return "tok%d %s" % (i, body)


@pytest.mark.slow
def test_sigkill_writer_loses_nothing_returned(tmp_path):
    path = tmp_path / "crash.db"
    rng = random.Random(1234)
    confirmed: dict[int, int] = {}  # i -> seq, appends that returned
    next_i = 0
    trials = 50
    for trial in range(trials):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(next_i)],
                                stdout=subprocess.PIPE, text=True, bufsize=1)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        lines = out.splitlines()
        if lines and (not out.endswith("\n") or len(lines[-1].split()) != 2):
            lines.pop()  # the kill cut the last report short: that append is not "confirmed"
        for line in lines:
            i, seq = map(int, line.split())
            confirmed[i] = seq
            next_i = max(next_i, i + 1)
        raw = sqlite3.connect(path)
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        raw.close()
        if trial % 10 == 9 or trial == trials - 1:
            with EventLog(path, index_options={"flush_docs": 40, "max_segments": 3}) as log:
                for i, seq in confirmed.items():
                    ev = log.expand(seq)
                    assert ev.text == _expected_text(i) and ev.meta == {"i": i}
                # the index catches up after any crash (segments half-written included)
                sample = rng.sample(sorted(confirmed), min(25, len(confirmed)))
                for i in sample:
                    assert confirmed[i] in [h.seq for h in log.search(f"tok{i}", k=3)]
                assert log.index.n_docs == log.max_seq()
                # the hash chain holds across every kill (each link is written in its row's transaction)
                check = log.verify()
                assert check["ok"] and check["events"] == log.max_seq(), check
    assert len(confirmed) > 200, "the writer should have made progress"
