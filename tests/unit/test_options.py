"""Which grade may run unsandboxed (tier_for's kit rule, grader/grading/options.py): a kit, holding nothing
of the instructor's, checked by its own student; and what a worker that shares no memory
hands back of a call's arguments (grader/sandbox/call_request.py)."""

import os
import shutil

import numpy as np
from helpers.paths import COURSE, INSTRUCTOR_TASKS, PE_TASK

from grader.authoring import load_task
from grader.grading.options import GradeOptions, is_kit, kit_at_home
from grader.sandbox.call_request import calls_request, sent_back

KIT = os.path.join(COURSE, "tasks", "normalize-rows")


def test_a_kit_holds_nothing_of_the_instructors_and_a_full_task_is_never_one(tmp_path):
    assert is_kit(load_task(KIT))
    assert not is_kit(load_task(os.path.join(INSTRUCTOR_TASKS, "normalize-rows")))  # reference, hidden
    assert not is_kit(load_task(PE_TASK))  # a reference and known mistakes
    # A kit folder that holds a reference after all (dropped in, or named elsewhere) is not one.
    shutil.copytree(KIT, tmp_path / "kit")
    (tmp_path / "kit" / "reference.py").write_text("def normalize_rows(m):\n    return m\n")
    assert not is_kit(load_task(str(tmp_path / "kit")))
    # ... nor a kit's task.yaml given a hidden check.
    shutil.copytree(KIT, tmp_path / "hidden")
    spec = tmp_path / "hidden" / "task.yaml"
    spec.write_text(spec.read_text().replace("  points: 2\n", "  points: 2\n  hidden: true\n", 1))
    assert any(c.hidden for c in load_task(str(tmp_path / "hidden")).checks)
    assert not is_kit(load_task(str(tmp_path / "hidden")))


def test_only_a_students_own_check_of_a_kit_may_be_graded_unsandboxed():
    kit = load_task(KIT)
    assert kit_at_home(kit, GradeOptions(own_machine=True))
    assert not kit_at_home(kit, GradeOptions())  # batch, validate, a new command: never unless it says so
    assert not kit_at_home(kit, GradeOptions(own_machine=True, others_work=True))
    assert not kit_at_home(load_task(PE_TASK), GradeOptions(own_machine=True))


def test_arrays_a_worker_without_shared_memory_sends_back_are_named_and_read_as_sent():
    m, k = np.ones((2, 3)), np.arange(4)
    items = [([m, 5], {"k": k}), ([[1.0, 2.0]], {})]
    back: list = []
    header, blobs = calls_request("f", items, back=back)
    assert back == [[0, 2], []] and [i["send_back"] for i in header["items"]] == back
    assert "fds" not in header  # nothing shared: the arrays went as any argument
    changed = m * 2
    assert [np.asarray(v).tolist() for v in sent_back(items[0], back[0], [changed, k])] == [
        changed.tolist(),
        5,
        k.tolist(),
    ]
    # Without one array back for each named, none is taken: the check sees them changed.
    for returned in (None, [changed], "no"):
        after = sent_back(items[0], back[0], returned)
        assert after[0] is None and after[2] is None and after[1] == 5
