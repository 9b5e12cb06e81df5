"""GitHub annotations and the example workflow, in process: annotations built from Result
records, and the workflow file read as YAML (the `grader ci` runs that print them are in
tests/integration/test_github_actions.py)."""

import os

from helpers.paths import ROOT
from helpers.workflow_commands import parse_command

from grader.records.result import FAILED, PASSED, CheckResult, Result
from grader.report import github
from grader.submission.import_scan import scan_imports

COURSE = os.path.join(ROOT, "examples", "course")
# The first major of each action that runs on Node 24 (older ones run on the deprecated Node 20).
NODE24_MAJOR = {"actions/checkout": 5, "actions/setup-python": 6, "actions/upload-artifact": 6}


def _result(path, checks, task="t"):
    """A result as grading makes it: the functions' definitions found by the scan of the file."""
    definitions = scan_imports(path.read_text(), [], str).defined_at(["f"])
    return Result(
        task=task,
        submission=str(path),
        score=0,
        max_score=1,
        status=FAILED,
        isolation="bubblewrap",
        checks=checks,
        definitions=definitions,
    )


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
    lines = github.annotations(
        [_result(path, [_failed("a", line=5, function="f"), _failed("b", function="f"), _failed("c")])],
        str(tmp_path),
    )
    assert [parse_command(a)[1]["line"] for a in lines] == ["5", "4", "1"]


def test_more_than_ten_failures_give_ten_annotations_and_a_notice(tmp_path):
    path = tmp_path / "s.py"
    path.write_text("x = 1\n")
    checks = [_failed(f"check-{i}") for i in range(15)] + [CheckResult("fine", PASSED, 1.0, 1.0)]
    lines = github.annotations([_result(path, checks[:8]), _result(path, checks[8:])], str(tmp_path))
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
    apparmor = next(
        i for i, r in enumerate(runs) if "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in r
    )
    install = next(i for i, r in enumerate(runs) if "apt-get install -y bubblewrap" in r)
    validate = next(i for i, r in enumerate(runs) if r.startswith("grader validate "))
    grade = next(i for i, r in enumerate(runs) if r.startswith("grader ci "))
    assert install < apparmor < validate < grade
    assert "--require-sandbox" in runs[grade].split() and "--require-sandbox" in runs[validate].split()
