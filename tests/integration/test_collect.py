"""`grader collect`, as an instructor runs it at final grading: real git repositories (bare,
as on GitHub, reached by path or file:// URL), a roster, then `grader batch` and `grader
export --collection`: every hand-in form collected, every roster student in the final grades
with the reason, no link followed, no token shown, the commit before the deadline graded."""

import csv
import os
import shutil
import subprocess

import nbformat
from helpers.cli import run_cli
from helpers.paths import INSTRUCTOR_TASKS, ROOT
from helpers.student_repos import Link, StudentRepo, Submodule, git, roster
from helpers.tasks import score_without
from nbformat.v4 import new_code_cell, new_notebook

TASK = os.path.join(INSTRUCTOR_TASKS, "normalize-rows")
TASK_ID = "normalize-rows"
REFERENCE = os.path.join(TASK, "reference.py")
with open(os.path.join(ROOT, "examples", "course", "solutions", "normalize-rows.py")) as _f:
    CORRECT = _f.read()
FULL = f"{score_without(task=TASK):g}"
BEFORE, DEADLINE, AFTER = "2026-11-30T12:00:00Z", "2026-12-01T00:00:00+00:00", "2026-12-02T12:00:00Z"


def notebook(code: str) -> str:
    return nbformat.writes(new_notebook(cells=[new_code_cell(code)]))


