"""``grader collect``: final grading's collection, done by the grader, not by a shell loop.

For every roster student (classroom/roster.py, with a ``repo`` column or a ``--repo-url`` template
that names each student's repository), the repository's default branch is fetched into a
private bare repository (bare_repo.py; a local path only inside ``--repos-root``, and from a
private copy of its git directory: local_copy.py), the commit to grade is chosen on its first-parent
history (the last before ``--deadline``; without one, the tip), and each task's hand-in is
read **from git objects**: ``solutions/<task id>`` with a hand-in suffix (submission/formats.py, in any case),
or ``solutions/<task id>/`` holding one, chosen by the rules ``grader ci`` uses
(submission_file.hand_ins_for, choose_in_folder). An entry that is not a regular file (a
symbolic link, a submodule, anything else) is refused by its mode, and a blob larger than the
cap by its size, before a byte of it is read: no link is ever followed and no special file
ever opened, because nothing of the repository is ever on disk.

What was found goes to ``OUT/<task id>/<submission id>`` and its format's suffix (named by the roster,
never by the repository), ready for ``grader batch``, and ``OUT/collection.csv`` records
every (student, task) with what was collected or why nothing was (collection_csv.py); ``grader
export --collection`` puts that in the grade files. One repository that cannot be fetched
never stops the others.

Commit dates are the student's own claim (git writes whatever date it is given). The commit
graded is the last of the history's first stretch dated before the deadline: a commit dated
before the deadline on top of one dated after it cannot be older than its parent, so it is
not graded, and a history whose dates go backwards is flagged in the record. A date rewritten
to look early on top of early commits cannot be told from an honest one: where the deadline
must hold against that, collect at the deadline (without --deadline, the tip is graded).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
import re
import shutil
import sys
import tempfile
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TextIO

from grader.classroom.collecting import collection_csv as records
from grader.classroom.collecting import local_copy
from grader.classroom.collecting.bare_repo import EmptyRepository, GitError, Repository, Secrets
from grader.classroom.collecting.collection_csv import Record
from grader.classroom.collecting.local_copy import Local, Network, Unusable
from grader.classroom.collecting.solutions_tree import SOLUTIONS, HandInLookup, entry_described, find_hand_in
from grader.classroom.roster import Enrolled, Roster
from grader.disk import create_private, swap_folder
from grader.records.wording import counted
from grader.student_text import line, student_id
from grader.submission.formats import written_suffixes
from grader.task.spec import Task


class CollectError(Exception):
    """The collection cannot run (bad arguments, roster, template); nothing is fetched."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


# --------------------------------------------------------------------------- arguments


