"""Hostile submissions, round two: the file itself (links, special files, size), hidden
checks' inputs, and what hides imports from the scan. Each attack is run under every
sandbox tier and mode that works here, through the commands that grade other people's
work (check as Gradescope runs it, batch, ci)."""

import csv
import json
import os
import shutil
import textwrap

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT
from helpers.tasks import as_cell, make_task, score_without, write
from helpers.tiers import runtime_mount_points_in_tmp
from test_adversarial import ZEROS, grade_attack

CORRECT = os.path.join(PE_SAMPLES, "correct_vectorized.py")
REFERENCE = os.path.join(PE_TASK, "reference.py")


def isolation(tier):
    return ["--isolation", str(tier)] + ([] if getattr(tier, "warm", False) else ["--no-warm"])


def batch(tmp_path, tier, klass):
    out = tmp_path / "out"
    args = [
        "batch",
        PE_TASK,
        str(klass),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--force",
        "--isolation",
        str(tier),
    ]
    if not getattr(tier, "warm", False):
        args.append("--no-warm")
    if tier == "rlimits":  # refused for a class unless asked for (test_unsafe_tiers.py)
        args.append("--trusted-submissions")
    done = run_cli(*args, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    with open(out / "grades-positional-encoding.csv", newline="") as f:
        grades = {r["student"]: r for r in csv.DictReader(f)}
    reports = {
        json.loads(line)["student"]: json.loads(line)
        for line in (out / "reports-positional-encoding.jsonl").read_text().splitlines()
    }
    return grades, reports, done


def check(tier, *args):
    return run_cli("check", PE_TASK, *args, "--isolation", str(tier), timeout=120)


# --------------------------------------------------------------------------- the file itself


def test_a_link_to_the_reference_is_refused_by_check(tmp_path, tier):
    link = tmp_path / "solution.py"
    link.symlink_to(REFERENCE)
    done = check(tier, str(link), "--format", "json")
    assert done.returncode == 2 and done.stdout == ""
    assert "symbolic link" in done.stderr and "solution.py" in done.stderr


def test_a_link_as_solution_py_in_a_folder_scores_nothing_on_gradescope(tmp_path, tier):
    """Gradescope hands over /autograder/submission, a folder the student fills."""
    upload = tmp_path / "submission"
    upload.mkdir()
    (upload / "solution.py").symlink_to(REFERENCE)
    results = tmp_path / "results.json"
    done = check(tier, str(upload), "--format", "gradescope", "--output", str(results))
    assert done.returncode == 2
    graded = json.loads(results.read_text())
    assert graded["score"] == 0 and "symbolic link" in graded["output"]


def test_a_link_to_a_secret_of_the_machine_shows_nothing_of_it(tmp_path, tier):
    secret = tmp_path / "grading-key.txt"
    secret.write_text("TOP_SECRET_VALUE_42 = undefined_name\n")  # a NameError would quote it
    secret.chmod(0o600)
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "mallory.py").symlink_to(secret)
    shutil.copy(CORRECT, klass / "alice.py")
    grades, reports, done = batch(tmp_path, tier, klass)
    assert grades["mallory"]["score"] == "0" and grades["mallory"]["status"] == "error"
    assert "symbolic link" in reports["mallory"]["checks"][0]["message"]
    assert grades["alice"]["score"] == as_cell(score_without())
    everything = (
        done.stdout
        + done.stderr
        + "".join(
            p.read_text(errors="replace")
            for p in (tmp_path / "out").rglob("*")  # the pages too
            if p.is_file() and p.suffix != ".sqlite"
        )
    )
    assert "TOP_SECRET_VALUE_42" not in everything


