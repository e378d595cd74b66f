"""Hostile-cell suite: one test per claim of the threat model in scroll/kernel/sandbox.py.

The log lives in a world-traversable dir outside /tmp with a 0644 db file, so without the
kernel's mount namespace the kernel user could read it: the sandbox must hide it, and the
write attacks must fail as well. After every attack a follow-up cell must work and every
pre-existing event stays byte-identical.
"""
from __future__ import annotations

import ast
import hashlib
import os
import resource
import shutil
import socket
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from scroll.events import EventLog
from scroll.kernel import Kernel
from scroll.kernel import uids

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.sandbox


@pytest.fixture
def open_dir():
    d = Path(tempfile.mkdtemp(prefix="scroll-sbx-", dir="/var/lib"))  # not under the kernel's /tmp
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def log(open_dir):
    with EventLog(open_dir / "log.db") as lg:
        lg.append(session="old", role="user", text="the secret plan is in the blue folder")
        lg.append(session="old", role="user", text="big " * 40_000)  # a payload-backed event
        for p in open_dir.rglob("*"):
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        yield lg


@pytest.fixture
def k(log):
    with Kernel(log, "s1", timeout=10) as kern:
        r = kern.execute("x = 42")
        assert r.error is None, r.error
        yield kern


def snapshot(log) -> dict:
    """Raw rows (via a separate connection) + payload bytes, by seq."""
    con = sqlite3.connect(f"file:{log.path}?mode=ro", uri=True)
    rows = {r[0]: repr(r) for r in con.execute("SELECT * FROM events")}
    con.close()
    files = {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in Path(log.payloads.root).rglob("*") if p.is_file()}
    return {"rows": rows, "files": files}


def assert_unchanged(before: dict, log) -> None:
    after = snapshot(log)
    for seq, row in before["rows"].items():
        assert after["rows"].get(seq) == row, f"event {seq} changed"
    for path, digest in before["files"].items():
        assert after["files"].get(path) == digest, f"payload {path} changed"


def assert_usable(k) -> None:
    r = k.execute("print(x + 1)")
    assert r.error is None and r.stdout == "43\n", (r.stdout, r.error, r.notice)


def test_python_infinite_loop(k):
    r = k.execute("while True:\n    pass", timeout=1)
    assert r.timed_out and "TimeoutError" in r.error
    assert r.notice is None  # the interrupt worked: no restart
    assert_usable(k)


def test_loop_in_c_code_restarts_and_replays(k):
    r = k.execute("sum(range(10**13))", timeout=1)
    assert r.timed_out and "restarted" in r.error
    assert "replayed 1 logged cell" in r.notice
    assert r.stdout == ""
    assert_usable(k)


def test_6gib_allocation_is_refused(k):
    r = k.execute("b = bytearray(6 * 1024**3)")
    assert r.error and r.error.startswith("MemoryError")
    r = k.execute("import resource; print(resource.getrlimit(resource.RLIMIT_DATA)[0])")
    assert r.stdout.strip() == str(4 << 30)
    assert_usable(k)


def test_fork_bomb_hits_process_cap(k):
    r = k.execute("import os\nn = 0\nwhile True:\n    os.fork()\n    n += 1", timeout=5)
    assert r.error  # BlockingIOError at the nproc cap, or a timeout + restart
    assert_usable(k)
    r = k.execute("import resource; print(resource.getrlimit(resource.RLIMIT_NPROC)[0])")
    assert r.stdout.strip() == "256"


def test_tcp_to_host_loopback_fails(k):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(3)
    port = srv.getsockname()[1]
    accepted = []
    t = threading.Thread(target=lambda: accepted.append(_accept(srv)))
    t.start()
    r = k.execute(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)")
    t.join()
    srv.close()
    assert r.error and ("OSError" in r.error or "Error" in r.error.split(":")[0])
    assert accepted == [None]
    r = k.execute("import socket\ntry:\n    socket.getaddrinfo('example.com', 80)\n"
                  "except OSError as e:\n    print('dns failed')")
    assert r.stdout == "dns failed\n"
    assert_usable(k)


def _accept(srv):
    try:
        return srv.accept()
    except OSError:
        return None