def read_csv(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def collection(out):
    return {r["submission_id"]: r for r in read_csv(os.path.join(out, "collection.csv"))}


def collect(tmp_path, students: dict, *more, out=None, env=None):
    """`grader collect` of normalize-rows for ``students`` (id -> repo path or URL), the
    repositories that are paths inside ``tmp_path`` (``--repos-root``)."""
    out = str(out or tmp_path / "collected")
    return run_cli(
        "collect",
        TASK,
        "--roster",
        roster(tmp_path / "roster.csv", students),
        "--out",
        out,
        "--repos-root",
        str(tmp_path),
        *more,
        env=env,
        timeout=300,
    ), out


def grade_and_export(tmp_path, out):
    """`grader batch` on the collection, then `grader export` with the roster and the
    collection: the detailed grades (by student) and the Canvas file (by LMS id)."""
    grades = str(tmp_path / "grades")
    done = run_cli("batch", TASK, os.path.join(out, TASK_ID), "--out", grades, "--jobs", "2", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    done = run_cli(
        "export",
        grades,
        "--roster",
        str(tmp_path / "roster.csv"),
        "--collection",
        os.path.join(out, "collection.csv"),
        "--format",
        "canvas",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    detailed = {r["student"]: r for r in read_csv(os.path.join(grades, f"grades-{TASK_ID}.csv"))}
    canvas = {r["ID"]: r for r in read_csv(os.path.join(grades, f"canvas-{TASK_ID}.csv"))[1:]}
    return detailed, canvas, done


def repo(tmp_path, name, files, date=BEFORE):
    student = StudentRepo(tmp_path / "remote" / f"{name}.git")
    student.commit(files, date)
    return student


# --------------------------------------------------------------------------- every form


def test_every_hand_in_form_is_collected_and_every_roster_student_has_a_graded_row(tmp_path):
    forms = {
        "ann": {"solutions/normalize-rows.py": CORRECT},
        "bea": {"solutions/normalize-rows.ipynb": notebook(CORRECT)},
        "cal": {"solutions/normalize-rows.PY": CORRECT},
        "dan": {"solutions/normalize-rows/mine.py": CORRECT, "solutions/normalize-rows/notes.md": "x"},
        "eve": {
            "solutions/normalize-rows/solution.py": CORRECT,
            "solutions/normalize-rows/helper.py": "raise SystemExit('not me')\n",
        },
        "fay": {"solutions/README.md": "nothing yet", "solutions/other-task.py": CORRECT},
        "gus": {"solutions/normalize-rows.py": CORRECT, "solutions/normalize-rows.ipynb": notebook(CORRECT)},
    }
    students = {name: repo(tmp_path, name, files).path for name, files in forms.items()}
    students["hal"] = str(tmp_path / "remote" / "never-made.git")
    students["ivy"] = "file://" + repo(tmp_path, "ivy", {"solutions/normalize-rows.py": CORRECT}).path
    done, out = collect(tmp_path, students)
    assert done.returncode == 1, done.stdout + done.stderr  # one repository unreachable
    record = collection(out)
    assert list(record) == list(students)  # the roster's order, everyone
    for name, path in (
        ("ann", "normalize-rows.py"),
        ("bea", "normalize-rows.ipynb"),
        ("cal", "normalize-rows.PY"),
        ("dan", "normalize-rows/mine.py"),
        ("eve", "normalize-rows/solution.py"),
        ("ivy", "normalize-rows.py"),
    ):
        assert record[name]["status"] == "collected", record[name]
        assert record[name]["path"] == f"solutions/{path}"
    assert sorted(os.listdir(os.path.join(out, TASK_ID))) == [
        "ann.py",
        "bea.ipynb",
        "cal.py",
        "dan.py",
        "eve.py",
        "ivy.py",
    ]
    assert (
        record["fay"]["status"] == "missing"
        and "solutions/ holds README.md, other-task.py" in record["fay"]["reason"]
    )
    assert record["gus"]["status"] == "two-hand-ins"
    assert "solutions/normalize-rows.ipynb and solutions/normalize-rows.py" in record["gus"]["reason"]
    assert record["hal"]["status"] == "unreachable" and "never-made.git" in record["hal"]["reason"]
    assert "does not appear to be a git repository" in record["hal"]["reason"]  # git's reason
    assert "hal" in done.stderr

    detailed, canvas, exported = grade_and_export(tmp_path, out)
    assert list(detailed) == list(students)
    for name in ("ann", "bea", "cal", "dan", "eve", "ivy"):
        assert (detailed[name]["score"], detailed[name]["collection"]) == (FULL, "collected"), detailed[name]
        assert "at commit" in detailed[name]["collection_note"]
    assert (detailed["fay"]["score"], detailed["fay"]["status"]) == ("", "no submission")
    assert "no hand-in for normalize-rows" in detailed["fay"]["collection_note"]
    assert (detailed["gus"]["score"], detailed["gus"]["status"]) == ("0", "error")
    assert "two hand-ins" in detailed["gus"]["collection_note"]
    assert (detailed["hal"]["score"], detailed["hal"]["status"]) == ("", "not collected")
    assert "could not fetch" in detailed["hal"]["collection_note"]
    # The file an instructor uploads: every roster student, a refused hand-in 0, the
    # unreachable and the missing left ungraded (empty), never a silent gap.
    by_name = {r["Student"]: r[TASK_ID] for r in canvas.values()}
    assert by_name == {
        "Student ann": FULL,
        "Student bea": FULL,
        "Student cal": FULL,
        "Student dan": FULL,
        "Student eve": FULL,
        "Student fay": "",
        "Student gus": "0",
        "Student hal": "",
        "Student ivy": FULL,
    }
    assert "could not be fetched" in exported.stderr and "hal" in exported.stderr


# --------------------------------------------------------------------------- attacks


def _all_bytes(folder):
    for root, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(root, name), "rb") as f:
                yield os.path.join(root, name), f.read()


def test_links_submodules_and_oversized_blobs_are_refused_and_score_nothing(tmp_path):
    """Each attack a student can push. The reference is at a path the collecting machine has
    (the instructor's repository): a collection that followed links would grade it."""
    with open(REFERENCE, "rb") as f:
        reference = f.read()
    attacks = {
        "abs-link": {"solutions/normalize-rows.py": Link(REFERENCE)},
        "rel-link": {"solutions/normalize-rows.py": Link("../../tasks/normalize-rows/reference.py")},
        "environ": {"solutions/normalize-rows.py": Link("/proc/self/environ")},
        "folder-link": {"solutions/normalize-rows": Link(TASK)},
        "inner-link": {"solutions/normalize-rows/solution.py": Link(REFERENCE)},
        "solutions-link": {"solutions": Link(os.path.dirname(TASK))},
        "solutions-submodule": {"solutions": Submodule()},
        "submodule": {"solutions/normalize-rows.py": Submodule()},
        "submodule-folder": {"solutions/normalize-rows": Submodule()},
        "big": {"solutions/normalize-rows.py": b"#" * (2 << 20)},
        "notebook-big": {"solutions/normalize-rows.ipynb": b" " * (2 << 20)},
    }
    students = {name: repo(tmp_path, name, files).path for name, files in attacks.items()}
    students["honest"] = repo(tmp_path, "honest", {"solutions/normalize-rows.py": CORRECT}).path
    done, out = collect(tmp_path, students, env={"SECRET_OF_THE_STEP": "hunter2-token"})
    assert done.returncode == 0, done.stdout + done.stderr
    record = collection(out)
    for name in attacks:
        assert record[name]["status"] == "refused", record[name]
        assert record[name]["file"] == "" and record[name]["sha256"] == ""
    for name in ("abs-link", "rel-link", "environ", "folder-link", "inner-link", "solutions-link"):
        assert "symbolic link" in record[name]["reason"], record[name]
    assert "(to '/proc/self/environ')" in record["environ"]["reason"]
    for name in ("submodule", "submodule-folder", "solutions-submodule"):
        assert "submodule" in record[name]["reason"], record[name]
    assert "larger than 1024 KiB" in record["big"]["reason"]
    assert "Clear the notebook's outputs" in record["notebook-big"]["reason"]
    assert os.listdir(os.path.join(out, TASK_ID)) == ["honest.py"]
    for path, data in _all_bytes(tmp_path / "collected"):
        assert data != reference and b"hunter2-token" not in data, path

    detailed, canvas, _ = grade_and_export(tmp_path, out)
    assert detailed["honest"]["score"] == FULL
    for name in attacks:
        assert (detailed[name]["score"], detailed[name]["status"]) == ("0", "error"), detailed[name]
        assert detailed[name]["collection"] == "refused" and detailed[name]["collection_note"]
    assert sorted(r[TASK_ID] for r in canvas.values()) == ["0"] * len(attacks) + [FULL]


def test_the_old_workflow_loop_copies_the_reference_through_a_link(tmp_path):
    """A control: the collection of final-grading.yml before `grader collect` (a checkout,
    then `[ -e ]` and `cp`) follows the link and hands the grader the instructor's reference;
    `grader collect` of the same repository refuses it (the test above)."""
    student = repo(tmp_path, "mallory", {"solutions/normalize-rows.py": Link(REFERENCE)})
    work = tmp_path / "work"
    git("clone", "-q", "--depth", "1", "file://" + student.path, str(work / "mallory"))
    old_loop = """
        student=mallory; id=normalize-rows; mkdir -p "collected/$id"
        if [ -e "work/$student/solutions/$id.py" ]; then
          cp "work/$student/solutions/$id.py" "collected/$id/$student.py"
        fi
    """
    subprocess.run(["bash", "-c", old_loop], cwd=tmp_path, check=True)
    with open(REFERENCE, "rb") as f:
        assert (tmp_path / "collected" / TASK_ID / "mallory.py").read_bytes() == f.read()


def test_hostile_names_are_shown_escaped_and_lookalikes_of_the_task_id_are_not_collected(tmp_path):
    students = {
        # the only file of the folder: collected, its name shown escaped everywhere
        "escapes": {"solutions/normalize-rows/\x1b[2J\x1b]8;;https:x\x07so\nl.py": CORRECT},
        "lookalike": {
            "solutions/normalize\u2010rows.py": CORRECT,  # a Unicode hyphen
            "solutions/normalize-rows .py": CORRECT,  # a space before .py
            "solutions/normalize-rows.py\n": CORRECT,  # a newline after
            "solutions/Normalize-Rows.py": CORRECT,
            "solutions/normalize-rows\u200b.py": CORRECT,
        },  # a zero-width space
        "ids-twice": {"solutions/normalize-rows.py": CORRECT, "solutions/normalize-rows.Py": CORRECT},
    }
    done, out = collect(tmp_path, {n: repo(tmp_path, n, f).path for n, f in students.items()})
    assert done.returncode == 0, done.stdout + done.stderr
    for text in (done.stdout, done.stderr, (tmp_path / "collected" / "collection.csv").read_text()):
        assert "\x1b" not in text and "\x07" not in text and "\u2010" not in text and "\u200b" not in text
    record = collection(out)
    assert record["escapes"]["status"] == "collected"
    assert record["escapes"]["path"] == "solutions/normalize-rows/\\x1b[2J\\x1b]8;;https:x\\x07so\\x0al.py"
    assert (tmp_path / "collected" / TASK_ID / "escapes.py").read_text() == CORRECT
    assert record["lookalike"]["status"] == "missing"
    reason = record["lookalike"]["reason"]
    for shown in (
        "normalize\\u2010rows.py",
        "normalize-rows .py",
        "normalize-rows.py\\x0a",
        "Normalize-Rows.py",
        "normalize-rows\\u200b.py",
    ):
        assert shown in reason, reason
    assert record["ids-twice"]["status"] == "two-hand-ins"
    assert sorted(os.listdir(os.path.join(out, TASK_ID))) == ["escapes.py"]


# --------------------------------------------------------------------------- secrets


def _git_logging_argv(tmp_path):
    """A `git` on PATH that logs its command line, then runs the real git."""
    real = shutil.which("git")
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git-argv.log"
    (folder / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (folder / "git").chmod(0o755)
    return {"PATH": f"{folder}:{os.environ['PATH']}"}, log


def test_a_token_in_the_url_is_in_no_output_no_file_and_no_command_line(tmp_path):
    token = "ghp_FAKE0token0for0the0test0only0123"
    env, argv_log = _git_logging_argv(tmp_path)
    env["STUDENT_REPOS_TOKEN"] = token
    honest = repo(tmp_path, "ann", {"solutions/normalize-rows.py": CORRECT})
    # Port 9 of this machine: nothing listens there, so git fails at once with its reason.
    done, out = collect(
        tmp_path,
        {"ann": "ann", "bob": "bob"},
        "--repo-url",
        "https://x-access-token:{env:STUDENT_REPOS_TOKEN}@127.0.0.1:9/org/{repo}.git",
        env=env,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    record = collection(out)
    assert record["bob"]["status"] == "unreachable" and record["ann"]["status"] == "unreachable"
    assert "127.0.0.1" in record["bob"]["reason"]  # git's reason, without the token
    # The same token by insteadOf to a path (a reachable remote): the graded file, no token.
    env.update(
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0=f"url.{os.path.dirname(honest.path)}/.insteadOf",
        GIT_CONFIG_VALUE_0=f"https://x-access-token:{token}@127.0.0.1:9/org/",
    )
    done2, out2 = collect(
        tmp_path,
        {"ann": "ann"},
        "--repo-url",
        "https://x-access-token:{env:STUDENT_REPOS_TOKEN}@127.0.0.1:9/org/{repo}.git",
        out=tmp_path / "again",
        env=env,
    )
    assert done2.returncode == 0, done2.stdout + done2.stderr
    assert collection(out2)["ann"]["status"] == "collected"
    for text in (done.stdout, done.stderr, done2.stdout, done2.stderr, argv_log.read_text()):
        assert token not in text
    assert "fetch" in argv_log.read_text()  # (git did run, through the log)
    for path, data in _all_bytes(tmp_path):
        if path != os.path.join(tmp_path, "roster.csv"):
            assert token.encode() not in data, path


def test_a_password_written_in_the_roster_is_redacted_from_git_s_reason(tmp_path):
    done, out = collect(tmp_path, {"ann": "https://ann:pa55word-in-roster@127.0.0.1:9/ann.git"})
    assert done.returncode == 1
    reason = collection(out)["ann"]["reason"]
    assert "pa55word-in-roster" not in reason + done.stdout + done.stderr
    assert "https://ann:***@127.0.0.1:9/ann.git" in reason


# --------------------------------------------------------------------------- the deadline


def test_the_last_commit_before_the_deadline_is_graded_and_a_rewritten_date_is_flagged(tmp_path):
    on_time = StudentRepo(tmp_path / "remote" / "ontime.git")
    early = on_time.commit({"solutions/normalize-rows.py": "# before\n" + CORRECT}, BEFORE)
    on_time.commit({"solutions/normalize-rows.py": "# after\n" + CORRECT}, AFTER)
    # Work after the deadline, then a commit whose date was set back to before it.
    rewritten = StudentRepo(tmp_path / "remote" / "rewritten.git")
    honest = rewritten.commit({"solutions/normalize-rows.py": "# honest\n"}, BEFORE)
    rewritten.commit({"solutions/normalize-rows.py": "# late\n"}, AFTER)
    rewritten.commit({"solutions/normalize-rows.py": "# late, dated early\n"}, "2026-11-30T23:00:00Z")
    late = StudentRepo(tmp_path / "remote" / "late.git")
    late.commit({"solutions/normalize-rows.py": CORRECT}, AFTER)
    students = {"ontime": on_time.path, "rewritten": rewritten.path, "late": late.path}
    done, out = collect(tmp_path, students, "--deadline", DEADLINE)
    assert done.returncode == 0, done.stdout + done.stderr
    record = collection(out)
    assert record["ontime"]["commit"] == early and record["ontime"]["committed"] == "2026-11-30T12:00:00Z"
    assert (tmp_path / "collected" / TASK_ID / "ontime.py").read_text().startswith("# before")
    assert "1 later commit not graded" in record["ontime"]["note"]
    assert record["rewritten"]["commit"] == honest
    assert (tmp_path / "collected" / TASK_ID / "rewritten.py").read_text() == "# honest\n"
    assert (
        "dates go backwards" in record["rewritten"]["note"]
        and "likely rewritten" in record["rewritten"]["note"]
    )
    assert "dates go backwards" not in record["ontime"]["note"]
    assert (
        record["late"]["status"] == "missing" and "no commit before the deadline" in record["late"]["reason"]
    )
    # Without a deadline: the tip, still flagged.
    done, out = collect(tmp_path, students, out=tmp_path / "tips")
    record = collection(out)
    assert record["ontime"]["commit"] == on_time.tip and record["rewritten"]["commit"] == rewritten.tip
    assert "dates go backwards" in record["rewritten"]["note"]
    # The note reaches the grades file.
    detailed, _, _ = grade_and_export(tmp_path, out)
    assert "dates go backwards" in detailed["rewritten"]["collection_note"]


def test_a_deadline_without_its_utc_offset_is_refused(tmp_path):
    done, _ = collect(tmp_path, {"ann": "x"}, "--deadline", "2026-12-01T23:59")
    assert done.returncode == 2
    assert "give its UTC offset" in done.stderr and "Traceback" not in done.stderr


# --------------------------------------------------------------------------- the run itself


def test_a_rerun_replaces_the_collection_whole_and_the_gradebook_s_old_grade_is_not_exported(tmp_path):
    ann = repo(tmp_path, "ann", {"solutions/normalize-rows.py": CORRECT})
    bob = repo(tmp_path, "bob", {"solutions/normalize-rows.py": CORRECT})
    done, out = collect(tmp_path, {"ann": ann.path, "bob": bob.path})
    assert done.returncode == 0
    grade_and_export(tmp_path, out)
    # bob's repository is gone and ann handed in a new file: the next collection holds
    # neither bob's old file nor a grade of ann's old one.
    shutil.rmtree(bob.path)
    ann.commit({"solutions/normalize-rows.py": "def normalize_rows(m):\n    return m\n"})
    done, out = collect(tmp_path, {"ann": ann.path, "bob": bob.path})
    assert done.returncode == 1
    assert os.listdir(os.path.join(out, TASK_ID)) == ["ann.py"]
    grades = str(tmp_path / "grades")
    exported = run_cli(
        "export",
        grades,
        "--roster",
        str(tmp_path / "roster.csv"),
        "--collection",
        os.path.join(out, "collection.csv"),
        "--format",
        "canvas",
    )
    assert exported.returncode == 0, exported.stderr
    detailed = {r["student"]: r for r in read_csv(os.path.join(grades, f"grades-{TASK_ID}.csv"))}
    assert (detailed["bob"]["score"], detailed["bob"]["collection"]) == ("", "unreachable")
    assert "older grade in the gradebook is not used" in detailed["bob"]["collection_note"]
    assert (detailed["ann"]["score"], detailed["ann"]["status"]) == ("", "not graded")
    assert "run grader batch" in detailed["ann"]["collection_note"] and "ann" in exported.stderr


def test_an_output_folder_that_collect_did_not_write_is_refused(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("precious")
    done, _ = collect(tmp_path, {"ann": "x"}, out=tmp_path / "mine")
    assert done.returncode == 2 and "did not write" in done.stderr
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "precious"


def test_roster_and_template_problems_are_named_with_their_lines_before_anything_is_fetched(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(
        "submission_id,lms_id,name,repo\nok,1,Ok,/nowhere\n../x,2,Up,/a\n.hid,3,Hid,/b\n"
        "e\x1bsc,4,Esc,/c\nOK,5,Upper,/d\nnorepo,6,No,\n",
        encoding="utf-8",
    )
    done = run_cli("collect", TASK, "--roster", str(path), "--out", str(tmp_path / "c"))
    assert done.returncode == 2, done.stdout + done.stderr
    for expected in (
        "roster.csv:3: submission_id '../x' holds a /",
        "roster.csv:4: submission_id '.hid' starts with a dot",
        "roster.csv:5: submission_id 'e\\x1bsc' holds characters",
        "roster.csv:6: submission_id 'OK' differs from line 2",
        "roster.csv:7: no repo for 'norepo'",
    ):
        assert expected in done.stderr, done.stderr
    assert not (tmp_path / "c").exists()
    no_column = tmp_path / "plain.csv"
    no_column.write_text("submission_id,lms_id,name\nann,1,Ann\n")
    done = run_cli("collect", TASK, "--roster", str(no_column))
    assert done.returncode == 2 and "the roster has no repo column" in done.stderr
    done = run_cli(
        "collect", TASK, "--roster", str(no_column), "--repo-url", "https://github.com/org/{user}.git"
    )
    assert done.returncode == 2 and "unknown placeholder {user}" in done.stderr
    done = run_cli(
        "collect",
        TASK,
        "--roster",
        str(no_column),
        "--repo-url",
        "https://x:{env:NOT_SET_ANYWHERE}@github.com/org/hw-{submission_id}.git",
        env={"NOT_SET_ANYWHERE": ""},
    )
    assert done.returncode == 2 and "NOT_SET_ANYWHERE is empty" in done.stderr
    done = run_cli("collect", TASK, TASK, "--roster", str(no_column), "--repo-url", "{submission_id}")
    assert done.returncode == 2 and "given twice" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_remote_that_never_answers_costs_its_student_alone_and_leaves_no_process(tmp_path):
    import socket

    from helpers.cli import no_process_with

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # connections are taken, never answered
    port = silent.getsockname()[1]
    try:
        ann = repo(tmp_path, "ann", {"solutions/normalize-rows.py": CORRECT})
        done, out = collect(
            tmp_path, {"hung": f"http://127.0.0.1:{port}/hung.git", "ann": ann.path}, "--fetch-seconds", "3"
        )
    finally:
        silent.close()
    assert done.returncode == 1, done.stdout + done.stderr
    record = collection(out)
    assert record["hung"]["status"] == "unreachable" and "no answer within 3 s" in record["hung"]["reason"]
    assert record["ann"]["status"] == "collected"
    assert no_process_with(f"127.0.0.1:{port}")  # git and its http helper were killed


def test_a_repository_named_as_a_command_transport_runs_nothing(tmp_path):
    pwned = tmp_path / "pwned"
    done, out = collect(
        tmp_path, {"ann": f"ext::sh -c touch% {pwned}", "bob": f"--upload-pack=touch {pwned}"}
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert {r["status"] for r in collection(out).values()} == {"unreachable"}
    assert not pwned.exists()


def test_an_empty_repository_is_missing_work_not_an_unreachable_one(tmp_path):
    empty = StudentRepo(tmp_path / "remote" / "empty.git")
    done, out = collect(tmp_path, {"ann": empty.path})
    assert done.returncode == 0, done.stdout + done.stderr
    record = collection(out)["ann"]
    assert record["status"] == "missing" and "the repository is empty" in record["reason"], record


def test_the_collection_record_is_plain_data_export_refuses_a_damaged_one(tmp_path):
    ann = repo(tmp_path, "ann", {"solutions/normalize-rows.py": CORRECT})
    done, out = collect(tmp_path, {"ann": ann.path})
    assert done.returncode == 0
    grades = str(tmp_path / "grades")
    assert run_cli("batch", TASK, os.path.join(out, TASK_ID), "--out", grades, timeout=300).returncode == 0
    damaged = tmp_path / "damaged.csv"
    text = (tmp_path / "collected" / "collection.csv").read_text().replace(",collected,", ",stolen,")
    damaged.write_text(text)
    done = run_cli("export", grades, "--roster", str(tmp_path / "roster.csv"), "--collection", str(damaged))
    assert done.returncode == 2 and "damaged.csv:2: status 'stolen'" in done.stderr
    done = run_cli("export", grades, "--collection", str(damaged))
    assert done.returncode == 2 and "--collection needs --roster" in done.stderr


def test_the_collection_csv_is_the_instructors_only_under_umask_022(tmp_path):
    import stat

    ann = repo(tmp_path, "ann", {"solutions/normalize-rows.py": CORRECT})
    before = os.umask(0o022)  # (inherited by the grader it starts)
    try:
        done, out = collect(tmp_path, {"ann": ann.path})
    finally:
        os.umask(before)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(os.stat(os.path.join(out, "collection.csv")).st_mode) == 0o600
