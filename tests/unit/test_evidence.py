"""The mutation check weighs the worker's evidence (in process; the attacks that forge it
run in tests/security/test_hostile_mutation.py)."""

import numpy as np


def test_aliasing_is_evidence_from_inside_that_can_only_cost():
    """The worker's "the result is the input" costs the check, and the message says where it
    was seen; the worker's "it is not" cannot hide a change the grader saw itself."""
    from grader.grading.checks.mutation import inputs_untouched
    from grader.sandbox.launcher import CallOutcome

    sent = {"x": np.zeros((2, 2)), "base": 10000.0}
    claims_alias = CallOutcome(
        "ok", value=np.zeros((2, 2)), aliases_input=True, inputs_after=[np.zeros((2, 2)), 10000.0]
    )
    verdict = inputs_untouched(None, None, claims_alias, sent)
    assert not verdict.ok and "observed inside the sandbox" in verdict.message
    assert "returned its argument `x` itself" in verdict.message
    changed = CallOutcome(
        "ok", value=np.ones((2, 2)), aliases_input=False, inputs_after=[np.ones((2, 2)), 10000.0]
    )
    verdict = inputs_untouched(None, None, changed, sent)
    assert not verdict.ok and "changed its argument `x` in place" in verdict.message
    untouched = CallOutcome(
        "ok", value=np.ones((2, 2)), aliases_input=False, inputs_after=[np.zeros((2, 2)), 10000.0]
    )
    assert inputs_untouched(None, None, untouched, sent).ok
