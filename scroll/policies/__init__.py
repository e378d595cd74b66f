"""Policies that drive the agent loop without a model.

    from scroll.policies.reference import ReferencePolicy
    llm = ReferencePolicy()            # the LLM protocol; backend="reference-policy"
    from scroll.policies.teachers import make_teacher     # a teacher by the name `--teacher` takes

Modules: reference (ReferencePolicy: the state machine over the chat; its regex programs
live in the `generated` task pack, scroll.packs.generated), writer (ProgramWriter: the same
state machine over programs written from the question's meaning; synonyms: its word
table), oolong_programs (its ms.llm_map programs for OOLONG-style aggregation questions),
mapper (RuleMapper: answers llm_map item calls from the item's wording; the reference policy
routes those calls to it), teachers (the labelled teachers by name), harness (SimKernel +
run_episode: run a policy on a task without the real kernel; tests and CPU demos only, not a
sandbox).
"""
