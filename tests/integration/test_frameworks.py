"""Real TensorFlow and PyTorch hand-ins of the tutorial's three exercises, graded in every
tier with fresh and warm workers: a correct tutorial-style script gets full marks, a wrong
one loses exactly the checks its mistake breaks; the framework's import is not the
student's time, its log lines are not the student's output, and where a framework the task
allows is missing the report says it is the environment's problem.

.ci/run installs both frameworks (numgrader[tensorflow,torch]); elsewhere a framework that
is not installed skips its tests, unless GRADER_REQUIRE_FRAMEWORKS=1 (CI) makes that a
failure."""

import importlib.util
import os
import re
import textwrap

import pytest
from helpers.paths import ROOT
from helpers.tasks import make_task

from grader.authoring import load_task
from grader.grading.run import GradeOptions, grade

SUBMISSIONS = os.path.join(ROOT, "submissions")

# (task, sample, the scoring checks its mistake breaks: exactly these lose their points)
SAMPLES = {
    "tensorflow": [
        ("pe-table-shape", "correct_tensorflow_tutorial.py", set()),
        ("pe-table-shape", "mistake_tensorflow_prints_the_table.py", {"prints-the-shape"}),
        ("pe-batch-sum", "correct_tensorflow_tutorial.py", set()),
        (
            "pe-batch-sum",
            "mistake_tensorflow_no_batch_axis.py",
            {"prints-the-shape", "adds-the-first-three-rows"},
        ),
        ("pe-row-length", "correct_tensorflow_tutorial.py", set()),
        ("pe-row-length", "mistake_tensorflow_length_of_table.py", {"prints-the-length"}),
    ],
    "torch": [
        ("pe-table-shape", "correct_torch.py", set()),
        ("pe-table-shape", "mistake_torch_prints_swapped_shape.py", {"prints-the-shape"}),
        ("pe-batch-sum", "correct_torch.py", set()),
        ("pe-batch-sum", "mistake_torch_wrong_rows.py", {"adds-the-first-three-rows"}),
        ("pe-row-length", "correct_torch.py", set()),
        ("pe-row-length", "mistake_torch_number_of_rows.py", {"prints-the-length"}),
    ],
}
# A fresh worker imports the framework anew (seconds of CPU each): fresh tiers grade one
# correct and one wrong file per framework, warm workers (one import per server) all six.
FRESH = {"tensorflow": (0, 3), "torch": (1, 2)}


def needs(framework: str) -> None:
    if importlib.util.find_spec(framework) is None:
        if os.environ.get("GRADER_REQUIRE_FRAMEWORKS") == "1":
            pytest.fail(
                f"{framework} is not installed (pip install -e '.[{framework}]'); "
                "GRADER_REQUIRE_FRAMEWORKS=1 makes that a failure"
            )
        pytest.skip(f"{framework} is not installed (pip install -e '.[{framework}]')")


def task(name):
    return load_task(os.path.join(ROOT, "tasks", name))


def lost(result) -> set[str]:
    return {c.name for c in result.checks if c.max_score and c.status != "passed"}


@pytest.mark.parametrize("framework", ["tensorflow", "torch"])
def test_tutorial_framework_scripts_score_as_their_mistakes_say(tier, framework):
    needs(framework)
    samples = SAMPLES[framework]
    if not tier.warm:
        samples = [samples[i] for i in FRESH[framework]]
    options = GradeOptions(isolation=str(tier), warm_workers=tier.warm)
    for task_name, file_name, breaks in samples:
        result = grade(task(task_name), os.path.join(SUBMISSIONS, task_name, file_name), options)
        messages = {c.name: c.message for c in result.checks if c.status != "passed"}
        assert result.isolation == str(tier)
        assert lost(result) == breaks, (file_name, messages)
        assert result.score == result.max_score - sum(
            c.max_score for c in result.checks if c.name in breaks
        ), file_name


def test_a_framework_import_is_outside_the_scripts_clock(tmp_path):
    """TensorFlow's import costs seconds of CPU; a correct tutorial script still passes with
    a run limit of half a second, because the worker imported TensorFlow before the clock."""
    needs("tensorflow")
    path = os.path.join(SUBMISSIONS, "pe-batch-sum", "correct_tensorflow_tutorial.py")
    result = grade(task("pe-batch-sum"), path, GradeOptions(limits={"call_seconds": 0.5}))
    assert result.status == "passed", [(c.name, c.message) for c in result.checks]


def test_an_endless_tensorflow_loop_is_stopped_by_the_derived_limit(tmp_path):
    needs("tensorflow")
    path = tmp_path / "endless.py"
    path.write_text("import tensorflow as tf\nx = tf.constant(0.0)\nwhile True:\n    x = x + 1.0\n")
    runs = grade(task("pe-table-shape"), str(path)).checks[0]
    assert runs.name == "runs" and runs.status == "error"
    assert "did not finish within 5 s" in runs.message
    assert "its import is not counted" in runs.message


