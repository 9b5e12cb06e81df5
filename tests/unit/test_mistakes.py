"""Known mistakes: declared in task.yaml (clear errors), their mistaken references and
profiles, and the diagnosis of one submission's outputs (a stand-in sandbox answers the
calls in process: the matching rules alone, no worker)."""

import contextlib
import copy
import time
import types

import numpy as np
import pytest
from helpers.paths import PE_TASK
from helpers.tasks import make_task, write

from grader.authoring import load_task
from grader.grading import mistakes
from grader.grading.checks.calls import compare_output
from grader.grading.context import Context
from grader.grading.diagnosis import MORE_CASES, diagnose
from grader.grading.prepared import PreparedTask, prepare
from grader.records.limits import Limits
from grader.records.result import FAILED, PASSED, CheckResult, Diagnosis, Result
from grader.records.statuses import MISMATCH, OK, TIMEOUT
from grader.records.worker_error import WorkerError
from grader.report import text
from grader.task.reference import load_reference
from grader.task.samples import diagnosis_mismatch, read_diagnosis
from grader.task.spec import SpecError

SCALE_YAML = """
id: scale
title: Scale
version: 1
functions:
  scale: [x, k]
  twice: [x]
checks:
  - name: scale-values
    kind: property
    call: scale
    args:
      x: {array: {shape: [3], elements: {min: -5, max: 5}}}
      k: {floats: {min: 1.0, max: 4.0}}
    cases: 10
  - name: twice-values
    kind: example
    call: twice
    args: {x: {array: {value: [1.0, 2.0]}}}
mistakes:
  - name: k-ignored
    explanation: "Your result matches x unscaled."
    replaces: {scale: scale_ignoring_k}
"""
SCALE_REFERENCE = """
import numpy as np

def scale(x, k=1.0):
    return np.asarray(x, dtype=float) * k

def twice(x):
    return scale(x, 2.0)
"""
SCALE_MISTAKES = """
import numpy as np

def scale_ignoring_k(x, k=1.0):
    return np.asarray(x, dtype=float)

def twice_plus_one(x):
    return scale(x, 2.0) + 1.0   # the task's other function, by name: this variant's
"""
TWICE_MISTAKE = """  - name: twice-plus-one
    explanation: "Your result matches 2x + 1."
    replaces: {twice: twice_plus_one}
"""


def _scale_task(tmp_path, yaml_text=SCALE_YAML, mistakes_text=SCALE_MISTAKES):
    folder = make_task(tmp_path / "scale", yaml_text, SCALE_REFERENCE)
    if mistakes_text is not None:
        write(tmp_path / "scale" / "mistakes.py", mistakes_text)
    return folder


def _problems(folder) -> str:
    with pytest.raises(SpecError) as caught:
        mistakes.variants(load_task(folder))
    return "\n".join(caught.value.problems)


# --------------------------------------------------------------------------- declaring


def test_a_replaced_function_is_seen_by_the_reference_functions_that_call_it(tmp_path):
    task = load_task(_scale_task(tmp_path / "a"))
    [variant] = mistakes.variants(task)
    x = np.array([1.0, 2.0])
    # scale is the mistake's; twice is the reference's, and calls the replaced scale
    assert np.array_equal(variant.module.scale(x, 3.0), x)
    assert np.array_equal(variant.module.twice(x), x)
    # ... while the reference itself is untouched
    assert np.array_equal(load_reference(task).twice(x), 2 * x)


def test_a_replacement_calls_the_tasks_other_functions_by_name(tmp_path):
    task = load_task(_scale_task(tmp_path / "b", SCALE_YAML + TWICE_MISTAKE))
    _, plus_one = mistakes.variants(task)
    assert np.array_equal(plus_one.module.twice(np.array([1.0, 2.0])), [3.0, 5.0])


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            lambda y: y.replace("{scale: scale_ignoring_k}", "{scal: scale_ignoring_k}"),
            "task.yaml:22: mistakes[0].replaces.scal: 'scal' is not among functions: (scale, twice)",
        ),
        (
            lambda y: (
                y + "  - name: k-ignored\n    explanation: again\n    replaces: {scale: scale_ignoring_k}\n"
            ),
            "task.yaml:23: mistakes[1].name: mistake name 'k-ignored' is used twice",
        ),
        (
            lambda y: y.replace('    explanation: "Your result matches x unscaled."\n', ""),
            "mistakes[0]: 'explanation' is a required property",
        ),
    ],
)
def test_a_wrong_mistake_declaration_is_named_with_its_line(tmp_path, change, expected):
    folder = make_task(tmp_path / "t", change(SCALE_YAML), SCALE_REFERENCE)
    write(tmp_path / "t" / "mistakes.py", SCALE_MISTAKES)
    with pytest.raises(SpecError) as caught:
        load_task(folder)
    assert expected in "\n".join(caught.value.problems)


