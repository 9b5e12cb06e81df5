"""Where a batch's HTML pages go: ``OUT/pages-<task>/<student>.html`` (one per student, the
student view) and ``OUT/class-<task>.html``, each written whole or not at all (a batch
writes them with these functions; the renderers are in grader/report/).

A student id is a file name, hostile text: it may hold ``..``, separators, markup, names
that differ only in case (``Alice`` and ``alice`` share one file on a case-insensitive file
system) or only in characters a file name cannot keep. So a page is named by the id itself
only when the id is plainly safe (lower-case letters, digits, ``_`` and ``-``, at most 64,
not a name Windows reserves);
any other id gets a readable prefix and a hash of the exact id after a ``.`` (which no plain
name holds): ``alice.3f9a0c1d2e4b5a69.html``. Two different ids never share a page, and no
id can name a file outside the folder.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import replace

from grader import disk
from grader.classroom.grade_files import task_file, task_folder
from grader.grading import for_students
from grader.records.result import Result
from grader.report.class_page import StudentLine
from grader.report.class_page import render as class_html
from grader.report.class_summary import ClassSummary
from grader.report.html import render as student_html

_PLAIN = re.compile(r"[a-z0-9_][a-z0-9_-]{0,63}")
_UNSAFE = re.compile(r"[^a-z0-9_-]+")
# Names Windows reserves whatever the extension (a class folder may be copied there).
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10))}
TEMPORARY_SUFFIX = ".partial"


def page_name(student: str) -> str:
    """The page's file name for a student id (see the module's note)."""
    if _PLAIN.fullmatch(student) and student not in _RESERVED:
        return f"{student}.html"
    prefix = _UNSAFE.sub("-", student.lower()).strip("-")[:40] or "student"
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{prefix}.{digest}.html"


def pages_folder(out_dir: str, task_id: str) -> str:
    return task_folder(out_dir, "pages", task_id)


def student_page_path(out_dir: str, task_id: str, student: str) -> str:
    return os.path.join(pages_folder(out_dir, task_id), page_name(student))


def class_page_path(out_dir: str, task_id: str) -> str:
    return task_file(out_dir, "class", task_id, "html")


def _write_page(path: str, content: str) -> None:
    """Write ``path`` by a temporary file and a rename: a batch killed meanwhile leaves the
    old page or the new one, never half of one (and a leftover temporary, see ``tidy``)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # (0o666: the umask decides, as for the batch's other files)
    with disk.write_whole(path, "w", permissions=0o666, suffix=TEMPORARY_SUFFIX, encoding="utf-8") as f:
        f.write(content)


def tidy(out_dir: str, task_id: str) -> None:
    """Remove what a killed batch left half-written in the pages folder."""
    folder = pages_folder(out_dir, task_id)
    if os.path.isdir(folder):
        for entry in os.scandir(folder):
            if entry.name.startswith(".") and entry.name.endswith(TEMPORARY_SUFFIX):
                os.unlink(entry.path)


# --------------------------------------------------------------------------- writing them


def write_student_page(out_dir: str, task_id: str, student: str, report: Result) -> None:
    """The student's page: the student view (hidden checks redacted, as `grader check`)."""
    _write_page(student_page_path(out_dir, task_id, student), student_html(for_students(report)))


def without_pictures(report: Result) -> Result:
    """The report as the gradebook keeps it: pictures go only to the page."""
    return replace(report, checks=[replace(c, picture=None) for c in report.checks])


def write_class_page(
    summary: ClassSummary, reports: list[tuple[str, Result]], out_dir: str, task_id: str
) -> str:
    """The class page (class_summary.ClassSummary and every stored report), linking each
    student's page that exists; returns its path."""
    lines = []
    for student, report in reports:
        path = student_page_path(out_dir, task_id, student)
        link = os.path.relpath(path, out_dir).replace(os.sep, "/") if os.path.exists(path) else None
        lines.append(StudentLine(student, report.score, report.max_score, str(report.status), link))
    path = class_page_path(out_dir, task_id)
    _write_page(path, class_html(summary, lines))
    return path
