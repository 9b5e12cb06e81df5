"""Frozen cases and student kits (issue 11): the same grade everywhere, and students never
hold the answer."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT

from grader.task.samples import sample_files

TASKS = os.path.join(ROOT, "tasks")
HIDDEN_VALUE = 4321.5  # the input of the hidden check below; its square is 18675362.25


def bundled_tasks():
    return sorted(
        os.path.join(TASKS, t)
        for t in os.listdir(TASKS)
        if os.path.isfile(os.path.join(TASKS, t, "task.yaml"))
    )


def score(task, path, *extra, env=None) -> dict:
    done = run_cli("check", str(task), str(path), "--format", "json", "--staff", *extra, env=env)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("task", bundled_tasks(), ids=os.path.basename)
def test_bundled_tasks_ship_a_current_freeze(task):
    manifest = json.load(open(os.path.join(task, "frozen", "manifest.json")))
    done = run_cli("validate", task)
    assert done.returncode == 0, done.stdout[-3000:]
    assert f"ok   frozen cases: current (digest {manifest['digest']})" in done.stdout
    report = score(task, sample_files(os.path.join(ROOT, "submissions", os.path.basename(task)))[0])
    assert report["cases_digest"] == manifest["digest"] and report["grader_version"]


def test_a_stale_freeze_is_refused_with_the_command_that_refreezes(tmp_path):
    task = tmp_path / "task"
    shutil.copytree(PE_TASK, task)
    with open(task / "reference.py", "a") as f:
        f.write("\n# changed after freezing\n")
    done = run_cli("check", str(task), os.path.join(PE_SAMPLES, "correct_vectorized.py"))
    assert done.returncode == 2
    assert "reference.py: changed since the cases were frozen" in done.stderr
    assert f"run: grader freeze {task}" in done.stderr
    assert run_cli("freeze", str(task)).returncode == 0
    assert run_cli("check", str(task), os.path.join(PE_SAMPLES, "correct_vectorized.py")).returncode == 0


def test_an_array_damaged_after_a_run_found_it_intact_is_still_refused(tmp_path):
    """A run remembers the arrays it hashed (by size, times and inode) so the next need not
    hash them again; an array changed since, even to the same size, is hashed and refused."""
    task = tmp_path / "task"
    shutil.copytree(PE_TASK, task)
    env = {"GRADER_CACHE_DIR": str(tmp_path / "cache")}
    correct = os.path.join(PE_SAMPLES, "correct_vectorized.py")
    assert run_cli("check", str(task), correct, env=env).returncode == 0
    assert os.listdir(tmp_path / "cache" / "verified")  # the stamps were kept
    assert run_cli("check", str(task), correct, env=env).returncode == 0  # (read, not hashed)
    arrays = task / "frozen" / "arrays"
    largest = max(arrays.iterdir(), key=lambda p: p.stat().st_size)
    data = bytearray(largest.read_bytes())
    data[-1] ^= 0xFF  # a byte of the last value changed: the same size, the same header
    largest.write_bytes(bytes(data))
    done = run_cli("check", str(task), correct, env=env)
    assert done.returncode == 2, done.stdout[-2000:]
    assert f"{largest}: a frozen array does not match its name (damaged)" in done.stderr


@pytest.mark.slow  # grades the samples twice, or installs another Hypothesis
def test_grading_never_generates_cases_when_frozen(tmp_path):
    """With Hypothesis unimportable, a frozen task grades every sample as before (only
    the shrinking of a shown input needs it, and that never changes a score)."""
    blocker = tmp_path / "no-hypothesis"
    (blocker / "hypothesis").mkdir(parents=True)
    (blocker / "hypothesis" / "__init__.py").write_text("raise ImportError('hypothesis is not here')\n")
    env = {"PYTHONPATH": f"{blocker}{os.pathsep}{ROOT}", "GRADER_CACHE_DIR": str(tmp_path / "cache")}
    for sample in sample_files(PE_SAMPLES):
        with_it = score(PE_TASK, sample)
        without = score(PE_TASK, sample, env=env)
        assert without["score"] == with_it["score"], os.path.basename(sample)


@pytest.fixture(scope="module")
def old_hypothesis(tmp_path_factory):
    """The lowest Hypothesis pyproject allows, installed beside the grader."""
    pyproject = open(os.path.join(ROOT, "pyproject.toml")).read()
    lowest = pyproject.split('"hypothesis>=')[1].split('"')[0]
    target = tmp_path_factory.mktemp("hypothesis-lowest")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            f"hypothesis=={lowest}",
            "sortedcontainers",
            "attrs",
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot install hypothesis=={lowest}: {done.stderr[-500:]}")
    return lowest, target


@pytest.mark.slow  # grades the samples twice, or installs another Hypothesis
def test_the_same_samples_get_the_same_scores_with_the_lowest_hypothesis(old_hypothesis, tmp_path):
    lowest, target = old_hypothesis
    env = {"PYTHONPATH": f"{target}{os.pathsep}{ROOT}", "GRADER_CACHE_DIR": str(tmp_path / "cache")}
    probe = subprocess.run(
        [sys.executable, "-c", "import hypothesis; print(hypothesis.__version__)"],
        capture_output=True,
        text=True,
        env=dict(os.environ, **env),
    )
    assert probe.stdout.strip().startswith(lowest)
    for task in bundled_tasks():
        samples = os.path.join(ROOT, "submissions", os.path.basename(task))
        for sample in sample_files(samples):
            assert score(task, sample, env=env)["score"] == score(task, sample)["score"], sample


HIDDEN_TASK = f"""
id: squares
title: Square every entry
version: 1
functions:
  square: [x]
