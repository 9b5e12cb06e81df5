"""The sandbox tiers the suites run under.

The one list of tiers: those of the registry (grader.sandbox.TIERS) that work on this
machine, strongest first, each also with warm workers where they work. Computed on first use
(it probes the machine), so the unit tier never starts a probe. tests/conftest.py turns them
into the ``tier``, ``plain_tier`` and ``warm_tier`` parameters.
"""

import functools

BUBBLEWRAP, LANDLOCK, UNPRIVILEGED, RLIMITS = "bubblewrap", "landlock", "unprivileged", "rlimits"
UNSANDBOXED = "unsandboxed"  # a kit on a student's own machine only: tests/integration/test_unsandboxed.py
ISOLATING = {BUBBLEWRAP, LANDLOCK}  # tiers that hide the filesystem, network and grader


def tier_works(name: str) -> bool:
    from grader.sandbox import tier

    return tier(name).works()


@functools.cache
def tiers() -> tuple[str, ...]:
    """Every tier that works here but the unprivileged one, whose walls are file permissions
    that these tests' folders do not close (tests/security/test_unsafe_tiers.py runs it in a
    simulated container)."""
    from grader.sandbox import working_tiers

    return tuple(working_tiers(exclude=[UNPRIVILEGED, UNSANDBOXED]))


@functools.cache
def warm_tiers() -> tuple[str, ...]:
    from grader.sandbox import warm_supported

    return tuple(t for t in tiers() if warm_supported(t))


class Mode(str):
    """A tier's name. ``warm`` grades the attack as one file of a class (``grader batch``,
    whose workers are forked by a warm server) rather than with ``grader check``."""

    warm = False

    @classmethod
    def of(cls, tier: str, warm_workers: bool) -> "Mode":
        mode = cls(tier)
        mode.warm = warm_workers
        return mode

    @property
    def label(self) -> str:
        return f"{self}-warm" if self.warm else str(self)


@functools.cache
def modes() -> tuple[Mode, ...]:
    return tuple([Mode.of(t, False) for t in tiers()] + [Mode.of(t, True) for t in warm_tiers()])


def runtime_mount_points_in_tmp() -> set[str]:
    """Names bubblewrap shows in a worker's private /tmp because the grader's own Python
    runtime is bound there read-only (a checkout or virtualenv under /tmp): not secret."""
    from grader.sandbox.tiers.base import runtime_dirs

    return {d.split("/")[2] for d in runtime_dirs() if d.startswith("/tmp/")}
