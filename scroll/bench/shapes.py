"""Evaluation sets of fixed *shapes* for search recall@k (ours vs SQLite FTS5 vs bm25s).

"chat": short social turns (`corpus.generate`), keeping questions that share a content word with
every evidence turn. "long": planning chats, messages of 200-500 words in 3-6 paragraphs of
Zipf-ish domain prose; one sentence of one paragraph states a fact. "tool": agent sessions of tool
outputs (pytest, tracebacks, tsc, JSON, ls, grep, configs, SQL, server logs), Python/JS code files
and short turns; one tool event holds a fact. Questions paraphrase the fact around one or two anchor
words (component, person, identifier); in long/tool a quarter are scoped to their session. Deterministic
from (shape, n_words, seed); the evaluation sets (sizes, tune/report seeds): configs/recall-sets.yaml.
"""
from __future__ import annotations

import datetime as _dt
import json
import random
import re

from scroll.bench import lexicon as L
from scroll.bench.corpus import Corpus, Question, fill, generate

SHAPES = ("chat", "long", "tool")
_TOK = re.compile(r"\b\w\w+\b")
_DROP = set(L.STOPWORDS) | set(L.QWORDS)
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = "Monday Tuesday Wednesday Thursday Friday".split()
NAMES = [n for n in L.FEMALE + L.MALE if n not in ("Sam", "Evan", "Nate", "Jon", "Quinn")]
COMPS = ("billing ledger checkout inventory payments auth gateway scheduler reporting analytics ingest export catalog "
         "pricing shipping invoice onboarding telemetry audit identity recommendations fraud loyalty warehouse routing "
         "media upload notifications webhooks profile geo tax refunds subscriptions").split()


def content_words(text: str) -> set[str]:
    """Lower-cased `\\b\\w\\w+\\b` tokens (the search tokenizer's) minus stop and question words."""
    return {w for w in _TOK.findall(text.lower()) if w not in _DROP}


def load_sets(path: str = "configs/recall-sets.yaml") -> dict:
    """The evaluation sets (configs/recall-sets.yaml); a relative path missing here is read from the repo root."""
    import os

    import yaml
    if not os.path.exists(path) and not os.path.isabs(path):
        path = os.path.join(os.path.dirname(__file__), "..", "..", path)
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def generate_shape(shape: str, n_words: int = 1_000_000, seed: int = 0) -> Corpus:
    """The `shape` set of about `n_words` words (cut at the event that reaches it; questions
    whose evidence falls past the cut are dropped)."""
    if shape == "chat":
        c = generate(n_words, seed)
        events, qs = c.events, [q for q in c.questions if all(
            content_words(q.text) & content_words(c.events[i]["text"]) for i in q.evidence)]
    elif shape in ("long", "tool"):
        events, qs = (_Long if shape == "long" else _Tool)(seed).build(n_words)
    else:
        raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")
    total, cut = 0, len(events)
    for i, e in enumerate(events):
        total += len(e["text"].split())
        if total >= n_words:
            cut = i + 1
            break
    events, qs = events[:cut], [q for q in qs if max(q.evidence) < cut]
    return Corpus(events, qs, dict(shape=shape, n_words=n_words, seed=seed, words=total, events=len(events),
                                   sessions=len({e["session"] for e in events}), questions=len(qs)))


def _z(rng: random.Random, seq):
    """Zipf(1)-ish pick: the item of rank r with probability ~ 1/r."""
    return seq[min(len(seq) - 1, int((len(seq) + 1) ** rng.random()) - 1)]


def _pair(rng: random.Random, items, p_para: float = 0.75) -> tuple[str, str]:
    """(words in the evidence, words in the question) from "evidence=question|other" items."""
    ev, _, q = rng.choice(items).partition("=")
    return ev, (rng.choice(q.split("|")) if q and rng.random() < p_para else ev)


def _pl(w: str) -> str:
    return w[:-1] + "ies" if w[-1] == "y" and w[-2] not in "aeiou" else w + ("es" if w.endswith(("s", "sh", "ch", "x")) else "s")