def test_log_and_payloads_cannot_be_changed(k, log):
    before = snapshot(log)
    db = str(log.path)
    root = str(log.payloads.root)
    # the host can reach the 0644 db through a world-traversable dir; the kernel cannot see it
    assert os.stat(db).st_mode & 0o004 and os.stat(os.path.dirname(db)).st_mode & 0o001
    r = k.execute(f"import os\nprint(os.path.exists({db!r}), os.path.exists({os.path.dirname(db)!r}), "
                  f"os.path.exists({root!r}))")
    assert r.error is None and r.stdout == "False False False\n", (r.stdout, r.error)
    r = k.execute(f"open({db!r}, 'rb').read(16)")
    assert r.error and ("FileNotFoundError" in r.error or "PermissionError" in r.error)
    attacks = [
        f"import sqlite3; c = sqlite3.connect({db!r}); c.execute(\"INSERT INTO events(session, time, kind, role, text, meta, tokens) VALUES ('x','t','k','r','evil','{{}}',1)\"); c.commit()",
        f"import sqlite3; c = sqlite3.connect({db!r}); c.execute('DROP TABLE events'); c.commit()",
        f"import sqlite3; c = sqlite3.connect({db!r}); c.execute('DELETE FROM events'); c.commit()",
        f"open({db!r}, 'r+b').write(b'evil')",
        f"open({db!r}, 'wb')",
        f"import os; os.remove({db!r})",
        f"import os; os.rename({db!r}, {db!r} + '.x')",
        f"import shutil; shutil.rmtree({root!r})",
        f"import os; [os.remove(os.path.join(d, f)) for d, _, fs in os.walk({root!r}) for f in fs]",
        f"open({root!r} + '/evil', 'w')",
    ]
    for code in attacks:
        r = k.execute(code)
        # (walking the hidden payload dir finds nothing to delete: no error, nothing changed)
        assert r.error or "os.walk" in code, f"attack did not fail: {code}"
        assert_unchanged(before, log)
    assert_usable(k)
    assert_unchanged(before, log)


def test_service_refuses_writes_and_garbage(k, log):
    before = snapshot(log)
    code = """
import socket, json
s = socket.socket(socket.AF_UNIX); s.connect(ms._path); f = s.makefile('rb')
def ask(line):
    s.sendall(line + b'\\n'); return json.loads(f.readline())
out = []
for m in ['append', 'append_many', '_conn', '__init__', 'log', 'delete']:
    out.append(ask(json.dumps({'id': 1, 'method': m, 'params': {'session': 'x', 'role': 'r', 'text': 't'}}).encode())['ok'])
out.append(ask(b'{not json')['ok'])
out.append(ask(b'[1,2,3]')['ok'])
out.append(ask(json.dumps({'method': 'search', 'params': {'query': 1}}).encode())['ok'])
out.append(ask(json.dumps({'method': 'expand', 'params': {'lo': -1}}).encode())['ok'])
try:  # the server answers 'request too large' and hangs up, maybe mid-send
    out.append(ask(b'x' * (2 << 20))['ok'])
except (BrokenPipeError, ConnectionResetError):
    out.append(False)
print(out)
"""
    r = k.execute(code)
    assert r.error is None, r.error
    assert r.stdout.strip() == str([False] * 11)
    r = k.execute("print([h.seq for h in ms.search('secret plan', session='old')])")
    assert r.error is None and r.stdout == "[]\n"  # still answering; 'old' is outside a bare kernel's scope
    assert_unchanged(before, log)
    assert log.max_seq() == r.seqs[-1]  # nothing but the cells' own events was appended
    assert_usable(k)


def test_host_environment_is_not_visible(log, monkeypatch):
    secret = "hunter2-" + os.urandom(8).hex()
    monkeypatch.setenv("SCROLL_TEST_SECRET", secret)
    with Kernel(log, "s1") as k:
        code = f"""
import os, glob
found = [k for k, v in os.environ.items() if {secret!r} in v]
for p in [f'/proc/{{os.getppid()}}/environ', '/proc/1/environ', *glob.glob('/proc/*/environ')]:
    try:
        if {secret!r}.encode() in open(p, 'rb').read():
            found.append(p)
    except OSError:
        pass
host_pids = [p for p in os.listdir('/proc') if p.isdigit() and int(p) > 50]
print(found, os.getpid(), os.getppid(), host_pids)
"""
        r = k.execute(code)
        assert r.error is None, r.error
        assert r.stdout.strip() == "[] 1 0 []"  # pid 1 of its own pid namespace: no host process
        assert secret not in r.stdout


