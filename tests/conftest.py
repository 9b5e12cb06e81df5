import functools
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PE_TASK = os.path.join(ROOT, "tasks", "positional-encoding")
PE_SAMPLES = os.path.join(ROOT, "submissions", "positional-encoding")


# --------------------------------------------------------------------------- sandbox tiers
# The one list of tiers the suites run under: those of the registry (grader.sandbox.TIERS)
# that work on this machine, strongest first, each also with warm workers where they work.
# Computed on first use (it probes the machine), so the unit tier never starts a probe.

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


def pytest_generate_tests(metafunc):
    """``tier``: every mode (each tier, fresh and warm workers); ``plain_tier``: every tier
    with fresh workers; ``warm_tier``: every tier with warm workers."""
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


@functools.cache
def _points(task: str) -> dict[str, float]:
    from grader.grading.task_yaml import load_task

    return {c.name: c.points for c in load_task(task).checks}


def score_without(*lost: str, task: str = PE_TASK) -> float:
    """The task's total less the points of the checks named (what a file that fails exactly
    those scores), read from the task: tests hold to the task, not to today's numbers."""
    points = _points(task)
    return sum(points.values()) - sum(points[name] for name in lost)


def as_cell(points: float) -> str:
    """A score as the gradebook's CSV and the text report write it (33, not 33.0)."""
    return f"{points:g}"


IGNORES_BASE_LOSES = ("table-custom-base", "add-custom-base")  # mistake_ignores_base.py's


@pytest.fixture(scope="session")
def pe_task():
    from grader.grading.task_yaml import load_task

    return load_task(PE_TASK)


def run_cli(*args, env=None, timeout=120):
    """Run ``python -m grader`` as a user would; returns the CompletedProcess."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=full_env,
        timeout=timeout,
    )


def no_process_with(marker: str) -> bool:
    """No live process on this machine has ``marker`` in its command line."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            return False
    return True


def write(path, text):
    path.write_text(textwrap.dedent(text).lstrip())
    return str(path)


SQUARE_REFERENCE = """
import numpy as np

def square(x):
    return np.asarray(x, dtype=float) ** 2
"""


def make_task(folder, yaml_text, reference=SQUARE_REFERENCE):
    """A small task in a temporary folder, for tests of the engine itself."""
    folder.mkdir(parents=True, exist_ok=True)
    write(folder / "task.yaml", yaml_text)
    write(folder / "reference.py", reference)
    write(folder / "statement.md", "A test task.\n")
    return str(folder)


COURSE = os.path.join(ROOT, "examples", "course")  # the students' side
INSTRUCTOR_TASKS = os.path.join(ROOT, "examples", "course-instructor", "tasks")  # the full tasks


def runtime_mount_points_in_tmp() -> set[str]:
    """Names bubblewrap shows in a worker's private /tmp because the grader's own Python
    runtime is bound there read-only (a checkout or virtualenv under /tmp): not secret."""
    from grader.sandbox.tiers.base import runtime_dirs

    return {d.split("/")[2] for d in runtime_dirs() if d.startswith("/tmp/")}


# A normalize-rows solution that changes its input in place (and makes rows of zeros NaN).
WRONG_NORMALIZE = """
import numpy as np

def normalize_rows(m):
    m /= np.linalg.norm(m, axis=1, keepdims=True)   # in place, and rows of zeros become NaN
    return m
"""


def course_with_full_tasks(folder):
    """The example student repository with the instructor's full tasks (hidden checks and
    references) in place of its kits: what final grading by CI sees."""
    shutil.copytree(COURSE, folder)
    shutil.rmtree(os.path.join(folder, "tasks"))
    shutil.copytree(INSTRUCTOR_TASKS, os.path.join(folder, "tasks"))
    return folder


SYSTEM_PYTHON = "/usr/bin/python3"
SIMULATOR = os.path.join(ROOT, "tests", "helpers", "container_sim.py")
# Gradescope's container as tests/helpers/container_sim.py makes it: with the machine's cgroups
# writable, or read-only as Docker mounts them by default; and a newer Docker that lets
# Landlock through (no namespaces still). The tier each one leaves the grader.
SIMULATIONS = {
    "cgroup": [],
    "no-cgroup": ["--no-cgroup"],
    "landlock": ["--landlock"],
    "landlock-no-cgroup": ["--landlock", "--no-cgroup"],
}
SIMULATED_TIER = {
    "cgroup": UNPRIVILEGED,
    "no-cgroup": UNPRIVILEGED,
    "landlock": LANDLOCK,
    "landlock-no-cgroup": LANDLOCK,
}


def in_container(
    container, *args, simulation="cgroup", cwd=None, timeout=300, command="grader", simulator_options=()
):
    """Run ``grader ARGS`` (or another program of the container's venv) in the simulation
    (with more of container_sim.py's options, ``simulator_options``)."""
    program = os.path.join(container["bin"], command)
    return subprocess.run(
        [
            os.path.join(container["bin"], "python"),
            SIMULATOR,
            *SIMULATIONS[simulation],
            *simulator_options,
            program,
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=cwd or "/",
        timeout=timeout,
    )


@pytest.fixture(params=["cgroup", "no-cgroup"])
def simulation(request):
    """Gradescope's container with and without a writable cgroup (the unprivileged tier)."""
    return request.param


@pytest.fixture(scope="session")
def container(tmp_path_factory):
    """A normal install of the grader in a virtualenv any user may read, and a private
    folder (like /autograder/source) holding the task."""
    # With the frameworks installed here (CI: numgrader[tensorflow,torch]), the container
    # gets them too, as grader gradescope's zip installs them for a task that allows them.
    import importlib.util

    extras = [m for m in ("tensorflow", "torch") if importlib.util.find_spec(m) is not None]
    yield from _simulated_container(tmp_path_factory, extras)


@pytest.fixture(scope="session")
def service_container(tmp_path_factory):
    """The same, with the service's extras (serve, postgresql): grader serve as a course
    would run it on such a machine."""
    yield from _simulated_container(tmp_path_factory, ["serve", "postgresql"])


def _simulated_container(tmp_path_factory, extras):
    if os.geteuid() != 0 or not os.path.exists(SYSTEM_PYTHON):
        pytest.skip("the simulation needs root and the system's Python, as Gradescope has")
    base = tempfile.mkdtemp(prefix="grader-container-")
    os.chmod(base, 0o755)
    venv = os.path.join(base, "venv")
    made = subprocess.run([SYSTEM_PYTHON, "-m", "venv", venv], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.fail(
            f"cannot make a virtualenv of {SYSTEM_PYTHON} (Debian: apt-get install "
            f"python3-venv): {made.stderr[-500:]}"
        )
    wanted = ROOT + (f"[{','.join(extras)}]" if extras else "")
    installed = subprocess.run(
        [os.path.join(venv, "bin", "pip"), "install", "-q", wanted], capture_output=True, text=True, cwd=base
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    private = tmp_path_factory.mktemp("autograder")  # pytest's folders are 0700
    shutil.copytree(PE_TASK, private / "task")
    yield {
        "bin": os.path.join(venv, "bin"),
        "task": str(private / "task"),
        "private": private,
        "open": base,
        "frameworks": [e for e in extras if e in ("tensorflow", "torch")],
    }
    shutil.rmtree(base, ignore_errors=True)
