"""Printed output a report cannot show in full: every format says that it cut, and how much
(issue 35 A)."""

import json
import os
import re

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK

GOOD = os.path.join(PE_SAMPLES, "correct_vectorized.py")
FORMATS = ["text", "json", "junit", "gradescope", "html"]


@pytest.fixture(scope="module")
def loud_file(tmp_path_factory):
    """A correct solution that prints 200,000 lines while it is imported."""
    path = tmp_path_factory.mktemp("loud") / "loud.py"
    with open(GOOD) as f:
        good = f.read()
    path.write_text("for i in range(200_000):\n    print(f'line {i}')\n" + good)
    return str(path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_says_it_cut_printed_output_and_how_much(loud_file, fmt):
    done = run_cli("check", PE_TASK, loud_file, "--format", fmt)
    assert done.returncode in (0, 1), done.stderr
    shown = done.stdout
    if fmt == "json":
        shown = json.loads(shown)["output"]
    elif fmt == "gradescope":
        shown = json.loads(shown)["output"]
    # it says it cut, with a count of what it left out (the grader's bytes, at least)
    counts = [
        int(n.replace(",", ""))
        for n in re.findall(r"([\d,]+) bytes (?:not shown|the grader did not keep)", shown)
    ]
    assert counts, shown[-2000:]
    assert max(counts) > 1_000_000  # 200,000 lines of "line N": about 1.3 MB left out


def test_the_text_report_counts_the_lines_it_does_not_show(loud_file):
    done = run_cli("check", PE_TASK, loud_file)
    assert "  | line 11\n" in done.stdout and "  | line 12\n" not in done.stdout
    note = re.search(
        r"\[\.\.\. ([\d,]+) more lines \(([\d,]+) bytes\) not shown here, and ([\d,]+) bytes the grader did not keep \.\.\.\]",
        done.stdout,
    )
    assert note, done.stdout
    assert int(note.group(3).replace(",", "")) > 1_000_000


def test_a_checks_printed_output_says_what_it_cut_in_text_junit_and_gradescope():
    from grader.records.result import FAILED, CheckResult
    from grader.report.text import check_details

    printed = "\n".join(f"step {i}" for i in range(40)) + "\n[... 123456 bytes not shown ...]\nlast"
    check = CheckResult("c", FAILED, 0, 1, message="wrong", output=printed)
    details = check_details(check)
    assert "  | step 11" in details and "  | step 12" not in details
    assert (
        details[-1]
        == "  | [... 29 more lines (229 bytes) not shown here, and 123,456 bytes the grader did not keep ...]"
    )
