"""Script tasks: the printed answer is read by the documented rule, and the script must
leave the work it printed about in its variables."""
import os
import textwrap

import pytest

from conftest import ROOT
from grader.grading import grade
from grader.spec import load_task


def task(name):
    return load_task(os.path.join(ROOT, "tasks", name))


def _script(tmp_path, source):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_framework_tensors_are_converted_in_the_worker(tmp_path):
    """Stand-ins with the TF (.numpy()) and PyTorch (.detach().cpu().numpy()) interfaces."""
    path = _script(tmp_path, """
        import numpy as np

        class TorchLike:
            def __init__(self, a): self.a = a
            def detach(self): return self
            def cpu(self): return self
            def numpy(self): return self.a

        class TFLike:
            def __init__(self, a): self.a = a
            def numpy(self): return self.a

        p = np.arange(5)[:, None]
        i = np.arange(8)[None, :]
        angles = p / np.power(10000.0, (2 * (i // 2)) / 8)
        encoding = TorchLike(np.where(i % 2 == 0, np.sin(angles), np.cos(angles)))
        other = TFLike(np.zeros(3))
        del p, i, angles
        print("torch.Size([5, 8])")
    """)
    result = grade(task("pe-table-shape"), path)
    assert result.status == "passed", [c.message for c in result.checks]
    assert "found in variable 'encoding'" in result.checks[-1].message


def test_missing_framework_is_an_environment_problem(tmp_path):
    path = _script(tmp_path, "import tensorflow as tf\nprint((5, 8))\n")
    result = grade(task("pe-table-shape"), path)
    runs = result.checks[0]
    assert result.status == "error" and runs.name == "runs"
    assert "problem of the environment, not of your code" in runs.message
    assert "'tensorflow'" in runs.message


def test_a_framework_the_task_does_not_allow_is_not_excused(tmp_path):
    path = _script(tmp_path, "import pandas\nprint((5, 8))\n")
    result = grade(task("pe-table-shape"), path)
    by_name = {c.name: c for c in result.checks}
    assert "environment" not in by_name["runs"].message
    assert by_name["allowed-imports"].status == "failed"


def test_hard_coded_answer_loses_the_work_points(tmp_path):
    path = _script(tmp_path, "print('TensorShape([5, 8])')\n")
    by_name = {c.name: c for c in grade(task("pe-table-shape"), path).checks}
    assert by_name["prints-the-shape"].status == "passed"
    assert by_name["builds-the-table"].status == "failed"
    assert "printing a shape you typed in does not count" in by_name["builds-the-table"].message


def test_sum_of_wrong_rows_is_named(tmp_path):
    path = os.path.join(ROOT, "submissions", "pe-batch-sum", "mistake_wrong_rows.py")
    by_name = {c.name: c for c in grade(task("pe-batch-sum"), path).checks}
    assert "rows 1 to 3 of the (4, 6) table" in by_name["adds-the-first-three-rows"].message


def test_script_tasks_refuse_function_checks(tmp_path):
    from conftest import make_task
    from grader.spec import SpecError
    folder = make_task(tmp_path / "t", """
        id: t
        title: T
        version: 1
        kind: script
        checks:
          - name: values
            kind: example
            call: square
    """)
    with pytest.raises(SpecError) as caught:
        load_task(folder)
    assert "task.yaml:7: checks[0].kind: an example check does not fit a script task" in str(caught.value)


def test_function_task_also_reports_a_missing_allowed_package(tmp_path):
    from conftest import make_task
    folder = make_task(tmp_path / "fw", """
        id: fw
        title: FW
        version: 1
        functions:
          square: [x]
        imports:
          allowed: [numpy, torch]
        checks:
          - name: values
            kind: example
            call: square
            args: {x: 2.0}
    """)
    path = _script(tmp_path, "import torch\n\ndef square(x):\n    return x * x\n")
    result = grade(load_task(folder), path)
    assert result.status == "error"
    assert "does not have 'torch'" in result.checks[0].message
