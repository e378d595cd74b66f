"""The core kernel helpers (scroll/toolkit.py over scroll/statements.py): question-agnostic English over `ms` hits.

What they compute on a small hand-written history (not the generator's wording), that the
system prompt documents exactly them, and that they work through `Agent.run` in the real
sandboxed kernel (where the prelude defines them)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from scroll.policies.harness import SimKernel

HISTORY = [  # (session, time, user text)
    ("s01", "2026-03-02T09:00:00Z", "Morning! For the record I'm living in Ghent, near the canal."),
    ("s02", "2026-03-04T09:00:00Z", "My cousin moved to Riga last week. I might move to Tallinn one day."),
    ("s03", "2026-03-07T09:00:00Z", "We moved to Utrecht on the weekend. Back in school I lived in Bergen."),
    ("s03", "2026-03-07T09:30:00Z", "Took the kids to the orthodontist today, all good."),
    ("s04", "2026-03-09T18:00:00Z", "Orthodontist appointment yesterday, the wire got tightened."),
    ("s05", "2026-03-12T18:00:00Z", "I cancelled the orthodontist visit, too busy. My sister went to the orthodontist today."),
    ("s05", "2026-03-12T18:10:00Z", "We adopted Juniper yesterday! A tiny grey kitten."),
    ("s06", "2026-03-15T08:00:00Z", "Paid $35 for a tram pass. A tram pass for a year would cost $400."),
    ("s07", "2026-03-18T08:00:00Z", "Another tram pass, 35 dollars. My sister spent $90 on tram passes."),
    ("s08", "2026-03-20T08:00:00Z", "Finished the Lakeside 10K this morning, 52 minutes!"),
    ("s09", "2026-03-22T08:00:00Z", "My sister just moved to Antwerp, new job and all."),
]


@pytest.fixture
def hist(log):
    for session, t, text in HISTORY:
        log.append(session=session, role="user", text=text, time=t)
        log.append(session=session, role="assistant", text="Noted.", time=t)
    return log


def _say(log, month: str, turns) -> None:
    """Append (session, day, text) user turns, each at 09:00 of that day of 2026-MONTH."""
    for session, day, text in turns:
        log.append(session=session, role="user", text=text, time=f"2026-{month}-{day}T09:00:00Z")


def _run(log, code: str):
    k = SimKernel(log, session="toolkit", record=False)
    r = k.execute('hits = ms.search("the", k=None, role="user") or user_turns()\n' + code)
    assert r.error is None, r.error
    return r.stdout, k.ns


def test_latest_of_takes_my_newest_statement_not_plans_the_past_or_other_people(hist):
    out, ns = _run(hist, 'a = latest_of(user_turns(), "live|living|move|moved")')
    assert ns["a"] == "Utrecht" and "ANSWER: Utrecht" in out  # not Riga (cousin), Tallinn (might), Bergen (past)
    out, ns = _run(hist, 'b = earliest_of(user_turns(), "live|living|move|moved")')
    assert ns["b"] == "Ghent"  # the oldest of mine, the distant past included: Ghent is older than Bergen's mention


def test_who_reads_a_relatives_statements(hist):
    out, ns = _run(hist, 'a = latest_of(user_turns(), "live|move|moved", who="sister")')
    assert ns["a"] == "Antwerp"


def test_count_of_counts_sessions_of_things_i_did(hist):
    out, ns = _run(hist, 'n = count_of(user_turns(), "orthodontist")')
    # s03 (took the kids: I did it), s04 (a fragment: mine); s05 cancelled and the sister's don't count
    assert ns["n"] == "2" and "ANSWER: 2" in out


def test_day_of_moves_yesterday_back_one_day(hist):
    out, ns = _run(hist, 'd = day_of(user_turns(), "Juniper", about="adopt")')
    assert ns["d"] == "2026-03-11"


def test_sum_of_adds_money_spent_only(hist):
    out, ns = _run(hist, 't = sum_of(user_turns(), "tram")')
    assert ns["t"] == "$70"  # not the $400 hypothetical, not the sister's $90


def test_first_of_days_apart_ever_and_said_about(hist):
    out, ns = _run(hist, 'f = first_of(user_turns(), ["Juniper", "Lakeside_10K"])\n'
                         'g = days_apart(user_turns(), "Juniper", "Lakeside_10K")\n'
                         'y = ever(user_turns(), "orthodontist")\nz = ever(user_turns(), "physiotherapist")\n'
                         's = said_about(user_turns(), "Lakeside_10K")')
    assert ns["f"] == "Juniper" and ns["g"] == "9"  # 2026-03-11 -> 2026-03-20
    assert (ns["y"], ns["z"]) == ("yes", "no") and "52 minutes" in ns["s"]


def test_nothing_qualifying_is_unknown(hist):
    out, ns = _run(hist, 'u = latest_of(user_turns(), "emigrated")\nv = day_of(user_turns(), "Pumpkin")')
    assert ns["u"] == ns["v"] == "unknown" and "ANSWER: unknown" in out


def test_whose_statement_read_as_english(log):
    """A capitalised first word is no Name (nor the subject) when the history writes it in lower case,
    a preposition or a noun follows it and the history never writes it mid-sentence; a request to
    the assistant states nothing; a purpose is no plan; a friend of my brother is not my brother."""
    _say(log, "04", [
        ("s00", "01", "Big news: I packed up and left for Lille, the move is done."),
        ("s01", "03", "Cash at the till, $40, and the shop fixed the brakes on my bike."),
        ("s02", "04", "Could you help me plan a ride to Porto on my bike?"),
        ("s03", "05", "Rented a van so my brother could move to Lyon."),
        ("s04", "06", "A gym buddy of my brother moved to Nice."),
        ("s05", "07", "Drove down the coast and settled in Brest."),
        ("s06", "08", "We drove home late, the traffic was awful."),
        ("s07", "09", "Quality time with Nora today, a long run by the river."),
        ("s08", "10", "I ran with Nora again, so much fun."),
        ("s09", "11", "Resignation letter sent, and Acme Labs onboarded me."),
        ("s10", "12", "Spoke with a hiring manager at Zeta Corp, lukewarm on it."),
        ("s11", "13", "Way back, Dijon was where I had my first flat."),
        ("s12", "14", "Quimper is where my cousin lives now, the move wrapped up."),
        ("s13", "15", "Zed Works keeps emailing me about roles."),
        ("s14", "16", "Theo just relocated to Arles."),
        ("s15", "17", "Back from my holiday in Lorient, still sorting the photos."),
        ("s16", "18", "Forgot to use my $15 voucher on the bike parts, annoying."),
    ])
    out, ns = _run(log, 's = sum_of(user_turns(), "bike")\nn = count_of(user_turns(), "bike")\n'
                        'b = latest_of(user_turns(), "move", who="brother")\nm = latest_of(user_turns(), "settle")\n'
                        'r = count_of(user_turns(), "Nora run")\nw = latest_of(user_turns(), "work", kind="org")\n'
                        'v = values_of(user_turns(), "settle", kind="place")\nc = latest_of(user_turns(), "live", who="cousin")\n'
                        'h = ever(user_turns(), "Lorient")')
    assert ns["s"] == "$40" and ns["n"] == "1"  # not the request
    assert ns["b"] == "Lyon"                     # the purpose counts; the buddy's move does not
    assert ns["m"] == "Brest"                    # "Drove" is written in lower case elsewhere: no Name; "way back"
    assert ns["r"] == "2"                        # "Quality time": no Name starts it (Nora is written mid-sentence)
    assert ns["w"] == "Acme Labs"                # not "Resignation"; a talk with a hiring manager, Zed's emails
    assert ns["v"] == "Lille; Brest"             # "left for Lille"; not Dijon (way back), Lyon, Nice, Quimper, Arles
    assert ns["c"] == "Quimper"                  # "Quimper is where my cousin lives": the cousin's statement
    assert ns["h"] == "yes"                      # ", still sorting ...": a clause of its own, no hedge on Lorient
    # (s and n above: the voucher I forgot to use is neither money spent nor a bike event)


def test_a_lower_case_word_matches_its_synonyms_a_name_only_itself(hist):
    out, ns = _run(hist, 'q = widen("dentist Lakeside_10K")\nd = ever(user_turns(), "dentist")\n'
                         'n = count_of(ms.search(widen("dentist"), k=None, role="user"), "dentist")\n'
                         'c = ever(user_turns(), "Dentist")\ns = synonyms("runs")')
    assert ns["q"].startswith("dentist dental") and "orthodontist" in ns["q"] and ns["q"].endswith("Lakeside 10K")
    assert ns["d"] == "yes" and ns["n"] == "2"  # the orthodontist visits, found and counted through "dentist"
    assert ns["c"] == "no"                       # a Name is only itself
    assert ns["s"][:3] == ["run", "ran", "race"] and "finished" in ns["s"]
    from scroll.thesaurus import synonyms, variants
    assert "run" in variants("running") and "stop" in variants("stopped") and synonyms("running")[0] == "run"
    assert "cal" not in variants("called")   # only b d g m n p r t are doubled before -ing / -ed


def test_the_system_prompt_documents_exactly_the_core_toolkit():
    from scroll.prompts import COMPACT_PROMPT, KERNEL_PRELUDE, SYSTEM_PROMPT

    src = Path(__file__).resolve().parents[1] / "scroll" / "toolkit.py"
    reading = src.with_name("statements.py")   # how a statement is read: `facts` and its helpers
    public = {n.name for f in (src, reading) for n in ast.parse(f.read_text()).body
              if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
    assert public == {"facts", "latest_of", "earliest_of", "values_of", "count_of", "day_of", "sum_of", "first_of",
                      "days_apart", "ever", "said_about", "user_turns", "previous_of", "who_of", "largest_of",
                      "smallest_of", "difference", "compare", "kind_of"}
    section = SYSTEM_PROMPT.split("Helpers over hits")[1].split("Rules:")[0]
    documented = set(re.findall(r"\b([a-z_]+)\((?:hits|\.\.\.|\))", section))
    assert documented == public
    thesaurus = src.with_name("thesaurus.py")
    at = [KERNEL_PRELUDE.index(f.read_text()) for f in (thesaurus, reading, src)]
    assert at == sorted(at)   # each file in the prelude, in the order that defines what the next one uses
    kernel_side = {n.name for n in ast.parse(thesaurus.read_text()).body if isinstance(n, ast.FunctionDef)
                   and not n.name.startswith("_")}
    assert kernel_side == {"synonyms", "widen", "variants"}  # variants: the host's word classes read it too
    assert re.search(r"\bwiden\(words\)", section) and re.search(r"\bsynonyms\(word\)", section)
    compact = COMPACT_PROMPT.split("Helpers over hits")[1].split("Rules:")[0]  # the same helpers, shorter
    assert set(re.findall(r"\b([a-z_]+)\((?:hits|\.\.\.|\))", compact)) == public
    assert re.search(r"\bwiden\(words\)", compact) and re.search(r"\bsynonyms\(word\)", compact)


@pytest.mark.sandbox
def test_helpers_through_agent_run_in_the_sandboxed_kernel(hist):
    """The path a model takes: a cell calls a core helper in the sandboxed kernel; the value stays
    resident and the next cell submits it."""
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.llm.scripted import ScriptedLLM

    exposures: list[str] = []
    replies = ['```python\nhits = ms.search("orthodontist", k=None, role="user")\nn = count_of(hits, "orthodontist")\n```',
               "```python\nfinal(n)\n```"]
    cfg = LoopConfig(max_steps=3, cell_timeout=20, max_output_chars=1500, soft_budget=3000, hard_budget=4000)
    with Agent.open(hist, ScriptedLLM(replies), cfg, session="tk",
               on_step=lambda rec, reply, exp: exposures.append(exp)) as agent:
        res = agent.run("How often did I see the orthodontist?")
    assert res.reason == "final" and res.answer == "2", (res, exposures)
    assert "ANSWER: 2 | evidence seqs:" in exposures[0] and "Error" not in exposures[0]


def test_pronouns_negated_targets_and_other_payers(log):
    """'she' after 'my aunt' is the aunt; 'so no haircut' did not happen; the amount someone else
    paid is not mine; 'Tern Analytics took me on' names my employer; a capitalised relation word
    starts someone else's statement; another person's clause hedges nothing of mine."""
    _say(log, "05", [
        ("s0", "01", "My aunt moved to Graz in the spring."),
        ("s1", "02", "Helped my aunt pack; she's relocating to Linz."),
        ("s2", "03", "Fresh haircut at the barber today."),
        ("s3", "04", "The barber was closed, so no haircut."),
        ("s4", "05", "Cab to the station, $42."),
        ("s5", "06", "Cab fares are silly, someone paid $60 for one."),
        ("s6", "07", "First week at Vexa Labs wrapped up, nice people."),
        ("s7", "08", "Handed in my notice, and Tern Analytics took me on as an engineer."),
        ("s8", "09", "Mom finally made the move to Cork."),
        ("s9", "10", "Cousin Jo just bought a house in Aarhus."),
        ("sa", "11", "Coffee with Tomas again, he's moving soon."),
        ("sb", "06", "Badge printed, Orchard Payments is officially my workplace."),
        ("sc", "07", "Jumped ship to Halcyon Games, so that's my new workplace."),
    ])
    out, ns = _run(log, 'a = latest_of(user_turns(), "live", who="aunt", kind="place")\n'
                        'h = count_of(user_turns(), "haircut")\nt = sum_of(user_turns(), "cab")\n'
                        'w = latest_of(ms.search(widen("work"), k=None, role="user"), "work", kind="org")\n'
                        'm = latest_of(user_turns(), "move", who="mom", kind="place")\n'
                        'i = latest_of(user_turns(), "move", kind="place")\n'
                        'c = count_of(user_turns(), "Tomas coffee")\n'
                        'o = values_of(user_turns(), "workplace", kind="org")')
    assert ns["a"] == "Linz" and ns["h"] == "1" and ns["t"] == "$42" and ns["w"] == "Tern Analytics", out
    assert ns["m"] == "Cork" and ns["i"] == "unknown"   # "Mom ...", "Cousin Jo ...": their moves, not mine
    assert ns["c"] == "1"                                # ", he's moving soon": his plan, not a hedge on the coffee
    # "X is officially my ...", "X, so that's my ...": X is the value
    assert {"Orchard Payments", "Halcyon Games"} <= set(ns["o"].split("; "))


def test_day_before_yesterday_a_greeting_from_home_and_a_trip(log):
    _say(log, "05", [("s0", "05", "We adopted a kitten the day before yesterday, we named her Olive."),
                     ("s1", "06", "Hello from Tromso, my new home!"),
                     ("s2", "07", "In Bodo for a conference this week, home on Sunday.")])  # a trip, not where I live
    out, ns = _run(log, 'd = day_of(user_turns(), "Olive", about="adopt")\n'
                        'c = latest_of(user_turns(), "home", kind="place")')
    assert ns["d"] == "2026-05-03" and ns["c"] == "Tromso", out


def test_kind_of_names_the_member_my_statement_gives(log):
    """A breed told in the message beside the Name; a plan is no answer; an instrument found by its own
    search when the question's words match nothing; an unknown kind says so."""
    _say(log, "06", [("s0", "01", "Thinking about a dog, maybe a poodle."),
                     ("s1", "02", "We got Rex today! A whippet cross, very fast."),
                     ("s2", "03", "Practising cello every evening now."),
                     ("s3", "04", "My cousin plays the trumpet.")])
    out, ns = _run(log, 'b = kind_of(ms.search(widen("Rex"), k=None, role="user"), "Rex", kind="breed")\n'
                        'i = kind_of(ms.search(widen("pick"), k=None, role="user"), "pick", kind="instrument")\n'
                        'x = kind_of(user_turns(), "", kind="boat")')
    assert ns["b"] == "whippet cross" and ns["i"] == "cello" and ns["x"] == "unknown", out