def test_no_root_privileges(k):
    r = k.execute("import os; os.setuid(0)")
    assert r.error and r.error.startswith("PermissionError")
    for path in ("/root/owned", "/owned", "/usr/owned"):  # no /root at all; the root and /usr are read-only
        r = k.execute(f"open({path!r}, 'w').write('x')")
        assert r.error and r.error.startswith(("PermissionError", "FileNotFoundError", "OSError")), (path, r.error)
        assert not os.path.exists(path)
    r = k.execute("import os; print(os.getuid() != 0, os.geteuid() != 0)\n"
                  "st = open('/proc/self/status').read()\n"
                  "print(st.split('CapEff:')[1].split()[0], st.split('NoNewPrivs:')[1].split()[0])")
    assert r.stdout.split() == ["True", "True", "0000000000000000", "1"]
    assert_usable(k)


def test_50mb_print_is_capped_and_kept(k, log):
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = k.execute("print('x' * 50_000_000)")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    assert r.error is None and r.truncated and r.handle
    assert len(r.stdout) < 20_000 + 400 and r.handle in r.stdout
    assert grown_mb < 400, f"host grew {grown_mb:.0f} MB"
    assert len(log.payloads.get(r.handle)) == 50_000_001
    out = log.expand(r.seqs[1])
    assert out.meta["handle"] == r.handle and out.meta["chars"] == 50_000_001
    r2 = k.execute(f"print(len(ms.payload({r.handle!r})))")
    assert r2.stdout == "50000001\n"
    assert_usable(k)


def test_output_flood_stops_at_hard_limit(log):
    with Kernel(log, "s1", max_output_bytes=4 << 20, timeout=20) as k:
        r = k.execute("while True:\n    print('y' * 100_000)")
        assert r.error and "OutputLimit" in r.error and r.truncated
        assert len(log.payloads.get(r.handle)) == 4 << 20
        assert k.execute("print(1)").stdout == "1\n"


def test_kernel_death_restarts_and_replays(k):
    r = k.execute("import os; os._exit(1)")
    assert r.error and r.error.startswith("KernelDied")
    assert "restarted" in r.notice and "replayed 1 logged cell" in r.notice
    assert r.stdout == ""
    assert_usable(k)


def test_memory_cap_covers_all_processes_of_the_kernel(log):
    """cgroup cap (where writable): two children touching 700 MiB each exceed a 1 GiB cap."""
    with Kernel(log, "s1", memory_limit="1G", timeout=60) as k:
        if k.proc.cgroup is None or k.proc.cgroup.path is None:
            pytest.skip("no writable memory cgroup on this machine (RLIMIT_DATA still applies)")
        k.execute("x = 42")
        code = """
import os, time
pids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        b = bytearray(700 * 2**20)
        for i in range(0, len(b), 4096):
            b[i] = 1
        time.sleep(3)
        os._exit(0)
    pids.append(pid)
print(sorted(os.waitpid(p, 0)[1] & 0x7f for p in pids))
"""
        r = k.execute(code)
        # either a child was OOM-killed (signal 9) or the kernel itself was (restart + replay)
        assert ("9" in r.stdout) or (r.error and r.error.startswith("KernelDied")), (r.stdout, r.error)
        assert_usable(k)


def test_oversized_message_is_refused_without_hanging(k):
    # undo the kernel-side chunking and send one 20 MB stream message (above the 16 MiB cap)
    code = ("import sys\nsys.stdout.__class__ = sys.stdout.__class__.__bases__[0]\n"
            "print('z' * 20_000_000)")
    t0 = time.monotonic()
    r = k.execute(code, timeout=30)
    assert time.monotonic() - t0 < 15
    assert len(r.stdout) <= 20_400
    assert r.notice and "output channel was reset" in r.notice
    assert_usable(k)


