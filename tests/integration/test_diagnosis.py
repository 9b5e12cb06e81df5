"""Known-mistake diagnosis as users meet it: `grader check` names the likely cause of a
sample's failures, never for a correct or unrelated wrong file, never from a hidden check,
never changing a score; `grader validate` holds samples to their declared diagnosis; a kit
carries no mistakes."""

import json
import os
import shutil

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tasks import make_task, write

from grader.authoring import load_task
from grader.task.samples import read_diagnosis, sample_files

DIAGNOSED = [p for p in sample_files(PE_SAMPLES) if read_diagnosis(p)]
UNRELATED = [
    "correct_vectorized.py",
    "correct_exp_log.py",
    "correct_notebook_with_magics.ipynb",
    "mistake_returns_list.py",
    "mistake_crashes_on_odd_width.py",
    "mistake_float32_table.py",
    "mistake_hardcoded_examples.py",
    "mistake_first_batch_only.py",
    "mistake_adds_in_place.py",
]


def checked(task, sample, *view) -> dict:
    done = run_cli("check", str(task), str(sample), "--format", "json", *view)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_every_declared_mistake_is_diagnosed_on_a_sample():
    declared = {m.name for m in load_task(PE_TASK).mistakes}
    assert len(declared) >= 8
    assert declared <= {name for p in DIAGNOSED for name in read_diagnosis(p)}


@pytest.mark.parametrize("sample", DIAGNOSED, ids=os.path.basename)
def test_a_sample_is_diagnosed_with_the_mistake_it_makes(sample):
    report = checked(PE_TASK, sample)
    assert {d["mistake"] for d in report["diagnoses"]} == set(read_diagnosis(sample))
    by_name = {c["name"]: c for c in report["checks"]}
    for diagnosis in report["diagnoses"]:
        assert diagnosis["explanation"] and diagnosis["checks"]
        for name in diagnosis["checks"]:  # each explained check is a failed visible one
            assert by_name[name]["status"] == "failed" and not by_name[name]["hidden"]
            assert by_name[name]["mistake"] == diagnosis["mistake"]


@pytest.mark.parametrize("name", UNRELATED)
def test_a_correct_or_unrelated_wrong_file_gets_no_diagnosis(name):
    report = checked(PE_TASK, os.path.join(PE_SAMPLES, name))
    assert report["diagnoses"] == [] and all(c["mistake"] is None for c in report["checks"])


