"""The program writer (scroll.policies.writer): it reads the question's meaning, never the
generator's templates, and its programs run through `Agent.run` in the sandboxed kernel.

The wording-robust teacher must not know the generator: it imports nothing of scroll.tasks
or of the `generated` pack (checked in a fresh interpreter, after writing plans), and its
source, its synonym table and the core helpers share no 4-word run with any wording
template of any variant (train and test) nor name any family."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scroll.policies.writer import ProgramWriter, write_plan

ROOT = Path(__file__).resolve().parents[1]
WRITER_FILES = [ROOT / "scroll" / "policies" / f for f in ("writer.py", "synonyms.py", "stepper.py")] + \
    [ROOT / "scroll" / "toolkit.py", ROOT / "scroll" / "statements.py", ROOT / "scroll" / "thesaurus.py"]


def test_the_writer_imports_nothing_of_the_generator_or_the_pack():
    code = ("import sys, json\nfrom scroll.policies.writer import write_plan\n"
            "for q in ['Where does my aunt live these days?', 'How much did the ferry tickets cost me in total?',"
            " 'Which came first: adopting Juniper or the Lakeside 10K?']:\n    write_plan(q).cell('solve')\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('scroll.tasks', 'scroll.packs.generated',"
            " 'scroll.policies.reference', 'scroll.policies.programs')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def _grams(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z']+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_no_generator_wording_or_family_name_in_the_writer_or_the_core_helpers():
    from scroll.tasks.catalog import FAMILIES
    from scroll.tasks.families import ACTIVITIES, SUMS
    from scroll.tasks.wordings import WORDINGS

    fragments: list[str] = []
    for variant in WORDINGS.values():
        for templates in variant.values():
            for t in templates:  # the literal text between slots and alternations
                fragments += [p for p in re.split(r"\{\w+\}|\[[^\]]*\]", t) if p.strip()]
    for spec in list(ACTIVITIES.values()) + list(SUMS.values()):
        fragments += [p for t in spec["neg"] for p in re.split(r"\{\w+\}|\$\{\w+\}", t)]
    template_grams = set().union(*(_grams(f) for f in fragments))
    assert len(template_grams) > 500  # the check has something to find
    for path in WRITER_FILES:
        src = path.read_text(encoding="utf-8")
        shared = _grams(src) & template_grams
        assert not shared, (path.name, sorted(shared)[:5])
        named = [f for f in FAMILIES if re.search(rf"\b{re.escape(f)}\b", src)]
        assert not named, (path.name, named)


@pytest.mark.parametrize("question,helper,must", [
    ("How often did I go bouldering?", "count_of", "bouldering"),
    ("How many times did I meet Priya for a run?", "count_of", "Priya"),
    ("Where does my aunt live these days?", "latest_of", "live"),
    ("What was the first company I worked at?", "earliest_of", "work"),
    ("When did I adopt Juniper?", "day_of", "Juniper"),
    ("How much did the ferry tickets cost me in total?", "sum_of", "ferry"),
    ("Did I ever go to the orthodontist?", "ever", "orthodontist"),
    ("List every city I've lived in.", "values_of", "live"),
    ("What did I say about the Lakeside 10K?", "said_about", "Lakeside_10K"),
    ("How many days passed between adopting Juniper and the Lakeside 10K?", "days_apart", ""),
    ("Which came first: adopting Juniper or the Lakeside 10K?", "first_of", ""),
    ("Where was I working right before Cobalt Health?", "previous_of", "work"),
    ("What was the most expensive ferry ticket?", "largest_of", "ferry"),
    ("How much more did I spend on ferries than on trams?", "difference", ""),
    ("Which relative ran the Lakeside 10K?", "who_of", "Lakeside_10K"),
    ("Pull up the day I finished the Lakeside 10K.", "day_of", "Lakeside_10K"),  # "Pull": a verb, no name
    ("How many pilates workouts did I do?", "count_of", "pilates"),               # "workouts" only ranks
    ("I forget, where do I live now?", "latest_of", "live"),                      # "forget" asks, no target
    ("Where did I most recently get hired?", "latest_of", "hired"),               # "get" says little
    ("How often did Nora and I go swimming?", "count_of", "Nora swimming"),       # the gerund is the activity
    ("How many haircuts have I had since January?", "count_of", "haircuts"),      # no "January" required
    ("What number have my pottery classes reached?", "count_of", "pottery"),
    ("Total pottery classes for me?", "count_of", "pottery"),                      # "total" + things: a count
    ("Ferries: what's my spend in total?", "sum_of", "ferries"),
    ("Which company do I clock in at right now?", "latest_of", "work"),            # an idiom for work
    ("My landlord wants the town I'm in today; which is it?", "latest_of", "live"),  # the current town
    ("When was Mango's gotcha day?", "day_of", "Mango"),                           # "gotcha": adoption, no name
    ("Insurance paperwork asks for my town; which is it now?", "latest_of", "live"),  # "Insurance": no name
    ("What breed is Rex?", "kind_of", "Rex"),                                        # a member of a kind
    ("Which instrument did I take up?", "kind_of", ""),
])
def test_plans_read_the_question(question, helper, must):
    plan = write_plan(question)
    assert plan.helper == helper, plan
    assert must in plan.must, plan
    compile(plan.cell("solve"), "<cell>", "exec")
    compile(plan.cell("scan"), "<cell>", "exec")


def test_a_sentence_opening_modifier_is_no_name_but_an_option_keeps_its_name():
    from scroll.policies.writer import _names

    assert _names("Insurance paperwork asks for my town; which is it now?") == []
    assert _names("Leo moved where?") == ["Leo"] and _names("Mochi's vet is where?") == ["Mochi"]
    assert _names("Melbourne holiday") == ["Melbourne"]   # an option of a comparison, not a sentence


def test_kind_questions_name_their_kind():
    assert write_plan("What breed is Rex?").kind == "dog"
    assert write_plan("What breed of cat did I adopt?").kind == "cat"
    assert write_plan("Which instrument did I take up?").kind == "instrument"
    assert write_plan("What kind of car did I buy?").helper != "kind_of"   # no kind table for cars


def test_scope_and_option_words_are_not_targets():
    assert write_plan("Where did I most recently get hired?").kind == "org"
    assert "January" not in write_plan("How many haircuts have I had since January?").cell("solve")
    assert "March" in write_plan("How much did I spend on ferries in March?").must   # a month, not a scope
    assert write_plan("What's my running total for ferries?").helper == "sum_of"
    assert write_plan("Ferries: what's my spend in total?").must == "ferries"     # money words only rank
    assert write_plan("When did I get Mango?").about == ""                         # "get" ranks nothing
    assert write_plan("My landlord wants the town I'm in today; which is it?").about == ""  # the setting
    assert write_plan("Who pays my salary right now?").kind == "org"
    plan = write_plan("Which trip came first, the Lille holiday or the Nantes one?")
    assert plan.helper == "first_of" and [o[0] for o in plan.options] == ["Lille holiday", "Nantes"]


def test_a_setting_before_the_question_is_dropped_only_when_the_rest_has_its_own_target():
    plan = write_plan("Sorting out my diary: the Lakeside 10K was on which date?")
    assert plan.helper == "day_of" and plan.must == "Lakeside_10K" and plan.about == "", plan
    assert write_plan("Doing my taxes: how many pilates workouts did I do?").must == "pilates"
    assert write_plan("About my car, what was my outlay in all?").must == "car"           # the topic stays
    assert write_plan("I owe Priya an update; how many pilates classes did I go to?").must.startswith("Priya")
    assert write_plan("Give me the number: pilates classes, all of them?").helper == "count_of"
    assert write_plan("My ferry tickets so far came to what?").helper == "sum_of"
    assert write_plan("Tally up my payments to the ferry company.").helper == "sum_of"
    plan = write_plan("Where do I fly now to go and see my aunt?")
    assert plan.who == "aunt" and plan.must == "live" and plan.kind == "place", plan


def test_a_relatives_question_reads_their_statements():
    plan = write_plan("Where does my aunt live these days?")
    assert plan.who == "aunt" and plan.kind == "place"
    assert write_plan("How many times did I visit my aunt?").who is None  # I am the subject


@pytest.mark.sandbox
def test_the_writer_through_agent_run_in_the_sandboxed_kernel(tmp_path):
    """The user's path: a generated history, the real loop, the sandboxed kernel, no pack."""
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.tasks.history import build_demo_log

    log, tasks = build_demo_log(tmp_path / "h.db", seed=5, target_tokens=8000,
                                families=["update_city", "count_dentist", "sum_taxi"], pool="test",
                                wording="wide-train", min_sessions=16, exchanges=(2, 4))
    cfg = LoopConfig(max_steps=4, cell_timeout=30, soft_budget=3000, hard_budget=4000, max_output_chars=1500)
    right = 0
    for t in tasks:
        with Agent.open(log, ProgramWriter(), cfg, session=f"w-{t.family}") as agent:
            res = agent.run(t.question)
        assert res.reason == "final" and agent.pack is None
        assert res.backend["backend"] == "program-writer"
        right += t.check(res.answer)
    assert right >= 2, [(t.question, t.answer) for t in tasks]
    task_event = next(e for e in log.events(session="w-update_city") if e.kind == "task")
    assert task_event.meta["pack"] is None and "system_prompt" not in task_event.meta


