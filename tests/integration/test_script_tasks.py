"""Script tasks: the printed answer is read by the documented rule, and the script must
leave the work it printed about in its variables."""

import os
import textwrap

import pytest
from helpers.paths import ROOT

from grader.authoring import load_task
from grader.grading.run import grade


def task(name):
    return load_task(os.path.join(ROOT, "tasks", name))


def _script(tmp_path, source):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_framework_tensors_are_converted_in_the_worker(tmp_path):
    """Stand-ins with the TF (.numpy()) and PyTorch (.detach().cpu().numpy()) interfaces."""
    path = _script(
        tmp_path,
        """
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
    """,
    )
    result = grade(task("pe-table-shape"), path)
    assert result.status == "passed", [c.message for c in result.checks]
    assert "found in variable 'encoding'" in result.checks[-1].message


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
    from helpers.tasks import make_task

    from grader.task.spec import SpecError

    folder = make_task(
        tmp_path / "t",
        """
        id: t
        title: T
        version: 1
        kind: script
        checks:
          - name: values
            kind: example
            call: square
    """,
    )
    with pytest.raises(SpecError) as caught:
        load_task(folder)
    assert "task.yaml:7: checks[0].kind: an example check does not fit a script task" in str(caught.value)


def test_function_task_also_reports_a_missing_allowed_package(tmp_path):
    from helpers.tasks import make_task

    folder = make_task(
        tmp_path / "fw",
        """
        id: fw
        title: FW
        version: 1
        functions:
          square: [x]
        imports:
          allowed: [numpy, mxnet]
        checks:
          - name: values
            kind: example
            call: square
            args: {x: 2.0}
    """,
    )
    path = _script(tmp_path, "import mxnet\n\ndef square(x):\n    return x * x\n")
    result = grade(load_task(folder), path)
    assert result.status == "error"
    assert "does not have 'mxnet'" in result.checks[0].message


def sample(task_name, file_name):
    return os.path.join(ROOT, "submissions", task_name, file_name)


def checks_of(task_name, path):
    return {c.name: c for c in grade(task(task_name), path).checks}


@pytest.mark.parametrize(
    "task_name, file_name",
    [
        ("pe-table-shape", "correct_fstring_equals.py"),  # table.shape=(5, 8)
        ("pe-table-shape", "correct_helper_inline_prose.py"),  # Shape of table is (5, 8); no variable
        ("pe-table-shape", "correct_main_function.py"),  # shape: (5, 8); all inside main()
        ("pe-batch-sum", "correct_helper_inline.py"),  # batch + table(4, 6)[:3]
        ("pe-batch-sum", "correct_inline_expression.py"),  # one expression, no variable
        ("pe-batch-sum", "correct_main_in_place.py"),  # main(), batch += rows
        ("pe-row-length", "correct_fstring_len.py"),  # len(encoding[2]) = 4
        ("pe-row-length", "correct_main_with_label.py"),  # row length: 4, inside main()
    ],
)
def test_any_correct_style_and_printing_form_gets_full_marks(task_name, file_name):
    result = grade(task(task_name), sample(task_name, file_name))
    assert result.status == "passed", [(c.name, c.message) for c in result.checks]


def test_arrays_computed_outside_variables_are_named_where_they_were():
    inline = checks_of("pe-batch-sum", sample("pe-batch-sum", "correct_inline_expression.py"))
    assert inline["builds-the-table"].message == "found in `pe(4, 6)` (line 13)"
    assert inline["adds-the-first-three-rows"].message == (
        "`np.zeros((1, 3, 6)) + pe(4, 6)[:3]` (line 13) = `np.zeros((1, 3, 6))` (line 13) "
        "(zeros) + the rows asked for"
    )
    in_main = checks_of("pe-table-shape", sample("pe-table-shape", "correct_main_function.py"))
    # (np.zeros is recorded as it was made, all zeros: the table is main()'s local at its end)
    assert in_main["builds-the-table"].message == "found in 'table' in main() (line 8)"


@pytest.mark.parametrize(
    "task_name, file_name, check, said",
    [
        (
            "pe-table-shape",
            "mistake_prints_both_orders.py",
            "prints-the-shape",
            "your last line, '(5, 8) (8, 5)', holds several possible answers: (5, 8), (8, 5); "
            "print only the answer.",
        ),
        (
            "pe-batch-sum",
            "mistake_several_answers.py",
            "prints-the-shape",
            "holds several possible answers: (1, 3, 6), (3, 6); print only the answer.",
        ),
        (
            "pe-row-length",
            "mistake_row_number_and_length.py",
            "prints-the-length",
            "your last line, 'row 2 has length 4', holds several possible answers: (2), (4); "
            "print only the answer.",
        ),
    ],
)
def test_a_last_line_with_several_answers_is_an_explained_failure(task_name, file_name, check, said):
    by_name = checks_of(task_name, sample(task_name, file_name))
    assert by_name[check].status == "failed" and said in by_name[check].message
    assert all(c.status == "passed" for name, c in by_name.items() if name != check)


