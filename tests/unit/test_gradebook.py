"""The gradebook: one row per (task, student), replaced on re-grading, kept across opening
it again; what a re-run needs to skip unchanged work (content hash, task digest)."""

from grader.classroom.gradebook import Gradebook
from grader.records.result import Result


def _report(score, student="alice"):
    """A row as a grader stored it, read back (Result.from_dict)."""
    return Result.from_dict(_row(score, student))


def _row(score, student="alice"):
    return {
        "submission": f"{student}.py",
        "score": score,
        "max_score": 4,
        "status": "passed" if score == 4 else "failed",
        "isolation": "bubblewrap",
        "checks": [
            {"name": "a", "status": "passed", "score": score, "max_score": 4, "message": "ok \x1b[2J"}
        ],
    }


def test_a_result_is_stored_replaced_and_read_back_after_reopening(tmp_path):
    path = str(tmp_path / "gradebook.sqlite")
    book = Gradebook(path)
    book.record("t", "alice", "h1", "1", "d1", _report(2))
    book.record("t", "bob", "h2", "1", "d1", _report(4, "bob"))
    book.record("t", "alice", "h3", "1", "d2", _report(4))  # re-graded: replaces
    book.record("u", "alice", "h1", "1", "d9", _report(1))
    book.close()
    book = Gradebook(path)
    try:
        stored = book.stored("t")
        assert set(stored) == {"alice", "bob"}
        assert (stored["alice"].content_hash, stored["alice"].task_digest) == ("h3", "d2")
        assert book.tasks() == ["t", "u"]
        assert [s for s, _ in book.reports("t")] == ["alice", "bob"]  # sorted by student
        assert book.reports("t")[0][1].score == 4
        assert book.reports("u")[0][1].score == 1
    finally:
        book.close()


def test_stored_student_text_is_read_back_inert(tmp_path):
    book = Gradebook(str(tmp_path / "g.sqlite"))
    try:
        book.record("t", "alice", "h", "1", "d", _report(4))
        [(_, report)] = book.reports("t")
        assert "\x1b" not in report.checks[0].message  # cleaned on reading too
    finally:
        book.close()


def test_a_failed_record_leaves_no_half_row(tmp_path):
    book = Gradebook(str(tmp_path / "g.sqlite"))
    try:
        bad = _report(2)
        bad.isolation = object()  # fails inside the transaction (no JSON for it)
        try:
            book.record("t", "alice", "h", "1", "d", bad)
        except TypeError:
            pass
        assert book.stored("t") == {}
        book.record("t", "alice", "h", "1", "d", _report(2))  # and the book still works
        assert set(book.stored("t")) == {"alice"}
    finally:
        book.close()
