"""A count in words: singular for one, plural for the rest."""

from grader.records.wording import counted


def test_one_is_singular_and_every_other_count_plural():
    assert counted(1, "check") == "1 check"
    assert [counted(n, "problem") for n in (0, 2)] == ["0 problems", "2 problems"]
    assert counted(1, "repository", "repositories") == "1 repository"
    assert counted(3, "repository", "repositories") == "3 repositories"