imports: {{allowed: [numpy]}}
checks:
  - name: visible-case
    kind: example
    call: square
    args: {{x: {{array: {{value: [1.0, 2.0]}}}}}}
  - name: visible-property
    kind: property
    call: square
    cases: 20
    args: {{x: {{array: {{shape: [3], elements: {{min: -5, max: 5}}}}}}}}
  - name: secret-case-zebra
    kind: example
    hidden: true
    call: square
    args: {{x: {{array: {{value: [{HIDDEN_VALUE}, 8765.25]}}}}}}
"""


@pytest.fixture
def full_task(tmp_path):
    task = tmp_path / "squares"
    task.mkdir()
    (task / "task.yaml").write_text(HIDDEN_TASK)
    (task / "statement.md").write_text("Write square(x): x squared, elementwise.\n")
    (task / "reference.py").write_text(
        "import numpy as np\n\ndef square(x):\n    return np.asarray(x) ** 2\n"
    )
    assert run_cli("freeze", str(task)).returncode == 0
    return task


def test_a_reference_that_raises_is_the_task_bug_freeze_names_by_its_line(full_task):
    """Refreezing after the reference broke says which check's case it raised on, where
    task.yaml declares that check (exit 2), as grading does; the old freeze stays whole."""
    before = (full_task / "frozen" / "manifest.json").read_text()
    (full_task / "reference.py").write_text(
        "import numpy as np\n\ndef square(x):\n"
        "    if np.max(x) > 1000:\n        raise ValueError('too large for me')\n"
        "    return np.asarray(x) ** 2\n"
    )
    done = run_cli("freeze", str(full_task))
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr and "bug in the grader" not in done.stderr
    line = HIDDEN_TASK.splitlines().index("  - name: secret-case-zebra") + 1
    assert (
        f"{full_task / 'task.yaml'}:{line}: check 'secret-case-zebra': "
        "the reference solution raised ValueError: too large for me"
    ) in done.stderr
    assert (full_task / "frozen" / "manifest.json").read_text() == before


def test_a_kit_holds_no_reference_and_no_hidden_check(full_task, tmp_path):
    done = run_cli("kit", str(full_task), "-o", str(tmp_path / "kits"))
    assert done.returncode == 0, done.stderr
    kit = tmp_path / "kits" / "squares"
    names = sorted(str(p.relative_to(kit)) for p in kit.rglob("*") if p.is_file())
    assert "reference.py" not in names and "statement.md" in names and "task.yaml" in names
    secret_square = HIDDEN_VALUE**2
    for path in kit.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"secret-case-zebra" not in data and b"return np.asarray(x) ** 2" not in data, path
            assert b"4321.5" not in data, path
            import numpy as np

            assert np.float64(HIDDEN_VALUE).tobytes() not in data, path
            assert np.float64(secret_square).tobytes() not in data, path


@pytest.mark.slow  # grades the samples twice, or installs another Hypothesis
def test_a_kit_grades_the_public_checks_exactly_as_the_full_task(tmp_path):
    kits = tmp_path / "kits"
    assert run_cli("kit", *bundled_tasks(), "-o", str(kits)).returncode == 0
    for task in bundled_tasks():
        samples = os.path.join(ROOT, "submissions", os.path.basename(task))
        for sample in sample_files(samples):
            full = score(task, sample)
            kit = score(kits / os.path.basename(task), sample)
            # every check the kit counts scores there what it scores in the full task; those
            # it leaves to final grading (final_grading.py) are outside its score
            counted = {c["name"]: c["score"] for c in kit["checks"] if not c["final_points"]}
            assert counted == {c["name"]: c["score"] for c in full["checks"] if c["name"] in counted}, sample
            assert kit["score"] == sum(counted.values()), sample
            assert kit["kit"] is True
    text = run_cli(
        "check", str(kits / "positional-encoding"), os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py")
    ).stdout
    assert "hidden checks may be added at final grading" in text
    assert "sinusoidal_pe(max_len=" in text  # the smallest failing frozen case, as a call


def test_a_hostile_file_checked_on_a_kit_finds_no_hidden_value(full_task, tmp_path):
    """Reads every file it can reach (the rlimits tier: a student's own machine) and
    fails loudly if the hidden check's expected value is anywhere."""
    assert run_cli("kit", str(full_task), "-o", str(tmp_path / "kits")).returncode == 0
    shutil.rmtree(full_task)  # a student's machine holds the kit, not the task
    hunter = tmp_path / "hunter.py"
    hunter.write_text(f"""
import os
import numpy as np

# (spelled so that this file does not hold them itself)
needles = [np.float64(8643 / 2).tobytes(), np.float64((8643 / 2) ** 2).tobytes(), b"4321" + b".5"]
found = []
for root, dirs, files in os.walk({str(tmp_path)!r}):
    for name in files:
        try:
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
        except OSError:
            continue
        if any(n in data for n in needles):
            found.append(os.path.join(root, name))
if found:
    raise RuntimeError("found the hidden values in " + ", ".join(found))

def square(x):
    return np.asarray(x) ** 2
""")
    report = score(tmp_path / "kits" / "squares", hunter, "--isolation", "rlimits")
    assert report["checks"][0]["status"] == "passed", report["checks"][0]
    assert report["score"] == report["max_score"]


def test_the_example_student_repository_holds_no_reference_and_no_hidden_check():
    student_side = os.path.join(ROOT, "examples", "course")
    tasks = os.path.join(ROOT, "examples", "course-instructor", "tasks")
    secrets, source = [], []
    for task in os.listdir(tasks):
        spec = open(os.path.join(tasks, task, "task.yaml")).read()
        import yaml

        secrets += [c["name"].encode() for c in yaml.safe_load(spec)["checks"] if c.get("hidden")]
        body = [
            line.strip()
            for line in open(os.path.join(tasks, task, "reference.py"))
            if line.strip() and not line.strip().startswith(("#", "import", "from", "def", '"""'))
        ]
        source += [line.encode() for line in body if len(line) > 12]
    assert secrets and source, "nothing hidden to look for"
    for root, _, files in os.walk(student_side):
        for name in files:
            path = os.path.join(root, name)
            data = open(path, "rb").read()
            assert name != "reference.py", path
            # (solutions/ is the student's own work, which may well share a line with it)
            mine = os.path.relpath(path, student_side).startswith("solutions")
            leaked = [s for s in secrets + ([] if mine else source) if s in data]
            assert not leaked, (path, leaked)
    # ... and the kits there are the current cut of the instructor's tasks.
    for task in os.listdir(tasks):
        kit = json.load(open(os.path.join(student_side, "tasks", task, "frozen", "manifest.json")))
        assert kit["kit"] is True
        done = run_cli("validate", os.path.join(student_side, "tasks", task))
        assert done.returncode == 0, done.stdout


# --------------------------------------------------------------------------- "did the work" checks


def _table(length, depth):
    sys.path.insert(0, os.path.join(TASKS, "pe-table-shape"))
    try:
        from reference import table
    finally:
        sys.path.pop(0)
    return table(length, depth)


def _telling(values):
    """The values that give a table away (not 0, 1 or another round number)."""
    import numpy as np

    flat = np.unique(np.abs(np.asarray(values, dtype=float).ravel()))
    return [v for v in flat if abs(v - round(v, 2)) > 1e-4]


def _numbers_in(data):
    """Every list of numbers in a JSON or YAML document, as a flat list."""
    found, stack = [], [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack += list(item.values())
        elif isinstance(item, list):
            numbers = [x for x in item if isinstance(x, (int, float)) and not isinstance(x, bool)]
            if numbers:
                found.append(numbers)
            stack += [x for x in item if isinstance(x, (dict, list))]
    return found


@pytest.fixture(scope="module")
def script_kits(tmp_path_factory):
    kits = tmp_path_factory.mktemp("kits")
    done = run_cli(
        "kit", os.path.join(TASKS, "pe-table-shape"), os.path.join(TASKS, "pe-batch-sum"), "-o", str(kits)
    )
    assert done.returncode == 0, done.stderr
    return kits


def test_a_kit_holds_nothing_of_what_a_work_check_compares_with(script_kits):
    """Every file of the kit, read every way: arrays, JSON and YAML lists, text, raw bytes."""
    import numpy as np
    import yaml

    from grader.grading.checks.typed_in import Numbers, typed_in
    from grader.submission.source_numbers import scan_numbers
    from grader.task.tolerance import Tolerance

    tolerance = Tolerance(rtol=1e-5, atol=1e-5)
    wanted = {"pe-table-shape": [_table(5, 8)], "pe-batch-sum": [_table(4, 6), _table(4, 6)[:3]]}
    for task, arrays in wanted.items():
        telling = sorted({v for a in arrays for v in _telling(a)})
        assert len(telling) >= 8
        files = [p for p in (script_kits / task).rglob("*") if p.is_file()]
        assert any(p.suffix == ".yaml" for p in files) and any(p.name == "cases.json" for p in files)
        for path in files:
            data = path.read_bytes()
            lists = []
            if path.suffix == ".npy":
                lists.append(np.load(path, allow_pickle=False).ravel().tolist())
            elif path.suffix == ".json":
                lists += _numbers_in(json.loads(data))
            elif path.suffix == ".yaml":
                lists += _numbers_in(yaml.safe_load(data))
            for numbers in lists:
                near = [v for v in telling if np.isclose(np.abs(numbers), v, rtol=1e-5, atol=1e-5).any()]
                assert not near, (path, near)
            for value in telling:  # nor the bytes of one, nor its digits
                assert np.float64(value).tobytes() not in data and np.float32(value).tobytes() not in data
                assert f"{value:.5f}".encode() not in data, (path, value)
            for array in arrays:  # nor the text, read as a hostile source would be
                assert (
                    typed_in(array, Numbers(scan_numbers(data.decode("utf-8", "replace"))), tolerance) is None
                ), path


def test_a_kit_names_the_checks_left_to_final_grading(script_kits):
    head = (script_kits / "pe-table-shape" / "task.yaml").read_text().split("\nid:")[0]
    assert "Checked at final grading only" in head and "builds-the-table (3 points)" in head
    correct = os.path.join(ROOT, "submissions", "pe-table-shape", "correct_numpy.py")
    text = run_cli("check", str(script_kits / "pe-table-shape"), correct).stdout
    assert "checked at final grading (3 points, not in this kit's score)" in text
    assert (
        "4 points are decided at final grading, not in this kit's score: allowed-imports (1), "
        "builds-the-table (3)" in text
    )
    assert "Score: 2/2 (100%)" in text and "(+4 points decided at final grading)" in text
    report = score(script_kits / "pe-table-shape", correct)
    checks = {c["name"]: c for c in report["checks"]}
    work = checks["builds-the-table"]
    assert (work["status"], work["reason"], work["score"], work["max_score"], work["final_points"]) == (
        "skipped",
        "final-grading",
        0,
        0,
        3,
    )
    imports = checks["allowed-imports"]  # run and shown, its point decided with the work
    assert (imports["status"], imports["max_score"], imports["final_points"]) == ("passed", 0, 1)
    assert report["max_score"] == 2 and report["score"] == 2


def test_a_correct_script_scores_the_same_on_the_kit_and_the_task(script_kits):
    for task, sample in (
        ("pe-table-shape", "correct_tutorial_style.py"),
        ("pe-batch-sum", "correct_tutorial_typed_batch.py"),
        ("pe-batch-sum", "mistake_typed_rows.py"),
    ):
        path = os.path.join(ROOT, "submissions", task, sample)
        full = {c["name"]: c["score"] for c in score(os.path.join(TASKS, task), path)["checks"]}
        kit = score(script_kits / task, path)
        counted = {c["name"]: c["score"] for c in kit["checks"] if not c["final_points"]}
        assert counted == {name: full[name] for name in counted}, (task, sample)
        assert {c["name"] for c in kit["checks"] if c["final_points"]} >= {"builds-the-table"}


def test_course_ci_on_kits_says_what_final_grading_decides(script_kits, tmp_path):
    course = tmp_path / "course"
    shutil.copytree(script_kits, course / "tasks")
    (course / "solutions").mkdir()
    shutil.copy(
        os.path.join(ROOT, "submissions", "pe-table-shape", "correct_numpy.py"),
        course / "solutions" / "pe-table-shape.py",
    )
    done = run_cli("ci", str(course), "--summary", str(tmp_path / "summary.md"))
    assert "pe-table-shape  2/2  passed" in done.stdout, done.stdout
    assert "4 points are decided at final grading, not in this kit's score" in done.stdout
    assert "pe-batch-sum    0/2" in done.stdout  # (no solution: 0 of what the kit scores)
    assert "decided at final grading" in (tmp_path / "summary.md").read_text()