def parse_deadline(text: str) -> float:
    """An ISO 8601 date and time with its UTC offset (``2026-12-01T23:59:00+01:00``, or
    ``...Z``), as a POSIX timestamp. Without an offset it would mean the clock of whatever
    machine runs the collection: refused."""
    value = text.strip()
    if value[-1:] in ("Z", "z"):
        value = value[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise CollectError(
            [
                f"--deadline '{line(text)}': not an ISO 8601 date and time; write "
                "it like 2026-12-01T23:59:00+01:00"
            ]
        ) from None
    if when.tzinfo is None:
        raise CollectError(
            [
                f"--deadline '{line(text)}': give its UTC offset too (like "
                f"{when.isoformat(timespec='minutes')}+01:00, or Z for UTC): a time "
                "without one means a different moment on each machine"
            ]
        )
    return when.timestamp()


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_ENV_NAME = re.compile(r"env:([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Template:
    """Where a student's repository is: ``--repo-url``, with ``{repo}`` (the roster's repo
    column), ``{submission_id}`` and ``{env:NAME}`` (an environment variable, a secret:
    never printed, never written)."""

    text: str
    env_names: tuple[str, ...]
    uses_repo: bool

    @classmethod
    def parse(cls, text: str) -> Template:
        names, uses_repo, problems = [], False, []
        for match in _PLACEHOLDER.finditer(text):
            field = match.group(1)
            env = _ENV_NAME.fullmatch(field)
            if field == "repo":
                uses_repo = True
            elif env:
                names.append(env.group(1))
            elif field != "submission_id":
                problems.append(
                    f"--repo-url: unknown placeholder {{{line(field)}}} (known: {{repo}}, "
                    "{submission_id}, {env:NAME})"
                )
        if "{" in _PLACEHOLDER.sub("", text) or "}" in _PLACEHOLDER.sub("", text):
            problems.append("--repo-url: a brace that opens or closes no placeholder")
        if not _PLACEHOLDER.search(text):
            problems.append(
                "--repo-url: names no student ({repo} or {submission_id}): every "
                "student would get the same repository"
            )
        if problems:
            raise CollectError(problems)
        return cls(text, tuple(dict.fromkeys(names)), uses_repo)

    def secrets(self, environ: Mapping[str, str]) -> Secrets:
        """The values of its environment variables; CollectError when one is unset or empty
        (a GitHub secret that is not set expands to an empty string)."""
        problems = [
            f"--repo-url: the environment variable {name} is {'empty' if name in environ else 'not set'}"
            f" (the template takes it from there; in GitHub Actions, set it from a secret)"
            for name in self.env_names
            if not environ.get(name)
        ]
        if problems:
            raise CollectError(problems)
        return Secrets(tuple(environ[name] for name in self.env_names))

    def url(self, student: Enrolled, environ: Mapping[str, str]) -> str:
        def value(match: re.Match[str]) -> str:
            field = match.group(1)
            if field == "repo":
                return student.extra.get("repo", "")
            if field == "submission_id":
                return student.submission_id
            return environ[field[len("env:") :]]

        return _PLACEHOLDER.sub(value, self.text)


def id_problem(submission_id: str) -> str | None:
    """Why a roster id cannot name the student's file in OUT/<task id>/ (and come back from
    ``grader batch`` as the same id, for ``grader export``), or None."""
    if "/" in submission_id or "\0" in submission_id:
        return "holds a / or a NUL, which no file name can"
    if submission_id.startswith("."):
        return "starts with a dot: a batch takes such a file for a hidden one"
    if student_id(submission_id) != submission_id:
        return (
            f"holds characters a batch shows escaped ({student_id(submission_id)}): control or "
            "invisible characters, a backslash, spaces at either end, or a name that is not "
            "Unicode NFC"
        )
    if len(submission_id.encode("utf-8")) > 200:
        return "is longer than 200 bytes"
    return None


def check_roster(roster: Roster, path: str, template: Template) -> None:
    """Every roster id can name a file, no two name the same file on a case-insensitive
    disk, and every student has a repository when the template needs the repo column."""
    problems = []
    folded: dict[str, Enrolled] = {}
    for s in roster.students:
        where = f"{path}:{s.line}"
        why = id_problem(s.submission_id)
        if why:
            problems.append(
                f"{where}: submission_id '{line(s.submission_id)}' {why}; grader collect "
                "names each student's file by it: change it in the roster"
            )
        key = unicodedata.normalize("NFC", s.submission_id).casefold()
        if key in folded:
            problems.append(
                f"{where}: submission_id '{line(s.submission_id)}' differs from line "
                f"{folded[key].line}'s only in case, so both would be one file on a "
                "case-insensitive disk (macOS, Windows): change one of them"
            )
        folded.setdefault(key, s)
        if template.uses_repo and not s.extra.get("repo"):
            problems.append(
                f"{where}: no repo for '{line(s.submission_id)}'"
                + ("" if "repo" in s.extra else " (the roster has no repo column)")
                + f"; --repo-url '{line(template.text)}' takes it from there"
            )
    if problems:
        raise CollectError(problems)


# --------------------------------------------------------------------------- the commit


@dataclass(frozen=True)
class Graded:
    commit: str
    committed: int  # its committer date (the student's claim), POSIX seconds
    note: str  # about the history: later commits not graded, dates going backwards


def when(stamp: float) -> str:
    try:
        return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return f"@{stamp:.0f} (no calendar date)"


def choose_commit(history: list[tuple[str, int]], deadline: float | None) -> Graded | str:
    """The commit to grade, from (commit, committer date) along first parents, tip first;
    or why there is none. With a deadline: the last commit of the history's first stretch
    dated before it (a commit on top of one dated after the deadline was made after it,
    whatever its own date says)."""
    chain = history[::-1]  # the first commit first
    notes = []
    if deadline is None:
        index = len(chain) - 1
    else:
        index = -1
        for i, (_, stamp) in enumerate(chain):
            if stamp > deadline:
                break
            index = i
        if index < 0:
            first, stamp = chain[0]
            return (
                f"no commit before the deadline ({when(deadline)}): the first, {first[:12]}, "
                f"is dated {when(stamp)}"
            )
        later = len(chain) - 1 - index
        if later:
            notes.append(
                f"{later} later commit{'s' if later > 1 else ''} not graded (the first "
                f"dated {when(chain[index + 1][1])}, after the deadline)"
            )
    backwards = [i for i in range(1, len(chain)) if chain[i][1] < chain[i - 1][1]]
    if backwards:
        i = backwards[0]
        notes.append(
            f"dates go backwards: commit {chain[i][0][:12]} is dated {when(chain[i][1])}, "
            f"before its parent {chain[i - 1][0][:12]} ({when(chain[i - 1][1])}); a date "
            f"was likely rewritten{f' ({len(backwards)} such commits)' if len(backwards) > 1 else ''}"
        )
    commit, stamp = chain[index]
    return Graded(commit, stamp, "; ".join(notes))


# --------------------------------------------------------------------------- a student


@dataclass(frozen=True)
class Job:
    student: Enrolled
    url: str  # may hold a secret: given to git only, never shown
    shown_repo: str  # the repository as messages name it (secrets redacted)
    place: Network | Local | Unusable  # how git would reach url


def check_local(jobs: Sequence[Job], roster_path: str, repos_root: str | None) -> str | None:
    """The real path of --repos-root; CollectError when it is not a folder, or when some
    repositories are local paths and there is none (the instructor's flag is missing, not the
    students' work: no one is given a refused row for it)."""
    if repos_root is not None:
        if not os.path.isdir(repos_root):
            raise CollectError([f"--repos-root {line(repos_root)}: is not a folder"])
        return os.path.realpath(repos_root)
    local = [job for job in jobs if isinstance(job.place, Local)]
    if not local:
        return None
    lines = ", ".join(str(job.student.line) for job in local[:10])
    more = f" and {len(local) - 10} more" if len(local) > 10 else ""
    raise CollectError(
        [
            f"{roster_path}: line{'s' if len(local) > 1 else ''} {lines}{more} name a local path "
            f"({line(local[0].shown_repo)}{', ...' if len(local) > 1 else ''}): grader collect reads a "
            "local repository only inside --repos-root DIR, the folder that holds the students' "
            "repositories (a path elsewhere, or a link, may be anyone's: the instructor's own "
            "course repository included); give it, or give URLs"
        ]
    )


def _collect_one(
    job: Job,
    tasks: Sequence[Task],
    deadline: float | None,
    secrets: Secrets,
    seconds: float,
    work: str,
    staging: str,
    root: str | None,
) -> list[Record]:
    """One student's records. A failure of the grader itself on this repository is that
    student's row (not collected: no grade, and said), never the end of the collection."""
    try:
        return _collect_repository(job, tasks, deadline, secrets, seconds, work, staging, root)
    except Exception as exc:
        for task in tasks:  # (what was written of this student, before the failure, goes)
            for suffix in written_suffixes():
                try:
                    os.unlink(os.path.join(staging, task.id, job.student.submission_id + suffix))
                except FileNotFoundError:
                    pass
        why = secrets.redact(line(f"{type(exc).__name__}: {exc}", 300))
        return [
            Record(
                job.student.submission_id,
                t.id,
                records.UNREACHABLE,
                f"could not collect {job.shown_repo}: the grader failed on it ({why}); "
                "it is not the student's doing: collect again",
                max_score=t.max_score,
            )
            for t in tasks
        ]


def _collect_repository(
    job: Job,
    tasks: Sequence[Task],
    deadline: float | None,
    secrets: Secrets,
    seconds: float,
    work: str,
    staging: str,
    root: str | None,
) -> list[Record]:
    sid = job.student.submission_id

    def every_task(status: str, reason: str, **more: str) -> list[Record]:
        return [Record(sid, t.id, status, reason, max_score=t.max_score, **more) for t in tasks]

    if isinstance(job.place, Unusable):
        return every_task(records.UNREACHABLE, f"could not fetch {job.shown_repo}: {job.place.reason}")
    url, copy = job.url, None
    if isinstance(job.place, Local):
        assert root is not None  # (check_local)
        try:  # git reads the grader's private copy, never the student's path
            copy = local_copy.copy_git_dir(job.place.path, root, work)
        except local_copy.Refused as exc:
            return every_task(records.REFUSED, secrets.redact(f"{job.shown_repo}: {line(exc, 600)}"))
        except local_copy.NotThere as exc:
            why = line(exc, 600)
            return every_task(records.UNREACHABLE, secrets.redact(f"could not fetch {job.shown_repo}: {why}"))
        url = local_copy.url_of(copy)
    try:
        repo = Repository(work, secrets, seconds)
    except GitError as exc:
        if copy is not None:
            local_copy.remove(copy)
        return every_task(
            records.UNREACHABLE,
            f"could not fetch {job.shown_repo}: git cannot make a repository here ({exc})",
        )
    try:
        try:
            try:
                repo.fetch(url)
            finally:
                if copy is not None:
                    local_copy.remove(copy)
        except EmptyRepository as exc:
            return every_task(records.MISSING, f"{job.shown_repo}: {exc}")
        except GitError as exc:
            return every_task(records.UNREACHABLE, f"could not fetch {job.shown_repo}: {exc}")
        try:
            choice = choose_commit(repo.first_parent_history(), deadline)
        except GitError as exc:
            return every_task(records.REFUSED, f"{job.shown_repo}: {exc}")
        if isinstance(choice, str):
            return every_task(records.MISSING, choice)
        graded = dict(commit=choice.commit, committed=when(choice.committed), note=choice.note)
        try:
            top = repo.entry(choice.commit, SOLUTIONS)
            if top is None:
                return every_task(
                    records.MISSING, f"no {SOLUTIONS}/ folder at commit {choice.commit[:12]}", **graded
                )
            if top.type != "tree":
                return every_task(
                    records.REFUSED,
                    f"{SOLUTIONS} is {entry_described(top)}, not a folder: no hand-in is read through it",
                    **graded,
                )
            listing = repo.listing(top.object)
        except GitError as exc:
            return every_task(records.REFUSED, f"{SOLUTIONS}/ cannot be read: {exc}", **graded)
        out = []
        for task in tasks:
            try:
                found = find_hand_in(repo, listing, task.id)
            except GitError as exc:
                found = HandInLookup(records.REFUSED, reason=f"{SOLUTIONS}/ cannot be read: {exc}")
            record = Record(
                sid, task.id, found.status, found.reason, path=found.path, max_score=task.max_score, **graded
            )
            if found.status == records.COLLECTED:
                file = f"{task.id}/{sid}{found.suffix}"
                # (a new file of ours: never through a link, never over another's)
                with create_private(os.path.join(staging, file)) as f:
                    f.write(found.data)
                record = Record(
                    sid,
                    task.id,
                    found.status,
                    "",
                    path=found.path,
                    file=file,
                    sha256=hashlib.sha256(found.data).hexdigest(),
                    max_score=task.max_score,
                    **graded,
                )
            out.append(record)
        return out
    finally:
        repo.remove()


# --------------------------------------------------------------------------- the class


@dataclass
class Outcome:
    records: list[Record]
    unreachable: list[str]  # submission ids whose repository could not be fetched
    written: str  # OUT/collection.csv


def prepare_out(out: str) -> None:
    """OUT must be new, empty, or an earlier collection (which is replaced whole, so no
    file of an earlier run can be graded as this one's)."""
    if os.path.islink(out):
        raise CollectError([f"--out {out}: is a symbolic link; give a folder"])
    if os.path.exists(out):
        if not os.path.isdir(out):
            raise CollectError([f"--out {out}: is not a folder"])
        if os.listdir(out) and not os.path.isfile(os.path.join(out, records.FILE_NAME)):
            raise CollectError(
                [
                    f"--out {out}: holds files that grader collect did not write (no "
                    f"{records.FILE_NAME}); give a new folder"
                ]
            )


def run_collect(
    tasks: Sequence[Task],
    roster: Roster,
    roster_path: str,
    out: str,
    template: Template,
    deadline: float | None,
    jobs: int,
    seconds: float,
    environ: Mapping[str, str] | None = None,
    stream: TextIO = sys.stderr,
    repos_root: str | None = None,
) -> Outcome:
    environ = os.environ if environ is None else environ
    if shutil.which("git") is None:
        raise CollectError(["grader collect needs git (Debian/Ubuntu: apt-get install git)"])
    ids = [t.id for t in tasks]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise CollectError([f"task {i} is given twice" for i in twice])
    check_roster(roster, roster_path, template)
    secrets = template.secrets(environ)
    work_list = []
    for s in roster.students:
        url = template.url(s, environ)
        shown = secrets.redact(s.extra.get("repo") or s.submission_id) + f" (roster line {s.line})"
        work_list.append(Job(s, url, shown, local_copy.where(url)))
    root = check_local(work_list, roster_path, repos_root)
    prepare_out(out)
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".collect-", dir=parent)
    work = tempfile.mkdtemp(prefix="grader-collect-")
    try:
        for task in tasks:
            os.mkdir(os.path.join(staging, task.id), 0o700)
        print(
            f"collecting {counted(len(tasks), 'task')} from "
            f"{counted(len(work_list), 'repository', 'repositories')}, {jobs} at a time"
            + (
                f", the last commit before {when(deadline)}"
                if deadline is not None
                else ", the tip of each default branch"
            ),
            file=stream,
            flush=True,
        )
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            futures = [
                pool.submit(_collect_one, job, tasks, deadline, secrets, seconds, work, staging, root)
                for job in work_list
            ]
            collected = [r for future in futures for r in future.result()]
        records.write_collection(os.path.join(staging, records.FILE_NAME), collected)
        _replace(out, staging)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)
    unreachable = list(dict.fromkeys(r.submission_id for r in collected if r.status == records.UNREACHABLE))
    return Outcome(collected, unreachable, os.path.join(out, records.FILE_NAME))


def _replace(out: str, staging: str) -> None:
    prepare_out(out)  # (still ours: checked again just before it goes)
    swap_folder(staging, out)