def test_near_misses_are_named_for_computed_arrays_too(tmp_path):
    """A transposed table built in a helper and used inline; other rows added inline."""
    transposed = _script(
        tmp_path,
        """
        import numpy as np

        def pe(length, depth):
            p = np.arange(length)[None, :]
            j = np.arange(depth)[:, None]
            angles = p / np.power(10000.0, (2 * (j // 2)) / depth)
            return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))

        print(pe(5, 8).T.shape)
    """,
    )
    message = checks_of("pe-table-shape", transposed)["builds-the-table"].message
    assert message.startswith("`pe(5, 8)` (line 10) holds the table transposed, shape (8, 5)")
    other_rows = _script(
        tmp_path,
        """
        import numpy as np

        def pe(length, depth):
            p = np.arange(length)[:, None]
            j = np.arange(depth)[None, :]
            angles = p / np.power(10000.0, (2 * (j // 2)) / depth)
            return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))

        print((np.zeros((1, 3, 6)) + pe(4, 6)[1:]).shape)
    """,
    )
    message = checks_of("pe-batch-sum", other_rows)["adds-the-first-three-rows"].message
    assert "rows 1 to 3 of the (4, 6) table; the exercise asks for rows [:3]" in message


TABLE = """
    import numpy as np
    def pe(length, depth):
        p = np.arange(length)[:, np.newaxis]
        j = np.arange(depth)[np.newaxis, :]
        a = p / 10000 ** (2 * (j // 2) / depth)
        return np.where(j % 2 == 0, np.sin(a), np.cos(a))
    table = pe(4, 6)
"""


def _sum_check(tmp_path, body):
    path = _script(tmp_path, textwrap.dedent(TABLE) + body)
    result = grade(task("pe-batch-sum"), path)
    return next(c for c in result.checks if c.name == "adds-the-first-three-rows")


@pytest.mark.parametrize(
    "body",
    [
        "batch = np.ones((1, 3, 6))\nbatch[0] += table[:3]\nprint(batch.shape)\n",
        "batch = np.ones((1, 3, 6))\nnp.add(batch, table[:3], out=batch)\nprint(batch.shape)\n",
        "batch = np.ones((1, 3, 6))\nbatch[...] = batch + table[:3]\nprint(batch.shape)\n",
        "batch = np.ones((1, 3, 6))\ntotal = batch + table[:3]\nbatch[:] = 0\nprint(total.shape)\n",
        "batch = np.zeros((1, 3, 6))\nbatch[:, :] += table[:3]\nprint(batch.shape)\n",
        "batch = np.zeros((1, 3, 6))\nnp.add(batch, table[:3], out=batch)\nprint(batch.shape)\n",
        "batch = np.zeros((1, 3, 6))\nprint((batch + table[:3]).shape)\n",
    ],
    ids=["item", "add-out", "ellipsis", "batch-reused", "zero-item", "zero-add-out", "zero-inline"],
)
def test_in_place_and_zero_batch_sums_earn_the_sum(tmp_path, body):
    check = _sum_check(tmp_path, body)
    assert check.status == "passed", check.message


@pytest.mark.parametrize(
    "body",
    [
        "counter = np.zeros(1)\nrows = np.expand_dims(table[:3], 0)\nprint(rows.shape)\n",
        "batch = np.zeros((1, 3, 6))\nrows = table[:3][None]\nprint(rows.shape)\n",
    ],
    ids=["batch-of-another-shape", "unused-zero-batch"],
)
def test_rows_reshaped_without_an_addition_earn_no_sum(tmp_path, body):
    check = _sum_check(tmp_path, body)
    assert check.status == "failed", check.message


def test_big_arrays_never_crowd_the_table_out(tmp_path):
    path = _script(
        tmp_path,
        """
        import numpy as np
        def pe(length, depth):
            p = np.arange(length)[:, np.newaxis]
            j = np.arange(depth)[np.newaxis, :]
            a = p / 10000 ** (2 * (j // 2) / depth)
            return np.where(j % 2 == 0, np.sin(a), np.cos(a))
        big = pe(4096, 1024)
        big2, big3, big4 = big * 2.0, big + 1.0, big - 1.0
        table = pe(5, 8)
        print(table.shape)
    """,
    )
    result = grade(task("pe-table-shape"), path)
    assert result.status == "passed", [c.message for c in result.checks]


def test_failure_messages_never_give_the_expected_answer_or_values_away(tmp_path):
    path = _script(
        tmp_path,
        """
        import numpy as np
        t = np.zeros((6, 4))
        t[0] = [0, 1, 0, 1]
        print(len(t[2]) + 1)
    """,
    )
    checks = checks_of("pe-row-length", path)
    printed = checks["prints-the-length"].message
    assert "reads as (5)" in printed and "not the answer" in printed and "4" not in printed
    table = checks["builds-the-table"].message
    assert "values are off" in table and "where your script has 0" in table
    assert "0.84147098" not in table and "expected" not in table and "error" not in table


def test_no_statement_writes_its_expected_answer_in_a_printable_form():
    """A script that is only `print(<the answer>)` must not have copied it from the
    statement: no code span of a statement reads, by the prints rule, as the answer."""
    import re

    from grader.authoring import load_task
    from grader.cases import freeze_files as frozen
    from grader.cases.generate import reference_value
    from grader.grading.checks.printed_answer import read_answer

    checked = 0
    for folder in sorted(os.listdir(os.path.join(ROOT, "tasks"))):
        task = load_task(os.path.join(ROOT, "tasks", folder))
        with open(task.statement_path, encoding="utf-8") as f:
            spans = re.findall(r"`([^`\n]+)`", f.read())
        for check in (c for c in task.checks if c.kind.name == "prints"):
            value = reference_value(None, check, frozen.load_freeze(task))
            shape = check.options.format == "shape"
            want = tuple(float(d) for d in value) if shape else (float(value),)
            for span in spans:
                found = read_answer(span, "shape" if shape else "integer")
                assert found is None or want not in found.candidates, (folder, span)
            checked += 1
    assert checked == 3