def test_declared_mistakes_without_mistakes_py_are_refused(tmp_path):
    folder = _scale_task(tmp_path, mistakes_text=None)
    with pytest.raises(SpecError) as caught:
        load_task(folder)
    assert "task.yaml:19: mistakes: file" in caught.value.problems[0]
    assert "mistakes.py does not exist" in caught.value.problems[0]


def test_a_replacement_that_mistakes_py_lacks_is_named(tmp_path):
    text = _problems(_scale_task(tmp_path, mistakes_text="def other(x, k=1.0):\n    return x\n"))
    assert "task.yaml:20: mistakes[0].replaces.scale:" in text
    assert "does not define a function 'scale_ignoring_k'" in text


def test_a_mistakes_py_that_does_not_import_is_named(tmp_path):
    text = _problems(_scale_task(tmp_path, mistakes_text="import no_such_module_here\n"))
    assert "task.yaml:20: mistakes[0]:" in text and "mistakes.py does not import" in text
    assert "ModuleNotFoundError" in text


def test_mistakes_on_a_script_task_are_refused(tmp_path):
    yaml_text = """
id: s
title: S
version: 1
kind: script
checks:
  - name: prints
    kind: imports
mistakes:
  - name: m
    explanation: "x"
    replaces: {main: other}
"""
    folder = make_task(tmp_path / "s", yaml_text)
    write(tmp_path / "s" / "mistakes.py", "def other():\n    pass\n")
    with pytest.raises(SpecError) as caught:
        load_task(folder)
    assert "mistakes: known mistakes are declared for a functions task only" in "\n".join(
        caught.value.problems
    )


# --------------------------------------------------------------------------- profiles


@pytest.fixture(scope="module")
def pe():
    prepared = prepare(load_task(PE_TASK), profile_mistakes=False)
    return prepared.task, prepared.reference, prepared


def test_every_positional_encoding_mistake_fails_a_visible_check(pe):
    task, reference, prepared = pe
    profile = prepared.profile()
    assert len(profile) >= 8 and all(profile.values()), profile
    assert profile["base-ignored"] == ["table-custom-base", "add-custom-base"]
    assert profile["add-drops-base"] == ["add-custom-base"]
    hidden = {c.name for c in task.checks if c.hidden}
    assert not hidden & {name for failing in profile.values() for name in failing}


# --------------------------------------------------------------------------- diagnosing


class StandInSandbox:
    """Answers calls with trusted Python functions (the matching rules alone are tested)."""

    def __init__(self, functions, hang_after=None):
        self.functions, self.made, self.hang_after = functions, 0, hang_after
        self.limits = Limits()

    @contextlib.contextmanager
    def own_budget(self, seconds):
        yield

    def stalled(self, function):
        return None

    def calls(self, function, items, return_inputs=False, limits=None):
        for args, kwargs in items:
            self.made += 1
            if self.hang_after is not None and self.made > self.hang_after:
                yield types.SimpleNamespace(status=TIMEOUT, value=None, error=WorkerError("timed out"))
                continue
            try:
                value = self.functions[function](*copy.deepcopy(args), **copy.deepcopy(kwargs))
            except Exception as exc:
                yield types.SimpleNamespace(status="raised", value=None, error=WorkerError(str(exc)))
                continue
            yield types.SimpleNamespace(status=OK, value=value)


