"""The tier registry: one object per tier, strongest first, from which the tier is chosen,
the CLI's choices come and every fall below the strongest tier is explained."""

import os
import sys
import tempfile
from pathlib import Path

import pytest

from grader.cli import parser as cli_parser
from grader.sandbox import NAMES, TIERS, Limits, SandboxUnavailable, Tier, choose_tier, downgrade_note, tier
from grader.sandbox.tiers import unprivileged
from grader.sandbox.tiers.base import WORKER_DIR
from grader.sandbox.tiers.bubblewrap import WORKER_DIR_INSIDE


@pytest.fixture
def works(monkeypatch):
    """Decide which tiers work: works({"landlock", "rlimits"}), and what their workers could
    share here: works({...}, gaps={"unprivileged": ["..."]}) (none unless said)."""

    def set_working(names, gaps=None):
        for t in TIERS:
            monkeypatch.setattr(t, "works", lambda name=t.name: name in names)
            monkeypatch.setattr(t, "gaps", lambda name=t.name: list((gaps or {}).get(name, [])))
            monkeypatch.setattr(t, "described_weakness", lambda t=t: t.weakness)

    return set_working


@pytest.fixture
def unprivileged_probe(monkeypatch):
    """Decide why the unprivileged tier fails: unprivileged_probe(root=False), or as root
    unprivileged_probe(failure="what the probe said", needs=[paths a worker must read])."""

    def simulate(root=True, failure=None, needs=()):
        monkeypatch.setattr(unprivileged, "_is_root", lambda: root)
        monkeypatch.setattr(unprivileged, "_probe_failure", lambda: failure)
        monkeypatch.setattr(unprivileged, "_worker_needs", lambda: list(needs))
        unprivileged.why_unprivileged_fails.cache_clear()

    yield simulate
    unprivileged.why_unprivileged_fails.cache_clear()


def test_the_registry_is_in_strength_order_and_the_cli_offers_it():
    assert NAMES == ("bubblewrap", "landlock", "unprivileged", "rlimits", "unsandboxed")
    assert all(isinstance(t, Tier) and tier(t.name) is t for t in TIERS)
    isolation = next(
        a
        for a in cli_parser.build_parser()._subparsers._group_actions[0].choices["check"]._actions
        if "--isolation" in a.option_strings
    )
    assert list(isolation.choices) == ["auto", *NAMES]


def test_auto_takes_the_strongest_tier_that_works(works):
    works({"landlock", "unprivileged", "rlimits"})
    assert choose_tier() == "landlock"
    works({"unprivileged", "rlimits"})
    assert choose_tier("auto", others_work=True) == "unprivileged"
    works({"rlimits"})
    assert choose_tier() == "rlimits"


def test_someone_elses_work_is_never_graded_in_rlimits(works, unprivileged_probe):
    works({"rlimits"})
    unprivileged_probe(root=False)
    with pytest.raises(SandboxUnavailable, match=r"no tier that protects .*\(.*; no Landlock; not root"):
        choose_tier("auto", others_work=True)
    works(set(NAMES))
    with pytest.raises(SandboxUnavailable, match="drop --isolation rlimits"):
        choose_tier("rlimits", others_work=True)


def test_a_named_tier_is_required_never_degraded(works):
    works({"rlimits"})
    for name in ("landlock", "unprivileged"):
        with pytest.raises(SandboxUnavailable, match=f"the {name} tier was required"):
            choose_tier(name)
    works({"unprivileged", "rlimits"})
    assert choose_tier("unprivileged") == "unprivileged"


def test_as_root_the_unprivileged_tier_names_the_folder_its_workers_cannot_read(works, unprivileged_probe):
    with tempfile.TemporaryDirectory() as open_folder:  # (pytest's tmp_path is closed itself)
        os.chmod(open_folder, 0o755)
        check_the_closed_folder_is_named(works, unprivileged_probe, Path(open_folder) / "home")


def check_the_closed_folder_is_named(works, unprivileged_probe, closed):
    (closed / "venv" / "bin").mkdir(parents=True)
    python = closed / "venv" / "bin" / "python"
    python.write_text("")
    closed.chmod(0o700)
    unprivileged_probe(failure=f"Permission denied: {python}", needs=[str(python), WORKER_DIR])
    works({"rlimits"})
    for said in (tier("unprivileged").missing(), tier("unprivileged").refusal()):
        assert "not root" not in said
        assert f"{closed} is closed to other users (the probe: Permission denied: {python})" in said
        assert "Install the grader where every user can read it" in said
    with pytest.raises(
        SandboxUnavailable, match=f"the unprivileged tier was required .*: .*{closed} is closed"
    ):
        choose_tier("unprivileged")


