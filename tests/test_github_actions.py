"""GitHub runners: annotations as the runner parses them (escaped, workspace-relative,
capped at GitHub's limit with a notice), JUnit that links to the student's code, and an
example workflow that makes bubblewrap work on ubuntu-24.04."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT, course_with_full_tasks
from grader.report import github
from grader.result import FAILED, PASSED, CheckResult, Result

COURSE = os.path.join(ROOT, "examples", "course")


def parse_command(line: str):
    """A workflow command as actions/runner reads it (ActionCommand.TryParseV2): the
    properties end at the first '::' after the command, split at ',' then at the first '=',
    and are unescaped like the data (%0D, %0A, %3A, %2C, then %25)."""
    assert line.startswith("::"), line
    end = line.index("::", 2)
    head, data = line[2:end], line[end + 2:]
    kind, _, props = head.partition(" ")
    properties = {}
    for pair in filter(None, props.split(",")):
        key, value = pair.split("=", 1)
        properties[key] = _unescape(value, prop=True)
    return kind, properties, _unescape(data, prop=False)


def _unescape(text, prop):
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
    for escaped, char in pairs + [("%25", "%")]:
        text = text.replace(escaped, char)
    return text


def _result(path, checks, task="t"):
    return Result(task=task, submission=str(path), score=0, max_score=1, status=FAILED,
                  isolation="bubblewrap", checks=checks)


def _failed(name, message="wrong", line=None, function=None):
    return CheckResult(name, FAILED, 0.0, 1.0, message=message, line=line, function=function)


def test_annotation_properties_survive_commas_colons_and_percents(tmp_path):
    folder = tmp_path / "solutions" / "t"
    folder.mkdir(parents=True)
    path = folder / "a,b:c%41 d.py"
    path.write_text("def f():\n    return 1\n")
    check = _failed("x:y,z", "50% done\nline two::error file=forged.py::boo", function="f")
    [line] = github.annotations([_result(path, [check], task="t,1:2")], str(tmp_path))
    assert "\n" not in line
    kind, props, data = parse_command(line)
    assert kind == "error"
    assert props == {"file": "solutions/t/a,b:c%41 d.py", "line": "1", "title": "t,1:2: x:y,z"}
    assert data == "50% done\nline two::error file=forged.py::boo"


def test_annotation_points_at_the_line_that_raised_else_the_definition(tmp_path):
    path = tmp_path / "s.py"
    path.write_text("import numpy\n\n\ndef f(x):\n    return x\n")
    lines = github.annotations([_result(path, [_failed("a", line=5, function="f"),
                                               _failed("b", function="f"),
                                               _failed("c")])], str(tmp_path))
    assert [parse_command(a)[1]["line"] for a in lines] == ["5", "4", "1"]


def test_more_than_ten_failures_give_ten_annotations_and_a_notice(tmp_path):
    path = tmp_path / "s.py"
    path.write_text("x = 1\n")
    checks = [_failed(f"check-{i}") for i in range(15)] + [
        CheckResult("fine", PASSED, 1.0, 1.0)]
    lines = github.annotations([_result(path, checks[:8]), _result(path, checks[8:])],
                               str(tmp_path))
    parsed = [parse_command(a) for a in lines]
    assert [kind for kind, _, _ in parsed] == ["error"] * 10 + ["notice"]
    notice = parsed[-1][2]
    assert "5 more failed checks" in notice and "step summary" in notice
    # Errors count in order: the first ten failures are the ones annotated.
    assert [p["title"] for _, p, _ in parsed[:10]] == [f"t: check-{i}" for i in range(10)]
    assert len(github.annotations([_result(path, checks[:10])], str(tmp_path))) == 10


def test_paths_are_relative_to_the_workspace_not_the_ci_root(tmp_path, monkeypatch):
    course = tmp_path / "repo" / "courses" / "spring"
    (course / "solutions").mkdir(parents=True)
    path = course / "solutions" / "t.py"
    path.write_text("x = 1\n")
    result = _result(path, [_failed("a")])
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "repo"))
    assert github.workspace_of(str(course)) == str(tmp_path / "repo")
    [line] = github.annotations([result], github.workspace_of(str(course)))
    assert parse_command(line)[1]["file"] == "courses/spring/solutions/t.py"
    # Without $GITHUB_WORKSPACE: the git repository holding the ci root.
    monkeypatch.delenv("GITHUB_WORKSPACE")
    (tmp_path / "repo" / ".git").mkdir()
    assert github.workspace_of(str(course)) == os.path.realpath(tmp_path / "repo")
    # A file outside the workspace cannot be linked: the annotation goes without file=.
    [line] = github.annotations([result], str(tmp_path / "elsewhere"))
    kind, props, _ = parse_command(line)
    assert kind == "error" and "file" not in props and "line" not in props


WRONG_NORMALIZE = """
import numpy as np

