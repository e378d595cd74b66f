"""The "long" shape: planning chats, messages of 200-500 words in 3-6 paragraphs; one sentence
of one paragraph states a fact."""
from __future__ import annotations

import re

from scroll.bench.corpus import fill
from scroll.bench.shapes.gen import COMPS, DAYS, MONTHS, NAMES, _Gen, _pair, _pl, _z

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
