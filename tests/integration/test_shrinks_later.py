"""A visible check's failure is shrunk once the other visible checks have run (run.py,
checks/case_runs.py), while Hypothesis is imported beside them: the input shown is the one
its own shrink finds, and the shrinks' calls still come before the imports check, which
weighs what the submission was seen doing in every call before it."""

import os

from helpers.paths import PE_SAMPLES, PE_TASK

from grader.authoring import load_task
from grader.grading import run as grading
from grader.grading.checks import imports
from grader.grading.shrinking import search

SWAPPED = os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py")


def test_the_shrinks_run_after_the_other_visible_checks_and_before_the_imports_check(monkeypatch):
    events = []
    shrink, run_imports = search._shrink, imports.KIND.run

    def shrinking(ctx, check, judge):
        events.append(("shrink", check.name))
        return shrink(ctx, check, judge)

    def weighing(ctx, check):
        events.append(("imports", check.name))
        return run_imports(ctx, check)

    def checking(ctx, check, *args):
        events.append(("check", check.name))
        return run_or_skip(ctx, check, *args)

    run_or_skip = grading._run_or_skip
    monkeypatch.setattr(search, "_shrink", shrinking)
    monkeypatch.setattr(grading, "_run_or_skip", checking)
    monkeypatch.setattr(imports.KIND, "run", weighing)
    task = load_task(PE_TASK)
    result = grading.grade(task, SWAPPED)
    shrinks = [i for i, (what, _) in enumerate(events) if what == "shrink"]
    reads_source = [c.name for c in task.checks if c.kind.judges_the_file()]
    checked = [i for i, (what, name) in enumerate(events) if what == "check" and name not in reads_source]
    weighed = [i for i, (what, _) in enumerate(events) if what == "imports"]
    assert shrinks and weighed and checked
    assert max(checked) < min(shrinks)  # every other visible check ran first...
    assert max(shrinks) < min(weighed)  # ...and the imports check after every shrink
    swapped = {c.name: c for c in result.checks}["positions-start-at-zero"]
    assert swapped.failing_input == "sinusoidal_pe(max_len=1, d_model=2)"  # (shrunk: the smallest)