def test_links_fifos_and_devices_in_a_class_folder_cost_only_their_own_grade(tmp_path, tier):
    klass = tmp_path / "class"
    klass.mkdir()
    shutil.copy(CORRECT, klass / "alice.py")
    (klass / "bob.py").symlink_to(REFERENCE)
    os.mkfifo(klass / "carol.py")  # would block whoever opens it
    (klass / "dave.py").symlink_to("/dev/zero")  # would never end
    (klass / "erin").mkdir()
    (klass / "erin" / "solution.py").symlink_to(REFERENCE)
    (klass / "frank").symlink_to(os.path.dirname(REFERENCE))  # a folder that is a link
    (klass / "gina.py").write_bytes(b"#" * (2 << 20))  # 2 MiB
    grades, reports, _ = batch(tmp_path, tier, klass)
    assert grades["alice"]["score"] == as_cell(score_without())
    for student in ("bob", "carol", "dave", "erin", "frank", "gina"):
        assert grades[student]["score"] == "0", student
        assert grades[student]["status"] == "error", student
    assert "FIFO" in reports["carol"]["checks"][0]["message"]
    assert "larger than" in reports["gina"]["checks"][0]["message"]


def test_a_linked_solution_in_a_course_repository_scores_nothing(tmp_path, tier):
    course = tmp_path / "course"
    shutil.copytree(os.path.join(ROOT, "examples", "course"), course)
    task_id = os.listdir(course / "tasks")[0]
    solution = course / "solutions" / f"{task_id}.py"
    solution.unlink(missing_ok=True)
    solution.symlink_to(os.path.join(ROOT, "examples", "course-instructor", "tasks", task_id, "reference.py"))
    done = run_cli("ci", str(course), "--min-score", "1", "--isolation", str(tier), timeout=180)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "total 0/" in done.stdout


def test_the_worker_sees_a_private_copy_not_the_original_file(tmp_path, tier):
    """The sandbox is sent the submission's bytes: even a regular file's own folder (its
    classmates, the course) is never shown to the worker."""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "classmate.py").write_text("ANSWER = 42\n")
    runtime = sorted(runtime_mount_points_in_tmp())  # (the grader's runtime, bound read-only)
    report, _ = grade_attack(
        tmp_path,
        tier,
        ZEROS
        + textwrap.dedent(f"""
        import os
        _mine = sorted(os.listdir(os.path.dirname(os.path.abspath(__file__))))
        _mine = [n for n in _mine if n not in {runtime!r}]
        if _mine != ["submission.py"]:
            raise SystemExit("saw " + ",".join(_mine))
    """),
    )
    assert report["checks"][0]["status"] == "passed", report["checks"][0]


# --------------------------------------------------------------------------- hidden checks

HIDDEN_TASK = """
id: hidden-order
title: Square every entry
version: 1
functions:
  square: [x]
imports: {allowed: [numpy]}
checks:
  - name: hidden-case
    kind: example
    hidden: true
    call: square
    args: {x: {array: {value: [4321.5, 8765.25]}}}
  - name: visible-case
    kind: example
    call: square
    args: {x: {array: {value: [1.0, 2.0]}}}
"""

RECORDER = """
import numpy as np

seen = []

def square(x):
    if x.tolist() == [1.0, 2.0]:
        raise ValueError("I was called with " + repr(seen))
    seen.append(x.tolist())
    return np.asarray(x, dtype=float) ** 2
"""


def test_hidden_inputs_never_reach_a_visible_check(tmp_path, tier):
    task = make_task(tmp_path / "task", HIDDEN_TASK)
    path = write(tmp_path / "recorder.py", RECORDER)
    for view in ([], ["--staff"]):
        done = run_cli("check", task, path, "--format", "json", *view, *isolation(tier)[:2])
        report = json.loads(done.stdout)
        visible = next(c for c in report["checks"] if c["name"] == "visible-case")
        assert "4321.5" not in visible["message"], visible
        assert "I was called with []" in visible["message"]
        assert [c["name"] for c in report["checks"]] == ["loads", "hidden-case", "visible-case"]
    assert "4321.5" not in run_cli("check", task, path, *isolation(tier)[:2]).stdout


TIMER = """
import time
import numpy as np

def square(x):
    print("the input is", x.tolist())
    time.sleep(float(x[0]) / 10000)    # 0.43 s on the hidden case: its time tells its input
    return np.asarray(x, dtype=float) ** 2
"""


