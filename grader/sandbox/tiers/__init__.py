"""Isolation tiers: one object per tier (base.Tier), in a registry, strongest first.

``bubblewrap``: every namespace unshared, only the runtime and the inside modules visible.
``landlock``: where bwrap fails, the worker restricts itself before any student code runs.
``unprivileged``: where neither works but the grader is root, the worker runs as a user of
its own, and file permissions are its walls.
``rlimits``: resource limits only (a student checking their own file).
``unsandboxed``: a student's own machine where no tier works (macOS, Windows): a plain
subprocess, for a kit only (``kit_only``).

``auto`` takes the strongest tier that works, and says so whenever that is not the
strongest. Grading someone else's work (a batch, Gradescope, CI with hidden checks) never
runs in a tier that is unsafe for it (rlimits, where the submission could read the task or
rewrite the results).
"""

from __future__ import annotations

from collections.abc import Iterable

from grader.sandbox.tiers.base import SandboxUnavailable, Start, Tier
from grader.sandbox.tiers.bubblewrap import Bubblewrap
from grader.sandbox.tiers.landlock import Landlock
from grader.sandbox.tiers.rlimits import Rlimits
from grader.sandbox.tiers.unprivileged import Unprivileged, refuse_open_paths
from grader.sandbox.tiers.unsandboxed import Unsandboxed

__all__ = [
    "TIERS",
    "NAMES",
    "SandboxUnavailable",
    "Start",
    "Tier",
    "choose_tier",
    "downgrade_note",
    "refuse_open_paths",
    "tier",
    "working_tiers",
]

# strongest first
TIERS: tuple[Tier, ...] = (Bubblewrap(), Landlock(), Unprivileged(), Rlimits(), Unsandboxed())
NAMES = tuple(t.name for t in TIERS)
_BY_NAME = {t.name: t for t in TIERS}


def tier(name: str) -> Tier:
    """The tier called ``name``; an unknown name is refused (never a silent fall to a
    weaker tier)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise SandboxUnavailable(
            f"there is no isolation tier {str(name)[:50]!r}: use auto or one of {', '.join(NAMES)}."
        ) from None


# Why a kit-only tier (unsandboxed) was not taken: the grade is not of a kit by its student.
KIT_ONLY = (
    "the {name} tier grades only a student kit (a task without a reference or hidden checks) "
    "checked by its own student on their own machine (grader check without --others-work, "
    "grader ci of a course without hidden checks); this grade is not one"
)


def choose_tier(
    requested: str = "auto", others_work: bool = False, shared_state: bool = False, kit: bool = False
) -> str:
    """``auto`` takes the strongest tier that works here; naming a tier refuses to degrade.
    ``others_work``: the submission is someone else's (a batch, Gradescope, CI with hidden
    checks): a tier unsafe for it (rlimits, in which it could read the task and write the
    results; unsandboxed) is refused rather than taken, and so is a tier whose workers could
    share state here (Tier.gaps) unless ``shared_state`` says the instructor accepts that.
    ``kit``: the grade is of a kit checked by its own student (the caller has made sure:
    grading/options.py's tier_for); only then may a kit-only tier (unsandboxed) be taken, by auto
    only where no stronger tier works; never with ``others_work``, whatever ``kit`` says."""
    if requested != "auto":
        named = tier(requested)
        if others_work and named.unsafe_for_others_work:
            raise SandboxUnavailable(f"{named.unsafe_for_others_work}; drop --isolation {named.name}.")
        if named.kit_only and not kit:
            raise SandboxUnavailable(f"{KIT_ONLY.format(name=named.name)}: drop --isolation {named.name}.")
        if not named.works():
            raise SandboxUnavailable(named.refusal())
        if others_work and not shared_state and named.gaps():
            raise SandboxUnavailable(_shares_state(named))
        return named.name
    refused: list[Tier] = []
    for candidate in TIERS:  # probed in order: a weaker tier's probe runs only if needed
        if others_work and candidate.unsafe_for_others_work:
            continue
        if candidate.kit_only and (not kit or others_work):
            continue
        if candidate.works():
            if others_work and not shared_state and candidate.gaps():
                refused.append(candidate)
                continue
            return candidate.name
    if refused:
        raise SandboxUnavailable(_shares_state(refused[0]))
    if not others_work:  # (only where no sandbox can start: not Linux)
        why = "; ".join(dict.fromkeys(t.missing() for t in TIERS if not t.kit_only))
        only = "; ".join(KIT_ONLY.format(name=t.name) for t in TIERS if t.kit_only)
        raise SandboxUnavailable(f"no sandboxed tier works here ({why}). {only}.")
    why = "; ".join(dict.fromkeys(t.missing() for t in TIERS if not t.unsafe_for_others_work))
    unsafe = " ".join(f"{t.unsafe_for_others_work}." for t in TIERS if t.unsafe_for_others_work)
    raise SandboxUnavailable(f"no tier that protects the task and the results works here ({why}). {unsafe}")


def _shares_state(named: Tier) -> str:
    return (
        f"someone else's work is not graded in the {named.name} tier here, because its workers "
        f"could share state: {'; '.join(named.gaps())}. Fix that (see docs/operators.md: Nothing "
        f"outlives a worker), or accept it with --allow-shared-state (GRADER_ALLOW_SHARED_STATE=1)."
    )


def downgrade_note(name: str) -> str:
    """What is weaker about tier ``name`` than the strongest tier, and why that one was not
    used (empty for the strongest itself); said on stderr and in the report."""
    strongest, graded = TIERS[0], tier(name)
    if graded is strongest:
        return ""
    why = "it was asked for (--isolation)" if strongest.works() else strongest.missing()
    return graded.downgrade(strongest.name, why)


def working_tiers(exclude: Iterable[str] = ()) -> list[str]:
    """The names of the tiers that work here, strongest first (those in ``exclude`` are not
    even probed)."""
    skipped = set(exclude)
    return [t.name for t in TIERS if t.name not in skipped and t.works()]
