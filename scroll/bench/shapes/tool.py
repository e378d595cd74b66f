"""The "tool" shape: agent sessions of tool outputs, Python/JS code files and short turns; one tool
event holds a fact."""
from __future__ import annotations

import json

from scroll.bench.corpus import fill
from scroll.bench.shapes.gen import COMPS, MONTHS, _Gen, _pair, _pl

# ---------------------------------------------------------------------------- tool: agent sessions
TVERBS = ("compute=calculate|work out,parse=interpret|read,load=read|pull in,fetch=retrieve|get,build=construct|assemble,"
          "validate=check|verify,render=format|draw,flush=write out,resolve=look up,sync=synchronize,encode=serialize,"
          "decode=deserialize,merge=combine,apply=use,normalize=clean up,schedule=plan,publish=send|emit,"
          "consume=read|process,export=dump,refresh=update|renew,rotate=cycle,reconcile=match,dispatch=route").split(",")
TNOUNS = ("invoice order user token cache header payload batch session metric report retry queue shard tenant account "
          "price discount webhook event snapshot checkpoint manifest schema refund coupon cart address").split()
ROLES = "exporter worker server proxy relay collector scheduler consumer gateway poller".split()
KNOBS = ("batch_size=batch size,max_retries=retry limit|retry count,timeout_ms=timeout,pool_size=pool size,"
         "ttl_seconds=ttl|expiry time,rate_limit=rate limit|throttle,flush_interval_s=flush interval,"
         "max_connections=connection limit|connection cap").split(",")
CONDS = ("rejects_expired=rejecting expired {ns},handles_empty=an empty list of {ns},rounds_half_up=rounding the {n},"
         "skips_duplicates=duplicate {ns},retries_on_timeout={n} timeouts,preserves_order={n} ordering,"
         "respects_limit=the {n} limit,strips_whitespace=whitespace in the {n}").split(",")
JSEXC = ("TypeError", "RangeError", "Error", "SyntaxError")
PYEXC = "KeyError ValueError TypeError AttributeError TimeoutError RuntimeError IndexError PermissionError".split()
MSGS = """Can you run the tests for {mod}?|Let me look at {path} first.|The {fn} helper looks off; checking the trace.
Tests are passing now except for {mod}.|I'll grep for {fn} to see the callers.|Why is {fn} called twice here?
That failure is unrelated to the {noun} change, I think.|Please check the config for the {mod} {role}.
Okay, fixed the import and re-running pytest.|The {mod} service needs a restart after the config change.
Good catch. Can you also update the docs for {nouns}?|Next step: wire {fn} into the {mod} handler.
I reverted the last commit on {path} and the build is green again.|Looks like the {noun} cache is stale; clearing it.
Done. Shall I open a PR for the {mod} fix?""".replace("\n", "|").split("|")