def test_tensorflow_log_lines_are_left_out_of_what_the_file_printed(tmp_path):
    """Lines in the form of TensorFlow's C++ log (tf.print writes them to stderr, as the
    framework's own log does) are not shown as the student's output, and the report says
    they were left out; the student's own lines are."""
    needs("tensorflow")
    path = tmp_path / "noisy.py"
    path.write_text(
        textwrap.dedent("""
        import tensorflow as tf
        tf.get_logger().setLevel("INFO")
        print("my own line")
        length, depth = 5, 8
        position = tf.range(length, dtype=tf.float32)[:, tf.newaxis]
        i = tf.range(depth, dtype=tf.float32)[tf.newaxis, :]
        angles = position / tf.pow(10000.0, (2 * (i // 2)) / depth)
        encoding = tf.where(tf.cast(i, tf.int32) % 2 == 0, tf.sin(angles), tf.cos(angles))
        tf.print("W0000 00:00:1796168223.556379       2 cpu_feature_guard.cc:227] noise")
        tf.print("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR")
        print(encoding.shape)
    """)
    )
    result = grade(task("pe-table-shape"), str(path))
    assert result.status == "passed", [(c.name, c.message) for c in result.checks]
    assert "my own line" in result.output and "(5, 8)" in result.output
    assert "cpu_feature_guard" not in result.output and "absl::InitializeLog" not in result.output
    # the two above, and as many of TensorFlow's own as this version logs (2.21 logs 4 more)
    left_out = re.search(r"\[(\d+) lines of TensorFlow and PyTorch's own log left out\]", result.output)
    assert left_out and int(left_out.group(1)) >= 2, result.output
    assert "Fontconfig" not in result.output  # (Keras imports matplotlib, which loads fontconfig)


PLOTS_AFTER_TENSORFLOW = """
import tensorflow as tf
import matplotlib
import matplotlib.pyplot as plt
print("backend", matplotlib.get_backend())
plt.switch_backend("module://json")
print("switched to", matplotlib.get_backend())
from matplotlib.backends.registry import backend_registry
print("registry loads", backend_registry.load_backend_module("module://json").__name__)
plt.plot([1, 2])
plt.show()
print(tf.zeros((5, 8)).shape)
"""


def test_a_display_library_a_framework_imported_is_headless_too(tmp_path):
    """Keras imports matplotlib when TensorFlow is imported, which the worker does before any
    student code (outside the clock): matplotlib is then made headless all the same. Its
    backend registry loads no module a name asks for (a way to import what the scan cannot
    read), no backend but the grader's is used, and fontconfig says nothing."""
    needs("tensorflow")
    pytest.importorskip("matplotlib")
    path = tmp_path / "plots.py"
    path.write_text(PLOTS_AFTER_TENSORFLOW)
    result = grade(task("pe-table-shape"), str(path))
    assert "registry loads _grader_headless" in result.output, result.output
    assert "switched to module://_grader_headless" in result.output
    assert "(5, 8)" in result.output and "Fontconfig" not in result.output


def test_a_numpy_tasks_output_is_shown_as_printed(tmp_path):
    from grader.task import frameworks

    text = "I0000 00:00:1.5 2 x.cc:1] looks like a log\n"
    assert frameworks.shown_output(text, ("numpy",)) == text


def _task_allowing_absent(tmp_path):
    if importlib.util.find_spec("mxnet") is not None:
        pytest.skip("mxnet is installed here")
    folder = make_task(
        tmp_path / "absent",
        """
        id: absent-framework
        title: A task that allows a framework this machine lacks
        version: 1
        kind: script
        imports:
          allowed: [numpy, mxnet]
        checks:
          - name: allowed-imports
            kind: imports
            points: 1
          - name: prints-the-value
            kind: prints
            answer: answer
            format: integer
            points: 1
    """,
        reference="def answer():\n    return 4\n\nif __name__ == '__main__':\n    print(answer())\n",
    )
    return folder


def test_missing_framework_is_an_environment_problem(tmp_path):
    folder = _task_allowing_absent(tmp_path)
    path = tmp_path / "script.py"
    path.write_text("import mxnet\nprint(4)\n")
    result = grade(load_task(folder), str(path))
    runs = result.checks[0]
    assert result.status == "error" and runs.name == "runs"
    assert "problem of the environment, not of your code" in runs.message
    assert "'mxnet'" in runs.message


def test_validate_says_a_sample_needing_an_absent_framework_was_not_checked(tmp_path):
    from grader.authoring.validation import validate

    folder = _task_allowing_absent(tmp_path)
    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "with_mxnet.py").write_text("# expect: full marks\nimport mxnet\nprint(4)\n")
    (samples / "plain.py").write_text("# expect: full marks\nprint(2 + 2)\n")
    from grader.authoring.freezing import freeze
    from grader.task.reference import load_reference

    freeze(load_task(folder), load_reference(load_task(folder)))
    report = validate(load_task(folder), str(samples), GradeOptions(isolation="rlimits"))
    by_subject = {os.path.basename(f.subject): f for f in report.findings}
    assert report.ok, [(f.subject, f.text) for f in report.findings if not f.ok]
    assert by_subject["with_mxnet.py"].text.startswith("not checked here: it needs")
    assert "not installed" in by_subject["with_mxnet.py"].text
    assert by_subject["plain.py"].text.startswith("as declared")


