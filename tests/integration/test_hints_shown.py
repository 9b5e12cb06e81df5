"""Advice about one task's code lives in that task (`hint:` on a check), never in the
engine: it follows a failing check's message, and a hidden check's hint is for staff only."""

import json
import os

from helpers.cli import run_cli
from helpers.paths import COURSE, PE_SAMPLES, PE_TASK
from helpers.tasks import WRONG_NORMALIZE, make_task, write

HINTED_TASK = """
id: hinted
title: Square every entry
version: 1
functions:
  square: [x]
checks:
  - name: visible-values
    kind: example
    call: square
    args: {x: {array: {value: [1.0, 2.0]}}}
    hint: "square each entry: x ** 2, not x * 2."
  - name: leaves-x-alone
    kind: mutation
    call: square
    args: {x: {array: {shape: [3], elements: {min: 1.0, max: 2.0}}}}
  - name: hidden-values
    kind: example
    hidden: true
    call: square
    args: {x: {array: {value: [4321.5]}}}
    hint: "the secret hint of a hidden check."
"""

DOUBLES_IN_PLACE = """
def square(x):
    x *= 2
    return x
"""


def _checks(done):
    return {c["name"]: c for c in json.loads(done.stdout)["checks"]}


def test_a_task_without_hints_gives_no_advice_about_another_task(tmp_path):
    unhinted = "".join(line for line in HINTED_TASK.splitlines(True) if "hint:" not in line)
    task = make_task(tmp_path / "task", unhinted)
    done = run_cli("check", task, write(tmp_path / "s.py", DOUBLES_IN_PLACE))
    assert "FAIL  leaves-x-alone" in done.stdout and "changed its argument `x` in place" in done.stdout
    assert "x += pe" not in done.stdout and "Hint:" not in done.stdout


def test_the_hint_follows_a_failing_checks_message(tmp_path):
    task = make_task(tmp_path / "task", HINTED_TASK)
    checks = _checks(run_cli("check", task, write(tmp_path / "s.py", DOUBLES_IN_PLACE), "--format", "json"))
    assert checks["visible-values"]["message"].endswith(" Hint: square each entry: x ** 2, not x * 2.")
    assert "Hint" not in checks["leaves-x-alone"]["message"]


def test_a_hidden_checks_hint_is_not_shown_to_students(tmp_path):
    task = make_task(tmp_path / "task", HINTED_TASK)
    path = write(tmp_path / "s.py", DOUBLES_IN_PLACE)
    staff = _checks(run_cli("check", task, path, "--format", "json", "--staff"))
    assert "the secret hint" in staff["hidden-values"]["message"]  # it is there to hide
    for fmt in ("text", "json", "gradescope", "junit"):
        shown = run_cli("check", task, path, "--format", fmt).stdout
        assert "the secret hint" not in shown and "square each entry" in shown, fmt


def test_normalize_rows_gives_its_own_hint_and_not_positional_encodings(tmp_path):
    path = write(tmp_path / "s.py", WRONG_NORMALIZE)
    done = run_cli("check", os.path.join(COURSE, "tasks", "normalize-rows"), path)
    assert "FAIL  input-untouched" in done.stdout
    assert "Hint: divide into a new array: m / norms, not m /= norms" in done.stdout
    assert "x += pe" not in done.stdout and "x + pe" not in done.stdout


def test_positional_encoding_keeps_its_hint():
    done = run_cli("check", PE_TASK, os.path.join(PE_SAMPLES, "mistake_adds_in_place.py"))
    assert "Hint: build a new array: x + pe, not x += pe" in done.stdout
