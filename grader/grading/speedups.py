"""The grader's speed-ups, each decided here and nowhere else, all behind one switch
(``GradeOptions.speedups``: ``--no-speedups`` on every command that grades, or
``$GRADER_NO_SPEEDUPS``). None of them changes a report: off, the grader gives the same
reports, only slower (tests/integration/test_same_reports.py holds it to that).

- head-start: ``grader check`` starts its worker before it imports the grading stack
  (prestart.py), so the two starts overlap.
- shrink-lanes: one file graded in one process (``grader check``) shrinks its failures in two
  lanes, a forked grader taking the second core (shrinking/lanes.py).
- shrink-cache: a shrink first walks the paths earlier shrinks of the check took, kept in
  memory for a process's later submissions (shrinking/tree.py) and on disk for a batch's
  other pool processes and later runs (shrinking/tree_store.py; never with ``--no-cache``);
  off, every shrink is Hypothesis's own from the start.

Plain data and the standard library only: the command line reads it before numpy.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from grader.grading.options import SPEEDUPS, GradeOptions

ENVIRONMENT = "GRADER_NO_SPEEDUPS"


def chosen_speedups(no_speedups: bool, environ: Mapping[str, str] = os.environ) -> frozenset[str]:
    """The speed-ups on: none with ``--no-speedups`` or ``$GRADER_NO_SPEEDUPS=1``; the
    variable may instead name some, comma-separated (``shrink-lanes,head-start``: those
    off, to measure each one's gain, bench/speedups.py). Raises ValueError on a name that is
    no speed-up."""
    said = environ.get(ENVIRONMENT, "").strip()
    if no_speedups or said == "1":
        return frozenset()
    off = {name.strip() for name in said.split(",") if name.strip()} if said != "0" else set()
    unknown = off - SPEEDUPS
    if unknown:
        raise ValueError(
            f"${ENVIRONMENT}: {', '.join(sorted(unknown))} is no speed-up "
            f"(1, or some of {', '.join(sorted(SPEEDUPS))})"
        )
    return SPEEDUPS - off


def starts_ahead(options: GradeOptions) -> bool:
    """Whether ``grader check`` starts its worker ahead (prestart.py)."""
    return "head-start" in options.speedups


def uses_shrink_lanes(options: GradeOptions, plain_process: bool) -> bool:
    """Whether a grade shrinks its failures in two lanes: one file in one process only (a
    batch keeps the cores busy already; warm workers are forked from a server this process
    shares), where a process can fork, and not in a tier whose worker is a plain process
    (a student's own machine: macOS's system libraries are not safe in a forked child)."""
    return (
        "shrink-lanes" in options.speedups
        and options.shrink_lanes
        and not options.warm_workers
        and hasattr(os, "fork")
        and not plain_process
    )


def uses_shrink_cache(options: GradeOptions) -> bool:
    """Whether a shrink walks the paths of earlier shrinks first and keeps its own."""
    return "shrink-cache" in options.speedups
