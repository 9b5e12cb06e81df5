"""`grader collect` of repositories named by a local path (issue 34, class 3: a confused
deputy). The instructor's private course repository is on the collecting machine; a student
whose "repository" is a link to it, or borrows its objects and refs, or points git at it by
a `.git` file, must not get the instructor's solution collected as their hand-in. Honest
repositories inside --repos-root are collected as before."""

import os

from helpers.cli import run_cli
from helpers.student_repos import StudentRepo, git, roster
from test_collect import CORRECT, TASK, TASK_ID, collection

MARKER = b"# the instructor's own solution: INSTRUCTOR-ONLY-7f3a"
SOLUTION = CORRECT + "\n" + MARKER.decode() + "\n"


def instructor_repository(tmp_path):
    """The instructor's private course repository (bare, outside the students' folder),
    its main branch both loose and in packed-refs."""
    course = StudentRepo(tmp_path / "instructor" / "course.git")
    tip = course.commit({"solutions/normalize-rows.py": SOLUTION})
    git("pack-refs", "--all", cwd=course.path)
    with open(os.path.join(course.path, "refs", "heads", "main"), "w") as f:
        f.write(tip + "\n")  # (loose again, beside packed-refs)
    for name in ("refs/heads/main", "packed-refs", "objects"):
        assert os.path.exists(os.path.join(course.path, name))
    return course.path


def borrower(path, instructor, link=()):
    """A bare repository of the student's own that lends itself the instructor's objects
    (objects/info/alternates) and whose ``link`` entries are symbolic links to the
    instructor's: what git would read as the instructor's branch."""
    git("init", "-q", "--bare", str(path))
    git("symbolic-ref", "HEAD", "refs/heads/main", cwd=str(path))
    with open(os.path.join(path, "objects", "info", "alternates"), "w") as f:
        f.write(os.path.join(instructor, "objects") + "\n")
    for name, target in link:
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            os.rename(full, full + ".old")
        elif os.path.lexists(full):
            os.unlink(full)
        os.symlink(os.path.join(instructor, target), full)
    return str(path)


def collect(tmp_path, students, *more):
    out = str(tmp_path / "collected")
    done = run_cli(
        "collect",
        TASK,
        "--roster",
        roster(tmp_path / "roster.csv", students),
        "--out",
        out,
        *more,
        timeout=300,
    )
    return done, out


def no_file_holds_the_instructor_s_solution(out):
    for folder, _, names in os.walk(out):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                assert MARKER not in f.read(), os.path.join(folder, name)


def test_a_student_s_path_never_hands_in_the_instructor_s_repository(tmp_path):
    instructor = instructor_repository(tmp_path)
    students = tmp_path / "students"
    students.mkdir()
    attacks = {}
    # The repository is a link to the instructor's, inside the root, pointing out.
    os.symlink(instructor, students / "link.git")
    attacks["link"] = str(students / "link.git")
    attacks["file-url-link"] = "file://" + str(students / "link.git")
    # A folder on the way is a link out of the root.
    os.symlink(os.path.dirname(instructor), students / "section")
    attacks["folder-link"] = str(students / "section" / "course.git")
    # Its own bare repository, the instructor's objects and a link to the instructor's ref.
    attacks["alternates-ref"] = borrower(
        students / "alt-ref.git", instructor, [("refs/heads/main", "refs/heads/main")]
    )
    attacks["alternates-packed"] = borrower(
        students / "alt-packed.git", instructor, [("packed-refs", "packed-refs")]
    )
    attacks["alternates-head"] = borrower(
        students / "alt-head.git", instructor, [("HEAD", "refs/heads/main")]
    )
    attacks["alternates-refs"] = borrower(students / "alt-refs.git", instructor, [("refs", "refs")])
    # Alternates alone, the ref a plain file holding the instructor's commit.
    plain = borrower(students / "alt-plain.git", instructor)
    tip = git("rev-parse", "refs/heads/main", cwd=instructor)
    git("update-ref", "refs/heads/main", tip, cwd=plain)
    attacks["alternates-plain"] = plain
    # A checkout whose .git is a file naming the instructor's repository.
    (students / "gitdir").mkdir()
    (students / "gitdir" / ".git").write_text(f"gitdir: {instructor}\n")
    attacks["gitdir"] = str(students / "gitdir")
    # A linked worktree's git directory, its commondir the instructor's repository.
    worktree = students / "worktree.git"
    for folder in ("objects", "refs"):
        (worktree / folder).mkdir(parents=True)
    (worktree / "HEAD").write_text("ref: refs/heads/main\n")
    (worktree / "commondir").write_text(instructor + "\n")
    attacks["worktree"] = str(worktree)
    # Paths outside the root: absolute, and climbing out of it.
    attacks["outside"] = instructor
    attacks["climbing"] = str(students / ".." / "instructor" / "course.git")
    # A FIFO among its refs (a read of it would hang the collection).
    fifo = StudentRepo(students / "fifo.git")
    fifo.commit({"solutions/normalize-rows.py": CORRECT})
    os.mkfifo(os.path.join(fifo.path, "refs", "heads", "waiting"))
    attacks["fifo"] = fifo.path
    # Honest students: an ordinary clone (a checkout with its .git folder), a bare
    # repository, a file:// URL.
    bare = StudentRepo(students / "bob.git")
    bare.commit({"solutions/normalize-rows.py": CORRECT})
    git("clone", "-q", bare.path, str(students / "ann"))
    honest = {"ann": str(students / "ann"), "bob": bare.path, "cal": "file://" + bare.path}

    done, out = collect(tmp_path, {**attacks, **honest}, "--repos-root", str(students))
    assert done.returncode == 0, done.stdout + done.stderr
    record = collection(out)
    for name in attacks:
        assert record[name]["status"] == "refused", (name, record[name])
        assert record[name]["file"] == "" and record[name]["commit"] == "", record[name]
    for name in honest:
        assert record[name]["status"] == "collected", (name, record[name])
        assert record[name]["commit"] == bare.tip
    assert sorted(os.listdir(os.path.join(out, TASK_ID))) == ["ann.py", "bob.py", "cal.py"]
    assert (tmp_path / "collected" / TASK_ID / "ann.py").read_text() == CORRECT
    no_file_holds_the_instructor_s_solution(out)
    # Each reason names what was refused.
    expected = {
        "link": "link.git is a symbolic link",
        "file-url-link": "link.git is a symbolic link",
        "folder-link": "section is a symbolic link",
        "alternates-ref": "objects/info/alternates",
        "alternates-packed": "packed-refs is a symbolic link",
        "alternates-head": "HEAD is a symbolic link",
        "alternates-refs": "objects/info/alternates",
        "alternates-plain": "objects/info/alternates",
        "gitdir": ".git is a file",
        "worktree": "linked worktree",
        "outside": f"outside --repos-root {os.path.realpath(students)}",
        "climbing": "outside --repos-root",
        "fifo": "refs/heads/waiting is a FIFO",
    }
    for name, text in expected.items():
        assert text in record[name]["reason"], (name, record[name]["reason"])