def test_kernels_cannot_reach_each_other(log):
    with Kernel(log, "a") as ka, Kernel(log, "b") as kb:
        assert ka.rt.uid != kb.rt.uid
        code = f"""
import socket, os
res = []
for attempt in [lambda: open({str(kb.rt.conn_file)!r}).read(),
                lambda: socket.socket(socket.AF_UNIX).connect({str(kb.rt.ms_socket)!r}),
                lambda: os.listdir({str(kb.rt.work)!r}),
                lambda: os.kill({kb.proc.proc.pid}, 9),
                lambda: open('/proc/{kb.proc.proc.pid}/environ').read()]:
    try:
        attempt()
        res.append('open')
    except OSError as e:
        res.append(type(e).__name__)
print(res)
"""
        r = ka.execute(code)
        assert r.error is None, r.error
        assert "open" not in r.stdout, r.stdout
        assert kb.execute("print('alive')").stdout == "alive\n"


def _bound_back(scratch: str) -> list[str]:
    """What a kernel's private `scratch` shows of the host: nothing, or the top folder of the venv
    when the venv lies below it (a clone under /tmp, as .ci/run makes when /root is closed): the
    sandbox binds that path back read-only (scroll/kernel/mounts.py)."""
    try:
        rel = Path(os.path.realpath(sys.prefix)).relative_to(scratch)
    except ValueError:
        return []
    return [rel.parts[0]]


def test_tmp_is_private_capped_and_freed(log):
    """/tmp, /var/tmp and /dev/shm: one private tmpfs, capped, 0600 files, gone at restart/close."""
    host_shm = set(os.listdir("/dev/shm"))
    with Kernel(log, "a", tmp_size="64M", timeout=20) as ka, Kernel(log, "b") as kb:
        ka.execute("x = 42")
        code = """
import os, errno
out = []
for d in ('/dev/shm', '/tmp', '/var/tmp'):
    try:
        with open(d + '/fill', 'wb') as f:
            for _ in range(100):
                f.write(b'x' * (1 << 20))
        out.append('filled')
    except OSError as e:
        out.append(errno.errorcode[e.errno])
    os.remove(d + '/fill')
open('/tmp/mine', 'w').write('secret')
print(out, oct(os.stat('/tmp/mine').st_mode & 0o777), os.listdir('/dev/shm'))
1 / 0  # a failed cell is not replayed: what it wrote must be gone after a restart
"""
        r = ka.execute(code)
        assert r.error.startswith("ZeroDivisionError"), r.error
        assert r.stdout == "['ENOSPC', 'ENOSPC', 'ENOSPC'] 0o600 []\n", r.stdout
        assert set(os.listdir("/dev/shm")) == host_shm and not os.path.exists("/tmp/mine")
        tmp = _bound_back("/tmp")
        assert kb.execute("import os; print(os.listdir('/tmp'))").stdout == f"{tmp}\n"
        ka.execute("open('/dev/shm/big', 'wb').write(b'y' * (50 << 20)); 1 / 0")
        r = ka.execute("import os; os._exit(1)")
        assert "restarted" in r.notice
        r = ka.execute("import os; print(os.listdir('/tmp'), os.listdir('/dev/shm'), x)")
        assert r.stdout == f"{tmp} [] 42\n", (r.stdout, r.error)
    assert set(os.listdir("/dev/shm")) == host_shm


def test_project_and_packages_are_hidden(k):
    """Label hygiene: no `import scroll` (the task generator), no distill/serve, no source."""
    gen = ROOT / "scroll" / "tasks" / "history.py"
    assert gen.exists()
    code = f"""
out = []
for m in ('scroll', 'distill', 'serve', 'scroll.tasks'):
    try:
        __import__(m)
        out.append(m + ' imported')
    except ImportError as e:
        out.append(type(e).__name__)
for p in ({str(gen)!r}, {str(ROOT / 'pyproject.toml')!r}):
    try:
        open(p).read()
        out.append('read ' + p)
    except OSError as e:
        out.append(type(e).__name__)
import os, json, numpy, ipykernel
print(out, os.listdir({str(ROOT)!r}))
"""
    r = k.execute(code)
    assert r.error is None, r.error
    assert r.stdout.startswith("['ModuleNotFoundError', 'ModuleNotFoundError', 'ModuleNotFoundError', "
                               "'ModuleNotFoundError', 'FileNotFoundError', 'FileNotFoundError']"), r.stdout
    assert "scroll" not in r.stdout.split("]", 1)[1]  # the checkout shows at most the venv
    assert_usable(k)


