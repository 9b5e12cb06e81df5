"""The places every user may write (grader/sandbox/shared_places.py), which the unprivileged
tier closes to its workers with an ACL entry (posix_acl.py): what is found, what is passed
over, and the entry written as the kernel reads it."""

import os
import stat

import pytest

from grader.sandbox import posix_acl, shared_places
from grader.sandbox.shared_places import Mount

GID = 1_499_999_999


def test_a_named_group_entry_keeps_every_other_entry_and_the_mode():
    base = posix_acl.from_mode(0o1777)
    entries = posix_acl.with_group(base, GID, 0o1)
    assert (posix_acl.GROUP, 0o1, GID) in entries
    assert (posix_acl.MASK, 0o7, posix_acl.UNDEFINED) in entries  # the owning group's rights
    assert posix_acl.decode(posix_acl.encode(entries)) == sorted(entries, key=lambda e: (e[0], e[2]))
    again = posix_acl.with_group(entries, GID, 0o0)  # replaced, not added twice
    assert [e for e in again if e[0] == posix_acl.GROUP] == [(posix_acl.GROUP, 0, GID)]
    with pytest.raises(ValueError):
        posix_acl.decode(b"\x01\x00\x00\x00")


def test_the_entry_is_set_on_a_real_folder_and_the_mode_stays(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o1777)
    try:
        posix_acl.set_group(str(folder), GID, 0o1)
    except OSError as exc:
        pytest.skip(f"no ACLs on this filesystem: {exc}")
    assert posix_acl.group_rights(str(folder), GID) == 0o1
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o1777
    link = tmp_path / "link"
    link.symlink_to(folder)
    with pytest.raises(OSError):
        posix_acl.set_group(str(link), GID, 0o1)  # a link is never followed


MOUNTINFO = """\
22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
23 22 0:5 / /proc rw,nosuid - proc proc rw
24 22 0:6 / /mnt/with\\040space rw - tmpfs tmpfs rw
25 22 0:7 / /mnt/ro ro,relatime - tmpfs tmpfs rw
26 22 0:8 / /mnt/with\\040space ro - tmpfs tmpfs rw
"""


def test_mounts_are_read_as_the_kernel_escapes_them_and_the_last_one_counts():
    found = shared_places.mounts(MOUNTINFO)
    assert [m.point for m in found] == ["/", "/proc", "/mnt/ro", "/mnt/with space"]
    assert Mount("/mnt/with space", "tmpfs", True) in found  # mounted over: the later one


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A small machine: tmp_path stands for a filesystem every user may reach."""
    monkeypatch.setattr(shared_places, "_reachable", lambda path: True)
    os.chmod(tmp_path, 0o755)

    def folder(name, mode):
        path = tmp_path / name
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, mode)
        return str(path)

    def file(name, mode):
        path = tmp_path / name
        path.write_text("x")
        os.chmod(path, mode)
        return str(path)

    return tmp_path, folder, file


def test_what_every_user_may_write_is_found_and_what_they_cannot_reach_is_not(tree):
    root, folder, file = tree
    shared = folder("var/tmp", 0o1777)
    nested = folder("var/tmp/notes", 0o777)
    folder("home/alice", 0o700)
    hidden = folder("home/alice/open", 0o777)  # behind a folder others cannot search
    no_search = folder("srv/drop", 0o772)  # others may write but not enter: no place
    planted = file("var/tmp/log", 0o666)
    file("var/tmp/readme", 0o644)
    (root / "var" / "link").symlink_to(hidden)  # a link is not followed
    other_mount = folder("mnt/shm", 0o1777)  # another mount: walked on its own
    queues = folder("mnt/mqueue", 0o1777)
    file("mnt/mqueue/queue", 0o666)  # no write reaches a queue's messages
    found = shared_places.find(
        [Mount(str(root), "ext4", False), Mount(other_mount, "tmpfs", False), Mount(queues, "mqueue", False)]
    )
    assert sorted(found.folders) == sorted([shared, nested, other_mount, queues])
    assert hidden not in found.folders and no_search not in found.folders
    assert found.files == (planted,)


def test_read_only_and_kernel_filesystems_are_passed_over(tree):
    root, folder, _ = tree
    folder("a", 0o1777)
    assert shared_places.find([Mount(str(root), "ext4", True)]).folders == ()
    assert shared_places.find([Mount(str(root), "proc", False)]).folders == ()


def test_a_folder_that_takes_no_acl_is_swept_and_a_file_stays_open(tree, monkeypatch):
    root, folder, file = tree
    shared = folder("tmp", 0o1777)
    planted = file("tmp/log", 0o666)
    mqueue = folder("mq", 0o1777)
    real = posix_acl.set_group

    def set_group(path, gid, rights):
        if path.startswith(mqueue) or path == planted:
            raise OSError(95, "Operation not supported")
        real(path, gid, rights)

    monkeypatch.setattr(posix_acl, "set_group", set_group)
    try:
        real(shared, GID, 0o1)
    except OSError as exc:
        pytest.skip(f"no ACLs on this filesystem: {exc}")
    closure = shared_places.close(shared_places.Found((shared, mqueue), (planted,)), GID)
    assert closure == shared_places.Closure(closed=(shared,), swept=(mqueue,), open=(planted,))
    assert posix_acl.group_rights(shared, GID) == 0o1


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_sweep_removes_what_the_user_owns_and_nothing_else(tree):
    root, folder, file = tree
    shared = folder("mq", 0o1777)
    uid = 1_500_000_007
    mine = file("mq/note", 0o644)
    theirs = file("mq/other", 0o644)
    locked = folder("mq/locked/deeper", 0o700)
    for path in (mine, os.path.dirname(locked), locked):
        os.chown(path, uid, uid)
    os.chmod(os.path.dirname(locked), 0o300)  # unlistable: removed all the same
    assert shared_places.sweep([shared], uid) == []
    assert sorted(os.listdir(shared)) == ["other"] and os.path.exists(theirs)