class _Tool(_Gen):
    prefix, span, per_event = "agent", (25, 70), 110

    def __init__(self, seed: int):
        super().__init__(seed)
        self.shown: set = set()                        # services shown listening / functions shown failing (not facts)

    def session(self, sid: str, n: int, base: int):
        r = self.rng
        self.lang, self.mods = ("py" if r.random() < 0.7 else "js"), r.sample(COMPS, 3)
        self.fns = [(r.choice(self.mods), *_pair(r, TVERBS, 1.0), *r.sample(TNOUNS, 2)) for _ in range(12)]
        self.svcs = [f"{m}_{x}" for m in self.mods for x in r.sample(ROLES, 2)]
        slots: list = [None] * n
        facts = []
        for _ in range(max(1, n // 12)):
            free = [i for i, s in enumerate(slots) if s is None]
            if len(free) < 4 or (f := self.fact()) is None:
                continue
            pos = r.sample(free, len(f[3]) + 1)
            slots[pos[0]] = (f[0], len(facts))
            for p, d in zip(pos[1:], f[3]):
                slots[p] = (d, None)
            facts.append(f)
        events, where = [], {}
        for i, t in enumerate(self.times(n, 5, 120)):
            text, tag = slots[i] or (self.filler(), None)
            if tag is not None:
                where[tag] = base + i
            msg = not text.startswith(("$", "#", "//"))
            events.append({"session": sid, "role": ("user", "assistant")[i % 2] if msg else "tool", "text": text, "time": t,
                           "kind": "message" if msg else "tool",
                           "meta": {} if msg else {"tool": "bash" if text[0] == "$" else "read_file"}})
        return events, [self.question(sid, i, f[1], where[i], f[2]) for i, f in enumerate(facts)]

    def fact(self):
        """(evidence text, question, category, [distractor texts]) or None; half of the
        questions name the identifier, half use its words."""
        r = self.rng
        for _ in range(20):
            cat, ids = r.choice(("error", "port", "test", "config", "function")), r.random() < 0.5
            mod, v, vq, n1, n2 = fn = r.choice(self.fns)
            ident = self.ident(fn)
            if cat == "error" and ("error", ident) not in self.used and ident not in self.shown:
                self.used.add(("error", ident))
                exc = r.choice(PYEXC if self.lang == "py" else JSEXC)
                ev = self.trace(fn, exc, f"'{n2}_id'" if exc == "KeyError" else
                                f"{n2} {r.choice(('missing', 'expired', 'invalid', 'out of range'))}")
                q = (f"{r.choice(('What exception did', 'Which error did'))} {ident} {r.choice(('raise', 'throw'))}?" if ids else
                     f"What error {r.choice(('was thrown', 'came up', 'was raised'))} while "
                     f"{v[:-1] if v.endswith('e') else v}ing the {n1} {n2} in {mod}?")
                return ev, q, cat, [self.code(fn), self.grep(ident, mod)]
            if cat == "port":
                svc = r.choice(self.svcs)
                if ("port", svc) in self.used or svc in self.shown:
                    continue
                self.used.add(("port", svc))
                m, role = svc.split("_", 1)
                q = (f"Which port was {svc} {r.choice(('bound to', 'listening on'))}?" if ids else
                     f"What port did the {m} {role} {r.choice(('listen on', 'use', 'bind'))}?")
                return self.serverlog(svc, r.randint(1025, 65000)), q, cat, [self.serverlog(svc, None), self.config(m, None)]
            if cat == "test":
                cond, cq = _pair(r, CONDS, 1.0)
                test, keys = f"test_{v}_{n1}_{cond}", {("test", mod, n1, cond), ("testfn", ident)}
                if keys & self.used:
                    continue
                self.used |= keys
                q = (f"Which test {r.choice(('failed', 'broke'))} when calling {ident}?" if ids else
                     f"Which {mod} test {r.choice(('failed', 'broke'))} on {fill(cq, {'n': n1, 'ns': _pl(n1)}, r)}?")
                return self.pytest(mod, (test, n1, fn)), q, cat, [self.pytest(mod, None, test)]
            if cat == "config":
                knob, kq = _pair(r, KNOBS, 1.0)
                key = f"{n1}_{knob}"
                if ("config", mod, key) in self.used:
                    continue
                self.used.add(("config", mod, key))
                q = (f"What {r.choice(('is', 'was'))} {key} set to in the {mod} config?" if ids else
                     f"What {kq} is configured for {_pl(n1)} in {mod}?")
                return self.config(mod, key), q, cat, [self.grep(key, mod, True), self.config(mod, None)]
            if cat == "function":                      # a fresh function, defined only in the evidence file
                fn = (mod, *_pair(r, TVERBS, 1.0), *r.sample(TNOUNS, 2))
                if ("function",) + fn[1:] in self.used:
                    continue
                self.used.add(("function",) + fn[1:])
                _, v, vq, n1, n2 = fn
                w, _, rest = vq.partition(" ")
                does = f"{_pl(w)} {rest}".strip() if r.random() < 0.5 else f"do we use to {vq}"
                q = f"Which function {does} the {n1} {n2} {r.choice(('in', 'for'))} {mod}?"
                return self.code(fn, doc=True), q, cat, [self.grep(self.ident(fn), mod), self.code(r.choice(self.fns))]
        return None

    def ident(self, fn) -> str:
        if self.lang == "py":
            return f"{fn[1]}_{fn[3]}_{fn[4]}"
        return fn[1] + fn[3].title() + fn[4].title()

    def path(self, mod, noun) -> str:
        return f"src/{mod}/{noun}.{self.lang}"

    def filler(self) -> str:
        r, k = self.rng, self.rng.random()
        fn = r.choice(self.fns)
        mod = fn[0]
        if k < 0.36:
            return fill(r.choice(MSGS), dict(mod=mod, fn=self.ident(fn), noun=fn[3], nouns=_pl(fn[3]),
                                               path=self.path(mod, fn[3]), role=r.choice(ROLES)), r)
        other = [f for f in self.fns if ("error", self.ident(f)) not in self.used]
        if k < 0.52 and (k < 0.46 or not other or self.lang == "js"):
            return self.pytest(mod, None) if k < 0.46 else self.tsc(mod)
        if k < 0.52:
            self.shown.add(self.ident(f := r.choice(other)))
            return self.trace(f, r.choice(PYEXC), "unexpected state")
        for lim, out in ((0.60, self.json), (0.65, self.ls), (0.72, self.grep), (0.77, self.config), (0.82, self.sql),
                         (0.87, self.serverlog)):
            if k < lim:
                return out(fn)
        return self.code(fn)

    def pytest(self, mod, fail, verbose=None) -> str:
        r, tot = self.rng, self.rng.randint(8, 60)
        out = [f"$ pytest {'-v' if verbose else '-q'} tests/test_{mod}.py", "=" * 20 + " test session starts " + "=" * 20,
               f"platform linux -- Python 3.11.{r.randint(1, 9)}, pytest-7.4.{r.randint(0, 4)}", f"collected {tot} items", ""]
        if verbose:                                    # the fact's test passing in another run
            names = [verbose] + [f"test_{f[1]}_{f[3]}" for f in r.sample(self.fns, 5)]
            r.shuffle(names)
            out += [f"tests/test_{mod}.py::{t} PASSED [{100 * (i + 1) // len(names):3d}%]" for i, t in enumerate(names)]
        else:
            out.append(f"tests/test_{mod}.py " + "." * tot + " [100%]")
        if not fail:
            return "\n".join(out + [f"{'=' * 10} {tot} passed in {r.uniform(0.2, 9):.2f}s {'=' * 10}"])
        (test, noun, fn), a, b = fail, r.randint(0, 99), r.randint(100, 199)
        return "\n".join(out + [
            "=" * 20 + " FAILURES " + "=" * 20, f"{'_' * 10} {test} {'_' * 10}", "", f"    def {test}():",
            f"        {_pl(noun)} = make_{_pl(noun)}({r.randint(2, 9)})", f"        result = {self.ident(fn)}({_pl(noun)})",
            f">       assert len(result) == {b}", f"E       AssertionError: assert {a} == {b}", "",
            f"tests/test_{mod}.py:{r.randint(10, 300)}: AssertionError", "short test summary info",
            f"FAILED tests/test_{mod}.py::{test} - AssertionError: assert {a} == {b}",
            f"{'=' * 10} 1 failed, {tot - 1} passed in {r.uniform(0.2, 9):.2f}s {'=' * 10}"])

    def trace(self, fn, exc, msg) -> str:
        r = self.rng
        frames = [r.choice([f for f in self.fns if f != fn]) for _ in range(r.randint(1, 3))] + [fn]
        if self.lang == "js":
            return "\n".join([f"$ node src/{fn[0]}/cli.js run", f"{exc}: {msg}"] + [
                f"    at {self.ident(f)} ({self.path(f[0], f[3])}:{r.randint(5, 400)}:{r.randint(3, 40)})" for f in frames[::-1]])
        out = [f"$ python -m {fn[0]}.cli run", "Traceback (most recent call last):"]
        for i, f in enumerate(frames):
            out += [f'  File "{self.path(f[0], f[3])}", line {r.randint(10, 400)}, in {self.ident(f)}',
                    f"    {f[4]} = {f[3]}_map[{f[4]}_id]" if f is fn else f"    return {self.ident(frames[i + 1])}({f[3]})"]
        return "\n".join(out + [f"{exc}: {msg}"])

    def tsc(self, mod) -> str:
        r = self.rng
        errs = [f"{self.path(mod, f[3])}({r.randint(5, 300)},{r.randint(3, 40)}): error TS{r.choice((2339, 2345, 2322))}: "
                f"Property '{f[1]}{f[4].title()}' does not exist on type '{f[3].title()}{f[4].title()}'."
                for f in r.sample(self.fns, r.randint(1, 4))]
        return "\n".join(["$ npx tsc --noEmit"] + errs + [f"Found {len(errs)} errors."])

    def json(self, fn) -> str:
        r, (mod, _, _, n1, n2) = self.rng, fn
        obj = {"id": f"{n1[:3]}_{r.randrange(16 ** 6):06x}", "status": r.choice(("active", "pending", "failed", "settled")),
               f"{n2}_count": r.randint(0, 500), "created_at": self.clock.isoformat(timespec="seconds") + "Z",
               "tenant": r.choice(self.mods),
               "items": [{"sku": f"{n2[:3].upper()}-{r.randint(100, 999)}", "qty": r.randint(1, 9)} for _ in range(r.randint(1, 4))]}
        return f"$ curl -s localhost:{r.randint(3000, 9000)}/api/{mod}/{_pl(n1)}/{obj['id']}\n" + json.dumps(obj, indent=2)

    def ls(self, fn) -> str:
        r, mod = self.rng, fn[0]
        files = sorted({f"{f[3]}.{self.lang}" for f in self.fns if f[0] == mod} | {"__init__.py", "README.md"})
        return "\n".join([f"$ ls -la src/{mod}"] + [f"-rw-r--r--  1 dev dev {r.randint(200, 20000):6d} {r.choice(MONTHS)[:3]} "
                                                  f"{r.randint(1, 28):2d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d} {f}" for f in files])

    def grep(self, fn_or_word, mod=None, key=False) -> str:
        r = self.rng
        word, mod = (fn_or_word, mod) if mod else (self.ident(fn_or_word), fn_or_word[0])
        hits = [f"{self.path(f[0], f[3])}:{r.randint(5, 400)}:    " + (f'{f[4]} = settings["{word}"]' if key else
                f"{r.choice(('result = ', 'return ', 'value = await ', ''))}{self.ident(f) if r.random() < 0.5 else word}({f[3]}, {f[4]})")
                for f in r.sample(self.fns, r.randint(2, 8))]
        return "\n".join([f"$ grep -rn {word} src/"] + hits + [f"{self.path(mod, r.choice(TNOUNS))}:{r.randint(5, 400)}:    {word}"])

    def config(self, fn_or_mod, key=None) -> str:
        r, mod = self.rng, fn_or_mod if isinstance(fn_or_mod, str) else fn_or_mod[0]
        keys = r.sample([f"{r.choice(TNOUNS)}_enabled: {r.choice(('true', 'false'))}", f"log_level: {r.choice(('info', 'warn'))}",
                         f"workers: {r.randint(1, 32)}", f"region: {r.choice(('eu-west-1', 'us-east-1', 'us-west-2'))}",
                         f"host: {mod}-{r.choice(ROLES)}.internal", f"timeout_s: {r.randint(1, 120)}", "debug: false"], r.randint(4, 7))
        if key:
            keys.insert(r.randint(0, len(keys)), f"{key}: {r.randint(2, 5000)}")
        return f"# config/{mod}/{r.choice(ROLES)}.yaml\n{mod}:\n" + "\n".join("  " + k for k in keys)

    def sql(self, fn) -> str:
        r, (mod, _, _, n1, n2) = self.rng, fn
        rows = [f" {r.randint(1, 99999):6d} | {r.choice(self.mods):12s} | {r.randint(0, 900):5d} | {r.choice(('ok', 'late', 'void'))}"
                for _ in range(r.randint(3, 12))]
        return "\n".join([f'$ psql -c "SELECT id, tenant, {n2}_total, state FROM {mod}_{_pl(n1)} ORDER BY id LIMIT {len(rows)}"',
                          f"   id   | tenant       | {n2}_total | state", "-" * 44] + rows + [f"({len(rows)} rows)"])

    def serverlog(self, svc, port=None) -> str:
        r, ts = self.rng, self.clock.strftime("%Y-%m-%d %H:%M:%S")
        svc = svc if isinstance(svc, str) else r.choice(self.svcs)
        m, role = svc.split("_", 1)
        lines = [f"{ts} INFO {svc}: {r.choice(('flushed', 'scraped', 'processed'))} {r.randint(10, 9000)} "
                 f"{_pl(r.choice(TNOUNS))} in {r.randint(2, 900)}ms" for _ in range(r.randint(2, 6))] + [
                 f"{ts} INFO loaded config/{m}/{role}.yaml"]
        if other := [s for s in self.svcs if s != svc and ("port", s) not in self.used]:
            self.shown.add(o := r.choice(other))
            lines.insert(r.randint(0, len(lines)), f"{ts} INFO {o} listening on 0.0.0.0:{r.randint(1025, 65000)}")
        if port:
            lines.insert(r.randint(0, len(lines)), f"{ts} INFO {svc} listening on 0.0.0.0:{port}")
        return f"$ docker compose logs {m}\n" + "\n".join(lines)

    def code(self, fn, doc=False) -> str:
        same = [f for f in self.fns if f[0] == fn[0] and f != fn]
        out = [("# " if self.lang == "py" else "// ") + self.path(fn[0], fn[3])]
        for f in [fn] + self.rng.sample(same, min(len(same), self.rng.randint(0, 2))):
            out += self.function(f, doc and f is fn) + [""]
        return "\n".join(out)

    def function(self, fn, doc) -> list[str]:
        """One Python/JS function of 20-80 lines built from shuffled blocks; `doc` adds a docstring."""
        r, (mod, v, _, n1, n2) = self.rng, fn
        name, py, ns1 = self.ident(fn), self.lang == "py", _pl(n1)

        def blocks():                                  # fresh names and numbers on every call
            x, h0, h1, t = r.choice(TNOUNS), *(self.ident(f) for f in r.sample(self.fns, 2)), r.randint(1, 30)
            if py:
                return [[f"if not {ns1}:", "    return None"], [f"{n2}_count = len({ns1})"], [f'logger.debug("{name} %s", {n2}_id)'],
                        [f"{n2} = {h0}({ns1}, timeout={t})"], [f"for item in {ns1}:", f"    total += item.{x}_amount",
                                                                f"    seen.add(item.{n2}_id)"],
                        ["try:", f"    {h1}({n2})", f"except {r.choice(PYEXC)} as exc:", f'    raise {mod.title()}Error("{n2} failed") from exc'],
                        [f"cache[{n2}_id] = {n2}"], [f"{_pl(n2)} = [x for x in {ns1} if x.{x}_id]"], [f'metrics.incr("{mod}.{x}")'],
                        [f"if len({ns1}) > settings.{x}_limit:", f'    logger.warning("{mod}: too many {ns1}")',
                         f"    {ns1} = {ns1}[:settings.{x}_limit]"]]
            return [[f"if (!{ns1}.length) {{", "  return null;", "}"], [f"const {x}Count = {ns1}.length;"],
                    [f"logger.debug('{name}', {n2}Id);"], [f"const {x} = await {h0}({ns1}, {{ timeout: {t} }});"],
                    [f"for (const item of {ns1}) {{", f"  total += item.{x}Amount;", f"  seen.add(item.{n2}Id);", "}"],
                    ["try {", f"  await {h1}({n2});", "} catch (err) {", f"  throw new Error(`{n2} failed: ${{err.message}}`);", "}"],
                    [f"cache.set({n2}Id, {x});"], [f"metrics.incr('{mod}.{x}');"]]
        text = f"{v.title()} the {n1} {n2}{r.choice((' for one tenant', ' and cache the result', ' from the raw rows', ''))}."
        if py:
            head = [f"def {name}({ns1}, {n2}_id=None):"] + ([f'    """{text}"""'] if doc else []) + ["    total = 0", "    seen = set()"]
            tail, ind = [f"    return {n2}"], "    "
        else:
            head = ([f"/** {text} */"] if doc else []) + [f"export async function {name}({ns1}, {n2}Id) {{", "  let total = 0;",
                                                          "  const seen = new Set();"]
            tail, ind = [f"  return {n2};", "}"], "  "
        body, pool, target = [], [], r.randint(16, 70)
        while len(body) < target:
            if not pool:
                pool = blocks()
                r.shuffle(pool)
            body += [ind + line for line in pool.pop()]
        return head + body + tail