def test_kernel_dies_with_a_killed_host(tmp_path):
    """Host SIGKILLed: its kernel (created in a short-lived thread) and all it started die."""
    import signal
    import subprocess
    import sys

    db = tmp_path / "h.db"
    script = f"""
import os, sys, threading, time
from scroll.events import EventLog
from scroll.kernel import Kernel
box = {{}}
t = threading.Thread(target=lambda: box.update(k=Kernel(EventLog({str(db)!r}), 's', timeout=600)))
t.start(); t.join(); time.sleep(0.5)   # the creating thread is gone: the kernel must live on
k = box['k']
print(k.rt.uid, k.execute("print('alive')").stdout.strip(), flush=True)
k.execute("import os\\nif os.fork() == 0:\\n    while True: pass\\nwhile True: pass")
"""
    host = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=str(ROOT))
    try:
        uid, alive = host.stdout.readline().split()
        uid = int(uid)
        assert alive == "alive"
        time.sleep(1.0)
        assert len(uids.uid_pids(uid)) >= 2  # the kernel and its forked busy child
        host.send_signal(signal.SIGKILL)
        host.wait(10)
        deadline = time.monotonic() + 5
        while uids.uid_pids(uid, zombies=True) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert uids.uid_pids(uid, zombies=True) == []
    finally:
        host.kill()


@pytest.mark.slow
def test_restart_after_c_loop_memory_bomb_and_fork_bomb(k):
    """What the attacks leave (a fork bomb's processes holding the uid's process cap) must
    not break later cells or restarts; a 50 MB print still comes back capped."""
    k.execute("sum(range(10**13))", timeout=1)
    k.execute("b = bytearray(6 * 1024**3)")
    r = k.execute("import os\nwhile True:\n    os.fork()", timeout=5)
    assert r.error
    r = k.execute("print('y' * 50_000_000)")
    assert r.error is None, (r.error, r.notice)
    assert r.truncated and r.stdout.startswith("y" * 1000) and r.stdout.rstrip().endswith("y" * 1000)
    assert len(k.log.payloads.get(r.handle)) == 50_000_001
    r = k.execute("import os; os._exit(1)")
    assert "restarted" in r.notice and "FAILED" not in r.notice
    assert_usable(k)


def test_a_venv_under_tmp_is_bound_back_read_only(log):
    """Issue #30 item 12: a clone under /tmp (its venv below the kernel's private /tmp) starts a kernel:
    the venv is bound back at its path, read-only; the rest of the host's /tmp stays out of sight."""
    import subprocess
    import sys

    if not (Path(sys.prefix) / "pyvenv.cfg").is_file():
        pytest.skip("needs to run from a venv")
    mnt = Path(tempfile.mkdtemp(prefix="scroll-venv-", dir="/tmp"))
    os.chmod(mnt, 0o755)
    marker = Path(tempfile.mkdtemp(prefix="scroll-host-", dir="/tmp"))
    subprocess.run(["mount", "--bind", sys.prefix, str(mnt)], check=True)
    try:
        with Kernel(log, "v", python=str(mnt / "bin" / "python"), timeout=20) as kv:
            r = kv.execute("import sys, os\nprint(sys.prefix)\nprint(os.path.exists(" + repr(str(marker)) + "))\n"
                           "try:\n    open(sys.prefix + '/pwn', 'w')\nexcept OSError as e:\n    print(type(e).__name__)")
            assert r.error is None, (r.error, r.notice)
            out = r.stdout.split()
            assert out[:2] == [str(mnt), "False"] and out[2] in ("OSError", "PermissionError"), r.stdout
        assert not (Path(sys.prefix) / "pwn").exists()
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        mnt.rmdir()
        marker.rmdir()


