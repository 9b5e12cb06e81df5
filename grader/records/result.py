"""Result records: plain data, built by the checks, read by the renderers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol

from grader.records.statuses import ERROR, FAILED, MISMATCH, PASSED, SKIPPED, UNGRADABLE, CheckStatus, Reason

# (the statuses are re-exported: checks and renderers import them from here)
__all__ = [
    "PASSED",
    "FAILED",
    "ERROR",
    "SKIPPED",
    "CheckResult",
    "Diagnosis",
    "Picture",
    "Result",
    "UNGRADABLE_CHECK",
    "UNSANDBOXED",
    "judged",
    "total",
    "ungradable",
]


# Result.isolation of a kit checked on its student's own machine with no sandbox (the
# sandbox's unsandboxed tier is named so; the renderers say what it means).
UNSANDBOXED = "unsandboxed"


class _Row:
    """What a record read back from a row (``from_dict``) remembers of it: the row's keys in
    their order, and the values of those this grader does not know (a newer grader's). So
    ``to_dict`` gives back the very row it read, byte for byte once dumped: an older
    grader's row (fewer keys: the record holds their defaults) stays without them, and a
    reader can tell what it lacked (``lacked``). A record made here, or by
    ``dataclasses.replace``, has every field."""

    _row_keys: tuple[str, ...] | None = None  # (class defaults: a record made here)
    _unknown: dict[str, Any] | None = None

    def lacked(self, name: str) -> bool:
        """True when the row this record was read from had no ``name`` (an older grader's)."""
        return self._row_keys is not None and name not in self._row_keys

    def _remember(self, data: dict[str, Any], known: set[str]) -> None:
        self._row_keys = tuple(data)
        self._unknown = {k: v for k, v in data.items() if k not in known}

    def _as_row(self, plain: dict[str, Any]) -> dict[str, Any]:
        """``plain`` (every field) as the row read had it: its keys, in its order."""
        if self._row_keys is None:
            return plain
        unknown = self._unknown or {}
        return {k: plain[k] if k in plain else unknown[k] for k in self._row_keys}


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``cls`` found in ``data``: a report written by a newer grader (more
    fields) or an older one (fewer: their defaults) still reads."""
    names = _names(cls)
    return {k: v for k, v in data.items() if k in names}


def _names(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


PICTURE_SIDE = 64  # a picture keeps at most this many rows and columns (its top-left corner)


@dataclass
class Picture(_Row):
    """What a failed array check's page draws: the expected output and the submission's on
    the failing input (after the check's ``select``), each cut to at most 2-D and to the
    top-left PICTURE_SIDE x PICTURE_SIDE corner (pictures.py). Values are plain floats,
    None where not finite. Never made for a hidden check."""

    expected: list  # rows of values (or one row, for a 1-D output)
    got: list
    expected_shape: list[int]  # the full shapes, before cutting
    got_shape: list[int]
    where: str = ""  # which part is drawn, when cut ("batch entry [0, 0], rows 0-63")

    def to_dict(self) -> dict[str, Any]:
        return self._as_row(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Picture:
        picture = cls(**_known(cls, data))
        picture._remember(data, _names(cls))
        return picture


@dataclass
class Diagnosis(_Row):
    """A known mistake (declared by the task) that the submission's outputs match: the likely
    cause of the failed checks it explains. Never changes a score; says nothing of inputs."""

    mistake: str  # the task's name for it
    explanation: str  # for the student, as the task words it
    checks: list[str] = field(default_factory=list)  # the failed checks it explains, task order

    def to_dict(self) -> dict[str, Any]:
        return self._as_row(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnosis:
        diagnosis = cls(**_known(cls, data))
        diagnosis._remember(data, _names(cls))
        return diagnosis


@dataclass
class CheckResult(_Row):
    name: str
    status: CheckStatus
    score: float
    max_score: float
    message: str = ""
    description: str = ""
    function: str | None = None
    failing_input: str | None = None  # the (shrunk) call that failed, as Python source
    output: str = ""  # what the student's code printed during that call
    line: int | None = None  # the line of the student's file a failure points at
    cell: int | None = None  # in a notebook, the cell that line is in (source_map.py)
    cases: int = 0  # how many argument sets were tried
    hidden: bool = False
    seconds: float = 0.0
    reason: Reason | None = None  # why it did not pass (statuses.Reason); None when it did
    mistake: str | None = None  # the diagnosed mistake (Diagnosis.mistake) that explains it
    picture: Picture | None = None  # expected and actual output, for a failed array check
    final_points: float = 0.0  # in a kit: its points, decided at final grading, not
    # here (final_grading.py; max_score is 0 then)

    def to_dict(self) -> dict[str, Any]:
        plain = asdict(self)
        if self.picture is not None:
            plain["picture"] = self.picture.to_dict()
        return self._as_row(plain)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        """A check of a report read back. Rows of older graders lack fields (``reason``
        among them: ``lacked("reason")`` tells such a check from one that passed)."""
        known = _known(cls, data)
        if isinstance(known.get("picture"), dict):
            known["picture"] = Picture.from_dict(known["picture"])
        check = cls(**known)
        check._remember(data, _names(cls))
        return check


@dataclass
class Result(_Row):
    task: str
    submission: str
    score: float
    max_score: float
    status: CheckStatus
    isolation: str
    checks: list[CheckResult] = field(default_factory=list)
    task_version: str = ""
    output: str = ""  # what the submission printed while it was imported
    seconds: float = 0.0
    isolation_note: str = ""  # what is weaker than bubblewrap here, and why (empty: bubblewrap)
    grader_version: str = ""  # the grader that graded it
    cases_digest: str = ""  # the frozen cases it was graded on ("generated ..." without a freeze)
    kit: bool = False  # graded on a student kit: public checks only
    diagnoses: list[Diagnosis] = field(default_factory=list)  # likely causes, shown first
    # where the task's functions are defined in the file (the scan's): the line a failure
    # that raised nowhere points at
    definitions: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (JSON's); for a report read back, the row it was read from."""
        plain = asdict(self)
        plain["checks"] = [c.to_dict() for c in self.checks]
        plain["diagnoses"] = [d.to_dict() for d in self.diagnoses]
        return self._as_row(plain)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        """The inverse of ``to_dict``, for reports read back (gradebook rows, JSON files),
        tolerant of other graders' rows: a field an older one did not write takes its default
        (a row without a task, its name: "") and the row's unknown fields are kept, so
        ``to_dict`` gives back the row read (``_Row``)."""
        known = {**_ROW_DEFAULTS, **_known(cls, data)}
        known["checks"] = [CheckResult.from_dict(c) for c in data.get("checks") or []]
        known["diagnoses"] = [Diagnosis.from_dict(d) for d in data.get("diagnoses") or []]
        result = cls(**known)
        result._remember(data, _names(cls))
        return result


# What a row read back may lack of a result's required fields (the gradebook's columns,
# submission, score, max_score, status and isolation, were always written)
_ROW_DEFAULTS: dict[str, Any] = {"task": ""}


UNGRADABLE_CHECK = "submission"  # the one line of a result for a file that could not be graded


def ungradable(task_id: str, task_version: str, max_score: float, submission: str, reason: str) -> Result:
    """A result for a submission that could not be graded at all (missing, ambiguous,
    unreadable): every point lost, with the reason."""
    check = CheckResult(UNGRADABLE_CHECK, ERROR, 0.0, max_score, message=reason, reason=UNGRADABLE)
    return Result(
        task=task_id,
        submission=submission,
        score=0.0,
        max_score=max_score,
        status=ERROR,
        isolation="none",
        checks=[check],
        task_version=task_version,
    )


class JudgedCheck(Protocol):
    """What ``judged`` reads of a check spec (task/spec.py's CheckSpec)."""

    @property
    def name(self) -> str: ...
    @property
    def points(self) -> float: ...
    @property
    def description(self) -> str: ...
    @property
    def hidden(self) -> bool: ...


def judged(check: JudgedCheck, ok: bool, message: str = "", reason: Reason = MISMATCH) -> CheckResult:
    """The result line of a check spec that passed or failed as a whole."""
    return CheckResult(
        check.name,
        PASSED if ok else FAILED,
        check.points if ok else 0.0,
        check.points,
        message=message,
        description=check.description,
        hidden=check.hidden,
        reason=None if ok else reason,
    )


def total(
    task: str, submission: str, isolation: str, checks: list[CheckResult], load_failed: bool, **extra: Any
) -> Result:
    """Sum the checks; status is passed at full marks and error when nothing could be graded."""
    score = round(sum(c.score for c in checks), 6)
    max_score = round(sum(c.max_score for c in checks), 6)
    status: CheckStatus
    if load_failed:
        status = ERROR
    elif score >= max_score:
        status = PASSED
    else:
        status = FAILED
    return Result(
        task=task,
        submission=submission,
        score=score,
        max_score=max_score,
        status=status,
        isolation=isolation,
        checks=checks,
        **extra,
    )
