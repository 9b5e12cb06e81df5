"""Grading a class: parallel, resumable, exported; a hostile file costs only its own grade."""

import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT
from helpers.tasks import IGNORES_BASE_LOSES, as_cell, score_without

CLASS = {
    "alice": "correct_vectorized.py",
    "bob": "mistake_ignores_base.py",
    "carol": "broken_syntax_error.py",
    "dave": "mistake_adds_in_place.py",
}


def make_class(folder, students=CLASS):
    folder.mkdir(parents=True, exist_ok=True)
    for student, sample in students.items():
        shutil.copy(os.path.join(PE_SAMPLES, sample), folder / f"{student}.py")
    return folder


def rows(out):
    with open(out / "grades-positional-encoding.csv", newline="") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def test_batch_grades_a_class_into_gradebook_csv_jsonl_and_summary(tmp_path):
    klass = make_class(tmp_path / "class")
    (klass / "erin").mkdir()
    shutil.copy(os.path.join(PE_SAMPLES, "correct_loops.py"), klass / "erin" / "solution.py")
    (klass / "erin" / "scratch.py").write_text("x = 1\n")
    out = tmp_path / "out"
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "2", timeout=300)
    assert done.returncode == 0, done.stderr
    grades = rows(out)
    assert set(grades) == {"alice", "bob", "carol", "dave", "erin"}
    assert grades["alice"]["score"] == as_cell(score_without()) and grades["alice"]["status"] == "passed"
    assert grades["erin"]["score"] == as_cell(score_without())  # folder per student: its solution.py
    assert grades["carol"]["status"] == "error"
    assert grades["bob"]["table-custom-base"] == "0" and grades["bob"]["table-shape"] == "2"
    assert list(grades["alice"])[:4] == ["student", "score", "max_score", "status"]
    reports = [json.loads(line) for line in open(out / "reports-positional-encoding.jsonl")]
    assert {r["student"] for r in reports} == set(grades)
    summary = (out / "summary-positional-encoding.md").read_text()
    assert "## Pass rate per check" in summary and "| table-custom-base |" in summary
    assert "## Errored (nothing could be graded)" in summary and "carol" in summary
    assert "graded 5/5" in done.stderr or "done: 5 graded" in done.stderr
    from grader.sandbox import choose_tier, warm

    if warm.supported(choose_tier()):  # the instructor is told how the class is isolated
        assert f"sandbox: {choose_tier()}, each worker forked from a warm server" in done.stderr


def test_rerun_skips_unchanged_and_regrades_changed(tmp_path):
    klass = make_class(tmp_path / "class")
    out = tmp_path / "out"
    run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300)
    shutil.copy(os.path.join(PE_SAMPLES, "correct_exp_log.py"), klass / "bob.py")
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300)
    assert "4 submissions, 1 to grade, 3 unchanged" in done.stderr
    assert rows(out)["bob"]["score"] == as_cell(score_without())
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), "--force", timeout=300)
    assert "4 to grade" in done.stderr


def test_a_student_whose_file_is_removed_leaves_the_gradebook_and_every_file(tmp_path):
    klass = make_class(
        tmp_path / "class", {"alice": "correct_vectorized.py", "bob": "mistake_ignores_base.py"}
    )
    out = tmp_path / "out"
    assert run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300).returncode == 0
    assert set(rows(out)) == {"alice", "bob"}
    (klass / "bob.py").unlink()
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 submission, 0 to grade, 1 unchanged" in done.stderr
    assert set(rows(out)) == {"alice"}
    assert (
        f"positional-encoding: 1 student removed from the gradebook, their file no longer "
        f"being in {klass}: bob"
    ) in done.stderr
    reports = [json.loads(line) for line in open(out / "reports-positional-encoding.jsonl")]
    assert [r["student"] for r in reports] == ["alice"]
    summary = (out / "summary-positional-encoding.md").read_text()
    assert summary.startswith("# positional-encoding: 1 submission\n") and "bob" not in summary
    page = (out / "class-positional-encoding.html").read_text()
    assert "alice" in page and "bob" not in page
    pages = {p.name for p in out.rglob("*.html")}
    assert "alice.html" in pages and "bob.html" not in pages  # (the student's own page too)
    # ... and an export made afterwards from the gradebook agrees
    exported = run_cli("export", str(out))
    assert exported.returncode == 0, exported.stderr
    assert set(rows(out)) == {"alice"}


def test_the_terminal_gets_the_summary_as_plain_text_and_the_file_as_markdown(tmp_path):
    """A mistake's explanation and student ids hold Markdown punctuation: the terminal shows
    them as written (control characters made visible), the .md file escapes them."""
    klass = make_class(tmp_path / "class", {"ann": "mistake_sin_cos_swapped.py"})
    shutil.copy(os.path.join(PE_SAMPLES, "broken_syntax_error.py"), klass / "carol_[x]\x1b.py")
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(tmp_path / "out"), timeout=300)
    assert done.returncode == 0, done.stderr
    swapped = "are swapped: even columns hold the cosine, odd ones the sine."
    assert swapped in done.stdout and "PE[p, 2i] = sin(...)" in done.stdout
    assert "\\" not in done.stdout.replace("carol_[x]\\x1b", "")  # no escape but the control shown
    assert "carol_[x]\\x1b" in done.stdout and "\x1b" not in done.stdout
    assert done.stdout.startswith("positional-encoding: 2 submissions\n") and "**" not in done.stdout
    markdown = (tmp_path / "out" / "summary-positional-encoding.md").read_text()
    assert "are swapped\\: even columns hold the cosine\\, odd ones the sine\\." in markdown
    assert "carol\\_\\[x\\]\\\\x1b" in markdown and "**1 student**: sin-cos-swapped" in markdown