def test_links_in_refs_are_refused_even_without_alternates(tmp_path):
    """A ref, packed-refs or HEAD that is a link reads the instructor's branch; with the
    objects copied in by the student (who could read them), the link alone would do."""
    instructor = instructor_repository(tmp_path)
    students = tmp_path / "students"
    students.mkdir()
    cases = {}
    for name, entry, target in (
        ("ref", "refs/heads/main", "refs/heads/main"),
        ("packed", "packed-refs", "packed-refs"),
        ("head", "HEAD", "refs/heads/main"),
    ):
        own = StudentRepo(students / f"{name}.git")
        own.commit({"solutions/normalize-rows.py": "# mine\n"})
        git("fetch", "-q", instructor, "+refs/heads/main:refs/instructor", cwd=own.path)
        if entry == "packed-refs":  # (the student's loose main would come first)
            os.unlink(os.path.join(own.path, "refs", "heads", "main"))
        full = os.path.join(own.path, entry)
        if os.path.lexists(full):
            os.unlink(full)
        os.symlink(os.path.join(instructor, target), full)
        cases[name] = (own.path, entry)
    done, out = collect(
        tmp_path, {name: path for name, (path, _) in cases.items()}, "--repos-root", str(students)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    record = collection(out)
    for name, (_, entry) in cases.items():
        assert record[name]["status"] == "refused", record[name]
        assert f"{entry} is a symbolic link" in record[name]["reason"], record[name]
    no_file_holds_the_instructor_s_solution(out)


def test_local_paths_without_repos_root_are_refused_before_anything_is_fetched(tmp_path):
    instructor = instructor_repository(tmp_path)
    done, out = collect(
        tmp_path, {"net": "https://127.0.0.1:9/net.git", "mallory": instructor, "eve": "file://" + instructor}
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "roster.csv: lines 3, 4 name a local path" in done.stderr, done.stderr
    assert "--repos-root DIR" in done.stderr and "Traceback" not in done.stderr
    assert not os.path.exists(out)
    # A roster of network URLs alone needs no --repos-root.
    done, out = collect(tmp_path, {"net": "https://127.0.0.1:9/net.git", "scp": "127.0.0.1:net.git"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert {r["status"] for r in collection(out).values()} == {"unreachable"}


def test_a_repository_missing_inside_the_root_is_unreachable_not_refused(tmp_path):
    (tmp_path / "students").mkdir()
    done, out = collect(
        tmp_path,
        {"ann": str(tmp_path / "students" / "never-made.git")},
        "--repos-root",
        str(tmp_path / "students"),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    record = collection(out)["ann"]
    assert record["status"] == "unreachable" and "never-made.git does not exist" in record["reason"]
    done, _ = collect(tmp_path, {"ann": "x"}, "--repos-root", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "--repos-root" in done.stderr and "is not a folder" in done.stderr
