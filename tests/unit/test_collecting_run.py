"""The rules of `grader collect` that need no repository: which commit is graded, the URL
template and its secrets, which roster ids can name a file, the collection record and its
join with the grade rows."""

import os
import stat

import pytest

from grader.classroom import grade_files
from grader.classroom.collecting import collection_csv
from grader.classroom.collecting.bare_repo import Secrets
from grader.classroom.collecting.run import (
    CollectError,
    Template,
    check_roster,
    choose_commit,
    id_problem,
    parse_deadline,
)
from grader.classroom.roster import Enrolled, Roster
from grader.records.result import PASSED, CheckResult, Result
from grader.submission.file import SubmissionError, choose_in_folder, hand_ins_for

D = parse_deadline("2026-12-01T00:00:00Z")
HOUR = 3600


def test_the_deadline_needs_its_utc_offset():
    assert parse_deadline("2026-12-01T01:00:00+01:00") == D
    with pytest.raises(CollectError, match="give its UTC offset"):
        parse_deadline("2026-12-01T00:00")
    with pytest.raises(CollectError, match="not an ISO 8601"):
        parse_deadline("next friday")


def test_the_last_commit_of_the_first_stretch_before_the_deadline_is_graded():
    # tip first, as git rev-list --first-parent gives them
    history = [("c3", D + 5 * HOUR), ("c2", D - HOUR), ("c1", D - 2 * HOUR)]
    graded = choose_commit(history, D)
    assert graded.commit == "c2" and "1 later commit not graded" in graded.note
    assert "backwards" not in graded.note
    assert choose_commit(history, None).commit == "c3"
    exactly = choose_commit([("c1", int(D))], D)
    assert exactly.commit == "c1" and exactly.note == ""


def test_a_commit_dated_early_on_top_of_a_late_one_is_not_graded_and_is_flagged():
    history = [("forged", D - 10), ("late", D + HOUR), ("honest", D - HOUR)]
    graded = choose_commit(history, D)
    assert graded.commit == "honest"
    assert "dates go backwards: commit forged" in graded.note and "likely rewritten" in graded.note
    assert "backwards" in choose_commit(history, None).note


def test_no_commit_before_the_deadline_says_when_the_first_was():
    reason = choose_commit([("late", D + HOUR)], D)
    assert isinstance(reason, str) and "no commit before the deadline" in reason
    assert "2026-12-01T01:00:00Z" in reason


def test_a_date_no_calendar_holds_is_shown_not_raised():
    from grader.classroom.collecting.run import when

    graded = choose_commit([("far", 2**62), ("c1", D - HOUR)], D)  # a student's git may claim it
    assert graded.commit == "c1" and "no calendar date" in graded.note
    assert "no calendar date" in when(2**62)


def _student(sid, repo="org/x", line=2):
    return Enrolled(sid, "1", "N", {"repo": repo} if repo is not None else {}, line)


def test_the_template_fills_students_and_secrets_from_the_environment():
    template = Template.parse("https://x:{env:TOKEN}@github.com/{repo}.git")
    environ = {"TOKEN": "s3cr3t"}
    assert (
        template.url(_student("ann", "org/ann-hw"), environ) == "https://x:s3cr3t@github.com/org/ann-hw.git"
    )
    assert template.secrets(environ).values == ("s3cr3t",)
    with pytest.raises(CollectError, match="TOKEN is not set"):
        template.secrets({})
    with pytest.raises(CollectError, match="TOKEN is empty"):
        template.secrets({"TOKEN": ""})
    assert Template.parse("/srv/{submission_id}.git").url(_student("bob"), {}) == "/srv/bob.git"
    for bad, why in (
        ("https://h/{user}", "unknown placeholder"),
        ("https://h/{repo", "a brace"),
        ("https://github.com/org/one.git", "names no student"),
    ):
        with pytest.raises(CollectError, match=why):
            Template.parse(bad)


def test_secrets_and_url_passwords_are_redacted():
    secrets = Secrets(("tok123",))
    text = "fatal: unable to access 'https://x:tok123@h/r.git' and https://u:other-pass@h/r.git"
    shown = secrets.redact(text)
    assert "tok123" not in shown and "other-pass" not in shown
    assert "https://x:***@h/r.git" in shown and "https://u:***@h/r.git" in shown


