"""A kit on a student's own machine (issue 25): where no sandboxed tier can start (macOS,
Windows), `grader check` of a kit grades it unsandboxed, with the score the sandbox gives
and the report saying so; nothing else is ever graded there, whatever is asked.

The missing platform is simulated on this Linux machine: tests/without_posix/ put first on
PYTHONPATH takes away, from `grader check` and from the worker it starts (which inherits
the environment), resource, fcntl, os.fork, descriptor passing, AF_UNIX, MSG_DONTWAIT,
os.pread, os.killpg, os.getuid, preexec_fn and pass_fds, and makes the Landlock and
bubblewrap probes say no.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from helpers.cli import run_cli
from helpers.paths import COURSE, INSTRUCTOR_TASKS, ROOT
from helpers.tasks import WRONG_NORMALIZE, course_with_full_tasks, write

from grader.authoring import load_task
from grader.integrations import gradescope_build, gradescope_finish

SHIM = os.path.join(ROOT, "tests", "without_posix")
ELSEWHERE = {"PYTHONPATH": os.pathsep.join([SHIM, ROOT])}  # a Python as on macOS or Windows
KIT = os.path.join(COURSE, "tasks", "normalize-rows")
FULL = os.path.join(INSTRUCTOR_TASKS, "normalize-rows")
CORRECT = os.path.join(COURSE, "solutions", "normalize-rows.py")
HOME_NOTE = "graded unsandboxed: your own machine; your instructor grades in the sandbox"
KIT_ONLY = (
    "grader: the unsandboxed tier grades only a student kit (a task without a reference or "
    "hidden checks) checked by its own student on their own machine (grader check without "
    "--others-work, grader ci of a course without hidden checks); this grade is not one"
)
ASKED_FOR_KIT_ONLY = f"{KIT_ONLY}: drop --isolation unsandboxed.\n"
OTHERS_WORK = (
    "grader: grading someone else's work is refused in the unsandboxed tier, where the "
    "submission runs as the grader with nothing between them; drop --isolation unsandboxed.\n"
)


def _json(done):
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(params=["correct", "wrong"])
def solution(request, tmp_path):
    if request.param == "correct":
        return CORRECT
    return write(tmp_path / "in_place.py", WRONG_NORMALIZE)


def test_a_kit_is_graded_unsandboxed_with_the_score_the_sandbox_gives(solution):
    sandboxed = _json(run_cli("check", KIT, solution, "--format", "json"))
    done = run_cli("check", KIT, solution, "--format", "json", env=ELSEWHERE)
    home = _json(done)
    assert sandboxed["isolation"] != "unsandboxed" and home["isolation"] == "unsandboxed"
    assert home["isolation_note"].startswith(f"{HOME_NOTE} (none works here: this system cannot start")
    assert f"grader: note: {HOME_NOTE}" in done.stderr
    assert home["score"] == sandboxed["score"] and home["max_score"] == sandboxed["max_score"]
    assert [(c["name"], c["status"], c["score"]) for c in home["checks"]] == [
        (c["name"], c["status"], c["score"]) for c in sandboxed["checks"]
    ]
    if solution != CORRECT:  # the mutation check saw the change in the arguments sent back
        lost = {c["name"] for c in home["checks"] if c["status"] != "passed"}
        assert "input-untouched" in lost, home


def test_every_format_says_first_that_it_was_graded_unsandboxed(tmp_path):
    text = run_cli("check", KIT, CORRECT, env=ELSEWHERE)
    assert text.returncode == 0, text.stderr
    first = text.stdout.splitlines()[:2]
    assert first[0].endswith("(isolation: unsandboxed)") and first[1].startswith(f"note: {HOME_NOTE}")
    outputs = {}
    for fmt in ("junit", "gradescope", "html"):
        out = tmp_path / f"report.{fmt}"
        done = run_cli("check", KIT, CORRECT, "--format", fmt, "-o", str(out), env=ELSEWHERE)
        assert done.returncode == 0, done.stderr
        outputs[fmt] = out.read_text()
    properties = {p.get("name"): p.get("value") for p in ET.fromstring(outputs["junit"]).iter("property")}
    assert properties["isolation"] == "unsandboxed" and properties["isolation_note"].startswith(HOME_NOTE)
    gradescope = json.loads(outputs["gradescope"])  # how it was graded: for instructors, never the output
    assert gradescope["extra_data"]["isolation"] == "unsandboxed"
    assert gradescope["extra_data"]["isolation_note"].startswith(HOME_NOTE)
    assert HOME_NOTE not in gradescope["output"]
    assert "isolation: unsandboxed" in outputs["html"] and f"note: {HOME_NOTE}" in outputs["html"]


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_looping_solution_is_stopped_by_its_time_limit_with_what_it_started(tmp_path):
    pids = tmp_path / "pids"
    loop = write(
        tmp_path / "loops.py",
        f"""
        import subprocess, sys
        import numpy as np

        def normalize_rows(m):
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
            with open({str(pids)!r}, "a") as f:
                f.write(f"{{__import__('os').getpid()}} {{child.pid}}\\n")
            while True:
                pass
        """,
    )
    since = time.monotonic()
    done = run_cli("check", KIT, loop, "--call-seconds", "2", "--format", "json", env=ELSEWHERE)
    report = _json(done)
    assert time.monotonic() - since < 60
    assert report["isolation"] == "unsandboxed" and report["score"] == 0
    example = next(c for c in report["checks"] if c["name"] == "example")
    assert "did not finish within 2 s" in example["message"], example
    started = [int(p) for line in pids.read_text().split() for p in [line]]
    assert started and not any(_alive(pid) for pid in started), started  # the worker, and its child


# The modules `grader check` imports, listed by running it in this process's Python (the
# sandboxed tiers' modules) and in the simulated one (the unsandboxed tier's).
IMPORTED = """
import json, sys
from grader.cli import main
main(sys.argv[1:])
print(json.dumps(sorted(n for n in sys.modules if n == "grader" or n.startswith("grader."))))
"""
IMPORTS_EACH = """
import importlib, json, os, sys
failed = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
sys.path.insert(0, sys.argv[2])  # the worker's own, as it imports them (by top-level name)
for name in ("connect_back", "worker", "limits", "shared", "wire"):
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failed["inside/" + name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failed))
"""


def _python(code, *args, env=None):
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT, **(env or {})},
        timeout=300,
    )


def test_every_module_grader_check_imports_imports_without_the_posix_pieces():
    modules = set()
    for env in (None, ELSEWHERE):
        done = _python(IMPORTED, "check", KIT, CORRECT, "--format", "json", env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        modules |= set(json.loads(done.stdout.splitlines()[-1]))
    for name in (
        "grader.sandbox.process",
        "grader.sandbox.plain_worker",
        "grader.sandbox.tiers.landlock",
        "grader.sandbox.inside.limits",
        "grader.sandbox.inside.shared",
        "grader.submission.bounded",
        "grader.grading.shrinking.lanes",
    ):
        assert name in modules, name
    inside = os.path.join(ROOT, "grader", "sandbox", "inside")
    done = _python(IMPORTS_EACH, json.dumps(sorted(modules)), inside, env=ELSEWHERE)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == {}


def test_the_simulated_platform_lacks_what_it_says():
    """The control: the shim really takes the pieces away, in the grader and in what it
    starts (so the tests above can fail)."""
    code = (
        "import os, socket, subprocess, sys\n"
        "try:\n    import resource\nexcept ImportError:\n    resource = None\n"
        "print(resource is None, hasattr(os, 'fork'), hasattr(socket, 'send_fds'), hasattr(os, 'pread'))\n"
        "try:\n    subprocess.Popen(['true'], preexec_fn=lambda: None)\nexcept ValueError:\n    print('refused')\n"
        "from grader.sandbox import tier\n"
        "print(tier('bubblewrap').works(), tier('landlock').works(), tier('rlimits').works())"
    )
    done = _python(code, env=ELSEWHERE)
    assert done.stdout.split() == ["True", "False", "False", "False", "refused", "False", "False", "False"], (
        done.stderr
    )


def test_a_students_own_course_of_kits_is_graded_unsandboxed_by_grader_ci():
    done = run_cli("ci", COURSE, "--min-score", "80", env=ELSEWHERE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "normalize-rows" in done.stdout and "(unsandboxed)" in done.stdout


# --------------------------------------------------------------------------- never for anything else


def test_a_full_task_is_never_graded_unsandboxed_asked_for_or_not(tmp_path):
    for extra, env in (
        (["--isolation", "unsandboxed"], None),
        ([], {"GRADER_ISOLATION": "unsandboxed"}),
        (["--isolation", "unsandboxed"], ELSEWHERE),
    ):
        done = run_cli("check", FULL, CORRECT, *extra, env=env)
        assert (done.returncode, done.stderr) == (2, ASKED_FOR_KIT_ONLY), done.stderr
    # Where no sandbox can start, auto refuses it rather than fall to unsandboxed.
    done = run_cli("check", FULL, CORRECT, env=ELSEWHERE)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("grader: no sandboxed tier works here (this system cannot start")
    assert done.stderr.endswith(f"). {KIT_ONLY[len('grader: ') :]}.\n")
    # A kit that holds a reference after all (or a hidden check) is a full task.
    kit = tmp_path / "kit"
    shutil.copytree(KIT, kit)
    shutil.copy(os.path.join(FULL, "reference.py"), kit / "reference.py")
    for env in (None, ELSEWHERE):
        done = run_cli("check", str(kit), CORRECT, "--isolation", "unsandboxed", env=env)
        assert (done.returncode, done.stderr) == (2, ASKED_FOR_KIT_ONLY)


def test_someone_elses_work_is_never_graded_unsandboxed(tmp_path):
    """--others-work (Gradescope's), a batch (trusted or not), CI with hidden checks: each
    refused, by flag, environment variable or where nothing else works, kit or not."""
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    shutil.copy(CORRECT, class_dir / "alice.py")
    course = course_with_full_tasks(tmp_path / "course")
    attempts = {
        "others-work": ["check", KIT, CORRECT, "--others-work"],
        "others-work, shared state accepted": [
            "check",
            KIT,
            CORRECT,
            "--others-work",
            "--allow-shared-state",
        ],
        "batch": ["batch", KIT, str(class_dir), "--out", str(tmp_path / "out")],
        "ci, hidden checks": ["ci", str(course)],
    }
    for what, args in attempts.items():
        for flags, env in ((["--isolation", "unsandboxed"], None), ([], {"GRADER_ISOLATION": "unsandboxed"})):
            done = run_cli(*args, *flags, env=env)
            assert (done.returncode, done.stderr) == (2, OTHERS_WORK), (what, flags, done.stderr)
        done = run_cli(*args, env=ELSEWHERE)  # nothing but unsandboxed works: refused all the same
        assert done.returncode == 2, (what, done.stdout + done.stderr)
        assert done.stderr.startswith("grader: no tier that protects the task and the results works here")
        assert "grading someone else's work is refused in the unsandboxed tier" in done.stderr
    # A batch of files the instructor trusts is still not a student's own check.
    trusted = ["batch", KIT, str(class_dir), "--out", str(tmp_path / "out"), "--trusted-submissions"]
    for flags, env in (
        (["--isolation", "unsandboxed"], None),
        ([], {**ELSEWHERE, "GRADER_ISOLATION": "unsandboxed"}),
    ):
        done = run_cli(*trusted, *flags, env=env)
        assert (done.returncode, done.stderr) == (2, ASKED_FOR_KIT_ONLY), done.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("grades*.csv"))


def test_gradescope_s_run_autograder_never_grades_unsandboxed(tmp_path):
    """The autograder as Gradescope runs it, over a kit, told GRADER_ISOLATION=unsandboxed,
    on a machine where nothing else works: no grade, a results.json that says so."""
    root = tmp_path / "autograder"
    source = root / "source"
    kit = load_task(KIT)
    shutil.copytree(KIT, source / "tasks" / kit.id)
    (source / "finish_results.py").write_text(open(gradescope_finish.__file__).read())
    script = source / "run_autograder"
    script.write_text(gradescope_build.run_autograder([gradescope_build.Part(kit)]))
    shutil.copy(CORRECT, root / "submission")
    for env in ({"GRADER_ISOLATION": "unsandboxed"}, {**ELSEWHERE, "GRADER_ISOLATION": "unsandboxed"}):
        done = subprocess.run(
            ["bash", str(script)],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, AUTOGRADER_ROOT=str(root), GRADER_PYTHON=sys.executable, **env),
        )
        assert done.returncode == 0, done.stdout + done.stderr
        results = json.loads((root / "results" / "results.json").read_text())
        assert results["score"] == 0 and results["tests"][0]["status"] == "failed", results
        assert "refused in the unsandboxed tier" in json.dumps(results), results
