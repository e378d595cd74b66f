"""Seeded filler conversations: chit-chat, work, and pasted tool output between a user and
an assistant. No facts that the task families ask about live here; the words overlap on
purpose (shops, appointments, runs, money, cities) so search has realistic near-misses.

`session_turns(rng)` -> list of (role, kind, text) for one session (roles alternate,
starting with "user"; pasted tool output is a user turn of kind "tool_output").
"""
from __future__ import annotations

import random
import re

_SLOT = re.compile(r"\{(\w+)\}")

BANK: dict[str, list[str]] = {
    "dish": ["mushroom risotto", "chickpea curry", "lemon chicken", "shakshuka", "pad thai", "lentil soup",
             "banana bread", "sourdough focaccia", "miso salmon", "vegetable lasagna", "tacos al pastor",
             "ratatouille", "beef stew", "pumpkin gnocchi", "green shakshuka", "kimchi fried rice"],
    "ingredient": ["garlic", "shallots", "smoked paprika", "coconut milk", "fresh basil", "feta",
                   "arborio rice", "cumin", "ginger", "soy sauce", "butter", "parmesan", "chili flakes",
                   "lime zest", "tahini", "brown sugar", "thyme", "white wine"],
    "lang": ["Python", "TypeScript", "Go", "Rust", "SQL", "Bash"],
    "service": ["billing-api", "auth-service", "ingest-worker", "search-gateway", "report-builder",
                "notification-hub", "inventory-sync", "export-job"],
    "error": ["KeyError", "TimeoutError", "ConnectionResetError", "ValueError", "MemoryError",
              "IntegrityError", "PermissionError", "JSONDecodeError"],
    "book": ["The Left Hand of Darkness", "Piranesi", "The Overstory", "Klara and the Sun",
             "A Memory Called Empire", "The Remains of the Day", "Station Eleven", "Pachinko",
             "The Dispossessed", "Project Hail Mary", "Middlemarch", "The Name of the Wind"],
    "show": ["Severance", "The Bear", "Slow Horses", "Shogun", "Andor", "Succession", "Dark",
             "Only Murders in the Building", "Fleabag", "Mr. Robot"],
    "dest": ["Kyoto", "Marrakesh", "Reykjavik", "Naples", "Hanoi", "Cape Town", "Tbilisi",
             "Oaxaca", "Ljubljana", "Istanbul", "Bergen", "Cusco"],
    "plant": ["tomatoes", "basil", "a fiddle leaf fig", "the monstera", "peppers", "strawberries",
              "the succulents", "lavender", "zucchini", "the orchid"],
    "colleague": ["Priya", "Marcus", "Dana", "Tomas", "Aiko", "Felix", "Noor", "Ben", "Sofia", "Kenji"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "meeting": ["the sprint review", "the quarterly planning", "the design review", "the 1:1",
                "the incident retro", "the roadmap sync", "the budget meeting"],
    "exercise": ["a 5k run", "a long bike ride", "a swim", "a hike", "a strength session", "interval sprints"],
    "hobby": ["learning the guitar", "sketching", "woodworking", "bread baking", "chess", "photography",
              "Spanish lessons", "pottery"],
    "weather": ["rainy", "freezing", "weirdly warm", "windy", "foggy", "sunny but cold"],
    "tool": ["pandas", "Docker", "Terraform", "Postgres", "Redis", "Kafka", "pytest", "nginx"],
    "metric": ["p95 latency", "error rate", "queue depth", "memory usage", "CPU load", "cache hit rate"],
}

_USER_OPENERS = {
    "cooking": [
        "I want to make {dish} tonight but I'm out of {ingredient}. What can I use instead?",
        "Can you give me a simple recipe for {dish}? Nothing too fancy, I have about 40 minutes.",
        "My {dish} came out bland last time. Any tips?",
        "Is it ok to freeze {dish}? I made way too much.",
    ],
    "code": [
        "The {service} keeps throwing a {error} in production. Here's the trace.",
        "Can you help me refactor this {lang} function? It's getting hard to read.",
        "Our {metric} on {service} jumped after the last deploy. Where would you start looking?",
        "I'm trying to write a test for the retry logic in {service} with {tool}.",
    ],
    "travel": [
        "Thinking about a long weekend in {dest}. What would you do with three days there?",
        "What's the best time of year to visit {dest}?",
        "Can you help me plan a rough budget for a week in {dest}?",
    ],
    "reading": [
        "I just finished {book}. I'm not sure how I feel about the ending.",
        "Can you recommend something similar to {book}?",
        "I started watching {show}. Is it worth sticking with after episode two?",
    ],
    "fitness": [
        "I did {exercise} this morning and my knees are complaining. Should I change something?",
        "Can you put together a simple weekly plan that mixes {exercise} and strength work?",
        "How much rest should I take between hard sessions?",
    ],
    "garden": [
        "The leaves on {plant} are turning yellow. Too much water?",
        "When should I repot {plant}?",
        "What can I plant in late summer on a small balcony?",
    ],
    "work": [
        "Can you help me draft an email to {colleague} about moving {meeting} to {weekday}?",
        "I have {meeting} tomorrow and I need three talking points about the {service} migration.",
        "{colleague} asked me for feedback on their design doc. How do I say it needs work without being harsh?",
        "Help me summarize this week's status for my manager: {service} is done, {tool} upgrade is blocked.",
    ],
    "data": [
        "Here's the output of my query. Can you tell me why the totals look off?",
        "I ran the benchmark again; numbers below. Is the regression real or noise?",
    ],
    "chat": [
        "It's been {weather} all week and I'm going a bit stir crazy.",
        "I've been getting into {hobby} lately. Any advice for a beginner?",
        "Long day. {meeting} ran over by an hour.",
        "Do you think it's worth learning {lang} at this point?",
    ],
}

_ASSISTANT_SENTENCES = {
    "cooking": [
        "For {dish}, the most common mistake is under-seasoning early, so salt in layers as you go.",
        "If you're out of {ingredient}, a mix of {ingredient2} and a little acid usually covers it.",
        "Brown the aromatics slowly; five extra minutes on low heat makes a real difference.",
        "A splash of {ingredient} at the end brightens the whole pot.",
        "It freezes well for about three months if you cool it quickly and store it flat in bags.",
        "Toast the spices in the oil for thirty seconds before adding the liquid.",
        "Taste before serving and adjust with salt, acid, and a pinch of sugar if it's sharp.",
        "If you want it richer, finish with {ingredient2} off the heat.",
    ],
    "code": [
        "The {error} suggests the payload sometimes arrives without the field you expect, so guard that access.",
        "I'd add structured logging around the call to {service} so you can see which request fails.",
        "Wrapping the retry in exponential backoff with jitter avoids the thundering-herd effect.",
        "With {tool}, you can pin the failing case in a fixture and assert on the exact exception.",
        "Splitting that function into a parser and a validator would make each part testable on its own.",
        "Check whether the connection pool is exhausted; that often shows up as a {error} under load.",
        "A quick bisect between the last two deploys would tell you which change moved the {metric}.",
        "I'd also put a timeout on the outbound call; right now it can hang for the default 300 seconds.",
    ],
    "travel": [
        "{dest} is lovely in shoulder season: fewer crowds and lower prices.",
        "For three days, I'd spend one day on the old town, one on a day trip, and keep one unplanned.",
        "Budget-wise, lodging will be the biggest line; food and transit are cheap if you eat where locals eat.",
        "Book the popular museums ahead; walk-in lines can be over an hour.",
        "Public transit from the airport is usually faster than a taxi at rush hour.",
        "If you like food markets, go early in the morning when the vendors are setting up.",
    ],
    "reading": [
        "A lot of readers find the ending of {book} ambiguous on purpose; it rewards a second look.",
        "If you liked {book}, you might enjoy {book2}, which plays with similar themes.",
        "{show} takes a couple of episodes to find its rhythm, but most people say it pays off.",
        "The pacing in the middle section is slow, but it sets up the payoff.",
        "It might help to read it as a character study rather than a plot-driven story.",
    ],
    "fitness": [
        "Knee pain after {exercise} often comes from ramping up volume too fast; try cutting it by a fifth.",
        "Two hard sessions a week with easy days between is a solid starting point.",
        "Strength work for hips and glutes tends to help runners and cyclists alike.",
        "Sleep and protein matter as much as the plan itself.",
        "If the pain is sharp rather than achy, give it a rest and get it checked.",
    ],
    "garden": [
        "Yellow leaves on {plant} are usually overwatering, especially if the soil stays damp for days.",
        "Repot in spring when you see roots circling the bottom of the pot.",
        "Let the top few centimetres of soil dry out before watering again.",
        "A balcony in late summer is good for lettuce, radishes, and herbs like {ingredient}.",
        "Morning sun and afternoon shade is the sweet spot for most herbs.",
    ],
    "work": [
        "Here's a draft: 'Hi {colleague}, would it work to move {meeting} to {weekday}? Happy to adjust.'",
        "Lead with what's working in the doc, then frame the gaps as open questions.",
        "For {meeting}, I'd cover the timeline, the risks on {service}, and what you need from others.",
        "Keep the status short: done, in progress, blocked, and the one decision you need.",
        "Being specific about the blocker on {tool} makes it easier for your manager to help.",
    ],
    "data": [
        "The totals look off because the join duplicates rows when a customer has two addresses.",
        "Looking at the spread, the run-to-run variance is larger than the difference, so it may be noise.",
        "I'd rerun each configuration five times and compare medians rather than single runs.",
        "The last row has a null in the amount column, which SUM skips silently.",
    ],
    "chat": [
        "{weather} weeks are rough; even a short walk at lunch can help.",
        "For {hobby}, short daily practice beats long weekend sessions.",
        "That sounds exhausting. Was anything decided at least?",
        "{lang} is still widely used, so it's a good investment if it matches the work you want to do.",
        "It might be worth blocking an hour on your calendar just for yourself this week.",
    ],
}

_USER_FOLLOWUPS = [
    "Thanks, that helps. One more thing: how long does that usually take?",
    "Makes sense. What would you do differently if you had more time?",
    "Ok I tried that, it's a bit better. Anything else?",
    "Good point. Can you make it shorter?",
    "Hmm, I'm not sure that applies here. The setup is a bit unusual.",
    "Perfect, I'll try that tomorrow.",
    "What about the cost? I don't want to overspend on this.",
    "Can you give me a checklist version?",
    "That's roughly what {colleague} said too.",
    "Interesting. Why does that work?",
]


def _fill(tpl: str, rng: random.Random, fixed: dict) -> str:
    def rep(m: re.Match) -> str:
        name = m.group(1)
        if name in fixed:
            return fixed[name]
        base = name.rstrip("0123456789")
        return rng.choice(BANK[base])
    return _SLOT.sub(rep, tpl)


def _slots(rng: random.Random) -> dict:
    s = {k: rng.choice(v) for k, v in BANK.items()}
    s["ingredient2"] = rng.choice([x for x in BANK["ingredient"] if x != s["ingredient"]])
    s["book2"] = rng.choice([x for x in BANK["book"] if x != s["book"]])
    return s


def _traceback(rng: random.Random, s: dict) -> str:
    frames = []
    for _ in range(rng.randint(3, 7)):
        mod = rng.choice(["handlers", "client", "models", "retry", "serializers", "db", "tasks"])
        frames.append(f'  File "/srv/{s["service"]}/{mod}.py", line {rng.randint(12, 900)}, in '
                      f'{rng.choice(["handle", "fetch", "_request", "parse", "run", "commit", "load_batch"])}\n'
                      f'    {rng.choice(["resp = session.post(url, json=body)", "row = rows[key]", "obj = json.loads(raw)", "conn.execute(stmt)", "return self._retry(fn, *a)"])}')
    ts = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    lines = [f"[{ts}] ERROR {s['service']} request_id={rng.getrandbits(48):012x} failed",
             "Traceback (most recent call last):", *frames,
             f"{s['error']}: {rng.choice(['upstream closed connection', 'missing key', 'deadline exceeded', 'duplicate key value violates unique constraint', 'invalid literal'])}"]
    for _ in range(rng.randint(2, 8)):
        lines.append(f"[{ts}] WARN {s['service']} retry attempt={rng.randint(1, 5)} backoff_ms={rng.randint(50, 3200)}")
    return "\n".join(lines)


def _table(rng: random.Random, s: dict) -> str:
    cols = rng.choice([("region", "orders", "revenue", "refunds"), ("config", "run", "p50_ms", "p95_ms"),
                       ("day", "signups", "active", "churned")])
    rows = [" | ".join(cols), " | ".join("---" for _ in cols)]
    keys = {"region": ["north", "south", "east", "west", "central", "online"],
            "config": ["baseline", "cache-on", "batch-32", "batch-64", "no-retry"],
            "day": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]}[cols[0]]
    for key in keys:
        for r in range(rng.randint(1, 3) if cols[0] == "config" else 1):
            nums = [str(rng.randint(1, 5000)) if i % 2 else f"{rng.uniform(1, 900):.1f}" for i in range(len(cols) - 1)]
            rows.append(" | ".join([key] + ([str(r + 1)] + nums[1:] if cols[0] == "config" else nums)))
    return "\n".join(rows)