def test_text_report_puts_the_likely_cause_first():
    done = run_cli("check", PE_TASK, os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py"))
    first_check = done.stdout.index("  PASS  loads")
    assert done.stdout.index("Likely cause (sin-cos-swapped): Your table matches") < first_check


@pytest.fixture(scope="module")
def without_mistakes(tmp_path_factory):
    """The positional-encoding task with its mistakes: taken out (and refrozen)."""
    folder = tmp_path_factory.mktemp("plain") / "positional-encoding"
    shutil.copytree(PE_TASK, folder)
    spec = (folder / "task.yaml").read_text()
    (folder / "task.yaml").write_text(spec[: spec.index("\nmistakes:")] + "\n")
    (folder / "mistakes.py").unlink()
    assert run_cli("freeze", str(folder)).returncode == 0
    return folder


@pytest.mark.parametrize(
    "name",
    [
        "mistake_sin_cos_swapped.py",
        "mistake_tutorial_column_index.py",
        "mistake_ignores_base.py",
        "correct_loops.py",
    ],
)
def test_diagnosis_never_changes_a_score(without_mistakes, name):
    plain, diagnosed = (checked(task, os.path.join(PE_SAMPLES, name)) for task in (without_mistakes, PE_TASK))
    assert plain["diagnoses"] == [] and (name.startswith("correct") or diagnosed["diagnoses"])
    verdicts = [
        [(c["name"], c["status"], c["score"], c["message"]) for c in r["checks"]] for r in (plain, diagnosed)
    ]
    assert verdicts[0] == verdicts[1] and plain["score"] == diagnosed["score"]


# --------------------------------------------------------------------------- a small task

CUBE_YAML = """
id: square
title: Square
version: 1
functions:
  square: [x]
limits: {{call_limit: absolute, call_seconds: 30}}
checks:
  - name: visible-case
    kind: example
    call: square
    args: {{x: {{array: {{value: [1.5, 2.0]}}}}}}
  - name: secret-case
    kind: example
    hidden: true
    call: square
    args: {{x: {{array: {{value: [4321.5, 3.0]}}}}}}
{mistakes}"""
CUBE_MISTAKE = """mistakes:
  - name: cubed
    explanation: "Your result matches x ** 3."
    replaces: {square: cube}
"""
CUBE = "import numpy as np\n\ndef cube(x):\n    return np.asarray(x, dtype=float) ** 3\n"
STUDENT_CUBE = "import numpy as np\n\ndef square(x):\n    return np.asarray(x, dtype=float) ** 3\n"
# Cubes on the checks' calls, then hangs on every call after (the diagnosis calls).
STUDENT_HANGS_LATER = """
import time
import numpy as np
CALLS = [0]

def square(x):
    CALLS[0] += 1
    if CALLS[0] > 1:
        time.sleep(600)
    return np.asarray(x, dtype=float) ** 3
"""


def _cube_task(folder, with_mistakes=True, hidden=True):
    spec = CUBE_YAML.format(mistakes=CUBE_MISTAKE if with_mistakes else "")
    if not hidden:
        spec = (
            spec[: spec.index("  - name: secret-case")] + spec[spec.index("mistakes:") :]
            if with_mistakes
            else spec[: spec.index("  - name: secret-case")]
        )
    task = make_task(folder, spec)
    write(folder / "mistakes.py", CUBE)
    return task


def test_a_hidden_checks_input_never_reaches_a_diagnosis(tmp_path):
    report = checked(_cube_task(tmp_path / "t"), write(tmp_path / "s.py", STUDENT_CUBE))
    [diagnosis] = report["diagnoses"]
    assert diagnosis["checks"] == ["visible-case"]
    secret = next(c for c in report["checks"] if c["name"] == "secret-case")
    assert secret["status"] == "failed" and secret["mistake"] is None
    assert "4321" not in json.dumps(report["diagnoses"])


# Wrong on the visible case; after it has seen the hidden input, answers like the mistake:
# were diagnosis calls sent to the worker that ran the hidden check, the diagnosis would tell
# the student what the hidden check sent.
STUDENT_SIGNALS_HIDDEN = """
import numpy as np
SEEN = [False]

def square(x):
    x = np.asarray(x, dtype=float)
    if (x > 4000).any():
        SEEN[0] = True
    return x ** 3 if SEEN[0] else x * 0
"""


def test_diagnosis_calls_never_reach_the_worker_that_saw_hidden_inputs(tmp_path):
    report = checked(_cube_task(tmp_path / "t"), write(tmp_path / "s.py", STUDENT_SIGNALS_HIDDEN))
    assert report["diagnoses"] == []
    assert {c["name"]: c["status"] for c in report["checks"]}["visible-case"] == "failed"


# Writes the hidden input down where any later process of the machine finds it, and answers
# like the mistake once it does. The rlimits tier shares /tmp, standing here for what no
# sandbox tier can wipe (a file's access time, the pid counter: the red team's second pass
# carried a hidden input into the diagnosis through both, in the unprivileged and landlock
# tiers). The diagnosis is made before any hidden input is sent, so nothing is there yet.
STUDENT_LEAVES_A_NOTE = """
import os
import numpy as np
NOTE = {note!r}

def square(x):
    x = np.asarray(x, dtype=float)
    if (x > 4000).any():
        with open(NOTE, "w") as f:
            f.write(repr(x.tolist()))
    return x ** 3 if os.path.exists(NOTE) else x * 0
"""


def test_the_diagnosis_is_made_before_any_hidden_input_is_sent(tmp_path):
    note = tmp_path / "note.txt"
    student = write(tmp_path / "s.py", STUDENT_LEAVES_A_NOTE.format(note=str(note)))
    done = run_cli("check", _cube_task(tmp_path / "t"), student, "--format", "json", "--isolation", "rlimits")
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert note.exists()  # the hidden check ran, and the note was left
    assert report["diagnoses"] == [], report["diagnoses"]


# Cubes (the mistake); spends the whole budget on the hidden input. Were diagnosis calls
# bound by what the checks left, the time a hidden input costs would decide the diagnosis.
STUDENT_SPENDS_BUDGET_ON_HIDDEN = """
import time
import numpy as np

def square(x):
    x = np.asarray(x, dtype=float)
    if (x > 4000).any():
        time.sleep(30)
    return x ** 3
"""


def test_diagnosis_calls_have_a_budget_of_their_own(tmp_path):
    task = _cube_task(tmp_path / "t")
    spec = open(f"{task}/task.yaml").read()
    write(
        tmp_path / "t" / "task.yaml",
        spec.replace("call_seconds: 30}", "call_seconds: 30, submission_seconds: 3}"),
    )
    # (the staff view: a student's says of a hidden check only that it failed, redact.py)
    report = checked(task, write(tmp_path / "s.py", STUDENT_SPENDS_BUDGET_ON_HIDDEN), "--staff")
    secret = next(c for c in report["checks"] if c["name"] == "secret-case")
    assert secret["reason"] in ("timeout", "budget")  # it spent the submission's budget
    assert [d["mistake"] for d in report["diagnoses"]] == ["cubed"]


def test_a_submission_that_hangs_in_diagnosis_calls_costs_at_most_the_cap(tmp_path):
    from grader.grading.diagnosis import DIAGNOSIS_SECONDS

    student = write(tmp_path / "s.py", STUDENT_HANGS_LATER)

    def graded(folder, with_mistakes):
        """The staff report (its seconds: the whole grading, diagnosis included), with a
        call limit of 120 s, so that an uncapped diagnosis call stands far out of any noise."""
        task = _cube_task(folder, with_mistakes=with_mistakes, hidden=False)
        spec = open(f"{task}/task.yaml").read()
        write(folder / "task.yaml", spec.replace("call_seconds: 30}", "call_seconds: 120}"))
        done = run_cli("check", task, student, "--format", "json", "--staff")
        assert done.returncode in (0, 1), done.stderr
        return json.loads(done.stdout)

    plain = graded(tmp_path / "plain", False)
    report = graded(tmp_path / "t", True)
    assert report["score"] == plain["score"]
    # the check's call cubes, and the diagnosis takes that answer as it was (it is not
    # asked again); its calls after it, in the same worker, hang: they cost the cap, not
    # the call's 120 s limit (the margin is for a busy machine)
    assert [d["mistake"] for d in report["diagnoses"]] == ["cubed"]
    assert report["seconds"] < plain["seconds"] + DIAGNOSIS_SECONDS + 20, (
        report["seconds"],
        plain["seconds"],
    )


def test_validate_holds_samples_to_their_declared_diagnosis(tmp_path):
    task = _cube_task(tmp_path / "tasks" / "square")
    assert run_cli("freeze", task).returncode == 0
    samples = tmp_path / "samples"
    samples.mkdir()
    write(samples / "undeclared.py", "# expect: fails visible-case\n" + STUDENT_CUBE)
    done = run_cli("validate", task, "--samples", str(samples))
    assert done.returncode != 0
    assert "undeclared.py: diagnosed with cubed but declares no diagnosis" in done.stdout
    write(samples / "undeclared.py", "# expect: fails visible-case\n# diagnosis: cubed\n" + STUDENT_CUBE)
    done = run_cli("validate", task, "--samples", str(samples))
    assert done.returncode == 0, done.stdout
    assert "mistake cubed: fails 1 check; diagnosed on undeclared.py" in done.stdout
    assert done.stdout.endswith(" ok, 0 problems\n")
    (samples / "undeclared.py").unlink()
    write(
        samples / "right.py",
        "# expect: full marks\nimport numpy as np\n\ndef square(x):\n"
        "    return np.asarray(x, dtype=float) ** 2\n",
    )
    done = run_cli("validate", task, "--samples", str(samples))
    assert (
        done.returncode != 0 and "mistake cubed: fails 1 check but is diagnosed on no sample" in done.stdout
    )
    assert done.stdout.endswith(" ok, 1 problem\n"), done.stdout


def test_a_kit_carries_no_mistakes_and_diagnoses_nothing(tmp_path):
    done = run_cli("kit", PE_TASK, "-o", str(tmp_path))
    assert done.returncode == 0, done.stderr
    kit = tmp_path / "positional-encoding"
    assert not (kit / "mistakes.py").exists() and "mistakes" not in (kit / "task.yaml").read_text()
    report = checked(kit, os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py"))
    assert report["kit"] and report["diagnoses"] == []


def test_a_diagnosis_does_not_ask_again_what_the_checks_had_answered(monkeypatch):
    """The shown input and the smallest cases were answered while the checks ran: the
    diagnosis takes those answers, and calls the file only for the rest."""
    from grader.grading import run as grading
    from grader.grading.shrinking.tree import same_args
    from grader.sandbox.launcher import Sandbox

    sent_in_diagnosis, shown = [], {}
    diagnosing = [False]
    original_calls, original_diagnose = Sandbox.calls, grading.diagnose

    def calls(self, function, items, *args, **kwargs):
        if diagnosing[0]:
            sent_in_diagnosis.extend((function, positional, keywords) for positional, keywords in items)
        return original_calls(self, function, items, *args, **kwargs)

    def diagnose(ctx, results):
        shown.update(ctx.shown)
        diagnosing[0] = True
        try:
            return original_diagnose(ctx, results)
        finally:
            diagnosing[0] = False

    monkeypatch.setattr(Sandbox, "calls", calls)
    monkeypatch.setattr(grading, "diagnose", diagnose)
    task = load_task(PE_TASK)
    result = grading.grade(task, os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py"))
    assert [d.mistake for d in result.diagnoses] == ["sin-cos-swapped"]
    assert shown  # (failed visible checks showed inputs)
    params = task.functions
    for function, positional, keywords in sent_in_diagnosis:
        args = {**dict(zip(params[function], positional)), **keywords}
        assert not any(same_args(args, s) for s in shown.values()), args
