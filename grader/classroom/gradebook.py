"""The SQLite store of results: one row per (task, student), one transaction per result.

Each row keeps the full report (staff view, JSON), the submission's content hash and the
task's version and digest, so a re-run can skip what is unchanged. SQLite commits are
atomic and durable, so a batch killed at any moment (kill -9 included) leaves every
finished result stored once and no half-written one; the next run grades the rest.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass

from grader.records.result import Result
from grader.student_text import clean_report, name

# The content hash stored with the error row of a submission the grader itself failed on:
# it matches no file, so the next run grades that submission again.
REGRADE = "grader-failed"
SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    task TEXT NOT NULL,
    student TEXT NOT NULL,
    submission TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    task_version TEXT NOT NULL,
    task_digest TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    status TEXT NOT NULL,
    isolation TEXT NOT NULL,
    report TEXT NOT NULL,
    graded_at REAL NOT NULL,
    PRIMARY KEY (task, student)
)
"""


@dataclass(frozen=True)
class Stored:
    """What a re-run needs to skip a submission: never the report (a class's reports,
    parsed, are tens of MB; read them with ``reports``)."""

    student: str
    content_hash: str
    task_digest: str


class Gradebook:
    def __init__(self, path: str):
        self.path = path
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.db.text_factory = lambda data: data.decode("utf-8", "replace")  # a damaged row still reads
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across crashes of this process
        self.db.execute(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def stored(self, task: str) -> dict[str, Stored]:
        rows = self.db.execute(
            "SELECT student, content_hash, task_digest FROM results WHERE task = ?", (task,)
        )
        return {name(s): Stored(name(s), h, d) for s, h, d in rows}

    def record(
        self, task: str, student: str, content_hash: str, task_version: str, task_digest: str, report: Result
    ) -> None:
        """Store one result in its own transaction (replacing an older one)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    task,
                    student,
                    report.submission,
                    content_hash,
                    task_version,
                    task_digest,
                    report.score,
                    report.max_score,
                    report.status,
                    report.isolation,
                    json.dumps(report.to_dict()),
                    time.time(),
                ),
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def forget_all_but(self, task: str, students: set[str]) -> list[str]:
        """Remove the task's rows of every student not in ``students`` (by the names that
        ``stored`` gives); the names removed, sorted."""
        rows = self.db.execute("SELECT student FROM results WHERE task = ?", (task,)).fetchall()
        gone = [raw for (raw,) in rows if name(raw) not in students]
        if gone:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany(
                    "DELETE FROM results WHERE task = ? AND student = ?", [(task, g) for g in gone]
                )
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        return sorted(name(g) for g in gone)

    def tasks(self) -> list[str]:
        return [t for (t,) in self.db.execute("SELECT DISTINCT task FROM results ORDER BY task")]

    def reports(self, task: str) -> list[tuple[str, Result]]:
        rows = self.db.execute("SELECT student, report FROM results WHERE task = ? ORDER BY student", (task,))
        # Sanitised on reading too: rows stored by older versions may hold raw student text.
        # (Result.from_dict: an older version's row reads, and is written back as it was.)
        return [(name(s), Result.from_dict(clean_report(json.loads(r)))) for s, r in rows]