def test_as_root_the_unprivileged_tier_says_what_its_probe_said(works, unprivileged_probe):
    unprivileged_probe(failure="ModuleNotFoundError: No module named 'numpy'", needs=[WORKER_DIR])
    works({"rlimits"})
    said = tier("unprivileged").refusal()
    assert "not root" not in said and "runs as root" in said
    assert "import numpy: ModuleNotFoundError: No module named 'numpy'. Install the grader" in said
    unprivileged_probe(root=False)
    assert tier("unprivileged").missing() == "not root, so workers cannot run as a user of their own"
    assert "it needs the grader to run as root" in tier("unprivileged").refusal()


def test_an_unknown_tier_is_refused_not_taken_for_rlimits():
    with pytest.raises(SandboxUnavailable, match="no isolation tier 'bubblewarp'"):
        choose_tier("bubblewarp")


def test_every_fall_below_the_strongest_tier_says_what_is_weaker_and_why(works, monkeypatch):
    works(set(NAMES))
    assert downgrade_note("bubblewrap") == ""
    assert downgrade_note("landlock") == (
        "graded in the landlock tier (file access confined by "
        "Landlock; no private /proc), not bubblewrap: it was "
        "asked for (--isolation)"
    )
    works(set(NAMES) - {"bubblewrap"})
    monkeypatch.setattr(tier("bubblewrap"), "missing", lambda: "bwrap is not installed")
    assert downgrade_note("rlimits") == (
        "graded in the rlimits tier (resource limits only: the "
        "submission can read and write what the grader can), not "
        "bubblewrap: bwrap is not installed"
    )
    assert all(t.weakness for t in TIERS[1:])


GAP = "SysV IPC objects outlive the worker that made them"


def test_someone_elses_work_is_refused_where_workers_could_share_state(works):
    works({"unprivileged", "rlimits"}, gaps={"unprivileged": [GAP]})
    for requested in ("auto", "unprivileged"):
        with pytest.raises(
            SandboxUnavailable, match=f"not graded in the unprivileged tier here.*{GAP}.*--allow-shared-state"
        ):
            choose_tier(requested, others_work=True)
        # the instructor may accept it for a run; a student checking their own file is not refused
        assert choose_tier(requested, others_work=True, shared_state=True) == "unprivileged"
    assert choose_tier("unprivileged") == "unprivileged"
    # auto passes over a stronger tier whose workers could share state, to one whose cannot
    works({"landlock", "unprivileged", "rlimits"}, gaps={"landlock": [GAP]})
    assert choose_tier("auto", others_work=True) == "unprivileged"


def test_the_isolation_note_says_what_workers_could_share(works):
    works(set(NAMES) - {"bubblewrap"}, gaps={"unprivileged": [GAP]})
    assert downgrade_note("unprivileged").startswith(
        f"graded in the unprivileged tier ({tier('unprivileged').weakness}; its workers could share "
        f"state here: {GAP}), not bubblewrap"
    )


def test_bubblewrap_reports_a_signal_as_128_plus_n():
    assert tier("bubblewrap").exit_status(128 + 9) == -9
    assert tier("bubblewrap").exit_status(3) == 3
    assert tier("landlock").exit_status(-9) == -9


def test_only_the_inside_folder_is_bound_into_bubblewrap():
    start = tier("bubblewrap").worker(7, Limits(), "/nowhere", in_cgroup=True)
    binds = [tuple(start.command[i + 1 : i + 3]) for i, a in enumerate(start.command) if a == "--ro-bind"]
    assert (WORKER_DIR, WORKER_DIR_INSIDE) in binds
    assert start.command[start.command.index("--") + 4] == WORKER_DIR_INSIDE + "/worker.py"
    assert start.folder == "/tmp/workers/w1" and start.env == {}  # (a warm server's first worker's)


def test_warm_workers_are_for_the_tiers_that_can_confine_a_forked_worker():
    assert not any(tier(name).warm_works() for name in ("unprivileged", "rlimits", "unsandboxed"))
    with pytest.raises(SandboxUnavailable):
        tier("rlimits").fork_server(3, None, {})


# --------------------------------------------------------------------------- unsandboxed

KIT_ONLY = (
    "the unsandboxed tier grades only a student kit (a task without a reference or hidden "
    "checks) checked by its own student on their own machine (grader check without "
    "--others-work, grader ci of a course without hidden checks); this grade is not one"
)
OTHERS_WORK = (
    "grading someone else's work is refused in the unsandboxed tier, where the submission "
    "runs as the grader with nothing between them; drop --isolation unsandboxed."
)


