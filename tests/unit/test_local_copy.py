"""Which repositories of a roster are local paths (by git's own rules), and the private copy
`grader collect` makes of one: its caps, and nothing of the student's settings in it."""

import os

import pytest
from helpers.student_repos import StudentRepo

from grader.classroom.collecting import local_copy
from grader.classroom.collecting.local_copy import Local, Network, Refused, Unusable, copy_git_dir, where


@pytest.mark.parametrize(
    "url, expected",
    [
        ("https://github.com/org/ann.git", Network("https://github.com/org/ann.git")),
        ("ssh://git@host/ann.git", Network("ssh://git@host/ann.git")),
        ("git@github.com:org/ann.git", Network("git@github.com:org/ann.git")),  # scp-like
        ("host:ann.git", Network("host:ann.git")),
        ("ext::sh -c touch% x", Network("ext::sh -c touch% x")),  # (GIT_ALLOW_PROTOCOL refuses it)
        ("/srv/students/ann.git", Local("/srv/students/ann.git")),
        ("students/ann.git", Local("students/ann.git")),
        ("./odd:name.git", Local("./odd:name.git")),  # a slash before the colon: a path
        ("file:///srv/students/a%20b.git", Local("/srv/students/a b.git")),  # decoded, as git does
        ("file://host/srv/ann.git", Local("/srv/ann.git")),  # (git ignores the host)
        ("FILE:///srv/ann.git", Local("/srv/ann.git")),
    ],
)
def test_a_url_is_local_or_network_by_git_s_rules(url, expected):
    assert where(url) == expected


def test_a_value_that_git_would_take_for_an_option_is_unusable():
    for url in ("--upload-pack=touch /tmp/x", "-x"):
        assert isinstance(where(url), Unusable) and "starts with '-'" in where(url).reason


def _repo(tmp_path):
    repo = StudentRepo(tmp_path / "root" / "ann.git")
    repo.commit({"solutions/normalize-rows.py": "x = 1\n" * 2000})
    return repo


def test_the_copy_is_capped_in_entries_and_bytes(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    (tmp_path / "work").mkdir()
    monkeypatch.setattr(local_copy, "ENTRIES", 5)
    with pytest.raises(Refused, match="more than 5 entries"):
        copy_git_dir(repo.path, str(tmp_path / "root"), str(tmp_path / "work"))
    monkeypatch.setattr(local_copy, "ENTRIES", 1000)
    monkeypatch.setattr(local_copy, "BYTES", 100)
    with pytest.raises(Refused, match="is larger than"):
        copy_git_dir(repo.path, str(tmp_path / "root"), str(tmp_path / "work"))
    assert os.listdir(tmp_path / "work") == []  # (what was copied of it is gone)


def test_the_copy_holds_none_of_the_student_s_settings_or_hooks(tmp_path):
    repo = _repo(tmp_path)
    with open(os.path.join(repo.path, "config"), "a") as f:
        f.write(
            "[core]\n\tfsmonitor = touch /tmp/pwned\n[uploadpack]\n\tpackObjectsHook = touch /tmp/pwned\n"
        )
    (tmp_path / "work").mkdir()
    copy = copy_git_dir(repo.path, str(tmp_path / "root"), str(tmp_path / "work"))
    assert sorted(os.listdir(copy)) == ["HEAD", "config", "objects", "refs"]
    with open(os.path.join(copy, "config")) as f:
        assert "pwned" not in f.read()
    assert os.stat(os.path.dirname(copy)).st_mode & 0o777 == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a file of another user's")
def test_a_hard_link_to_another_user_s_file_is_refused(tmp_path):
    repo = _repo(tmp_path)
    secret = tmp_path / "instructor-only"
    secret.write_text("the instructor's")
    os.chown(secret, 4242, 4242)
    os.link(secret, os.path.join(repo.path, "refs", "heads", "stolen"))
    (tmp_path / "work").mkdir()
    with pytest.raises(Refused, match="refs/heads/stolen is a hard link to a file of another user's"):
        copy_git_dir(repo.path, str(tmp_path / "root"), str(tmp_path / "work"))