def test_replay_never_repeats_a_caught_resource_bomb(log):
    """Issue #30 item 2: a fork bomb, a memory bomb and a work-dir fill that catch their own errors are
    logged with the limit they hit and never replayed; after os._exit(3) the kernel restarts with the
    session's variables within the cell timeout + 2 s."""
    fork = ("import os, time\nkids = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
            "            time.sleep(600)\n            os._exit(0)\n        kids += 1\n"
            "except OSError as e:\n    print('caught', type(e).__name__)")
    mem = ("try:\n    hog = []\n    while True:\n        hog.append(bytearray(16 << 20))\n"
           "except MemoryError:\n    hog = None\n    print('caught MemoryError')")
    fill = ("try:\n    with open('fill', 'wb') as f:\n        while True:\n            f.write(b'x' * (1 << 20))\n"
            "except OSError as e:\n    print('caught', e.errno)")
    with Kernel(log, "rb", timeout=10, memory_limit="1G", nproc=64, work_size="64M") as kb:
        assert kb.execute("x = 41").error is None
        r = kb.execute(fork)
        assert "caught" in r.stdout and "processes left running" in (r.notice or ""), (r.stdout, r.notice)
        r = kb.execute(mem)
        assert "caught MemoryError" in r.stdout and r.error is None, (r.stdout, r.error)
        r = kb.execute(fill)
        assert r.stdout.startswith("caught") and r.error is None, (r.stdout, r.error)
        assert kb.execute("import os; os.remove('fill')").error is None
        assert kb.execute("y = x + 1").error is None
        t0 = time.monotonic()
        r = kb.execute("import os; os._exit(3)")
        r = kb.execute("print(x, y)")
        assert r.stdout == "41 42\n", (r.stdout, r.error, r.notice)
        assert time.monotonic() - t0 <= 10 + 2
    limits = [e.meta.get("limit") for e in log.events(session="rb") if e.kind == "output"]
    assert [limits.count(x) for x in ("processes", "memory", "workdir")] == [1, 1, 1], limits


def test_the_work_dir_is_capped_and_a_fill_is_never_replayed(log):
    """Issue #30 item 3: the work dir is a size-capped tmpfs (the host's disk is not filled, ms.attach
    still reads it from the host); a cell that filled it, even catching ENOSPC, is logged with
    limit "workdir" and not replayed, so a restart does not write it again."""
    fill = ("import errno\nn = 0\ntry:\n    with open('big', 'wb') as f:\n        while True:\n"
            "            f.write(b'x' * (1 << 20)); n += 1\nexcept OSError as e:\n    print('caught', errno.errorcode[e.errno], n)")
    with Kernel(log, "wd", timeout=20, work_size="32M") as kw:
        assert kw.execute("x = 7").error is None
        r = kw.execute(fill)
        assert r.stdout.startswith("caught ENOSPC") and int(r.stdout.split()[2]) <= 32, r.stdout
        assert os.path.getsize(kw.rt.work / "big") <= 32 << 20      # the host sees the same files
        assert kw.execute("import os; os.remove('big'); open('note.txt', 'w').write('hi')").error is None
        r = kw.execute("import os; os._exit(3)")
        r = kw.execute("import os; print(x, sorted(os.listdir('.')))")
        assert r.stdout.startswith("7 ") and "big" not in r.stdout and "note.txt" in r.stdout, (r.stdout, r.notice)
        work = kw.rt.work
    assert not work.exists()    # unmounted and removed at close
    limits = [e.meta.get("limit") for e in log.events(session="wd") if e.kind == "output"]
    assert limits.count("workdir") == 1, limits


def test_the_kernel_sees_a_minimal_root(k, open_dir):
    """Issue #30 item 4: the kernel's file system is the system runtime (read-only), its venv, its own
    dirs and private scratch space: a world-readable file elsewhere on the host (here a 0644 file in a
    0755 dir) does not exist for it, nor do /home, /root, /opt, /sys or the host's /etc files."""
    secret = open_dir / "notes.txt"
    secret.write_text("host secret")
    os.chmod(secret, 0o644)
    code = ("import os\n"
            f"print([p for p in ({str(secret)!r}, '/etc/passwd', '/etc/hostname', '/home', '/root', '/opt', '/sys', "
            "'/var/lib', '/var/log') if os.path.exists(p)])\n"
            "print([sorted(os.listdir(d)) for d in ('/etc', '/var', '/run')])")
    r = k.execute(code)
    assert r.error is None, r.error
    visible, listed = r.stdout.splitlines()
    etc, var, run = ast.literal_eval(listed)
    assert visible == "[]" and set(etc) <= {"ld.so.cache", "localtime"} and var == ["tmp"], r.stdout
    assert run == ["scroll-kernels"], run
    assert_usable(k)
