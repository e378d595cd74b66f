"""Smoke check: start a server, wait for health, chat, measure, stop, prove it is gone.

    python -m serve.check tiny --model var/models/tiny-qwen3 --json
    scroll serve check tiny --model var/models/tiny-qwen3     # same, from the CLI

Useful after an (air-gapped) install and in CI. Reports the time to healthy, completion
latencies, the server's total RSS (all processes of its group), the reply, and whether every
process of the group is gone after `stop`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from serve import server
from serve.presets import ServeConfig, ServeError, load_preset


def group_pids(pgid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            f = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(f[2]) == pgid and f[0] != "Z":
            out.append(int(stat.parent.name))
    return sorted(out)


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return round(total / 1024, 1)


def smoke(cfg: ServeConfig, *, run_root: str | os.PathLike | None = None,
          prompt: str = "Write one line of Python.", max_tokens: int = 8, requests: int = 3,
          python: str | None = None, timeout: float | None = None, build_model=None) -> dict:
    t0 = time.time()
    h = server.start(cfg, run_root=run_root, python=python, timeout=timeout, build_model=build_model)
    report: dict = {"name": h.name, "url": h.url, "backend": h.backend, "ready_s": h.ready_s,
                    "log_path": h.log_path, "run_dir": h.run_dir, "pgid": h.pgid}
    pids: list[int] = []
    try:
        pids = group_pids(h.pgid)
        report["pids"] = pids
        report["rss_mb"] = rss_mb(pids)
        st = server.status(h.name, run_root=run_root)
        report["models"] = st.get("models")
        lat = []
        for _ in range(requests):
            t = time.time()
            r = server.chat(h.url, cfg.served_model_name,
                            [{"role": "user", "content": prompt}],
                            max_tokens=max_tokens, temperature=0.0)
            lat.append(round(time.time() - t, 4))
        report["latency_s"] = lat
        report["reply"] = r["choices"][0]["message"]["content"]
        report["finish_reason"] = r["choices"][0]["finish_reason"]
        report["usage"] = r.get("usage")
        report["rss_mb_after"] = rss_mb(group_pids(h.pgid))
    finally:
        t = time.time()
        out = server.stop(h.name, run_root=run_root)
        report["stop_s"] = round(time.time() - t, 2)
        report["stopped"] = out["stopped"]
        report["left_in_group"] = group_pids(h.pgid)
        report["left_of_pids"] = [p for p in pids if Path(f"/proc/{p}").exists()
                                  and p in group_pids(h.pgid)]
        report["pid_file_left"] = (Path(h.run_dir) / server.PID_FILE).exists()
        report["total_s"] = round(time.time() - t0, 2)
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m serve.check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("preset", nargs="?", default="tiny")
    ap.add_argument("--model")
    ap.add_argument("--port", type=int)
    ap.add_argument("--run-root")
    ap.add_argument("--timeout", type=float)
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--prompt", default="Write one line of Python.")
    ap.add_argument("--python", help=argparse.SUPPRESS)  # interpreter/wrapper (tests: strace)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    overrides = {"port": a.port}
    if a.model:
        overrides.update(model=str(Path(a.model).resolve()), auto_build_tiny=False)
    try:
        rep = smoke(load_preset(a.preset, overrides), run_root=a.run_root, python=a.python,
                    timeout=a.timeout, max_tokens=a.max_tokens, prompt=a.prompt)
    except ServeError as e:
        print(json.dumps({"ok": False, "error": type(e).__name__, "message": str(e)})
              if a.json else f"error: {e}")
        return 1
    rep["ok"] = rep["stopped"] and not rep["left_in_group"] and bool(rep.get("reply") is not None)
    print(json.dumps(rep) if a.json else json.dumps(rep, indent=2))
    return 0 if rep["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