def _kubectl(rng: random.Random, s: dict) -> str:
    lines = ["NAME                                READY   STATUS             RESTARTS   AGE"]
    for _ in range(rng.randint(4, 10)):
        name = f"{rng.choice(BANK['service'])}-{rng.getrandbits(32):08x}-{rng.getrandbits(20):05x}"
        status = rng.choice(["Running", "Running", "Running", "CrashLoopBackOff", "Pending", "OOMKilled"])
        lines.append(f"{name:<36}{rng.randint(0, 1)}/1     {status:<19}{rng.randint(0, 40):<11}{rng.randint(1, 90)}m")
    return "$ kubectl get pods -n prod\n" + "\n".join(lines)


def _code_block(rng: random.Random, s: dict) -> str:
    fn = rng.choice(["load_orders", "parse_event", "send_batch", "normalize_rows", "retry_call"])
    body = rng.choice([
        f"def {fn}(rows, *, limit=100):\n    out = []\n    for row in rows[:limit]:\n        if not row.get('id'):\n            continue\n        out.append({{'id': row['id'], 'amount': float(row.get('amount') or 0)}})\n    return out",
        f"def {fn}(client, payload, attempts=5):\n    delay = 0.1\n    for i in range(attempts):\n        try:\n            return client.post('/v1/items', json=payload, timeout=10)\n        except TimeoutError:\n            time.sleep(delay + random.random() * delay)\n            delay *= 2\n    raise RuntimeError('gave up after retries')",
        f"async def {fn}(queue):\n    batch = []\n    while len(batch) < 64:\n        item = await queue.get()\n        if item is None:\n            break\n        batch.append(item)\n    return batch",
    ])
    return f"```python\n{body}\n```"


