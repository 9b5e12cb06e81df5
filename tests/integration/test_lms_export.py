"""Grades an LMS can import: per-task files, a roster mapping submission ids to LMS ids,
Canvas and Moodle totals, formula-safe cells, an Excel option, and empty cells for what
never ran."""

import csv
import io
import os
import shutil

from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT
from helpers.tasks import as_cell, score_without

from grader.classroom.gradebook import REGRADE, Gradebook
from grader.records.result import ERROR, FAILED, PASSED, SKIPPED, CheckResult, Result, ungradable

COURSE_TASK = os.path.join(ROOT, "examples", "course-instructor", "tasks", "normalize-rows")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _report(student, checks, status):
    score = sum(c.score for c in checks)
    return Result(
        task="t",
        submission=f"{student}.py",
        score=score,
        max_score=5,
        status=status,
        isolation="bubblewrap",
        checks=checks,
    ).to_dict()


def gradebook(out, rows):
    """A gradebook holding task 't' (checks a: 2 points, b: 3 points) for ``rows``:
    student -> report, or (report, content hash)."""
    out.mkdir(parents=True, exist_ok=True)
    book = Gradebook(str(out / "gradebook.sqlite"))
    for student, report in rows.items():
        report, digest = report if isinstance(report, tuple) else (report, "h-" + student)
        book.record("t", student, digest, "1", "d", Result.from_dict(report))
    book.close()
    return out


FULL = [CheckResult("a", PASSED, 2, 2), CheckResult("b", PASSED, 3, 3)]
HALF = [CheckResult("a", PASSED, 2, 2), CheckResult("b", FAILED, 0, 3, message="wrong")]
NOT_LOADED = [
    CheckResult("loads", ERROR, 0, 0, message="SyntaxError"),
    CheckResult("a", SKIPPED, 0, 2, message="skipped: the file did not load"),
    CheckResult("b", SKIPPED, 0, 3, message="skipped: the file did not load"),
]


def read_csv(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.reader(f))