def _graded(prepared, functions, hang_after=None):
    """What grade() hands diagnose(): each values check judged on its cases (the first
    failing one shown), and the context that ran them."""
    sandbox = StandInSandbox(functions)
    task = prepared.task
    ctx = Context(prepared, sandbox, None, [])
    results = []
    for check in task.checks:
        if not mistakes.profiled(check):
            results.append(CheckResult(check.name, PASSED, check.points, check.points))
            continue
        cases = prepared.check_cases(check)
        failing = None
        for args, expected in zip(cases.cases, cases.expected):
            value = functions[check.call](**copy.deepcopy(args))
            if not compare_output(check, expected, types.SimpleNamespace(value=value), args).ok:
                failing = args
                break
        if failing is None:
            results.append(CheckResult(check.name, PASSED, check.points, check.points))
        else:
            results.append(CheckResult(check.name, FAILED, 0.0, check.points, reason=MISMATCH))
            ctx.shown[check.name] = failing
    sandbox.hang_after = hang_after
    sandbox.made = 0
    return ctx, results


def _variant(task, name):
    return next(v for v in mistakes.variants(task) if v.spec.name == name)


def _functions(module):
    return {"sinusoidal_pe": module.sinusoidal_pe, "add_positional_encoding": module.add_positional_encoding}


def test_a_submission_that_makes_a_mistake_is_diagnosed_with_it(pe):
    task, reference, prepared = pe
    ctx, results = _graded(prepared, _functions(_variant(task, "sin-cos-swapped").module))
    diagnoses, explained = diagnose(ctx, results)
    assert [d.mistake for d in diagnoses] == ["sin-cos-swapped"]
    failed = [r.name for r in results if r.status == FAILED]
    assert diagnoses[0].checks == failed and set(explained) == set(failed)
    assert ctx.sandbox.made <= len(failed) * (1 + MORE_CASES)


def test_a_correct_submission_costs_no_call_and_gets_no_diagnosis(pe):
    task, reference, prepared = pe
    ctx, results = _graded(prepared, _functions(reference))
    assert diagnose(ctx, results) == ([], {}) and ctx.sandbox.made == 0


def test_a_submission_that_passes_a_check_the_mistake_fails_did_not_make_it(pe):
    """Like the mistake on small tables only: it passes table-at-bounds, which the mistake fails."""
    task, reference, prepared = pe
    swapped = _variant(task, "sin-cos-swapped").module

    def small_only(max_len, d_model, base=10000.0):
        table = swapped if max_len * d_model <= 64 else reference
        return table.sinusoidal_pe(max_len, d_model, base)

    ctx, results = _graded(
        prepared,
        {"sinusoidal_pe": small_only, "add_positional_encoding": reference.add_positional_encoding},
    )
    assert {r.name: r.status for r in results}["table-at-bounds"] == PASSED
    assert any(r.status == FAILED for r in results)
    assert diagnose(ctx, results) == ([], {})


def test_a_submission_whose_diagnosis_calls_time_out_gets_none(pe):
    task, reference, prepared = pe
    ctx, results = _graded(prepared, _functions(_variant(task, "exponent-uses-i").module), hang_after=0)
    assert diagnose(ctx, results) == ([], {}) and ctx.sandbox.made == 1  # the first timeout ends it


def test_a_submission_that_raises_on_diagnosis_calls_is_not_observed(pe):
    task, reference, prepared = pe
    ctx, results = _graded(prepared, _functions(_variant(task, "exponent-uses-i").module))
    ctx.sandbox.functions = {name: (lambda *a, **k: 1 / 0) for name in ctx.sandbox.functions}
    assert diagnose(ctx, results) == ([], {})


def test_an_answer_the_comparison_trips_over_is_no_match_and_no_crash(pe):
    task, reference, prepared = pe
    ctx, results = _graded(prepared, _functions(_variant(task, "exponent-uses-i").module))
    ctx.sandbox.functions = {name: (lambda *a, **k: np.full((3, 4), "x")) for name in ctx.sandbox.functions}
    assert diagnose(ctx, results) == ([], {})


def test_of_two_mistakes_the_one_that_explains_more_is_named_first(pe):
    """Ignoring base in the table also drops it from add: base-ignored explains both
    failed checks; add-drops-base (which matches the second) is not reported."""
    task, reference, prepared = pe
    ctx, results = _graded(prepared, _functions(_variant(task, "base-ignored").module))
    diagnoses, explained = diagnose(ctx, results)
    assert [(d.mistake, d.checks) for d in diagnoses] == [
        ("base-ignored", ["table-custom-base", "add-custom-base"])
    ]


# --------------------------------------------------------------------------- shown and declared


