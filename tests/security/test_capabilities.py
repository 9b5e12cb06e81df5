"""Where a landlock-tier worker cannot have namespaces of its own, a grader run as root must
still leave it no capability (with one it could raise its own limits or renice itself)."""

import os

import pytest
from helpers.tasks import write
from helpers.tiers import LANDLOCK, tier_works

from grader.records.limits import Limits
from grader.sandbox.launcher import Sandbox
from grader.sandbox.tiers import landlock as landlock_tier

pytestmark = [
    pytest.mark.skipif(not tier_works(LANDLOCK), reason="needs the landlock tier"),
    pytest.mark.skipif(os.getuid() != 0, reason="only a grader run as root has capabilities to leak"),
]

ESCALATE = """
import os, resource
def escalate():
    won = []
    try:
        os.nice(-1)
        won.append("nice")
    except OSError:
        pass
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        won.append("rlimit")
    except (OSError, ValueError):
        pass
    return ",".join(won)
"""


def escalation(tmp_path) -> str:
    path = write(tmp_path / "escalate.py", ESCALATE)
    with Sandbox(path, ["escalate"], Limits(), LANDLOCK) as box:
        return box.call("escalate", []).value


def test_without_namespaces_the_capabilities_are_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(landlock_tier, "private_namespaces_work", lambda tier: False)
    assert escalation(tmp_path) == ""


def test_the_escalation_works_where_nothing_takes_capabilities_away(tmp_path, monkeypatch):
    """The control: the same file does escalate when neither defence is applied, so the
    test above can fail."""
    monkeypatch.setattr(landlock_tier, "private_namespaces_work", lambda tier: False)
    monkeypatch.setattr(landlock_tier, "runs_as_root", lambda: False)  # so it drops nothing
    assert escalation(tmp_path) != ""  # what this root may do ("nice" at least, in a container)
