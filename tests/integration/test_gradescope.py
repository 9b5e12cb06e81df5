"""Gradescope: an autograder zip built from a normal (non-editable) install, run on a
simulated /autograder tree (AUTOGRADER_ROOT), with a results.json on every path."""

import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile

import pytest
from helpers.built import build_sdist, clean_env, fresh_venv, pip_install
from helpers.containers import SIMULATIONS, SIMULATOR
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT
from helpers.tasks import IGNORES_BASE_LOSES, make_task, score_without, write

from grader.integrations.gradescope_finish import STUDENT_MESSAGE, TEST_KEYS, TOP_KEYS

# Every test here uses a zip built from a fresh install in two virtualenvs.
pytestmark = pytest.mark.slow

# The zip's pins are checked against PyPI for Gradescope's Python when it is built: these
# tests need the network, and fail (never skip) without it, unless told it is absent.
OFFLINE = os.environ.get("GRADER_TEST_OFFLINE") == "1"
GRADESCOPE_PYTHON = "3.10"  # Ubuntu 22.04's, Gradescope's base image

BAD = os.path.join(PE_SAMPLES, "mistake_ignores_base.py")
GOOD = os.path.join(PE_SAMPLES, "correct_vectorized.py")


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    """The zip that ``grader gradescope`` writes when run from a venv where the grader was
    installed from its sdist (not editable, not from this checkout), and a template tree:
    source/ unzipped, and a second venv holding the zip's own wheel (what setup.sh installs)."""
    tmp = tmp_path_factory.mktemp("gradescope")
    builder = fresh_venv(str(tmp / "builder"))
    pip_install(builder, build_sdist(str(tmp / "sdist")))
    zip_path = tmp / "out" / "autograder.zip"
    # for Gradescope's Python, from this one (the pins checked against PyPI: one resolve)
    done = subprocess.run(
        [
            os.path.join(os.path.dirname(builder), "grader"),
            "gradescope",
            PE_TASK,
            "-o",
            str(zip_path),
            *(["--offline"] if OFFLINE else ["--python", GRADESCOPE_PYTHON]),
        ],
        cwd=str(tmp),
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    template = tmp / "template"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(template / "source")
    (template / "source" / "run_autograder").chmod(0o755)
    grading = fresh_venv(str(tmp / "grading"))
    [wheel] = glob.glob(str(template / "source" / "wheels" / "*.whl"))
    pip_install(grading, "--no-index", wheel)
    return {"zip": zip_path, "template": template, "builder": builder, "python": grading, "built": done}


def run_autograder(autograder, tmp_path, submission=None, python=None, **env):
    """Run the zip's run_autograder on a fresh copy of the tree; returns (process, results)."""
    root = tmp_path / "autograder"
    shutil.copytree(autograder["template"], root, symlinks=True)
    (root / "submission").mkdir()
    if submission is not None:
        shutil.copy(submission, root / "submission" / "solution.py")
    full_env = clean_env(
        AUTOGRADER_ROOT=str(root),
        GRADER_PYTHON=python or autograder["python"],
        GRADER_CACHE_DIR=os.environ["GRADER_CACHE_DIR"],
        **env,
    )
    done = subprocess.run(
        [shutil.which("bash"), str(root / "source" / "run_autograder")],
        cwd=str(root),
        env=full_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    path = root / "results" / "results.json"
    return done, (json.loads(path.read_text()) if path.is_file() else None), root


def assert_only_documented_keys(results):
    assert set(results) <= TOP_KEYS, set(results) - TOP_KEYS
    for test in results.get("tests", []):
        assert set(test) <= TEST_KEYS, set(test) - TEST_KEYS
    assert results["output_format"] == "text" and results["test_output_format"] == "text"


def assert_fallback(done, results):
    """The trusted failure results: exit 0, score 0, the student's message, the reason for
    the instructor in a hidden test."""
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert results is not None, "no results.json"
    assert_only_documented_keys(results)
    assert results["score"] == 0 and results["output"] == STUDENT_MESSAGE
    [hidden] = results["tests"]
    assert hidden["visibility"] == "hidden" and hidden["max_score"] == 0
    assert hidden["output"] == results["extra_data"]["grader_error"]
    return hidden["output"]


def test_zip_holds_the_task_a_wheel_and_exact_pins(autograder):
    with zipfile.ZipFile(autograder["zip"]) as archive:
        names = set(archive.namelist())
        requirements = archive.read("requirements.txt").decode()
        setup = archive.read("setup.sh").decode()
        modes = {n: archive.getinfo(n).external_attr >> 16 for n in ("setup.sh", "run_autograder")}
    assert {
        "setup.sh",
        "run_autograder",
        "finish_results.py",
        "requirements.txt",
        "tasks/positional-encoding/task.yaml",
        "tasks/positional-encoding/reference.py",
        "tasks/positional-encoding/mistakes.py",
        "tasks/positional-encoding/frozen/manifest.json",
        "tasks/positional-encoding/frozen/cases.json",
    } <= names  # the frozen full task: the same grade next year
    assert all(mode & stat.S_IXUSR for mode in modes.values())
    [wheel] = [n for n in names if n.startswith("wheels/")]
    assert wheel.startswith("wheels/numgrader-") and wheel.endswith("-py3-none-any.whl")
    assert not [n for n in names if n.startswith("grader-src/") or "__pycache__" in n]
    # Pins are the exact versions installed where the zip was built, but those that do not
    # install on Gradescope's Python, each of which the build names.
    installed = subprocess.run(
        [
            autograder["builder"],
            "-c",
            "import numpy, hypothesis, yaml; "
            "print(numpy.__version__, hypothesis.__version__, yaml.__version__)",
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        check=True,
    ).stdout.split()
    for name, version in zip(("numpy", "hypothesis", "PyYAML"), installed):
        pinned = re.search(rf"^{name}==(\S+)$", requirements, re.M)
        assert pinned, (name, requirements)
        if pinned.group(1) != version:
            assert f"note: {name} {version} (installed here) does not install on Python 3.10" in (
                autograder["built"].stderr
            ), (name, version, requirements)
    # setup.sh follows AUTOGRADER_ROOT and installs the pins, then the grader's wheel.
    assert "/autograder/source" not in setup and 'ROOT="${AUTOGRADER_ROOT:-/autograder}"' in setup
    assert f'-r "$SOURCE/requirements.txt" "$SOURCE/{wheel}"' in setup
    assert subprocess.run(["bash", "-n"], input=setup, text=True).returncode == 0


def test_the_pins_install_on_gradescopes_python(autograder, tmp_path):
    """Built on this Python (3.11 or later here) for Gradescope's 3.10: pip, asked as
    Gradescope's image would ask it (Python 3.10, Linux x86_64 up to Ubuntu 22.04's C
    library, wheels only, PyPI), accepts requirements.txt and the grader's wheel together.
    Metadata only (--dry-run): nothing is downloaded but what pip reads to resolve."""
    if OFFLINE:
        pytest.skip("GRADER_TEST_OFFLINE=1: no network, so the pins are not checked")
    assert sys.version_info[:2] != (3, 10), "this test means a build on another Python"
    with zipfile.ZipFile(autograder["zip"]) as archive:
        archive.extractall(tmp_path / "zip")
        setup = archive.read("setup.sh").decode()
    assert 'FOR="3.10"' in setup and "--only-binary=:all: -r" in setup
    requirements = (tmp_path / "zip" / "requirements.txt").read_text()
    assert requirements.startswith("# For Python 3.10 on Linux x86_64")
    [wheel] = glob.glob(str(tmp_path / "zip" / "wheels" / "*.whl"))
    platforms = [f"manylinux_2_{minor}_x86_64" for minor in range(17, 36)] + ["manylinux2014_x86_64"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--target",
            str(tmp_path / "target"),
            "--python-version",
            "3.10",
            "--only-binary=:all:",
            *(arg for platform in platforms for arg in ("--platform", platform)),
            "--index-url",
            "https://pypi.org/simple",
            "-r",
            str(tmp_path / "zip" / "requirements.txt"),
            wheel,
        ],
        capture_output=True,
        text=True,
        env=clean_env(PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS="", PIP_CONSTRAINT=""),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # ... and would install exactly the pins (with what they need besides)
    [would] = [line for line in done.stdout.splitlines() if line.startswith("Would install ")]
    chosen = {_key(t.rsplit("-", 1)[0]) + "==" + t.rsplit("-", 1)[1] for t in would.split()[2:]}
    for line in requirements.splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split(" ;")[0].split("==")
            assert f"{_key(name)}=={version}" in chosen, (line, would)


def _key(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def test_run_autograder_grades_with_text_output_and_documented_keys(autograder, tmp_path):
    printer = write(tmp_path / "printer.py", open(BAD).read() + "\nprint(\"<class 'numpy.ndarray'>\")\n")
    done, results, _ = run_autograder(autograder, tmp_path, printer)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_only_documented_keys(results)
    assert results["score"] == score_without(*IGNORES_BASE_LOSES)
    assert sum(t["max_score"] for t in results["tests"]) == score_without()
    assert "<class 'numpy.ndarray'>" in results["output"]


def test_an_empty_upload_is_told_why(autograder, tmp_path):
    done, results, _ = run_autograder(autograder, tmp_path, None)
    assert done.returncode == 0 and results["score"] == 0
    assert "holds 0 .py or .ipynb files" in results["output"] and "submit exactly one" in results["output"]
    assert_only_documented_keys(results)


def test_a_bad_spec_gives_results_and_exit_0(autograder, tmp_path):
    root = tmp_path / "autograder"
    done, results, _ = run_autograder(autograder, tmp_path / "first", GOOD)
    assert results["score"] == score_without()
    spec = autograder["template"] / "source" / "tasks" / "positional-encoding" / "task.yaml"
    broken = tmp_path / "broken"
    shutil.copytree(autograder["template"], broken)
    (broken / "source" / "tasks" / "positional-encoding" / "task.yaml").write_text(
        spec.read_text() + "checks: [oops\n"
    )
    done, results, root = run_autograder({**autograder, "template": broken}, tmp_path, GOOD)
    reason = assert_fallback(done, results)
    assert "could not run (exit 2" in reason and "task.yaml" in reason and "not valid YAML" in reason
    assert "not valid YAML" in done.stdout  # run_autograder's output: instructors only
    assert results["extra_data"]["grader_exit_code"] == 2


FORGE_AND_KILL = r'''
import os, signal

def _attack():
    """Forge results.json beside the submission folder, then kill the grader."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"check" in argv and b"--format" in argv:
            for arg in argv:
                if arg.endswith(b"/submission"):
                    try:
                        with open(os.path.join(os.path.dirname(arg), b"results", b"results.json"), "w") as f:
                            f.write('{"score": 999}')
                    except OSError:
                        pass
            os.kill(int(pid), signal.SIGKILL)

_attack()
'''


def test_a_submission_that_forges_results_and_kills_the_grader(autograder, tmp_path):
    """Whatever tier the machine offers, the forged score never reaches Gradescope."""
    attack = write(tmp_path / "attack.py", FORGE_AND_KILL + open(BAD).read())
    done, results, _ = run_autograder(autograder, tmp_path, attack)
    assert done.returncode == 0, done.stderr[-3000:]
    assert results is not None and results["score"] != 999
    if results["output"] == STUDENT_MESSAGE:  # the grader was killed: the trusted failure results
        assert "killed by SIGKILL" in assert_fallback(done, results)
    else:  # the tier stopped the attack (where /proc cannot be listed, the file does not even load)
        assert results["score"] <= score_without(*IGNORES_BASE_LOSES)


def run_in_container(autograder, container, simulation, tmp_path, files=(), prepare=None):
    """run_autograder in the simulated Gradescope container (root, no namespaces, no
    Landlock: tests/helpers/container_sim.py), the grader installed in a virtualenv of the system's
    Python that every user may read. The upload: ``files`` (name -> the file to copy), then
    whatever ``prepare(submission folder, autograder root)`` makes. Returns (process, results)."""
    root = tmp_path / "autograder"
    shutil.copytree(autograder["template"], root, symlinks=True)
    (root / "submission").mkdir()
    for name, source in dict(files).items():
        shutil.copy(source, root / "submission" / name)
    if prepare:
        prepare(root / "submission", root)
    env = clean_env(
        AUTOGRADER_ROOT=str(root),
        GRADER_PYTHON=os.path.join(container["bin"], "python"),
        GRADER_CACHE_DIR=os.environ["GRADER_CACHE_DIR"],
    )
    done = subprocess.run(
        [
            os.path.join(container["bin"], "python"),
            SIMULATOR,
            *SIMULATIONS[simulation],
            shutil.which("bash"),
            str(root / "source" / "run_autograder"),
        ],
        cwd=str(root),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done, json.loads((root / "results" / "results.json").read_text())


def test_the_attack_fails_in_a_simulated_gradescope_container(autograder, container, simulation, tmp_path):
    """In Gradescope's container run_autograder grades in the unprivileged tier, the file
    can neither forge the results nor kill the grader, and the student gets a real grade."""
    attack = write(tmp_path / "attack.py", FORGE_AND_KILL + open(BAD).read())
    done, results = run_in_container(autograder, container, simulation, tmp_path, {"solution.py": attack})
    assert_only_documented_keys(results)
    # A real report of the grader (not the failure results), nothing forged: the kill was
    # refused (PermissionError: another user), which fails the file's own import.
    assert results["output"] != STUDENT_MESSAGE and results["score"] == 0
    assert results["extra_data"]["isolation"] == "unprivileged"
    assert "PermissionError" in json.dumps(results["tests"])


# What only an operator can act on: how the machine sandboxes, and how to make it stronger.
OPERATOR_WORDS = re.compile(r"sandbox|bwrap|bubblewrap|sysctl|namespace|\btiers?\b|unprivileged", re.I)


def test_students_see_no_operator_notes_in_the_container(autograder, container, tmp_path):
    """The tier and why it is weaker than bubblewrap reach instructors (extra_data, a hidden
    test), never the output or a test a student sees."""
    done, results = run_in_container(autograder, container, "cgroup", tmp_path, {"solution.py": BAD})
    assert_only_documented_keys(results)
    assert results["score"] == score_without(*IGNORES_BASE_LOSES)
    shown = [results["output"]] + [json.dumps(t) for t in results["tests"] if t["visibility"] != "hidden"]
    for text in shown:
        assert not OPERATOR_WORDS.search(text), text
    assert results["extra_data"]["isolation"] == "unprivileged"
    note = results["extra_data"]["isolation_note"]
    assert "unprivileged" in note and "bubblewrap" in note, note
    [environment] = [t for t in results["tests"] if t["visibility"] == "hidden"]
    assert note in environment["output"] and environment["max_score"] == 0
    assert "note: graded in the unprivileged tier" in done.stderr  # run_autograder's output: instructors


def test_run_autograder_never_grades_in_the_rlimits_tier(autograder, tmp_path):
    """Asked for the tier in which that attack works (a submission is someone else's
    work), the grader refuses, and the student gets the trusted failure results."""
    attack = write(tmp_path / "attack.py", FORGE_AND_KILL + open(BAD).read())
    done, results, _ = run_autograder(autograder, tmp_path, attack, GRADER_ISOLATION="rlimits")
    assert done.returncode == 0, done.stderr[-3000:]
    assert results["score"] == 0
    assert "refused in the rlimits tier" in assert_fallback(done, results)


def _fake_python(tmp_path, grading_body):
    """A GRADER_PYTHON whose `-m grader ...` runs ``grading_body`` (bash), any other call
    the real Python (so finish_results.py runs)."""
    return write(
        tmp_path / "python",
        f"""
        #!/usr/bin/env bash
        if [ "$1" = "-m" ]; then
        {grading_body}
        fi
        exec {sys.executable} "$@"
        """,
    )


@pytest.mark.parametrize(
    "body, expected",
    [
        # forged, then killed (the attack above, without depending on the tier)
        (
            'echo \'{"score": 999}\' > "$AUTOGRADER_ROOT/results/results.json"; kill -9 $$',
            "killed by SIGKILL",
        ),
        # a crash: an uncaught error exits 1, the code that means "below full marks"
        ('echo "Traceback (most recent call last): boom" >&2; exit 1', "without a usable report"),
        # a report that is not results (or a truncated one)
        ('for a in "$@"; do last="$p"; p="$a"; done; echo "{\\"score\\": " > "$p"; exit 0', "does not parse"),
        ("exit 3", "failed (exit 3"),
    ],
)
def test_every_failure_of_the_grader_gives_trusted_results(autograder, tmp_path, body, expected):
    python = _fake_python(tmp_path, body)
    os.chmod(python, 0o755)
    done, results, root = run_autograder(autograder, tmp_path, GOOD, python=python)
    assert expected in assert_fallback(done, results)
    leftovers = [p for p in os.listdir(root / "results") if p != "results.json"]
    assert not leftovers, leftovers


def test_no_python_at_all_still_gives_results(autograder, tmp_path):
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("mktemp", "mkdir", "chmod", "rm", "cat", "tail", "mv", "timeout"):
        found = shutil.which(tool)
        if found:
            os.symlink(found, tools / tool)
    done, results, _ = run_autograder(
        autograder, tmp_path, GOOD, python=str(tmp_path / "none"), PATH=str(tools)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert results["score"] == 0 and results["output"] == STUDENT_MESSAGE
    assert_only_documented_keys({**results, "test_output_format": "text"})


def test_gradescope_refuses_a_task_that_does_not_validate(autograder, tmp_path):
    task = make_task(
        tmp_path / "tasks" / "square",
        """
        id: square
        title: Square
        version: 1
        functions:
          square: [x]
        checks:
          - name: values
            kind: property
            call: square
            args:
              x: {array: {shape: [3]}}
            cases: 5
        """,
    )
    samples = tmp_path / "submissions" / "square"
    samples.mkdir(parents=True)
    write(samples / "wrong.py", "# expect: full marks\ndef square(x):\n    return x + 1\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "autograder.zip").write_bytes(b"the previous zip")
    grader = os.path.join(os.path.dirname(autograder["builder"]), "grader")
    # (frozen, so that what fails validation is the sample, not a missing freeze)
    subprocess.run([grader, "freeze", task], capture_output=True, env=clean_env(), check=True)
    done = subprocess.run(
        [grader, "gradescope", task, "-o", str(out / "autograder.zip")],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "does not validate" in done.stderr and "wrong.py" in done.stderr
    assert "Traceback" not in done.stderr
    assert os.listdir(out) == ["autograder.zip"]
    assert (out / "autograder.zip").read_bytes() == b"the previous zip"


def test_a_failed_build_leaves_no_partial_zip(autograder, tmp_path):
    task = tmp_path / "task"
    shutil.copytree(PE_TASK, task)
    os.symlink(tmp_path / "missing", task / "dangling")  # the zip cannot read it
    out = tmp_path / "out"
    grader = os.path.join(os.path.dirname(autograder["builder"]), "grader")
    done = subprocess.run(
        [
            grader,
            "gradescope",
            str(task),
            "-o",
            str(out / "autograder.zip"),
            "--samples",
            os.path.dirname(BAD),
            "--offline",
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
    )
    assert done.returncode == 2 and "cannot write" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not os.listdir(out)


# --------------------------------------------------------------------------- one zip, several tasks
# The tutorial's three tasks as one Gradescope assignment: a student uploads one file per task.

TUTORIAL_FILES = {
    "pe-table-shape": "table_shape.py",
    "pe-batch-sum": "batch_sum.py",
    "pe-row-length": "row_length.py",
}


def tutorial(task_id):
    return os.path.join(ROOT, "tasks", task_id)


def tutorial_sample(task_id, name):
    return os.path.join(ROOT, "submissions", task_id, name)


@pytest.fixture(scope="module")
def assignment(autograder, tmp_path_factory):
    """``grader gradescope`` of the three tutorial tasks, each grading its own file."""
    tmp = tmp_path_factory.mktemp("assignment")
    zip_path = tmp / "autograder.zip"
    grader = os.path.join(os.path.dirname(autograder["builder"]), "grader")
    files = [f"--file={task}={name}" for task, name in TUTORIAL_FILES.items()]
    done = subprocess.run(  # (--offline: the pins are the fixture autograder's business)
        [grader, "gradescope", *map(tutorial, TUTORIAL_FILES), *files, "-o", str(zip_path), "--offline"],
        cwd=str(tmp),
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    template = tmp / "template"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(template / "source")
    (template / "source" / "run_autograder").chmod(0o755)
    return {**autograder, "zip": zip_path, "template": template, "built": done}


def _totals():
    return {task: score_without(task=tutorial(task)) for task in TUTORIAL_FILES}


def test_the_build_says_what_students_upload(assignment):
    out = assignment["built"].stdout
    assert f"one assignment of 3 tasks on Gradescope ({sum(_totals().values()):g} points)" in out
    for task, name in TUTORIAL_FILES.items():
        assert f"task {task} ({_totals()[task]:g} points) grades the student's {name}" in out
    with zipfile.ZipFile(assignment["zip"]) as archive:
        names = set(archive.namelist())
        run = archive.read("run_autograder").decode()
    assert {f"tasks/{task}/task.yaml" for task in TUTORIAL_FILES} <= names
    assert "TASKS=(pe-table-shape pe-batch-sum pe-row-length)" in run
    assert "FILES=(table_shape.py batch_sum.py row_length.py)" in run


def test_one_zip_grades_three_tasks_into_one_results_json(assignment, container, tmp_path):
    upload = {
        "table_shape.py": tutorial_sample("pe-table-shape", "correct_numpy.py"),
        "batch_sum.py": tutorial_sample("pe-batch-sum", "mistake_wrong_rows.py"),
        "row_length.py": tutorial_sample("pe-row-length", "correct_len.py"),
    }
    done, results = run_in_container(assignment, container, "cgroup", tmp_path, upload)
    assert_only_documented_keys(results)
    totals = _totals()
    lost = score_without(task=tutorial("pe-batch-sum")) - score_without(
        "adds-the-first-three-rows", task=tutorial("pe-batch-sum")
    )
    assert results["score"] == sum(totals.values()) - lost
    assert sum(t["max_score"] for t in results["tests"]) == sum(totals.values())
    for task, total in totals.items():
        mine = [t for t in results["tests"] if t["name"].startswith(f"{task}: ")]
        assert sum(t["max_score"] for t in mine) == total
    assert all(t["name"].split(": ")[0] in totals for t in results["tests"])
    by_name = {t["name"]: t for t in results["tests"]}
    assert (
        by_name["pe-table-shape: prints-the-shape: the last line printed is the table's shape"]["number"]
        == "1.2"
    )
    assert by_name[next(n for n in by_name if n.startswith("pe-batch-sum: adds-the-first"))]["score"] == 0
    headings = re.findall(r"^(pe-[a-z-]+): \d+/\d+ \(", results["output"], re.M)
    assert headings == list(TUTORIAL_FILES), results["output"]
    shown = [results["output"]] + [json.dumps(t) for t in results["tests"] if t["visibility"] != "hidden"]
    assert not [text for text in shown if OPERATOR_WORDS.search(text)]
    assert set(results["extra_data"]["tasks"]) == set(TUTORIAL_FILES)
    assert {e["isolation"] for e in results["extra_data"]["tasks"].values()} == {"unprivileged"}


def test_a_hostile_upload_costs_only_its_own_tasks_points(assignment, container, tmp_path):
    """A link to the task's reference, an enormous file, a folder named like a task's file,
    a file named with control characters, a task's file holding another task's answer: each
    costs that task's points, with a message the student can act on; the run goes on."""

    def links_and_giants(upload, root):
        reference = root / "source" / "tasks" / "pe-table-shape" / "reference.py"
        (upload / "table_shape.py").symlink_to(reference)
        shutil.copy(tutorial_sample("pe-batch-sum", "correct_numpy.py"), upload / "batch_sum.py")
        (upload / "row_length.py").write_bytes(b"x = 1\n" * (1 << 19))  # 3 MiB

    done, results = run_in_container(
        assignment, container, "cgroup", tmp_path / "one", prepare=links_and_giants
    )
    assert_only_documented_keys(results)
    assert results["score"] == score_without(task=tutorial("pe-batch-sum"))
    by_task = {t["name"]: t for t in results["tests"] if t["name"].endswith(": submission")}
    assert set(by_task) == {"pe-table-shape: submission", "pe-row-length: submission"}
    assert "symbolic link" in by_task["pe-table-shape: submission"]["output"]
    assert "larger than" in by_task["pe-row-length: submission"]["output"]
    assert by_task["pe-row-length: submission"]["max_score"] == _totals()["pe-row-length"]
    assert "Trusted reference" not in json.dumps(results)  # nothing of the reference

    def misnamed(upload, root):
        shutil.copy(tutorial_sample("pe-batch-sum", "correct_numpy.py"), upload / "table_shape.py")
        (upload / "batch_sum.py").mkdir()
        shutil.copy(tutorial_sample("pe-row-length", "correct_len.py"), upload / "row\x1b[2Jlength.py")

    done, results = run_in_container(assignment, container, "cgroup", tmp_path / "two", prepare=misnamed)
    assert_only_documented_keys(results)
    tests = {t["name"]: t for t in results["tests"]}
    # batch-sum's answer in table-shape's file: graded against table-shape, and wrong there
    shape = tests["pe-table-shape: prints-the-shape: the last line printed is the table's shape"]
    assert shape["status"] == "failed" and "pe-table-shape: submission" not in tests
    assert results["score"] < _totals()["pe-table-shape"] and results["output"] != STUDENT_MESSAGE
    assert "is a folder" in tests["pe-batch-sum: submission"]["output"]
    missing = tests["pe-row-length: submission"]["output"]
    assert "no file named row_length.py was handed in" in missing
    assert "row\\x1b[2Jlength.py" in missing and "\x1b" not in json.dumps(results)
    assert "no file named row_length.py" in results["output"]  # said where the student looks first