def test_the_text_report_names_the_likely_cause_once_with_its_checks_under_it():
    checks = [
        CheckResult("loads", PASSED, 0, 0),
        CheckResult("a-check", FAILED, 0, 1, message="values differ A", mistake="m"),
        CheckResult("b-check", PASSED, 1, 1),
        CheckResult("c-check", FAILED, 0, 1, message="values differ C", mistake="m"),
        CheckResult("d-check", FAILED, 0, 1, message="values differ D"),
    ]
    result = Result(
        "t",
        "f.py",
        1,
        4,
        FAILED,
        "none",
        checks,
        diagnoses=[Diagnosis("m", "Your table matches \x1b[31mm.", ["a-check", "c-check"])],
    )
    shown = text.render(result)
    lines = shown.splitlines()
    start = lines.index("Likely cause (m): Your table matches \\x1b[31mm.")
    assert [line.split()[1] for line in lines[start + 1 : start + 5 : 2]] == ["a-check", "c-check"]
    assert shown.count("a-check") == 1 and shown.count("values differ C") == 1
    assert lines.index("The other checks:") > start and "d-check" in shown.split("The other checks:")[1]


def test_samples_declare_their_diagnosis_and_an_undeclared_one_is_a_problem(tmp_path):
    sample = write(tmp_path / "s.py", "# expect: fails x\n# diagnosis: m-one, m-two\nx = 1\n")
    plain = write(tmp_path / "p.py", "# expect: full marks\nx = 1\n")
    assert read_diagnosis(str(sample)) == ("m-one", "m-two") and read_diagnosis(str(plain)) == ()
    got = Result("t", "s.py", 0, 1, FAILED, "none", diagnoses=[Diagnosis("m-one", "e")])
    names = {"m-one", "m-two"}
    assert diagnosis_mismatch(("m-one",), got, names) is None
    assert "declared diagnosis m-one, m-two but got m-one" in diagnosis_mismatch(
        ("m-one", "m-two"), got, names
    )
    assert "declares no diagnosis" in diagnosis_mismatch((), got, names)
    assert "do not name" in diagnosis_mismatch(("m-three",), got, names)


def test_every_other_format_names_the_likely_cause():
    import json as json_module
    import xml.etree.ElementTree as ET

    from grader.report import github, gradescope, json_report, junit

    checks = [CheckResult("a-check", FAILED, 0, 1, message="values differ", mistake="m")]
    result = Result(
        "t",
        "f.py",
        0,
        1,
        FAILED,
        "none",
        checks,
        diagnoses=[Diagnosis("m", "Your table <b>matches</b> m.", ["a-check"])],
    )
    assert json_module.loads(json_report.render(result))["diagnoses"][0]["mistake"] == "m"
    assert (
        "Likely cause: Your table <b>matches</b> m. (explains a-check)"
        in json_module.loads(gradescope.render(result))["output"]
    )
    failure = ET.fromstring(junit.render(result)).find(".//failure")
    assert failure is not None and failure.text.startswith("likely cause: Your table <b>matches</b> m.")
    [annotation] = github.annotations([result], "/nowhere")
    assert "Likely cause: Your table <b>matches</b> m." in annotation


def test_a_check_no_mistake_can_explain_gets_no_more_calls(pe):
    """Wrong in a way no mistake is: after the first answer of each failed check no mistake is
    left in the running, so the other cases are not asked (and no answer is kept)."""
    task, reference, prepared = pe

    ctx, results = _graded(
        prepared,
        {
            "sinusoidal_pe": lambda *a, **k: 2 * reference.sinusoidal_pe(*a, **k),
            "add_positional_encoding": lambda *a, **k: 2 * reference.add_positional_encoding(*a, **k),
        },
    )
    failed = [r for r in results if r.status == FAILED]
    assert failed and diagnose(ctx, results) == ([], {})
    assert ctx.sandbox.made == len(failed)


LIMIT = 256


