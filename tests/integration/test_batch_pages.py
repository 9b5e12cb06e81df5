"""The pages a batch writes, as files: one per student and a class page, correct after a
kill -9 and a rerun, regraded when a page is missing; pictures on the pages, not in the
gradebook. And `grader check` imports nothing of the pages unless one is asked for."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT

PAGES = "pages-positional-encoding"


def make_class(folder, students):
    folder.mkdir(parents=True, exist_ok=True)
    for student, sample in students.items():
        (folder / f"{student}.py").write_bytes(open(os.path.join(PE_SAMPLES, sample), "rb").read())
    return folder


def stored(book):
    if not book.exists():
        return 0
    try:
        return sqlite3.connect(book).execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def scores(out):
    rows = sqlite3.connect(out / "gradebook.sqlite").execute("SELECT student, score, report FROM results")
    return {student: (score, json.loads(report)) for student, score, report in rows}


def page_score(path):
    return re.search(r"Score: ([0-9.]+)/", path.read_text()).group(1)


def test_a_killed_batch_rerun_leaves_one_correct_page_per_student_and_a_full_class_page(tmp_path):
    students = {
        f"s{i:02d}": ("correct_loops.py" if i % 2 else "mistake_sin_cos_swapped.py") for i in range(12)
    }
    klass = make_class(tmp_path / "class", students)
    out = tmp_path / "out"
    book = out / "gradebook.sqlite"
    batch = subprocess.Popen(
        [sys.executable, "-m", "grader", "batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "2"],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and stored(book) < 3:
        time.sleep(0.1)
    os.killpg(batch.pid, signal.SIGKILL)
    batch.wait()
    assert 3 <= stored(book) < 12, "kill the batch part-way"
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300)
    assert done.returncode == 0, done.stderr
    pages = sorted(os.listdir(out / PAGES))
    assert pages == [f"{s}.html" for s in sorted(students)]  # no half-written leftovers either
    graded = scores(out)
    for student in students:
        assert float(page_score(out / PAGES / f"{student}.html")) == graded[student][0]
    class_page = (out / "class-positional-encoding.html").read_text()
    assert "12 submissions" in class_page
    assert all(f'href="{PAGES}/{s}.html"' in class_page for s in students)


def test_pictures_go_to_the_pages_not_the_gradebook_and_a_lost_page_is_made_again(tmp_path):
    klass = make_class(
        tmp_path / "class", {"ann": "mistake_column_index_exponent.py", "ben": "correct_vectorized.py"}
    )
    out = tmp_path / "out"
    assert run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300).returncode == 0
    for _, report in scores(out).values():
        assert all(check["picture"] is None for check in report["checks"])
    ann = out / PAGES / "ann.html"
    assert ann.read_text().count('class="heatmap"') >= 3
    size = os.path.getsize(out / "gradebook.sqlite")
    assert size < 200_000, size  # ~100 kB of pictures for ann alone, were they stored
    ann.unlink()
    again = run_cli("batch", PE_TASK, str(klass), "--out", str(out), timeout=300)
    assert "1 to grade" in again.stderr and ann.read_text().count('class="heatmap"') >= 3


def test_grader_check_imports_no_page_module_unless_a_page_is_asked_for(tmp_path):
    sample = os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py")
    command = [sys.executable, "-X", "importtime", "-m", "grader", "check", PE_TASK, sample]
    text = subprocess.run(command + ["--format", "text"], capture_output=True, text=True, cwd=ROOT)
    assert "grader.report.svg" not in text.stderr and "grader.report.html" not in text.stderr
    assert "grader.report.text" in text.stderr  # (importtime does list the modules)
    page = subprocess.run(
        command + ["--format", "html", "-o", str(tmp_path / "p.html")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert "grader.report.html" in page.stderr and page.returncode == 1