def test_grader_extras_names_what_the_tasks_allow_and_the_workflows_install_it():
    import yaml
    from helpers.cli import run_cli
    from helpers.paths import COURSE
    from helpers.paths import ROOT as root

    tasks = [os.path.join(root, "tasks", name) for name in sorted(os.listdir(os.path.join(root, "tasks")))]
    done = run_cli("extras", *tasks)
    assert done.returncode == 0 and done.stdout == "tensorflow,torch\n", done.stderr
    numpy_only = run_cli("extras", os.path.join(root, "tasks", "positional-encoding"))
    assert numpy_only.returncode == 0 and numpy_only.stdout == "\n"
    for workflow, job in (
        (os.path.join(COURSE, ".github", "workflows", "grade.yml"), "grade"),
        (
            os.path.join(root, "examples", "course-instructor", ".github", "workflows", "final-grading.yml"),
            "grade",
        ),
    ):
        with open(workflow, encoding="utf-8") as f:
            steps = yaml.safe_load(f)["jobs"][job]["steps"]
        install = [s["run"] for s in steps if "grader extras" in s.get("run", "")]
        assert install, f"{workflow} does not install the tasks' frameworks"
        assert "numgrader[$extras]" in install[0]
        assert "--extra-index-url https://download.pytorch.org/whl/cpu" in install[0]


FUNCTION_TASK = """
id: framework-square
title: Square, with a framework
version: 1
functions:
  square: [x]
imports:
  allowed: [numpy, torch, tensorflow]
checks:
  - name: values
    kind: example
    call: square
    args: {x: [1.0, 2.0, 3.0]}
    points: 1
  - name: leaves-input
    kind: mutation
    call: square
    args:
      x: {array: {shape: [4], elements: {min: -10, max: 10}}}
    cases: 5
    points: 1
  - name: allowed-imports
    kind: imports
    points: 1
"""

SQUARES = {
    "tensorflow": (
        "import tensorflow as tf\n\ndef square(x):\n"
        "    return tf.square(tf.convert_to_tensor(x, dtype=tf.float64)).numpy()\n"
    ),
    "torch": (
        "import torch\n\ndef square(x):\n"
        "    t = torch.as_tensor(x, dtype=torch.float64)\n    return (t * t).numpy()\n"
    ),
}


@pytest.mark.parametrize("framework", ["tensorflow", "torch"])
def test_framework_internals_void_neither_imports_nor_the_mutation_check(tmp_path, framework):
    """What TensorFlow and PyTorch do in their own frames (imports that exec, frame lookups,
    C libraries loaded) costs a function task's hand-in nothing: full marks, the mutation
    check verified."""
    needs(framework)
    folder = make_task(tmp_path / "fw", FUNCTION_TASK)
    path = tmp_path / "square.py"
    path.write_text(SQUARES[framework])
    result = grade(load_task(folder), str(path))
    assert result.status == "passed", [(c.name, c.message) for c in result.checks]


def test_a_framework_that_writes_into_its_input_still_fails_the_mutation_check(tmp_path):
    needs("torch")
    folder = make_task(tmp_path / "fw", FUNCTION_TASK)
    path = tmp_path / "in_place.py"
    path.write_text(
        "import torch\n\ndef square(x):\n    t = torch.from_numpy(x)\n    t.mul_(t)\n    return x\n"
    )
    by_name = {c.name: c for c in grade(load_task(folder), str(path)).checks}
    assert by_name["leaves-input"].status == "failed", by_name["leaves-input"].message


def test_grader_validate_marks_a_sample_it_could_not_check_not_checked_and_counts_it_apart(tmp_path):
    from helpers.cli import run_cli

    folder = _task_allowing_absent(tmp_path)
    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "with_mxnet.py").write_text("# expect: full marks\nimport mxnet\nprint(4)\n")
    (samples / "plain.py").write_text("# expect: full marks\nprint(2 + 2)\n")
    assert run_cli("freeze", folder).returncode == 0
    done = run_cli("validate", folder, "--samples", str(samples), "--isolation", "rlimits")
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "with_mxnet.py" in line)
    assert line.lstrip().startswith("not checked "), line
    assert "it needs mxnet" in line and "not installed" in line  # and why
    assert not any(l.lstrip().startswith("ok ") and "with_mxnet" in l for l in done.stdout.splitlines())
    summary = done.stdout.splitlines()[-1]
    assert "1 not checked" in summary and summary.endswith("0 problems"), summary
    ok = int(summary.split(" ok,")[0])
    assert ok == sum(l.lstrip().startswith("ok ") for l in done.stdout.splitlines())