@pytest.mark.parametrize(
    "sid, why",
    [
        ("a/b", "holds a /"),
        ("..", "starts with a dot"),
        (".hidden", "starts with a dot"),
        ("tab\there", "escaped"),
        ("back\\slash", "escaped"),
        (" ann", "escaped"),
        ("zero\u200bwidth", "escaped"),
        ("x" * 201, "longer than"),
    ],
)
def test_ids_that_cannot_name_a_file_are_refused(sid, why):
    assert why in (id_problem(sid) or "")


@pytest.mark.parametrize("sid", ["ann", "o'brien", "van der berg", "m\u00fcller", "ada-lovelace", "a.b"])
def test_ordinary_ids_name_files(sid):
    assert id_problem(sid) is None


def test_the_roster_check_names_every_line():
    roster = Roster(
        [
            _student("ann", line=2),
            _student("Ann", line=3),
            _student("x/y", line=4),
            _student("nobody", repo=None, line=5),
        ]
    )
    with pytest.raises(CollectError) as raised:
        check_roster(roster, "roster.csv", Template.parse("{repo}"))
    text = "\n".join(raised.value.problems)
    assert "roster.csv:3: submission_id 'Ann' differs from line 2's only in case" in text
    assert "roster.csv:4: submission_id 'x/y' holds a /" in text
    assert "roster.csv:5: no repo for 'nobody' (the roster has no repo column)" in text
    check_roster(Roster([_student("nobody", repo=None)]), "r.csv", Template.parse("/srv/{submission_id}"))


def test_the_hand_in_rules_are_grader_ci_s():
    names = [
        "normalize-rows.py",
        "normalize-rows.IPYNB",
        "normalize-rows",
        "Normalize-Rows.py",
        "normalize-rows.py.bak",
        "other.py",
    ]
    assert hand_ins_for("normalize-rows", names) == [
        "normalize-rows",
        "normalize-rows.IPYNB",
        "normalize-rows.py",
    ]
    assert choose_in_folder("f/", ["mine.py"]) == "mine.py"
    assert choose_in_folder("f/", ["helper.py", "Solution.ipynb"]) == "Solution.ipynb"
    with pytest.raises(SubmissionError, match="holds 2 .py or .ipynb files"):
        choose_in_folder("f/", ["a.py", "b.py"])
    with pytest.raises(SubmissionError, match="keep one of them"):
        choose_in_folder("f/", ["solution.py", "solution.ipynb"])


# --------------------------------------------------------------------------- the record


def _record(sid, status, **more):
    return collection_csv.Record(sid, "t", status, max_score=5, **more)


SHA = "a" * 64
COMMIT = "b" * 40


def test_the_record_reads_back_what_it_wrote_formula_guards_and_all(tmp_path):
    records = [
        _record(
            "=cmd",
            collection_csv.COLLECTED,
            commit=COMMIT,
            sha256=SHA,
            path="solutions/t.py",
            file="t/=cmd.py",
            committed="2026-11-30T12:00:00Z",
        ),
        _record("bob", collection_csv.REFUSED, reason="=HYPERLINK(1) is a link", note="-1 later"),
    ]
    path = str(tmp_path / "collection.csv")
    collection_csv.write_collection(path, records)
    text = open(path, encoding="utf-8").read()
    assert "'=HYPERLINK" in text and "'-1 later" in text
    back = collection_csv.read_collection(path)
    assert back.records[0].submission_id == "=cmd" and back.records[0].sha256 == SHA
    assert back.by_task["t"]["bob"].status == collection_csv.REFUSED


def test_a_damaged_record_is_refused_line_by_line(tmp_path):
    path = tmp_path / "c.csv"
    header = ",".join(collection_csv.COLUMNS)
    path.write_text(f"{header}\nann,t,collected,,,,,,,5,\nbob,t,eaten,,,,,,,5,\ncy,t,missing,,,,,,,x,\n")
    with pytest.raises(collection_csv.CollectionError) as raised:
        collection_csv.read_collection(str(path))
    assert [p.split(": ", 1)[0] for p in raised.value.problems] == [f"{path}:2", f"{path}:3", f"{path}:4"]
    path.write_text("student,score\n")
    with pytest.raises(collection_csv.CollectionError, match="not a collection.csv"):
        collection_csv.read_collection(str(path))


def _report(student, score):
    return Result("t", f"{student}.py", score, 5, PASSED, "bubblewrap", [CheckResult("a", PASSED, score, 5)])