def test_a_guess_who_statement_is_about_whoever_comes_after_it(log):
    """'Guess who ... ? My aunt!' is my aunt's move, not mine; 'Guess who ...? Me.' is mine."""
    _say(log, "06", [("s0", "01", "I moved to Oslo, finally unpacked."),
                     ("s1", "02", "News: guess who settled in Bergen? My aunt! She loves it."),
                     ("s2", "03", "Guess who has a flat in Tromso now? Me, after all that searching.")])
    out, ns = _run(log, 'a = latest_of(user_turns(), "live", who="aunt", kind="place")\n'
                        'm = values_of(user_turns(), "live", kind="place")')
    assert ns["a"] == "Bergen" and "Bergen" not in str(ns["m"]) and "Tromso" in str(ns["m"]), out


def test_a_named_person_a_neighbour_of_ours_and_a_commute(log):
    """'Priya got hired by X' is Priya's news; 'that old neighbour of ours' moves, not me; the town
    I cycle through on the way to work is no employer."""
    _say(log, "06", [("s0", "01", "Started at Vexa Labs this week."),
                     ("s1", "02", "Priya got hired by Tern Analytics, so happy for her."),
                     ("s2", "03", "Cycled to work through Bergen, lovely morning."),
                     ("s3", "04", "I moved to Oslo, finally unpacked."),
                     ("s4", "05", "That old neighbour of ours is off to Bergen for good.")])
    out, ns = _run(log, 'w = latest_of(ms.search(widen("work"), k=None, role="user"), "work", kind="org")\n'
                        'c = latest_of(user_turns(), "live", kind="place")')
    assert ns["w"] == "Vexa Labs" and ns["c"] == "Oslo", out


def test_a_commute_across_town_a_carried_pet_school_days_and_a_race_number(log):
    """'the bus across Lyon ... where I live' gives Lyon; 'let me bring Pip home' is no place; a city of my
    school days is the past; a relocation (noun) is a move; a race number picked up FOR the race is not
    the race's day when a statement of the race itself exists."""
    _say(log, "07", [("s0", "01", "We relocated to Graz in spring."),
                     ("s1", "02", "The breeder let me bring Pip home today, what a day."),
                     ("s2", "03", "In my school days, Linz was home."),
                     ("s3", "04", "The bus across Lyon is quick, a perk of living here."),
                     ("s4", "05", "Picked up my race number for the Lyon Urban Trail."),
                     ("s5", "09", "I completed the Lyon Urban Trail yesterday, legs gone."),
                     ("s6", "10", "Big news from my uncle, the relocation to Porto is done.")])
    out, ns = _run(log, 'c = latest_of(user_turns(), "home", kind="place")\n'
                        'd = day_of(user_turns(), "Lyon_Urban_Trail")\n'
                        'u = latest_of(user_turns(), "live", who="uncle", kind="place")')
    assert ns["c"] == "Lyon" and ns["d"] == "2026-07-08" and ns["u"] == "Porto", out
