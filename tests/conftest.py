"""pytest's hooks and the fixtures every folder shares; nothing here is for importing.

The helpers tests import are in tests/helpers/ (``from helpers.paths import ROOT``; its
__init__ lists them). pytest's default import mode ("prepend") puts the first folder above a
test or conftest file without an __init__.py first on sys.path: tests/ for this file and for
tests/service/ (a package), which is loaded before any test, so ``helpers`` imports from
every folder, also when one file is run alone. The line below makes it so under any import
mode.
"""

import os
import sys

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest
from helpers.containers import simulated_container
from helpers.paths import PE_TASK
from helpers.tiers import modes, tiers, warm_tiers


def pytest_generate_tests(metafunc):
    """``tier``: every mode (each tier, fresh and warm workers); ``plain_tier``: every tier
    with fresh workers; ``warm_tier``: every tier with warm workers (helpers/tiers.py)."""
    if "tier" in metafunc.fixturenames:
        metafunc.parametrize("tier", modes(), ids=[m.label for m in modes()])
    if "plain_tier" in metafunc.fixturenames:
        metafunc.parametrize("plain_tier", tiers())
    if "warm_tier" in metafunc.fixturenames:
        metafunc.parametrize("warm_tier", warm_tiers())


TIER_FOLDERS = ("unit", "integration", "security", "service", "browser")


def pytest_collection_modifyitems(items):
    """Each test carries its folder's marker, so `-m "not security"` works from anywhere."""
    for item in items:
        folder = os.path.basename(os.path.dirname(str(item.path)))
        if folder in TIER_FOLDERS:
            item.add_marker(folder)
        if "container" in getattr(item, "fixturenames", ()):
            item.add_marker("slow")  # installs the grader in a virtualenv of the system's Python


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Tests never read or write the user's ~/.cache/grader."""
    os.environ["GRADER_CACHE_DIR"] = str(tmp_path_factory.mktemp("grader-cache"))


@pytest.fixture(scope="session")
def pe_task():
    from grader.authoring import load_task

    return load_task(PE_TASK)


@pytest.fixture(params=["cgroup", "no-cgroup"])
def simulation(request):
    """Gradescope's container with and without a writable cgroup (the unprivileged tier)."""
    return request.param


@pytest.fixture(scope="session")
def container(tmp_path_factory):
    """A normal install of the grader in a virtualenv any user may read, and a private
    folder (like /autograder/source) holding the task (helpers/containers.py)."""
    # With the frameworks installed here (CI: numgrader[tensorflow,torch]), the container
    # gets them too, as grader gradescope's zip installs them for a task that allows them.
    import importlib.util

    extras = [m for m in ("tensorflow", "torch") if importlib.util.find_spec(m) is not None]
    yield from simulated_container(tmp_path_factory, extras)


@pytest.fixture(scope="session")
def service_container(tmp_path_factory):
    """The same, with the service's extras (serve, postgresql): grader serve as a course
    would run it on such a machine."""
    yield from simulated_container(tmp_path_factory, ["serve", "postgresql"])