def test_the_join_grades_only_the_very_file_collected():
    roster = Roster(
        [
            Enrolled(s, str(i), s.title(), {}, i + 2)
            for i, s in enumerate(["ann", "bob", "cy", "dee", "eve", "fay"])
        ]
    )
    reports = [("ann", _report("ann", 5)), ("bob", _report("bob", 5)), ("dee", _report("dee", 4))]
    rows = grade_files.match(reports, roster)
    records = collection_csv.Collection(
        [
            _record("ann", collection_csv.COLLECTED, commit=COMMIT, sha256=SHA, path="solutions/t.py"),
            _record("bob", collection_csv.COLLECTED, commit=COMMIT, sha256="c" * 64, path="solutions/t.py"),
            _record("cy", collection_csv.REFUSED, reason="solutions/t.py: is a symbolic link"),
            _record("dee", collection_csv.UNREACHABLE, reason="could not fetch org/dee: gone"),
            _record("eve", collection_csv.MISSING, reason="no hand-in for t"),
        ]
    )
    joined = collection_csv.join_collection(
        rows, "t", records, {"ann": SHA, "bob": "d" * 64, "dee": "e" * 64}
    )
    by = {r.student: r for r in joined.rows}
    assert by["ann"].report.score == 5 and by["ann"].collection == "collected"
    assert by["bob"].report is None and by["bob"].status == collection_csv.NOT_GRADED  # another file
    assert by["cy"].report.score == 0 and by["cy"].graded and "symbolic link" in by["cy"].note
    assert by["dee"].report is None and "older grade in the gradebook is not used" in by["dee"].note
    assert by["eve"].report is None and by["eve"].status == grade_files.NO_SUBMISSION
    assert by["fay"].collection is None  # not in the collection: as before
    assert joined.not_collected == ["dee"] and joined.ungraded_hand_ins == ["bob"]
    assert [e.submission_id for e in joined.missing] == ["eve", "fay"]


def test_the_grader_failing_on_one_repository_is_that_student_s_row(tmp_path, monkeypatch):
    """No git runs here: the collection of one repository is replaced by one that fails."""
    import os

    from helpers.paths import INSTRUCTOR_TASKS

    from grader.authoring import load_task
    from grader.classroom.collecting import run

    task = load_task(os.path.join(INSTRUCTOR_TASKS, "normalize-rows"))

    def fake(job, tasks, deadline, secrets, seconds, work, staging, root):
        sid = job.student.submission_id
        if sid == "bob":
            open(os.path.join(staging, "normalize-rows", "bob.py"), "w").close()
            raise RuntimeError(f"boom near {job.url}")  # (the URL holds the token)
        return [
            collection_csv.Record(sid, t.id, collection_csv.MISSING, "no hand-in", max_score=t.max_score)
            for t in tasks
        ]

    monkeypatch.setattr(run, "_collect_repository", fake)
    roster = Roster([_student("ann", line=2), _student("bob", line=3)])
    outcome = run.run_collect(
        [task],
        roster,
        "roster.csv",
        str(tmp_path / "out"),
        Template.parse("https://x:{env:T}@h/{repo}"),
        None,
        2,
        10,
        environ={"T": "tok-in-url"},
    )
    by = {r.submission_id: r for r in outcome.records}
    assert by["ann"].status == collection_csv.MISSING
    assert by["bob"].status == collection_csv.UNREACHABLE and "the grader failed on it" in by["bob"].reason
    assert "tok-in-url" not in by["bob"].reason and outcome.unreachable == ["bob"]
    assert os.listdir(tmp_path / "out" / "normalize-rows") == []  # (its half-written file: gone)


@pytest.mark.parametrize("umask", [0o022, 0o000, 0o277])
def test_the_collection_record_is_0600_whatever_the_umask(tmp_path, umask):
    path = str(tmp_path / "collection.csv")
    before = os.umask(umask)
    try:
        collection_csv.write_collection(path, [_record("ann", collection_csv.MISSING)])
    finally:
        os.umask(before)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert collection_csv.read_collection(path).records[0].submission_id == "ann"


def test_the_collection_record_is_never_written_through_a_link(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("theirs")
    os.symlink(target, tmp_path / "collection.csv")
    with pytest.raises(OSError):
        collection_csv.write_collection(
            str(tmp_path / "collection.csv"), [_record("ann", collection_csv.MISSING)]
        )
    assert target.read_text() == "theirs"
