"""A prepared task: everything about one task that is the same for every submission, built
once and carried by the grading context.

It holds the trusted reference, the freeze, each check's cases and expected outputs, the
reference's times on them (call limits follow them), the known mistakes and how each fares,
the one-fill table of the scoring policy and the answer cap. ``prepare`` builds it before
any student code runs (a broken task stops there, as a SpecError naming task.yaml's line);
a batch prepares the task once, before its pool forks, and hands the object to every pool
process (executors.py); one ``grader check`` prepares it for its one file. What depends on
the task alone (the one-fill table) is read from the freeze where the freeze holds it.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from grader.cases import (
    CaseSet,
    CasesFailed,
    Freeze,
    ReferenceFailed,
    ReferenceTimes,
    case_set,
    expected_output,
    generated_by,
    load_freeze,
    reference_value,
    remember_verified,
    tried_cases,
)
from grader.grading import final_grading, mistakes
from grader.grading.policy import one_fill_checks
from grader.grading.shrinking.tree import ShrinkTrees
from grader.grading.shrinking.tree_store import ShrinkStore
from grader.task.case_size import nbytes
from grader.task.reference import load_reference
from grader.task.spec import CheckSpec, SpecError, Task

# What one answer may carry, derived from the task: its largest expected output (with the
# inputs a mutation check gets back) times a margin, and never less than a floor; for a
# script, a margin over the arrays its checks look for. Anything larger is refused
# before it is read (wire.answer_caps), and a worker refuses it itself.
ANSWER_FLOOR_BYTES = 16 << 20
SCRIPT_FLOOR_BYTES = 32 << 20
ANSWER_MARGIN, SCRIPT_MARGIN = 4, 16


@dataclass
class PreparedTask:
    task: Task
    reference: ModuleType | None  # None: a kit, which has frozen cases instead
    freeze: Freeze | None
    use_cache: bool  # generated cases and reference times also kept on disk, across runs
    times: ReferenceTimes
    _mistakes: mistakes.MistakeRuns | None = field(default=None, repr=False)
    _case_sets: dict[str, CaseSet] = field(default_factory=dict, repr=False)
    _values: dict[str, Any] = field(default_factory=dict, repr=False)
    _tried: dict[str, CaseSet] = field(default_factory=dict, repr=False)
    _one_fill: frozenset[str] | None = field(default=None, repr=False)
    _answer_bytes: int | None = field(default=None, repr=False)
    # what the shrinks of this task's submissions tried, walked by the next (shrinking/tree.py)
    shrink_trees: ShrinkTrees = field(default_factory=ShrinkTrees, repr=False)
    # check name -> its Hypothesis test for shrinking (hypothesis_driver.Explorer), built
    # when a submission first fails it here
    explorers: dict[str, Any] = field(default_factory=dict, repr=False)
    _shrink_store: ShrinkStore | None = field(default=None, repr=False)

    @classmethod
    def of(cls, task: Task, use_cache: bool = True, freeze: Freeze | None = None) -> PreparedTask:
        """The task with its reference and freeze loaded (``freeze``, if already read); the
        rest is built when first asked (``prepare`` asks for all of it at once)."""
        reference = load_reference(task)
        freeze = freeze or load_freeze(task)
        times = ReferenceTimes(task, reference, freeze.digest if freeze else "", use_cache)
        return cls(task, reference, freeze, use_cache, times)

    @property
    def mistakes(self) -> mistakes.MistakeRuns:
        """The known mistakes, imported when first asked (a broken mistakes.py is a SpecError),
        with the profile the freeze kept where it holds one for this mistakes.py."""
        if self._mistakes is None:
            self._mistakes = mistakes.MistakeRuns(self.task, mistakes.variants(self.task))
            if self.freeze is not None and self._mistakes.variants:
                self._mistakes.take_frozen_profile(self.freeze.mistakes)
        return self._mistakes

    @property
    def shrink_store(self) -> ShrinkStore | None:
        """The shrink paths on disk that this task's shrinks share (None: no cache used)."""
        if self._shrink_store is None and self.use_cache:
            self._shrink_store = ShrinkStore(self.task)
        return self._shrink_store

    @property
    def kit(self) -> bool:
        return self.freeze is not None and self.freeze.kit

    @property
    def cases_digest(self) -> str:
        """Which cases a grade was decided on: the freeze's digest, or the versions that
        generated them (a grade then holds for those versions only)."""
        return self.freeze.digest if self.freeze is not None else f"generated ({generated_by()})"

    def case_set(self, check: CheckSpec) -> CaseSet:
        """The check's cases and expected outputs (read-only for every caller)."""
        if check.name not in self._case_sets:
            self._case_sets[check.name] = case_set(
                self.task, self.reference, check, self.use_cache, self.freeze
            )
        return self._case_sets[check.name]

    def check_cases(self, check: CheckSpec) -> CaseSet:
        """What a check tries: the case its task gives with its expected value (an example's
        literal expect:), else its case set (the same object every time: a diagnosis keeps
        outputs by its cases)."""
        if check.name not in self._tried:
            self._tried[check.name] = tried_cases(check, self.case_set)
        return self._tried[check.name]

    def reference_value(self, check: CheckSpec) -> Any:
        """What a script check compares with."""
        if check.name not in self._values:
            self._values[check.name] = reference_value(self.reference, check, self.freeze)
        return self._values[check.name]

    def expected(self, check: CheckSpec, args: dict[str, Any]) -> Any:
        """The reference's output on an input no case set holds (a shrunk one)."""
        if self.reference is None:  # (a kit: no reference answers an input it has not frozen)
            raise ReferenceFailed("no reference solution here (a kit) to answer this input")
        return expected_output(self.task, self.reference, check, args)

    def one_fill_checks(self) -> frozenset[str]:
        """The values checks one repeated value passes (policy.py): the freeze's table, or
        found here from the expected outputs, on the trusted side."""
        if self._one_fill is None:
            if self.freeze is not None and self.freeze.one_fill is not None:
                self._one_fill = self.freeze.one_fill
            else:
                self._one_fill = one_fill_checks(self.task.checks, lambda c: self.check_cases(c).expected)
        return self._one_fill

    def profile(self) -> dict[str, list[str]]:
        """Mistake -> the checks it fails (mistakes.py)."""
        return self.mistakes.profile(self.check_cases)

    def answer_bytes(self) -> int:
        """The most bytes of arrays one answer of a submission to the task may carry."""
        if self._answer_bytes is None:
            self._answer_bytes = self._find_answer_bytes()
        return self._answer_bytes

    def _find_answer_bytes(self) -> int:
        task = self.task
        largest = 0
        if task.kind == "script":
            for check in task.checks:
                if check.kind.answer_carries_arrays() and check.name in self.graded_here:
                    with contextlib.suppress(Exception):
                        largest += int(np.asarray(self.reference_value(check), dtype=float).nbytes)
            return max(SCRIPT_FLOOR_BYTES, SCRIPT_MARGIN * largest)
        for check in task.checks:
            if check.call is None:
                continue
            cases = self.case_set(check)
            for args, expected in zip(cases.cases, cases.expected):
                largest = max(largest, nbytes(expected) + nbytes(args))
        return max(ANSWER_FLOOR_BYTES, ANSWER_MARGIN * largest)

    @functools.cached_property
    def graded_here(self) -> frozenset[str]:
        """The checks this task runs: all of them, but in a kit not those left to final
        grading."""
        later = final_grading.in_a_kit(self.task.checks) if self.kit else {}
        return frozenset(c.name for c in self.task.checks if c.name not in later or later[c.name].runs)


def prepare(task: Task, use_cache: bool = True, profile_mistakes: bool = True) -> PreparedTask:
    """The task prepared: every check's cases and expected outputs built, the reference
    timed on them, the answer cap and the one-fill table found, the known mistakes imported
    (a broken mistakes.py stops here, before any student code runs) and, with
    ``profile_mistakes`` (a batch), profiled; one submission profiles only what its
    diagnosis needs, and only when a check failed."""
    prepared = PreparedTask.of(task, use_cache)
    problems = []
    for check in task.checks:
        if check.call is not None:
            try:
                # the reference's time on each case, which call limits follow: measured
                # once here (a batch's pool processes inherit it), never per student
                prepared.times.seconds(check, prepared.case_set(check))
            except (CasesFailed, ReferenceFailed) as exc:
                # Found before any student code runs: the task is broken, not a submission.
                problems.append(f"{task.spec_path}:{check.line}: check '{check.name}': {exc}")
    if problems:
        raise SpecError(problems)
    prepared.mistakes  # noqa: B018 (imported now, before any student code runs)
    prepared.answer_bytes()
    prepared.one_fill_checks()
    if prepared.freeze is not None:
        remember_verified(prepared.freeze)
    if profile_mistakes:
        prepared.profile()
    return prepared
