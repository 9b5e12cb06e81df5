"""Runs Hypothesis on the trusted side.

Collecting a check's cases and shrinking a failure go through the same ``explore`` so they
see the same derandomized sequence: a submission that passes every collected case is
exactly one that Hypothesis would have passed, and a failing one is re-found and shrunk.
Settings follow the design: derandomized (every student gets the same cases), no example
database (no leakage between students), no deadline (time limits are the sandbox's job).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from grader.task.edges import Edge, off_edges
from grader.task.spec import CheckSpec
from grader.task.strategies import Drawn, case_strategy

_ahead: threading.Thread | None = None  # importing Hypothesis ahead of its first use


def import_ahead() -> None:
    """Start importing Hypothesis, and what a first draw imports (numpy.random), in a thread
    of this process, once: a failed check's shrink needs it once the other checks have run
    (run.py), and the import (about 0.1 s) is made while the worker computes those."""
    global _ahead
    if _ahead is None and "hypothesis.core" not in sys.modules:
        _ahead = threading.Thread(target=_import_hypothesis, name="import-hypothesis", daemon=True)
        _ahead.start()


def imported_ahead() -> None:
    """Wait for the import started ahead, if one is under way (before a fork: a thread's
    half-done import would be the child's held lock)."""
    if _ahead is not None:
        _ahead.join()


def _import_hypothesis() -> None:
    try:
        import hypothesis.strategies  # noqa: F401
        import numpy.random  # noqa: F401
    except Exception:  # (whatever it is, the shrink's own import meets it and says so)
        pass


class Explorer:
    """One check's Hypothesis test, built once and run with a new body each time. Building
    it (the strategy, the settings, @given) reads the source of both, a few milliseconds: a
    prepared task keeps one per check, so a class's shrinks build it once per process."""

    def __init__(self, spec: CheckSpec[Any], shrink: bool, avoid: tuple[Edge, ...] = ()):
        self._body: Callable[[Drawn], Any] | None = None
        self._probe = _probe(spec, self._call, shrink, avoid)

    def _call(self, drawn: Drawn) -> Any:
        assert self._body is not None  # (set by run)
        return self._body(drawn)

    def run(self, body: Callable[[Drawn], Any]) -> None:
        """Call ``body(drawn)`` on each generated argument set; an exception is a failure."""
        self._body = body
        try:
            self._probe()
        finally:
            self._body = None


def explore(
    spec: CheckSpec[Any], body: Callable[[Drawn], Any], shrink: bool, avoid: tuple[Edge, ...] = ()
) -> None:
    """Call ``body(drawn)`` on each generated argument set; an exception is a failure.
    An argument set on one of the edges to ``avoid`` (edges.py) is rejected before ``body``
    sees it: Hypothesis draws another, and shrinks clear of it too."""
    Explorer(spec, shrink, avoid).run(body)


def _probe(
    spec: CheckSpec[Any], body: Callable[[Drawn], Any], shrink: bool, avoid: tuple[Edge, ...]
) -> Callable[[], None]:
    """The check's Hypothesis test, calling ``body`` on each argument set it draws."""
    imported_ahead()  # (the import under way, if any, is finished first)
    from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings

    if avoid:
        inner = body

        def body(drawn: Drawn) -> Any:
            if not off_edges(drawn.args, avoid):
                reject()
            return inner(drawn)

    # The fields Hypothesis draws from (calls.DrawnOptions). Keep the name `check` and the
    # decorator lines below as they are: Hypothesis seeds its derandomized sequence with
    # the source of `probe`, decorators included, so changing a character changes every
    # generated case (and every grade made on unfrozen cases).
    check = spec.options

    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]

    @settings(
        max_examples=check.cases,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        phases=phases,
        print_blob=False,
    )
    @given(case_strategy(check.draw, check.args))
    def probe(args: Drawn) -> None:
        body(args)

    return probe


def collect(check: CheckSpec[Any], avoid: tuple[Edge, ...] = ()) -> list[Drawn]:
    cases: list[Drawn] = []
    explore(check, cases.append, shrink=False, avoid=avoid)
    return cases