def test_auto_takes_unsandboxed_only_for_a_kit_and_only_where_no_sandboxed_tier_works(works):
    works({"unsandboxed"})
    assert choose_tier("auto", kit=True) == "unsandboxed"
    with pytest.raises(SandboxUnavailable) as refused:
        choose_tier("auto")  # a full task, or a command that is not a student's own check
    assert str(refused.value).endswith(f"). {KIT_ONLY}.")
    assert str(refused.value).startswith("no sandboxed tier works here (")
    for kit in (False, True):  # someone else's work: never, whatever the caller says of the task
        with pytest.raises(SandboxUnavailable, match="^no tier that protects the task and the results"):
            choose_tier("auto", others_work=True, shared_state=True, kit=kit)
    works({"rlimits", "unsandboxed"})
    assert choose_tier("auto", kit=True) == "rlimits"  # a stronger tier works: it is taken
    works(set(NAMES))
    assert choose_tier("auto", kit=True) == "bubblewrap"


def test_unsandboxed_asked_for_is_refused_for_anything_but_a_kit_checked_by_its_student(works):
    works(set(NAMES))
    assert choose_tier("unsandboxed", kit=True) == "unsandboxed"  # (asked for: taken)
    with pytest.raises(SandboxUnavailable) as refused:
        choose_tier("unsandboxed")
    assert str(refused.value) == f"{KIT_ONLY}: drop --isolation unsandboxed."
    for kit in (False, True):
        for shared_state in (False, True):
            with pytest.raises(SandboxUnavailable) as refused:
                choose_tier("unsandboxed", others_work=True, shared_state=shared_state, kit=kit)
            assert str(refused.value) == OTHERS_WORK


def test_without_what_a_sandboxed_worker_is_started_with_only_unsandboxed_works(monkeypatch):
    """macOS and Windows: no fork (preexec_fn), no rlimits, no descriptor passing. Every
    sandboxed tier says so, before any probe of its own."""
    import os
    import socket
    import sys

    monkeypatch.delattr(os, "fork")
    monkeypatch.delattr(socket, "send_fds")
    monkeypatch.setitem(sys.modules, "resource", None)
    assert [t.name for t in TIERS if t.works()] == ["unsandboxed"]
    missing = (
        "this system cannot start a sandboxed worker: no rlimits (resource), no fork, no descriptor passing"
    )
    assert all(t.missing().startswith(missing) for t in TIERS[:-1])
    assert tier("rlimits").refusal().startswith(f"the rlimits tier was required but {missing}")
    assert choose_tier("auto", kit=True) == "unsandboxed"
    assert downgrade_note("unsandboxed").startswith(
        "graded unsandboxed: your own machine; your instructor grades in the sandbox (none works "
        f"here: {missing}"
    )


def test_unsandboxed_starts_the_student_s_own_python_with_no_confinement():
    start = tier("unsandboxed").worker(40123, Limits(memory_mib=1024), "/nowhere", in_cgroup=False)
    assert start.command[:2] == [sys.executable, "-B"] and "-I" not in start.command
    assert start.command[2].endswith("connect_back.py") and start.command[3] == "40123"
    assert start.env["TMPDIR"] == "/nowhere" and start.env["OPENBLAS_NUM_THREADS"] == "1"
    assert tier("unsandboxed").confinement(Limits(), "/nowhere", False) == {}


def test_the_tier_is_chosen_in_one_place_outside_the_sandbox():
    """Outside the sandbox, choose_tier is imported and called by grading.options.tier_for
    only: every command asks tier_for, which applies the kit rule, so no caller can forget it
    or assemble the arguments its own way."""
    import ast

    import grader

    class Uses(ast.NodeVisitor):
        def __init__(self, module: str):
            self.module, self.where, self.found = module, [module], set()

        def visit_FunctionDef(self, node):
            self.where.append(node.name)
            self.generic_visit(node)
            self.where.pop()

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Name(self, node):
            if node.id == "choose_tier":
                self.found.add(".".join(self.where))

        def visit_Attribute(self, node):
            if node.attr == "choose_tier":
                self.found.add(".".join(self.where))
            self.generic_visit(node)

        def visit_ImportFrom(self, node):
            if any(alias.name == "choose_tier" for alias in node.names):
                self.found.add(f"{self.module} (its import)")

    root = Path(grader.__file__).parent
    found = set()
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root.parent).with_suffix("").as_posix().replace("/", ".")
        if module == "grader.sandbox" or module.startswith("grader.sandbox."):
            continue
        uses = Uses(module)
        uses.visit(ast.parse(path.read_text(encoding="utf-8")))
        found |= uses.found
    assert found == {"grader.grading.options.tier_for", "grader.grading.options (its import)"}
