"""A task's known mistakes on the trusted side: each one's mistaken reference, and which
checks it fails (its profile).

A mistake is the reference with some functions replaced by functions of the task's
``mistakes.py`` (instructor code, imported here like the reference). Each mistake gets its
own copy of both modules: a reference function that calls a replaced one calls the
replacement, and a replacement calls the task's other functions by name (this variant's).

The profile runs each mistaken reference on the case sets of the visible checks that compare
a function's output (example and property checks) and judges it as the check would: once
per prepared task (``MistakeRuns``, which prepared.py builds before a batch forks), and only
where a diagnosis needs it otherwise (``fails``).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import os
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from grader.cases import CaseSet, split_arguments
from grader.grading.compare import output_verdict
from grader.task.case_size import nbytes
from grader.task.deadline import TooSlow, deadline
from grader.task.reference import call_reference
from grader.task.spec import CheckSpec, MistakeSpec, SpecError, Task

# Instructor code, run in this process: an endless loop in it costs this long, once
# (deadline.py); the reference's cases take milliseconds.
MISTAKE_SECONDS = 5.0
KEPT_OUTPUT_BYTES = 1 << 20  # a diagnosis's mistaken output kept for the class up to this size


@dataclass(frozen=True)
class Variant:
    """One mistake, ready to call: ``module`` answers every task function as the mistake does."""

    spec: MistakeSpec
    module: types.ModuleType
    key: tuple = ()  # the task's folder and digest, mistakes.py's SHA-256, the mistake's name


def _sha(path: str) -> str:
    return file_sha256(path)[:16]


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _fresh(path: str, name: str, problem: str, seconds: float | None = None) -> types.ModuleType:
    """A new copy of the module at ``path`` (importing within ``seconds``, if given);
    ``problem`` starts the error when it does not import."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # (a .py path always has both)
    module = importlib.util.module_from_spec(spec)
    try:
        with deadline(seconds) if seconds is not None else contextlib.nullcontext():
            spec.loader.exec_module(module)
    except TooSlow as exc:
        raise SpecError([f"{problem}: it {exc}"]) from None
    except Exception as exc:
        raise SpecError([f"{problem}: {type(exc).__name__}: {exc}"]) from None
    return module


def variants(task: Task) -> tuple[Variant, ...]:
    """The task's mistakes, each with its own mistaken reference; () without mistakes or
    reference (a kit). A mistakes.py that does not import or lacks a replacement is a SpecError
    naming task.yaml's line."""
    if not task.mistakes or not os.path.isfile(task.reference_path):
        return ()
    key = (task.folder, task.digest, _sha(task.mistakes_path))
    stem = f"grader_mistake_{task.id.replace('-', '_')}_{key[1]}_{key[2]}"
    found, problems = [], []
    for number, mistake in enumerate(task.mistakes):
        reference = _fresh(
            task.reference_path,
            f"{stem}_{number}_reference",
            f"{task.reference_path}: the reference solution does not import",
        )
        # (the reference imported once already, with no limit: only mistakes.py is new code)
        replacements = _fresh(
            task.mistakes_path,
            f"{stem}_{number}",
            f"{task.spec_path}:{mistake.line}: mistakes[{number}]: {task.mistakes_path} does not import",
            MISTAKE_SECONDS,
        )
        for function, replacement in mistake.replaces:
            if not callable(getattr(replacements, replacement, None)):
                problems.append(
                    f"{task.spec_path}:{mistake.line}: mistakes[{number}].replaces."
                    f"{function}: {task.mistakes_path} does not define a function "
                    f"'{replacement}'. Define it there or fix the name."
                )
                continue
            setattr(reference, function, getattr(replacements, replacement))
        for function in task.functions:  # the task's functions by name, this variant's
            if not hasattr(replacements, function):
                setattr(replacements, function, getattr(reference, function))
        found.append(Variant(mistake, reference, key + (mistake.name,)))
    if problems:
        raise SpecError(problems)
    return tuple(found)


def profiled(check: CheckSpec) -> bool:
    """The checks a profile (and a diagnosis) looks at: visible ones that compare a
    function's output with the reference's."""

    return check.call is not None and not check.hidden and check.kind.compares_outputs()