class _Gen:
    prefix, span, per_event = "s", (20, 60), 100       # per_event: rough words, sizes the last session

    def __init__(self, seed: int):
        self.rng = random.Random(f"{type(self).__name__}:{seed}")
        self.used: set = set()                         # fact keys: every question has one answer
        self.clock = _dt.datetime(2023, 1, 2, 9) + _dt.timedelta(days=self.rng.randrange(200))

    def build(self, n_words: int):
        events, qs, words, s = [], [], 0, 0
        while words < n_words:
            n = min(self.rng.randint(*self.span), (n_words - words) // self.per_event + 3)
            ev, q = self.session(f"{self.prefix}-{s:04d}", n, len(events))
            events, qs, s = events + ev, qs + q, s + 1
            words += sum(len(e["text"].split()) for e in ev)
        return events, qs

    def times(self, n: int, lo: int, hi: int) -> list[str]:
        r = self.rng
        self.clock = (self.clock + _dt.timedelta(days=r.randint(1, 4))).replace(hour=r.randint(8, 16), minute=r.randint(0, 59))
        out, t = [], 0
        for _ in range(n):
            t += r.randint(lo, hi)
            out.append((self.clock + _dt.timedelta(seconds=t)).isoformat(timespec="seconds"))
        self.clock += _dt.timedelta(seconds=t)
        return out

    def question(self, sid: str, i: int, text: str, ev: int, cat: str) -> Question:
        return Question(f"{sid}-q{i}", sid if self.rng.random() < 0.25 else None, text, [ev], cat)


# ---------------------------------------------------------------------------- long: planning chats
LAYERS = {"cache": ("caching layer|cache", "Redis Memcached Hazelcast Varnish KeyDB Dragonfly"),
          "queue": ("message broker|queueing system", "Kafka RabbitMQ SQS NATS Pulsar Redpanda"),
          "database": ("datastore|primary db", "Postgres MySQL CockroachDB DynamoDB Cassandra MongoDB"),
          "search index": ("search engine|search backend", "Elasticsearch OpenSearch Solr Typesense Meilisearch"),
          "load balancer": ("proxy|ingress", "Nginx Envoy HAProxy Traefik Caddy Kong"),
          "CI pipeline": ("build system|CI", "Jenkins CircleCI Buildkite Drone TeamCity Tekton")}
LSLOTS = {k: v.split(";") for k, v in dict(
    reason="p99 latency hit {ms} ms during the {month} peak=the latency problem|the slow responses|the latency spike;"
           "the hosting bill {tripled|doubled} in {month}=the cost increase|the rising costs|the bill going up;"
           "it kept running out of memory under load=the memory problems|the OOM crashes;"
           "we had {three|four|five} outages in {month}=the outages|the reliability issues;"
           "the vendor changed the license terms=the licensing change|the license issue;"
           "upstream support ends in {month}=support ending|the end of support",
    store="event store=events;metadata tables=metadata;user records=user data;audit trail=audit logs;job tables=jobs;"
          "session store=sessions",
    target="Postgres 16;Aurora;Spanner;ClickHouse;BigQuery;ScyllaDB;TimescaleDB",
    endpoint="admin endpoint=admin API|admin interface;metrics exporter=metrics endpoint|Prometheus scrape;"
             "health check=healthcheck|liveness probe;gRPC listener=gRPC server|RPC service;debug server=debugger|pprof endpoint",
    tech="Node;Python;Go;Java;Django;Spring Boot;React;gRPC;OpenSSL;Terraform",
    bug="memory leak;TLS handshake;connection pool;timezone;serialization;deadlock",
    project="load testing=load tests|stress testing;observability work=monitoring|dashboards;SOC 2 audit prep=compliance|audit;"
            "rewrite=rebuild|redesign;capacity increase=more capacity|scaling;on-call tooling=on-call tools|paging setup",
    cutover="cutover=switchover|go-live|migration date",
    region="eu-west-1=Ireland;us-east-1=Virginia;ap-southeast-2=Sydney;eu-central-1=Frankfurt;us-west-2=Oregon;"
           "ap-northeast-1=Tokyo",
    lb="Envoy;an ALB;Nginx;HAProxy",
    data="request logs=logs;raw events=event data|events;invoice PDFs=invoices;session traces=traces;"
         "audit records=audit data;webhook payloads=webhook bodies",
    store2="S3 Glacier;cold storage;a GCS bucket;tape",
    cause="an expired TLS certificate;a bad feature flag;a full disk on the primary;a DNS misconfiguration;"
          "a runaway cron job;a schema migration that locked a table",
    incident="outage=incident|downtime|outage").items()}
# (frame, category, key slots (one answer per key), evidence sentence, questions, distractor keyword slots)
LFRAMES = [
    ("decision", "decision", ("comp", "layer"),
     "{After|Once} {reason}, we {moved|switched|migrated} the {comp} {layer} from {a} to {b}, {P} {confirmed|signed off}.",
     ["Which {layer_q} did {comp} {end up on|switch over to|adopt} after {reason_q}?",
      "What {replaced|took over from} {a} {for|as} the {comp} {layer_q}?", "Why did the {comp} team {drop|abandon|stop using} {a}?"],
     ("layer", "a", "b")),
    ("owner", "owner", ("comp", "store"),
     "{P} {owns|is driving|is leading} the {quarter} migration of the {comp} {store} to {target}, with {P2} as backup.",
     ["Who is {responsible for|in charge of} moving the {comp} {store_q} onto {target}?",
      "Who {leads|heads} the {target} {move|upgrade|transition} for {comp} {store_q}?"], ("store", "target", "P")),
    ("port", "number", ("comp", "endpoint"), "In staging the {comp} {endpoint} {listens|binds} on port {port} instead of the default.",
     ["What port does the {comp} {endpoint_q} use in staging?", "Which port is {comp}'s {endpoint_q} bound to?"], ("endpoint",)),
    ("version", "number", ("comp", "tech"), "We pinned {comp} to {tech} {ver} until the {bug} regression is fixed upstream.",
     ["Which {tech} release is {comp} {locked|held|stuck} on?", "What version of {tech} does {comp} {stay on|run} for now?"],
     ("tech", "bug")),
    ("budget", "number", ("comp", "project"), "{P} {approved|signed off on} {money} for the {comp} {project} this quarter.",
     ["How much {money|budget|funding} was {approved|allocated|granted} for the {comp} {project_q}?",
      "What did {P} {approve|sign off} for {comp} {project_q}?"], ("project", "P")),
    ("cutover", "number", ("comp",), "The {comp} cutover is {scheduled|set|planned} for {date} at {hh}:00 UTC.",
     ["When is the {comp} {cutover_q} happening?", "When will the {comp} {cutover_q} take place?",
      "What date was picked for the {comp} {cutover_q}?"], ("cutover",)),
    ("region", "fact", ("comp",), "{comp} now runs in {region} with {n} replicas behind {lb}.",
     ["{Which region|Where} is {comp} {deployed|hosted} now?", "How many replicas does {comp} run in {region_q}?"], ("lb",)),
    ("retention", "fact", ("comp", "data"), "{comp} keeps {data} for {days} days before {archiving|moving} them to {store2}.",
     ["How long {does|do} {comp} {retain|hold on to|store} {data_q}?", "When are {comp} {data_q} {archived|moved} to {store2}?"],
     ("data", "store2")),
    ("outage", "fact", ("comp",), "The {weekday} outage of {comp} was {caused by|traced to} {cause}.",
     ["What {caused|triggered} the {comp} {incident_q} on {weekday}?", "Why did {comp} go down on {weekday}?"], ("incident",)),
]
TECHS = sorted({t for _, ts in LAYERS.values() for t in ts.split()} | set(LSLOTS["target"]) | set(LSLOTS["tech"]))
NOUNS = ("ticket review dashboard alert rollout roadmap backlog estimate runbook postmortem standup retro spec RFC milestone "
         "deadline headcount vendor contract SLO canary rollback feature flag cluster replica shard schema query endpoint "
         "client dependency release hotfix patch coverage metric config secret quota").split()
VERBS = "deploy ship review estimate refactor test monitor migrate scale benchmark document prioritize sync upgrade audit".split()
ADJS = "flaky slow stable risky noisy expensive blocked overdue urgent fine solid messy".split()
TEAMS = "platform infra payments data growth core mobile web SRE security".split()
BG = """{P} {thinks|suggested|argued} we should {verb} the {comp} {noun} before sprint {n} ends.
The {comp} team still has {n} open tickets about the {noun}.
{Honestly|Frankly|To be fair}, the {comp} {noun} {is|looks|feels} {adj} and {needs|could use} a {noun2}.
Let's {verb} {comp} first and {verb2} the {noun} {afterwards|next sprint|once QA is done}.
{P} and {P2} {paired|met|synced} on the {noun} for {comp} {yesterday|this morning|on Monday|last Friday}.
If the {noun} slips, the {comp2} {noun2} slips too, so we need a {noun3} by {weekday}.
I {added|updated|filed} a {noun} for the {comp} service; {P} {will|can} {verb} it {this week|next week}.
The deploy of {comp} went {fine|smoothly|okay} but the {noun} is still {adj}.
We agreed the {team} team handles {comp} {nouns} and {P} keeps an eye on the {noun2}.
According to the {noun}, {comp} {throughput|error rate|traffic} {dropped|rose|stayed flat} {this week|after the release}.
Please {verb} the {comp} {noun} in staging before anyone touches prod.
The {quarter} roadmap still lists {comp}, {comp2} and the {noun} {work|cleanup|rewrite}.
{P} {raised|flagged} a concern that the {comp} {noun} {could|might} {block|delay} the {comp2} release.
For the record, the team {decided|agreed} to keep the {noun} {process|setup} as is for now.
My {take|view} is that {comp} {needs|deserves} more {tests|monitoring|docs} before we {verb} it.
We spent most of {weekday} on the {comp} {noun}, which was {adj}.
The service owners for {comp} and {comp2} should {review|sign off on} the {noun} together.
{Good|Fair} point, {P}; the {noun} plan for {comp} {assumes|ignores} the {noun2}.
On-call {noticed|saw} {adj} {nouns} from {comp} again, so {P} opened a {noun2}.
The budget {review|discussion} for {comp} got pushed to {weekday} because {P} is out.
{Sure|Okay|Got it}, I will {verb} the {noun} and ping the {team} team {once|when} it is done.
{P} {asked|wondered} whether {tech2} {still makes sense|is worth it} for the {comp} {noun}.
The {tech2} {upgrade|cluster|bill} behind {comp} {came up|was discussed} again in the {team} sync.""".split("\n")
LDIS = """{P} wants a {kw} {review|walkthrough} for {comp} before the {quarter} planning.
Nobody has touched the {comp} {kw} {docs|config|tests} since sprint {n}.
{P} will {demo|present} the {comp} {kw} {metrics|numbers} at {weekday}'s sync.
The {kw} question for {comp} came up again, but we parked it until {quarter}.
{Can we|We should} revisit the {kw} {runbook|dashboards|alerts} for {comp} {soon|this sprint}?
{P} said the {kw} work on {comp} is blocked on the {comp2} {noun}.""".split("\n")


def _cap(s: str) -> str:
    s = re.sub(r"\b([Aa]) (?=[aeiou])", r"\1n ", s)         # "a estimate" -> "an estimate"
    return s[:1].upper() + s[1:]


class _Long(_Gen):
    prefix, span, per_event = "plan", (20, 60), 300
    pool: list = []                                    # recent facts, echoed by later sessions

    def common(self, people, comps) -> dict:
        r, noun = self.rng, _z(self.rng, NOUNS)
        p, p2, c, c2 = _z(r, people), _z(r, people[::-1]), _z(r, comps), _z(r, COMPS)
        return dict(P=p, P2=p2 if p2 != p else people[people.index(p) - 1], comp=c,
                    comp2=c2 if c2 != c else COMPS[COMPS.index(c) - 1], noun=noun, nouns=_pl(noun), noun2=_z(r, NOUNS), noun3=_z(r, NOUNS), verb=_z(r, VERBS), verb2=_z(r, VERBS), adj=r.choice(ADJS),
                    team=_z(r, TEAMS), tech2=_z(r, TECHS), n=str(r.randint(2, 40)), weekday=r.choice(DAYS),
                    quarter=f"Q{r.randint(1, 4)}")

    def fact(self, people, comps):
        """(category, evidence sentence, question, distractor keywords, component) or None."""
        r = self.rng
        for _ in range(30):
            name, cat, key, say, asks, kws = r.choice(LFRAMES)
            sl = dict(self.common(people, comps), comp=r.choice(comps), layer=r.choice(list(LAYERS)), month=r.choice(MONTHS))
            lq, techs = LAYERS[sl["layer"]]
            sl["layer_q"], (sl["a"], sl["b"]) = r.choice(lq.split("|")), r.sample(techs.split(), 2)
            for k, items in LSLOTS.items():
                sl[k], sl[k + "_q"] = _pair(r, items)
            sl.update(ms=str(r.randrange(400, 3000, 50)), port=str(r.randint(1025, 65000)), money=f"${r.randint(5, 400)}k",
                      ver=f"{r.randint(1, 24)}.{r.randint(0, 19)}.{r.randint(0, 9)}", hh=f"{r.randint(0, 23):02d}",
                      days=str(r.choice((7, 14, 30, 45, 90, 180, 365))), date=f"{r.choice(DAYS)} {sl['month']} {r.randint(1, 28)}")
            sl["reason"] = fill(sl["reason"], sl, r)
            if (k := (name,) + tuple(sl[k] for k in key)) in self.used:
                continue
            self.used.add(k)
            return cat, _cap(fill(say, sl, r)), fill(r.choice(asks), sl, r), [sl[k] for k in kws], sl["comp"]
        return None

    def distract(self, fact, people, comps) -> str:
        sl = dict(self.common(people, comps), comp=fact[4], kw=self.rng.choice(fact[3]))
        if sl["kw"] in NAMES:                          # the person in another context
            return _cap(fill(self.rng.choice(BG), dict(sl, P=sl["kw"]), self.rng))
        return _cap(fill(self.rng.choice(LDIS), sl, self.rng))

    def session(self, sid: str, n: int, base: int):
        r = self.rng
        people, comps = r.sample(NAMES, 6), r.sample(COMPS, 6)
        inserts: list[list] = [[] for _ in range(n)]

        def put(item):                                 # at most 3 inserted sentences per message (keeps <= 500 words)
            inserts[r.choice([m for m in range(n) if len(inserts[m]) < 3] or range(n))].append(item)
        facts = []
        for _ in range(max(1, n // 6)):
            if (f := self.fact(people, comps)) is None:
                continue
            put((f[1], len(facts)))
            facts.append(f)
            for _ in range(r.randint(2, 4)):
                put((self.distract(f, people, comps), None))
        for m in range(n):
            if self.pool and r.random() < 0.5:       # facts of earlier sessions come up again
                inserts[m].append((self.distract(r.choice(self.pool), people, comps), None))
        self.pool = (self.pool + facts)[-300:]
        events, where = [], {}
        for m, t in enumerate(self.times(n, 60, 900)):
            text, tags = self.message(inserts[m], people, comps)
            where.update((tag, base + m) for tag in tags)
            events.append({"session": sid, "role": ("user", "assistant")[m % 2], "text": text, "time": t,
                           "kind": "message", "meta": {"turn": m + 1}})
        return events, [self.question(sid, i, f[2], where[i], f[0]) for i, f in enumerate(facts)]

    def message(self, inserts, people, comps):
        """3-6 paragraphs of background sentences around the inserted ones, 215-490 words."""
        r = self.rng
        paras: list[list] = [[] for _ in range(r.randint(3, 6))]
        for item in inserts:
            p = r.choice(paras)
            p.insert(r.randint(0, len(p)), item)
        lens = [sum(len(s.split()) for s, _ in p) for p in paras]
        target = min(465, max(215, int(r.gauss(295, 65))))
        while sum(lens) < target:
            i = lens.index(min(lens))
            s = _cap(fill(r.choice(BG), self.common(people, comps), r))
            paras[i].insert(r.randint(0, len(paras[i])), (s, None))
            lens[i] += len(s.split())
        tags = [tag for p in paras for _, tag in p if tag is not None]
        return "\n\n".join(" ".join(s for s, _ in p) for p in paras if p), tags


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