def write_roster(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_checks_that_never_ran_are_empty_cells_not_zeros(tmp_path):
    out = gradebook(
        tmp_path / "out",
        {
            "ann": _report("ann", FULL, PASSED),
            "bob": _report("bob", HALF, FAILED),
            "cy": _report("cy", NOT_LOADED, ERROR),
            "dee": ungradable("t", "1", 5, "dee.py", "two .py files").to_dict(),
        },
    )
    done = run_cli("export", str(out))
    assert done.returncode == 0, done.stderr
    rows = {r[0]: r for r in read_csv(out / "grades-t.csv")}
    assert rows["student"] == ["student", "score", "max_score", "status", "diagnosis", "a", "b"]
    assert rows["bob"] == ["bob", "2", "5", "failed", "", "2", "0"]  # ran and failed: 0
    assert rows["cy"] == ["cy", "0", "5", "error", "", "", ""]  # never ran: empty
    assert rows["dee"] == ["dee", "0", "5", "error", "", "", ""]


def test_grades_csv_names_the_mistakes_diagnosed_in_each_report(tmp_path):
    diagnosed = _report("bob", HALF, FAILED)
    diagnosed["diagnoses"] = [
        {"mistake": "=HYPERLINK(1)", "explanation": "x", "checks": ["b"]},
        {"mistake": "sin-cos-swapped", "explanation": "swapped", "checks": ["b"]},
    ]
    out = gradebook(tmp_path / "out", {"ann": _report("ann", FULL, PASSED), "bob": diagnosed})
    done = run_cli("export", str(out))
    assert done.returncode == 0, done.stderr
    rows = {r[0]: r for r in read_csv(out / "grades-t.csv")}
    assert rows["ann"][4] == ""
    assert rows["bob"][4] == "'=HYPERLINK(1); sin-cos-swapped"  # formula-guarded, as every cell


def test_two_tasks_batched_into_one_folder_keep_their_own_files(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    shutil.copy(os.path.join(PE_SAMPLES, "correct_vectorized.py"), klass / "ann.py")
    other = tmp_path / "class2"
    other.mkdir()
    shutil.copy(os.path.join(ROOT, "examples", "course", "solutions", "normalize-rows.py"), other / "ann.py")
    out = tmp_path / "out"
    for task, folder in ((PE_TASK, klass), (COURSE_TASK, other)):
        done = run_cli("batch", task, str(folder), "--out", str(out), "--jobs", "1", timeout=300)
        assert done.returncode == 0, done.stderr
    pe = read_csv(out / "grades-positional-encoding.csv")
    rows = read_csv(out / "grades-normalize-rows.csv")
    pe_full, course_full = as_cell(score_without()), as_cell(score_without(task=COURSE_TASK))
    assert pe[1][:3] == ["ann", pe_full, pe_full] and rows[1][:3] == ["ann", course_full, course_full]
    assert "table-shape" in pe[0] and "table-shape" not in rows[0]
    for kind in ("reports-{}.jsonl", "summary-{}.md"):
        for task in ("positional-encoding", "normalize-rows"):
            assert (out / kind.format(task)).is_file()
    assert not (out / "grades.csv").exists()
    # An export rewrites both, each from its own rows.
    os.remove(out / "grades-normalize-rows.csv")
    assert run_cli("export", str(out)).returncode == 0
    assert read_csv(out / "grades-normalize-rows.csv") == rows
    assert read_csv(out / "grades-positional-encoding.csv") == pe


CLASS = {
    "ann": _report("ann", FULL, PASSED),
    "bob": _report("bob", HALF, FAILED),
    "cy": _report("cy", NOT_LOADED, ERROR),
    "zed": _report("zed", FULL, PASSED),
}
ROSTER = (
    "submission_id,lms_id,name,section,sis_user_id\n"
    'ann,101,"Lee, Ann",S1,U1\nbob,102,Bob Roy,S1,U2\ncy,103,Cy Day,S2,\n'
    "dan,104,Dan Fox,S2,U4\n"
)


def test_roster_export_for_canvas_and_moodle(tmp_path):
    out = gradebook(tmp_path / "out", CLASS)
    roster = write_roster(tmp_path / "roster.csv", ROSTER)
    done = run_cli(
        "export",
        str(out),
        "--roster",
        roster,
        "--format",
        "canvas",
        "--format",
        "moodle",
        "--assignment",
        "Homework 3 (4711)",
    )
    assert done.returncode == 0, done.stderr
    assert "t: 1 submission id not in the roster" in done.stderr and "zed" in done.stderr
    assert "t: 1 roster student without a submission" in done.stderr and "dan (Dan Fox)" in done.stderr
    canvas = read_csv(out / "canvas-t.csv")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Homework 3 (4711)"]
    assert canvas[1] == ["    Points Possible", "", "", "", "", "5"]
    assert canvas[2:] == [
        ["Lee, Ann", "101", "U1", "", "S1", "5"],
        ["Bob Roy", "102", "U2", "", "S1", "2"],
        ["Cy Day", "103", "", "", "S2", "0"],
        ["Dan Fox", "104", "U4", "", "S2", ""],
    ]
    moodle = read_csv(out / "moodle-t.csv")
    assert moodle == [
        ["lms_id", "name", "Homework 3 (4711)"],
        ["101", "Lee, Ann", "5"],
        ["102", "Bob Roy", "2"],
        ["103", "Cy Day", "0"],
        ["104", "Dan Fox", ""],
    ]
    # The detailed file holds everyone: the student without a submission, the unknown id.
    detailed = {r[0]: r for r in read_csv(out / "grades-t.csv")}
    assert detailed["student"][:6] == ["student", "lms_id", "name", "score", "max_score", "status"]
    assert detailed["dan"][:6] == ["dan", "104", "Dan Fox", "", "", "no submission"]
    assert detailed["zed"][:6] == ["zed", "", "", "5", "5", "passed"]
    assert detailed["cy"][6:] == ["", "", ""]  # no diagnosis; two checks that never ran


def test_a_grader_failure_is_no_grade_in_the_lms(tmp_path):
    failed = ungradable("t", "1", 5, "bob.py", "the grader failed on this submission").to_dict()
    out = gradebook(tmp_path / "out", {"ann": _report("ann", FULL, PASSED), "bob": (failed, REGRADE)})
    roster = write_roster(tmp_path / "roster.csv", "submission_id,lms_id,name\nann,1,Ann\nbob,2,Bob\n")
    done = run_cli("export", str(out), "--roster", roster, "--format", "moodle")
    assert done.returncode == 0, done.stderr
    assert read_csv(out / "moodle-t.csv")[1:] == [["1", "Ann", "5"], ["2", "Bob", ""]]
    assert "the grader failed on 1 submission" in done.stderr and "bob" in done.stderr


def test_every_cell_is_formula_safe_and_excel_gets_a_bom(tmp_path):
    out = gradebook(
        tmp_path / "out",
        {"=cmd|' /C calc'!A0": _report("x", FULL, PASSED), "ann": _report("ann", FULL, PASSED)},
    )
    roster = write_roster(
        tmp_path / "roster.csv",
        "submission_id,lms_id,name,section\n"
        "=cmd|' /C calc'!A0,+41,@SUM(A1),-2+3\nann,7,=HYPERLINK(\"x\"),S\n",
    )
    done = run_cli(
        "export",
        str(out),
        "--roster",
        roster,
        "--format",
        "canvas",
        "--format",
        "moodle",
        "--assignment",
        "=1+1",
        "--excel",
    )
    assert done.returncode == 0, done.stderr
    for name in ("grades-t.csv", "canvas-t.csv", "moodle-t.csv"):
        data = (out / name).read_bytes()
        assert data.startswith(b"\xef\xbb\xbf"), name  # UTF-8 BOM
        assert data.count(b"\r\n") == data.count(b"\n") > 1, name  # CRLF rows
        for row in csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")):
            for cell in row:
                assert not cell.lstrip(" ").startswith(FORMULA_START), (name, cell)
    canvas = read_csv(out / "canvas-t.csv")
    assert canvas[0][-1] == "'=1+1" and canvas[2][:2] == ["'@SUM(A1)", "'+41"]
    # Without --excel: no BOM.
    assert run_cli("export", str(out)).returncode == 0
    assert not (out / "grades-t.csv").read_bytes().startswith(b"\xef\xbb\xbf")


def test_roster_problems_are_named_by_line_and_nothing_is_written(tmp_path):
    out = gradebook(tmp_path / "out", CLASS)
    cases = {
        "lms,name\nann,1\n": "roster.csv:1: the header must name the columns submission_id,lms_id,name",
        "submission_id,lms_id,name\nann,1,A\nann,2,B\n": "roster.csv:3: submission_id 'ann' again (first on line 2)",
        "submission_id,lms_id,name\nann,1,A\nbob,1,B\n": "roster.csv:3: lms_id '1' again",
        "submission_id,lms_id,name\nann,,A\n": "roster.csv:2: empty lms_id",
        "submission_id,lms_id,name\nann,1\n": "roster.csv:2: 2 fields, the header has 3",
        "submission_id,lms_id,name,email\nann,1,A,a@x\n": "roster.csv:1: unknown column 'email'",
    }
    for text, message in cases.items():
        roster = write_roster(tmp_path / "roster.csv", text)
        done = run_cli("export", str(out), "--roster", roster, "--format", "canvas")
        assert done.returncode == 2, (text, done.stderr)
        assert message in done.stderr, (text, done.stderr)
        assert "Traceback" not in done.stderr and not (out / "canvas-t.csv").exists()
    (tmp_path / "roster.csv").write_bytes(b"submission_id,lms_id,name\nann,1,\xff\n")
    done = run_cli("export", str(out), "--roster", str(tmp_path / "roster.csv"))
    assert done.returncode == 2 and "roster.csv:2: not UTF-8" in done.stderr
    done = run_cli("export", str(out), "--roster", str(tmp_path / "absent.csv"))
    assert done.returncode == 2 and "absent.csv: cannot be read" in done.stderr
    # A roster saved by Excel (with a BOM) reads as any other.
    (tmp_path / "roster.csv").write_bytes("submission_id,lms_id,name\r\nann,1,Ann\r\n".encode("utf-8-sig"))
    assert (
        run_cli("export", str(out), "--roster", str(tmp_path / "roster.csv"), "--format", "moodle").returncode
        == 0
    )


def test_lms_formats_need_a_roster_and_one_assignment_name_one_task(tmp_path):
    out = gradebook(tmp_path / "out", CLASS)
    done = run_cli("export", str(out), "--format", "canvas")
    assert done.returncode == 2 and "needs --roster" in done.stderr
    done = run_cli("export", str(out), "--task", "nope")
    assert done.returncode == 2 and "holds no task 'nope'" in done.stderr
    book = Gradebook(str(out / "gradebook.sqlite"))
    book.record("u", "ann", "h", "1", "d", Result.from_dict(_report("ann", FULL, PASSED)))
    book.close()
    roster = write_roster(tmp_path / "roster.csv", ROSTER)
    done = run_cli("export", str(out), "--roster", roster, "--format", "moodle", "--assignment", "HW")
    assert done.returncode == 2 and "give --task too" in done.stderr
    done = run_cli(
        "export", str(out), "--roster", roster, "--format", "moodle", "--assignment", "HW", "--task", "u"
    )
    assert done.returncode == 0, done.stderr
    assert (
        read_csv(out / "moodle-u.csv")[0] == ["lms_id", "name", "HW"] and not (out / "moodle-t.csv").exists()
    )