@pytest.mark.sandbox
def test_the_compact_prompt_through_agent_run_is_the_prompt_logged_and_replayed(tmp_path):
    """LoopConfig.prompt = "compact" (configs/loop/smollm2-compact.yaml): the loop sends the compact prompt,
    logs it with the task (export and replay read it from there), and the writer still solves the task
    through the sandboxed kernel."""
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.prompts import COMPACT_PROMPT
    from scroll.tasks.history import build_demo_log

    log, tasks = build_demo_log(tmp_path / "h.db", seed=5, target_tokens=8000, families=["update_city"],
                                pool="test", wording="wide-train", min_sessions=16, exchanges=(2, 4))
    cfg = LoopConfig.load("smollm2-compact")
    assert cfg.prompt == "compact"
    seen = []

    class Spy(ProgramWriter):
        def complete(self, messages, **kw):
            seen.append(messages[0]["content"])
            return super().complete(messages, **kw)

    with Agent.open(log, Spy(), cfg, session="compact") as agent:
        res = agent.run(tasks[0].question)
    assert res.reason == "final" and tasks[0].check(res.answer)
    assert seen and all(s == COMPACT_PROMPT for s in seen)
    task_event = next(e for e in log.events(session="compact") if e.kind == "task")
    assert task_event.meta["system_prompt"] == COMPACT_PROMPT
    with pytest.raises(ValueError, match="prompt must be"):
        LoopConfig(prompt="tiny")
