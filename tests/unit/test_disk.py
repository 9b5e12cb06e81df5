"""The grader's ways of writing a file (grader/disk.py): whole or not at all, new and
private, a folder swapped whole; and a cache entry read tolerantly, named by versions."""

import os
import stat

import pytest

from grader import __version__, disk


def test_a_file_written_whole_is_the_old_one_or_the_new_one_and_a_failure_leaves_nothing(tmp_path):
    path = tmp_path / "page.html"
    path.write_text("old")
    with pytest.raises(RuntimeError), disk.write_whole(str(path), "w") as f:
        f.write("half")
        raise RuntimeError("killed")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["page.html"]
    (tmp_path / "elsewhere").write_text("theirs")
    os.remove(path)
    os.symlink(tmp_path / "elsewhere", path)
    with disk.write_whole(str(path), permissions=0o644, exact=True) as f:
        f.write(b"new")
    # the link is replaced, never written through; the mode is as asked whatever the umask
    assert not path.is_symlink() and path.read_bytes() == b"new"
    assert (tmp_path / "elsewhere").read_text() == "theirs"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_new_private_file_is_0600_whatever_the_umask_and_never_through_a_link(tmp_path):
    old = os.umask(0)
    try:
        with disk.create_private(str(tmp_path / "a.csv"), "w", encoding="utf-8") as f:
            f.write("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.csv").stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        disk.create_private(str(tmp_path / "a.csv"))
    os.symlink(tmp_path / "nowhere", tmp_path / "link")
    with pytest.raises(OSError):
        disk.create_private(str(tmp_path / "link"))
    assert not (tmp_path / "nowhere").exists()


def test_a_folder_swapped_whole_replaces_the_old_and_leaves_nothing_beside_it(tmp_path):
    target, fresh = tmp_path / "frozen", tmp_path / ".fresh"
    target.mkdir()
    (target / "old").write_text("1")
    fresh.mkdir()
    (fresh / "new").write_text("2")
    disk.swap_folder(str(fresh), str(target))
    assert os.listdir(target) == ["new"] and os.listdir(tmp_path) == ["frozen"]


def test_a_cache_entry_missing_damaged_or_a_link_is_none_and_its_name_holds_the_versions(tmp_path):
    entry = tmp_path / "cache" / "x.json"
    assert disk.read_entry(str(entry), bytes.decode) is None
    disk.write_entry(str(entry), b"[1.5]")
    assert disk.read_entry(str(entry), bytes.decode) == "[1.5]"
    assert disk.read_entry(str(entry), bytes.decode, max_bytes=2) is None
    entry.write_bytes(b"\xff")
    assert disk.read_entry(str(entry), bytes.decode) is None  # (damaged: passed over)
    os.symlink(tmp_path / "cache" / "x.json", tmp_path / "cache" / "y.json")
    assert disk.read_entry(str(tmp_path / "cache" / "y.json"), bytes.decode) is None
    assert disk.versions("numpy").startswith(f"{__version__}/")
    assert disk.versions("no-such-library-here").endswith("/?")
    assert disk.entry_name("t-c", "a", 1) != disk.entry_name("t-c", "b", 1)
    assert disk.entry_name("t-c", "a", 1).startswith("t-c-")