def test_batch_killed_with_sigkill_resumes_without_loss_or_double_counting(tmp_path):
    students = {f"s{i:02d}": ("correct_loops.py" if i % 2 else "mistake_float32_table.py") for i in range(12)}
    klass = make_class(tmp_path / "class", students)
    out = tmp_path / "out"
    book = out / "gradebook.sqlite"
    batch = subprocess.Popen(
        [sys.executable, "-m", "grader", "batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "2"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and stored < 3:
        time.sleep(0.2)
        if book.exists():
            try:
                stored = sqlite3.connect(book).execute("SELECT COUNT(*) FROM results").fetchone()[0]
            except sqlite3.OperationalError:
                pass
    batch.send_signal(signal.SIGKILL)
    batch.wait()
    assert 3 <= stored < 12, "kill the batch part-way"
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300)
    assert done.returncode == 0
    count = sqlite3.connect(book).execute("SELECT COUNT(*), COUNT(DISTINCT student) FROM results").fetchone()
    assert count == (12, 12)
    assert "to grade" in done.stderr and "12 to grade" not in done.stderr
    assert len(rows(out)) == 12


def test_export_writes_the_csv_again(tmp_path):
    klass = make_class(tmp_path / "class")
    out = tmp_path / "out"
    run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300)
    first = (out / "grades-positional-encoding.csv").read_text()
    os.remove(out / "grades-positional-encoding.csv")
    done = run_cli("export", str(out))
    assert done.returncode == 0
    assert (out / "grades-positional-encoding.csv").read_text() == first
    assert run_cli("export", str(tmp_path)).returncode == 2


def test_hostile_submission_costs_only_its_own_grade(tmp_path):
    klass = make_class(tmp_path / "class", {"alice": "correct_vectorized.py"})
    (klass / "mallory.py").write_text(
        "import os\nos.kill(os.getppid(), 9)\nwhile True:\n    os.fork() if False else None\n"
    )
    out = tmp_path / "out"
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), "--call-seconds", "2", timeout=300)
    assert done.returncode == 0, done.stderr
    grades = rows(out)
    assert grades["alice"]["score"] == as_cell(score_without())
    assert grades["mallory"]["status"] == "error"


def test_batch_on_a_local_dask_cluster_lands_in_the_same_gradebook(tmp_path):
    distributed = pytest.importorskip("distributed")
    klass = make_class(tmp_path / "class")
    out = tmp_path / "out"
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        done = run_cli(
            "batch", PE_TASK, str(klass), "--out", str(out), "--dask", cluster.scheduler_address, timeout=300
        )
    assert done.returncode == 0, done.stderr[-3000:]
    grades = rows(out)
    assert grades["alice"]["score"] == as_cell(score_without()) and grades["carol"]["status"] == "error"
    assert grades["bob"]["table-custom-base"] == "0"


def test_a_killed_pool_is_rebuilt_and_innocents_are_graded(tmp_path):
    """In the rlimits tier a submission can kill the grading process (same user): the
    others must still get their grades, and the grader's failure is stored as an error row
    (not a grade: the next run grades it again) with a non-zero exit naming the student."""
    klass = make_class(
        tmp_path / "class", {"alice": "correct_vectorized.py", "bob": "mistake_ignores_base.py"}
    )
    (klass / "mallory.py").write_text("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n")
    out = tmp_path / "out"
    done = run_cli(
        "batch",
        PE_TASK,
        str(klass),
        "--out",
        str(out),
        "--isolation",
        "rlimits",
        "--trusted-submissions",
        "--jobs",
        "1",
        timeout=300,
    )
    assert done.returncode == 3, done.stderr
    assert "note: graded in the rlimits tier" in done.stderr
    grades = rows(out)
    assert grades["alice"]["score"] == as_cell(score_without()) and grades["bob"]["score"] == as_cell(
        score_without(*IGNORES_BASE_LOSES)
    )
    assert grades["mallory"]["status"] == "error"
    assert "not graded, because the grading processes kept dying: mallory" in done.stderr
    assert "the grader failed on 1 submission: mallory" in done.stderr


def test_an_ungradable_hand_in_is_named_from_the_class_folder_and_is_no_check(tmp_path):
    """bob's folder of two files is ungradable: his report names 'bob', never the grading
    machine's path; the summary lists him as errored and rates no 'submission' check."""
    klass = make_class(tmp_path / "class", {"alice": "correct_vectorized.py"})
    (klass / "bob").mkdir()
    (klass / "bob" / "a.py").write_text("x = 1\n")
    (klass / "bob" / "b.py").write_text("x = 2\n")
    (klass / "carol").mkdir()
    (klass / "carol" / "sub.py").mkdir()  # a folder is no candidate file
    shutil.copy(os.path.join(PE_SAMPLES, "correct_loops.py"), klass / "carol" / "work.py")
    out = tmp_path / "out"
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300)
    assert done.returncode == 0, done.stderr
    reports = {r["student"]: r for r in map(json.loads, open(out / "reports-positional-encoding.jsonl"))}
    assert reports["bob"]["checks"][0]["message"].startswith("bob: holds 2 .py or .ipynb files")
    assert reports["carol"]["status"] == "passed" and reports["carol"]["submission"] == "carol/work.py"
    for name in (
        "grades-positional-encoding.csv",
        "reports-positional-encoding.jsonl",
        "summary-positional-encoding.md",
    ):
        assert str(tmp_path) not in (out / name).read_text(), name
    summary = (out / "summary-positional-encoding.md").read_text()
    assert "| submission |" not in summary and "## Errored (nothing could be graded)\n\nbob\n" in summary