def _assistant_reply(rng: random.Random, topic: str, s: dict) -> str:
    sents = _ASSISTANT_SENTENCES[topic]
    n = rng.randint(3, min(7, len(sents)))
    picked = [_fill(t, rng, s) for t in rng.sample(sents, n)]
    parts = [rng.choice(["Good question.", "Sure.", "Happy to help.", "Here's how I'd think about it.",
                         "A few thoughts.", "Short answer: yes, with a caveat."])]
    if rng.random() < 0.5:
        parts.append(" ".join(picked))
    else:
        parts.append(picked[0])
        parts.append("\n".join(f"- {p}" for p in picked[1:]))
    if topic == "code" and rng.random() < 0.6:
        parts.append("Something like this:\n" + _code_block(rng, s))
    if rng.random() < 0.5:
        parts.append(rng.choice(["Want me to go into more detail on any of these?",
                                 "Let me know how it goes.", "Does that match what you're seeing?",
                                 "I can draft the next step if you like."]))
    return "\n\n".join(parts)


def session_turns(rng: random.Random, n_exchanges: tuple[int, int] = (5, 14)) -> list[tuple[str, str, str]]:
    """One filler session: alternating user/assistant turns over one or two topics."""
    turns: list[tuple[str, str, str]] = []
    topics = rng.sample(list(_USER_OPENERS), rng.choice([1, 1, 2]))
    n = rng.randint(*n_exchanges)
    for i in range(n):
        topic = topics[min(len(topics) - 1, i * len(topics) // n)]
        s = _slots(rng)
        new_topic = i == 0 or topics.index(topic) != topics.index(topics[min(len(topics) - 1, (i - 1) * len(topics) // n)])
        user = _fill(rng.choice(_USER_OPENERS[topic]), rng, s) if new_topic else _fill(rng.choice(_USER_FOLLOWUPS), rng, s)
        kind = "message"
        if topic in ("code", "data") and new_topic and rng.random() < 0.8:
            paste = {"code": rng.choice([_traceback, _kubectl]), "data": _table}[topic](rng, s)
            user = f"{user}\n\n```\n{paste}\n```"
            kind = "tool_output"
        turns.append(("user", kind, user))
        turns.append(("assistant", "message", _assistant_reply(rng, topic, s)))
    return turns
