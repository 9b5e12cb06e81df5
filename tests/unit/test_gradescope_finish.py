"""finish_results.py (grader/integrations/gradescope_finish.py), in process: one task's report
as it is, several tasks' reports merged into one results.json, a failed task costing its own
points only. (run_autograder itself: tests/integration/test_gradescope.py.)"""

import json

from grader.integrations.gradescope_finish import STUDENT_MESSAGE, finish_tasks, valid_results


def _report(path, task, score, tests):
    path.write_text(
        json.dumps(
            {
                "score": score,
                "output": f"{task}: {score:g}/{sum(t['max_score'] for t in tests):g} (failed)",
                "output_format": "text",
                "extra_data": {"isolation": "landlock"},
                "tests": tests,
            }
        )
    )
    return str(path)


def _test(name, score, max_score, visibility="visible"):
    return {
        "name": name,
        "score": score,
        "max_score": max_score,
        "status": "passed",
        "visibility": visibility,
    }


def test_one_task_is_written_as_its_report(tmp_path):
    report = _report(tmp_path / "a.json", "a", 2, [_test("x", 2, 3)])
    data = finish_tasks([["a", "1", report, ""]], str(tmp_path / "results"), 1.0)
    assert data == json.loads(open(report).read())
    assert json.loads((tmp_path / "results" / "results.json").read_text()) == data


def test_several_tasks_are_one_results_json_named_by_task(tmp_path):
    first = _report(tmp_path / "a.json", "pe-a", 2, [_test("x", 2, 3), _test("env", 0, 0, "hidden")])
    second = _report(tmp_path / "b.json", "pe-b", 4, [_test("y", 4, 4)])
    stderr = tmp_path / "c.stderr"
    stderr.write_text("Traceback: boom\n")
    runs = [["pe-a", "1", first, ""], ["pe-b", "0", second, ""], ["pe-c", "137", "", str(stderr)]]
    data = finish_tasks(runs, str(tmp_path / "results"), 12.0, "540")
    assert valid_results(data) is None
    assert data["score"] == 6
    names = [(t["number"], t["name"], t["visibility"]) for t in data["tests"]]
    assert names == [
        ("1.1", "pe-a: x", "visible"),
        ("1.2", "pe-a: env", "hidden"),
        ("2.1", "pe-b: y", "visible"),
        ("3.1", "pe-c: Autograder error (shown to instructors only)", "hidden"),
    ]
    sections = data["output"].split("\n\n")
    assert sections[0].startswith("pe-a: 2/3") and sections[1].startswith("pe-b: 4/4")
    assert sections[2] == f"pe-c: 0/0\n{STUDENT_MESSAGE}"  # the crash costs pe-c only
    assert data["extra_data"]["tasks"]["pe-a"] == {"isolation": "landlock"}
    assert "killed by SIGKILL" in data["extra_data"]["tasks"]["pe-c"]["grader_error"]
    assert "boom" in data["tests"][-1]["output"]
    assert json.loads((tmp_path / "results" / "results.json").read_text()) == data


def test_a_timeout_names_the_limit_all_tasks_share(tmp_path):
    runs = [["pe-a", "124", "", ""], ["pe-b", "124", "", ""]]
    data = finish_tasks(runs, str(tmp_path / "results"), 540.0, "540")
    assert "limit: 540 s for the 2 tasks together" in data["extra_data"]["tasks"]["pe-a"]["grader_error"]
    assert data["score"] == 0 and len(data["tests"]) == 2
