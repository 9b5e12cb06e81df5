"""The sandbox, as the rest of the grader sees it: the only module outside ``sandbox/`` that
imports anything of it is this one.

``Sandbox`` runs one submission's calls in a worker; ``workers`` says where its workers come
from (a fresh process each, or forked from a warm server); the tiers are a registry,
strongest first (``TIERS``, ``tier``), from which ``choose_tier`` picks; ``wire`` is the
message format (its plain-data records are used for frozen cases and comparisons too).
What runs inside the sandbox lives apart, in ``inside/``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from grader.records.limits import Limits
from grader.sandbox import warm
from grader.sandbox.inside import wire
from grader.sandbox.inside.wire import ForeignArray, Opaque
from grader.sandbox.process import Spawner, WorkerProcess, fresh_worker
from grader.sandbox.tiers import (
    NAMES,
    TIERS,
    SandboxUnavailable,
    Tier,
    choose_tier,
    downgrade_note,
    refuse_open_paths,
    tier,
    working_tiers,
)
from grader.sandbox.tiers.base import die_with_parent

__all__ = [
    "CallOutcome",
    "ForeignArray",
    "Limits",
    "NAMES",
    "Opaque",
    "Sandbox",
    "SandboxUnavailable",
    "Spawner",
    "TIERS",
    "Tier",
    "choose_tier",
    "die_with_parent",
    "close_warm_workers",
    "downgrade_note",
    "refuse_open_paths",
    "tier",
    "start_worker",
    "startup_seconds",
    "warm_supported",
    "wire",
    "WorkerProcess",
    "workers",
    "working_tiers",
]


if TYPE_CHECKING:
    from grader.sandbox.launcher import CallOutcome, Sandbox, startup_seconds


def __getattr__(name: str) -> Any:
    if name in ("Sandbox", "CallOutcome", "startup_seconds"):
        # Imported on first use, to keep start-up fast: numpy comes with it (shared.py).
        from grader.sandbox import launcher

        return getattr(launcher, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def warm_supported(name: str) -> bool:
    """Whether warm workers (a fork server per job) can be used in tier ``name`` here."""
    return warm.supported(name)


def start_worker(limits: Limits, name: str) -> WorkerProcess:
    """A fresh worker in tier ``name``, starting now (it says hello when it is ready)."""
    return fresh_worker(limits, name)


@contextlib.contextmanager
def workers(limits: Limits, name: str, warm_workers: bool) -> Iterator[Spawner]:
    """Where one submission's workers come from: forked from a warm server of this process
    where ``warm_workers`` is asked for and works in tier ``name``, else a fresh process."""
    if warm_workers and warm.supported(name):
        with warm.lease(limits, name) as spawn:
            yield spawn
    else:
        yield fresh_worker


def close_warm_workers() -> None:
    """Close this process's warm servers, with their cgroups and folders."""
    warm.close_all()