def normalize_rows(m):
    m /= np.linalg.norm(m, axis=1, keepdims=True)   # in place, and rows of zeros become NaN
    return m
"""


def test_ci_annotations_in_a_course_below_the_repository_root(tmp_path):
    repo = tmp_path / "repo"
    course = course_with_full_tasks(repo / "course")
    (course / "solutions" / "normalize-rows.py").write_text(WRONG_NORMALIZE)
    env = dict(os.environ, GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(repo), PYTHONPATH=ROOT,
               GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    done = subprocess.run([sys.executable, "-m", "grader", "ci", "course", "--min-score", "80"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    commands = [parse_command(line) for line in done.stdout.splitlines() if line.startswith("::")]
    assert commands and all(props["file"] == "course/solutions/normalize-rows.py"
                            for _, props, _ in commands), commands


# --------------------------------------------------------------------------- JUnit

RAISES = """import numpy as np
print("imported <ok> & \\x1b[2J")

def normalize_rows(m):
    print("rows:", len(m), "]]>")
    raise ValueError("no </failure> here")
"""


def test_junit_cases_carry_file_line_and_what_the_code_printed(tmp_path):
    import xml.etree.ElementTree as ET
    repo = tmp_path / "repo"
    course = course_with_full_tasks(repo / "course")
    (course / "solutions" / "normalize-rows.py").write_text(RAISES)
    env = dict(os.environ, GITHUB_WORKSPACE=str(repo), PYTHONPATH=ROOT)
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run([sys.executable, "-m", "grader", "ci", "course", "--junit", "junit.xml"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    suite = ET.parse(repo / "junit.xml").getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert all(c.get("file") == "course/solutions/normalize-rows.py" for c in cases.values())
    visible = [c for c in cases.values() if c.find("failure") is not None and c.get("name") != "zero-rows"]
    assert visible and all(c.get("line") == "6" for c in visible)  # the raise, not the def
    assert all(c.find("system-out").text.startswith("rows: ") for c in visible)
    assert "]]>" in visible[0].find("system-out").text          # escaped, not a CDATA break
    # A hidden check links to the file but shows nothing it printed.
    assert cases["zero-rows"].find("failure") is not None
    assert cases["zero-rows"].find("system-out") is None and cases["zero-rows"].get("line") != "6"
    passed = [c for c in cases.values() if c.find("failure") is None and c.find("error") is None]
    assert all(c.get("line") is None for c in passed)
    out = suite.find("system-out").text                        # printed at import
    assert out.startswith("imported <ok> & \\x1b[2J") and "\x1b" not in out


# --------------------------------------------------------------------------- --require-sandbox

def _fake_bwrap(tmp_path, complaint="bwrap: setting up uid map: Permission denied"):
    path = tmp_path / "bwrap"
    path.write_text(f"#!/bin/sh\necho '{complaint}' >&2\nexit 1\n")
    path.chmod(0o755)
    return str(path)


def _sysctls(tmp_path, **values):
    root = tmp_path / "sys"
    for name, value in values.items():
        file = root.joinpath(*name.split("__"))
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(f"{value}\n")
    root.mkdir(exist_ok=True)
    return str(root)


def test_refusal_names_the_apparmor_restriction_and_the_sysctl(tmp_path, monkeypatch):
    from grader.sandbox import SandboxUnavailable, choose_tier, tier, userns
    root = _sysctls(tmp_path, kernel__apparmor_restrict_unprivileged_userns=1)
    text = userns.why_bubblewrap_fails(root, _fake_bwrap(tmp_path))
    assert "AppArmor" in text and "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in text
    # Through the tier choice --require-sandbox makes, as the command prints it.
    monkeypatch.setattr(userns, "SYSCTL", root)
    monkeypatch.setattr(tier("bubblewrap"), "works", lambda: False)
    with pytest.raises(SandboxUnavailable, match="apparmor_restrict_unprivileged_userns=0"):
        choose_tier("bubblewrap")


def test_refusal_quotes_bwrap_when_user_namespaces_fail_otherwise(tmp_path):
    from grader.sandbox import userns
    bwrap = _fake_bwrap(tmp_path)
    text = userns.why_bubblewrap_fails(_sysctls(tmp_path, kernel__apparmor_restrict_unprivileged_userns=0), bwrap)
    assert "cannot create user namespaces" in text and "setting up uid map: Permission denied" in text
    assert "AppArmor" in text and "kernel.apparmor_restrict_unprivileged_userns=0" in text
    text = userns.why_bubblewrap_fails(_sysctls(tmp_path, kernel__unprivileged_userns_clone=0), bwrap)
    assert "kernel.unprivileged_userns_clone=1" in text


def test_require_sandbox_without_bwrap_says_how_to_install_it(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = dict(os.environ, PATH=str(empty), PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "grader", "ci", COURSE, "--require-sandbox"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "bwrap is not installed" in done.stderr and "apt-get install bubblewrap" in done.stderr
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- the example workflow

# The first major of each action that runs on Node 24 (older ones run on the deprecated Node 20).
NODE24_MAJOR = {"actions/checkout": 5, "actions/setup-python": 6, "actions/upload-artifact": 6}


def _workflow():
    import yaml
    with open(os.path.join(COURSE, ".github", "workflows", "grade.yml"), encoding="utf-8") as f:
        return yaml.safe_load(f)


def test_workflow_uses_node24_actions_only():
    steps = _workflow()["jobs"]["grade"]["steps"]
    used = [s["uses"] for s in steps if "uses" in s]
    assert used
    for action in used:
        name, _, version = action.partition("@")
        assert name in NODE24_MAJOR, f"{action}: check which major of it runs on Node 24"
        assert int(version.lstrip("v").split(".")[0]) >= NODE24_MAJOR[name], action


def test_workflow_makes_bubblewrap_work_then_validates_and_grades_in_it():
    workflow = _workflow()
    assert workflow["jobs"]["grade"]["runs-on"] in ("ubuntu-24.04", "ubuntu-latest")
    runs = [s.get("run", "") for s in workflow["jobs"]["grade"]["steps"]]
    apparmor = next(i for i, r in enumerate(runs)
                    if "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in r)
    install = next(i for i, r in enumerate(runs) if "apt-get install -y bubblewrap" in r)
    validate = next(i for i, r in enumerate(runs) if r.startswith("grader validate "))
    grade = next(i for i, r in enumerate(runs) if r.startswith("grader ci "))
    assert install < apparmor < validate < grade
    assert "--require-sandbox" in runs[grade].split() and "--require-sandbox" in runs[validate].split()


def test_workflow_validate_step_passes_on_the_example_course():
    import glob
    import shlex
    from grader.sandbox import tier
    run = next(s["run"] for s in _workflow()["jobs"]["grade"]["steps"]
               if s.get("run", "").startswith("grader validate "))
    argv = [part for word in shlex.split(run)[1:]
            for part in (sorted(glob.glob(word, root_dir=COURSE)) if "*" in word else [word])]
    if not tier("bubblewrap").works():
        argv.remove("--require-sandbox")
    done = subprocess.run([sys.executable, "-m", "grader", *argv], cwd=COURSE, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "task normalize-rows" in done.stdout and "0 problems" in done.stdout