def test_hidden_inputs_leak_neither_through_output_nor_time(tmp_path):
    task = make_task(tmp_path / "task", HIDDEN_TASK.replace("allowed: [numpy]", "allowed: [numpy, time]"))
    path = write(tmp_path / "timer.py", TIMER)
    staff = json.loads(run_cli("check", task, path, "--format", "json", "--staff").stdout)
    hidden = next(c for c in staff["checks"] if c["name"] == "hidden-case")
    assert hidden["status"] == "passed" and hidden["seconds"] >= 0.4
    for fmt in ("json", "gradescope"):
        shown = run_cli("check", task, path, "--format", fmt).stdout
        assert "4321.5" not in shown
        report = json.loads(shown)
        if fmt == "json":
            hidden = next(c for c in report["checks"] if c["name"] == "hidden-case")
            assert hidden["status"] == "passed" and hidden["seconds"] == 0, hidden
            # The total is the visible checks' time (whatever a busy machine makes of it);
            # tests/unit/test_redact.py shows the same total reaches results.json.
            shown = sum(c["seconds"] for c in report["checks"])
            assert report["seconds"] == pytest.approx(shown, abs=0.01), report


# A file that answers a hidden case in a way chosen by its input: the line it raises on,
# whether it raises, loops or returns a wrong value, how many cases pass before it fails.
MODULATOR = """
import numpy as np

def _raise_here():
    raise ValueError("boom")

def _raise_there():
    raise ValueError("boom")

def square(x):
    first = float(np.ravel(x)[0])
    if first == 4321.5:
        _raise_here()
    if first == 1234.5:
        _raise_there()
    if first == 2222.0:
        while True:
            pass
    if first == 3333.0:
        return np.zeros_like(x)
    return np.asarray(x, dtype=float) ** 2
"""


def test_a_hidden_check_tells_a_submission_nothing_but_passed_or_failed(tmp_path, plain_tier):
    """The student's report of a hidden check is the same whichever way the submission
    failed it (it could otherwise spell the hidden input in its line, reason or count)."""
    path = write(tmp_path / "modulator.py", MODULATOR)
    seen = {}
    for value in (4321.5, 1234.5, 2222.0, 3333.0):
        task = make_task(tmp_path / f"task-{value}", HIDDEN_TASK.replace("4321.5", str(value)))
        for fmt in ("json", "gradescope", "text"):
            done = run_cli(
                "check", task, path, "--format", fmt, "--call-seconds", "1", *isolation(plain_tier)[:2]
            )
            assert done.returncode == 1, done.stderr
            if fmt == "json":
                shown = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "hidden-case")
            elif fmt == "gradescope":
                shown = next(t for t in json.loads(done.stdout)["tests"] if "hidden-case" in t["name"])
            else:
                shown = next(line for line in done.stdout.splitlines() if "hidden-case" in line)
            seen.setdefault(fmt, []).append(shown)
    for fmt, views in seen.items():
        assert all(view == views[0] for view in views), (fmt, views)
    staff = json.loads(
        run_cli(
            "check",
            make_task(tmp_path / "staff", HIDDEN_TASK),
            path,
            "--format",
            "json",
            "--staff",
            *isolation(plain_tier)[:2],
        ).stdout
    )
    assert next(c for c in staff["checks"] if c["name"] == "hidden-case")["line"] is not None


def test_a_visible_check_may_not_need_a_hidden_one(tmp_path):
    task = make_task(tmp_path / "task", HIDDEN_TASK + "    needs: [hidden-case]\n")
    done = run_cli("validate", task)
    assert done.returncode == 2
    assert "'hidden-case' is hidden" in done.stderr and "task.yaml:" in done.stderr


# --------------------------------------------------------------------------- the import scan


def imports_check(report):
    return next(c for c in report["checks"] if c["name"] == "numpy-only")