@dataclass
class MistakeRuns:
    """A task's mistakes, with what is known of how each fares: kept by the prepared task
    (prepared.py), so a batch learns it once for the class."""

    task: Task
    variants: tuple[Variant, ...]
    # (mistake, check) -> whether the mistake fails it
    failing: dict[tuple[str, str], bool] = field(default_factory=dict)
    # mistake -> why its code is not used: it ran past MISTAKE_SECONDS once
    slow: dict[str, str] = field(default_factory=dict)
    # (mistake, check, id of a case's arguments) -> (those arguments, the mistake's output):
    # the few cases a diagnosis looks at are the class's, so each is computed once for the
    # class, not once per student (the arguments are held, so their id names them)
    shown_outputs: dict[tuple[str, str, int], tuple[dict[str, Any], Any]] = field(default_factory=dict)

    def fails(self, variant: Variant, check: CheckSpec, cases: CaseSet) -> bool:
        """Whether the mistake fails ``check``: its output judged on every case of the
        check's set (``cases``) as the check would judge a student's (raising is failing)."""
        key = (variant.spec.name, check.name)
        if key not in self.failing:
            self.failing[key] = any(
                not self.judged_ok(variant, check, args, expected)
                for args, expected in zip(cases.cases, cases.expected)
            )
        return self.failing[key]

    def output(self, variant: Variant, check: CheckSpec, args: dict[str, Any]) -> Any:
        """The mistake's output on one case (raises what the mistaken code raises). A
        mistake that once took longer than MISTAKE_SECONDS is too slow for good
        (``too_slow``): it raises TooSlow at once after that, for every case."""
        task = self.task
        if variant.spec.name in self.slow:
            raise TooSlow(self.slow[variant.spec.name])
        positional, keywords = split_arguments(task.functions[check.function()], args)
        try:
            with deadline(MISTAKE_SECONDS):
                return call_reference(variant.module, check.function(), positional, keywords)
        except TooSlow as exc:
            self.slow[variant.spec.name] = (
                f"{task.mistakes_path}: {check.function()} of mistake "
                f"'{variant.spec.name}' {exc} on {args!r:.200}"
            )
            raise TooSlow(self.slow[variant.spec.name]) from None

    def kept_output(self, variant: Variant, check: CheckSpec, args: dict[str, Any]) -> Any:
        """``output`` on a case of the check's set (``args`` is the set's own), kept for the
        next student when it is small: a diagnosis looks at the same few cases for the whole
        class. What raises is run again."""
        key = (variant.spec.name, check.name, id(args))
        kept = self.shown_outputs.get(key)
        if kept is not None and kept[0] is args:
            return copy.deepcopy(kept[1])
        value = self.output(variant, check, args)
        if nbytes(value) <= KEPT_OUTPUT_BYTES:
            self.shown_outputs[key] = (args, copy.deepcopy(value))
        return value

    def too_slow(self, variant: Variant) -> str | None:
        """Why the mistake's code is not used (it ran past its deadline), or None."""
        return self.slow.get(variant.spec.name)

    def judged_ok(self, variant: Variant, check: CheckSpec, args: dict[str, Any], expected: Any) -> bool:
        """The check's verdict on the mistake's output for ``args``."""
        try:
            value = self.output(variant, check, args)
        except (Exception, TooSlow):
            return False
        return passes(check, expected, value, args)

    def profile(self, cases_of: Callable[[CheckSpec], CaseSet]) -> dict[str, list[str]]:
        """Mistake -> the checks it fails, in task order (every mistake, every profiled
        check); ``cases_of`` gives a check's cases."""
        return {
            v.spec.name: [c.name for c in self.task.checks if profiled(c) and self.fails(v, c, cases_of(c))]
            for v in self.variants
        }

    def frozen_profile(self, cases_of: Callable[[CheckSpec], CaseSet]) -> dict[str, Any]:
        """The profile as `grader freeze` keeps it (in cases.json), with the SHA-256 of the
        mistakes.py it was found with."""
        return {"file_sha256": file_sha256(self.task.mistakes_path), "fails": self.profile(cases_of)}

    def take_frozen_profile(self, frozen: Any) -> bool:
        """Take the profile a freeze kept, if it is this mistakes.py's and names these
        mistakes (else each is found when first asked, as without one: mistakes.py may be
        edited without a refreeze, since a diagnosis never changes a score)."""
        names = {v.spec.name for v in self.variants}
        if not (
            isinstance(frozen, dict)
            and frozen.get("file_sha256") == file_sha256(self.task.mistakes_path)
            and isinstance(fails := frozen.get("fails"), dict)
            and set(fails) == names
        ):
            return False
        for name, checks in fails.items():
            for check in self.task.checks:
                if profiled(check):
                    self.failing[(name, check.name)] = check.name in checks
        return True


def passes(check: CheckSpec, expected: Any, value: Any, args: dict[str, Any]) -> bool:
    """Whether ``check`` passes a mistake's output ``value`` (judged as a student's would be)."""

    options = check.options
    return output_verdict(
        expected, value, options.compare, options.tolerance, options.select, options.returns
    ).ok