def test_like_a_mistake_on_tiny_tables_only_is_not_diagnosed_where_a_middle_case_differs(pe):
    """Swapped on tables of at most LIMIT values, wrong otherwise: the middle-sized case
    observed of each property check tells it from the mistake."""
    task, reference, prepared = pe
    swapped = _variant(task, "sin-cos-swapped").module

    def tiny_swapped(max_len, d_model, base=10000.0):
        if max_len * d_model <= LIMIT:
            return swapped.sinusoidal_pe(max_len, d_model, base)
        return 2 * reference.sinusoidal_pe(max_len, d_model, base) + 1

    def add(x, base=10000.0):
        return x + tiny_swapped(x.shape[-2], x.shape[-1], base)

    ctx, results = _graded(prepared, {"sinusoidal_pe": tiny_swapped, "add_positional_encoding": add})
    diagnoses, explained = diagnose(ctx, results)
    assert "example-table-3x4" in explained  # 12 values: there it is the mistake
    tables = {c.name for c in task.checks if c.kind.name == "property" and c.call == "sinusoidal_pe"}
    assert not tables & set(explained), explained


# --------------------------------------------------------------------------- instructor code that hangs

LOOPING_MISTAKES = (
    SCALE_MISTAKES
    + """
def scale_ignoring_k(x, k=1.0):
    while True:
        pass
"""
)


def test_a_mistake_that_loops_costs_its_deadline_once_and_is_then_not_used(tmp_path, monkeypatch):
    monkeypatch.setattr(mistakes, "MISTAKE_SECONDS", 0.3)
    task = load_task(_scale_task(tmp_path / "a", mistakes_text=LOOPING_MISTAKES))
    prepared = PreparedTask.of(task)
    [variant] = prepared.mistakes.variants
    start = time.monotonic()
    profile = prepared.profile()  # every case of every check
    assert time.monotonic() - start < 30  # (looping: forever; a busy machine: well under)
    assert "did not finish within 0.3 s" in prepared.mistakes.too_slow(variant)
    assert profile == {"k-ignored": ["scale-values", "twice-values"]}


def test_a_mistakes_py_that_loops_at_import_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(mistakes, "MISTAKE_SECONDS", 0.3)
    folder = _scale_task(tmp_path / "a", mistakes_text="while True:\n    pass\n")
    assert "mistakes.py does not import: it did not finish within 0.3 s" in _problems(folder)


RETRYING_MISTAKES = (
    SCALE_MISTAKES
    + """
import time

def scale_ignoring_k(x, k=1.0):
    for _ in range(5):          # a retry loop that catches every Exception
        try:
            time.sleep(60)
            break
        except Exception:
            continue
    return np.asarray(x, dtype=float)
"""
)


def test_a_mistakes_own_except_exception_does_not_swallow_its_deadline(tmp_path, monkeypatch):
    monkeypatch.setattr(mistakes, "MISTAKE_SECONDS", 0.3)
    task = load_task(_scale_task(tmp_path / "a", mistakes_text=RETRYING_MISTAKES))
    prepared = PreparedTask.of(task)
    [variant] = prepared.mistakes.variants
    start = time.monotonic()
    prepared.profile()
    assert time.monotonic() - start < 30 and prepared.mistakes.too_slow(
        variant
    )  # (forever without the deadline)


def test_a_class_s_diagnoses_run_each_mistake_once_on_a_case(monkeypatch):
    """The cases a diagnosis looks at are the class's: the second student who makes the
    mistake costs no new call of the mistaken code on them (but on a case whose output is
    too large to keep for the class), and is diagnosed the same."""
    prepared = prepare(load_task(PE_TASK), profile_mistakes=False)  # (nothing known yet)
    swapped = _functions(_variant(prepared.task, "sin-cos-swapped").module)
    [variant] = [v for v in prepared.mistakes.variants if v.spec.name == "sin-cos-swapped"]
    calls = []
    real = variant.module.sinusoidal_pe

    def counted(*args, **kwargs):
        table = real(*args, **kwargs)
        calls.append(table.nbytes <= mistakes.KEPT_OUTPUT_BYTES)  # (whether it may be kept)
        return table

    monkeypatch.setattr(variant.module, "sinusoidal_pe", counted)
    found, made = [], []
    for _ in range(2):
        ctx, results = _graded(prepared, swapped)
        before = len(calls)
        found.append([d.mistake for d in diagnose(ctx, results)[0]])
        made.append(sum(calls[before:]))  # the calls on cases small enough to keep
    assert found == [["sin-cos-swapped"], ["sin-cos-swapped"]]
    assert made[0] > 0 and made[1] == 0, made