HIDDEN_IMPORTS = {
    "utf-7 cookie": (b"# coding: utf-7\n" + ZEROS.encode() + b"x = 1 +AAo-import os, socket\n"),
    "exec of hex": (ZEROS + "exec(bytes.fromhex('696d706f7274206f73').decode())\n").encode(),
    "numpy.ctypeslib": (ZEROS + "_lib = np.ctypeslib\n").encode(),
    "numpy.f2py": (ZEROS + "from numpy import f2py\n").encode(),
    "builtins lookup": (
        ZEROS + "_imp = __builtins__['__imp' + 'ort__'] if isinstance("
        "__builtins__, dict) else getattr(__builtins__, '__imp' + 'ort__')\n"
        "_imp('o' + 's')\n"
    ).encode(),
    "builtins through globals()": (ZEROS + "globals()['__builtins__']['__import__']('os')\n").encode(),
    "a module as an attribute": (
        ZEROS + "_core = np._core if hasattr(np, '_core') else np.core\n_core.records.os.getpid()\n"
    ).encode(),
    "a frame walk": (
        ZEROS + "try:\n    raise ValueError\nexcept ValueError as e:\n"
        "    _up = e.__traceback__.tb_frame.f_back\n"
    ).encode(),
    "an attribute with a computed name": (ZEROS + "_x = getattr(np, ''.join(['c', 'types']))\n").encode(),
    "the builtins dict by its string": (ZEROS + "_b = vars(np.ma.core)\n").encode(),
    "a module imported as a name": (ZEROS + "from typing import sys\n").encode(),
    "getattr passed around": (ZEROS + "_g = getattr\n_x = _g(np, 'c' + 'types')\n").encode(),
}


@pytest.mark.parametrize("attack", sorted(HIDDEN_IMPORTS))
def test_what_hides_an_import_from_the_scan_loses_the_point(tmp_path, tier, attack):
    path = tmp_path / "hider.py"
    path.write_bytes(HIDDEN_IMPORTS[attack])
    done = check(tier, str(path), "--format", "json")
    report = json.loads(done.stdout)
    assert imports_check(report)["status"] != "passed", imports_check(report)


def test_a_route_out_taken_at_run_time_is_seen(tmp_path, tier):
    """Spelled so that the scan cannot see it: the worker's record of what the call did."""
    path = write(
        tmp_path / "runtime.py",
        ZEROS.replace(
            "    return np.zeros((max_len, d_model))",
            "    getattr(getattr(np, 'ctypes' + 'lib'), 'c' + 'types').CDLL(None)\n"
            "    return np.zeros((max_len, d_model))",
        ),
    )
    report = json.loads(check(tier, path, "--format", "json").stdout)
    assert imports_check(report)["status"] == "failed"
    assert "ctypes.dlopen() (called while running)" in imports_check(report)["message"]


@pytest.mark.parametrize("codec", ["undefined", "punycode", "utf-7"])
def test_a_codec_that_raises_costs_only_the_file(tmp_path, codec):
    path = tmp_path / "coded.py"
    path.write_bytes(f"# coding: {codec}\n".encode() + ZEROS.encode())
    for fmt in ("json", "gradescope"):
        done = run_cli("check", PE_TASK, str(path), "--format", fmt)
        assert done.returncode == 1, done.stderr[-2000:]
        assert json.loads(done.stdout)["score"] == 0


def test_source_is_read_as_python_reads_it(tmp_path, tier):
    with open(CORRECT, "rb") as f:
        correct = f.read()
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + correct)  # Windows Notepad's UTF-8
    declared = tmp_path / "declared.py"
    declared.write_bytes(b"# -*- coding: cp1251 -*-\n# \xef\xf0\xe8\xec\xe5\xf0\n" + correct)
    undeclared = tmp_path / "undeclared.py"
    undeclared.write_bytes(b"# \xef\xf0\xe8\xec\xe5\xf0\n" + correct)  # Python refuses this file
    assert json.loads(check(tier, str(bom), "--format", "json").stdout)["score"] == score_without()
    assert json.loads(check(tier, str(declared), "--format", "json").stdout)["score"] == score_without()
    refused = json.loads(check(tier, str(undeclared), "--format", "json").stdout)
    assert refused["score"] == 0 and refused["status"] == "error"
    assert "not valid UTF-8" in refused["checks"][0]["message"]
