"""A task's edges (grader/task/edges.py): only the checks about an edge judge it; every other
check draws its cases clear of it, so one fault at an edge costs the checks put there."""

import numpy as np
import pytest
from helpers.tasks import make_task

from grader.authoring import load_task
from grader.cases.generate import case_set
from grader.task.reference import load_reference
from grader.task.spec import SpecError

EDGE_TASK = """
id: widths
title: Tables of a width
version: 1
functions:
  table: [n, width]
  shift: [x]
edges:
  one-wide:
    description: a table one column wide
    where: {width: 1, x: {axis: -1, size: 1}}
checks:
  - name: drawn-around
    kind: property
    call: table
    args:
      width: {integers: {min: 1, max: 3}}
      n: {integers: {min: 1, max: 3}}
    cases: 30
  - name: lists-the-edge
    kind: property
    call: table
    args:
      width: {integers: {min: 1, max: 3}}
      n: {integers: {min: 1, max: 3}}
    edge_cases:
      - {n: 2, width: 1}
    cases: 30
  - name: names-the-edge
    kind: property
    call: table
    edges: [one-wide]
    args:
      width: {integers: {min: 1, max: 3}}
      n: {integers: {min: 1, max: 3}}
    cases: 30
  - name: arrays-around
    kind: property
    call: shift
    draw:
      w: {integers: {min: 1, max: 3}}
    args:
      x: {array: {shape: [2, {ref: w}]}}
    cases: 30
"""

REFERENCE = """
import numpy as np

def table(n, width):
    return np.ones((n, width))

def shift(x):
    return np.asarray(x) + 1.0
"""


@pytest.fixture(scope="module")
def widths(tmp_path_factory):
    folder = make_task(tmp_path_factory.mktemp("edges") / "task", EDGE_TASK, REFERENCE)
    task = load_task(folder)
    reference = load_reference(task)
    return {c.name: case_set(task, reference, c, use_disk=False).cases for c in task.checks}


def _widths(cases):
    return {c["width"] for c in cases} if "width" in cases[0] else {np.shape(c["x"])[-1] for c in cases}


def test_a_check_not_about_an_edge_never_draws_on_it(widths):
    assert _widths(widths["drawn-around"]) == {2, 3}
    assert _widths(widths["arrays-around"]) == {2, 3}


def test_a_check_that_lists_or_names_the_edge_draws_on_it(widths):
    assert 1 in _widths(widths["lists-the-edge"]) and 1 in _widths(widths["names-the-edge"])


def _problems(tmp_path, yaml_text):
    folder = make_task(tmp_path / "task", yaml_text, REFERENCE)
    with pytest.raises(SpecError) as caught:
        load_task(folder)
    return "\n".join(caught.value.problems)


def test_an_edge_on_no_parameter_is_named_with_its_line(tmp_path):
    said = _problems(tmp_path, EDGE_TASK.replace("where: {width: 1,", "where: {depth: 1,"))
    assert "task.yaml:" in said and "'depth' is no parameter" in said and "width" in said


def test_a_check_naming_an_unknown_edge_is_told_the_edges(tmp_path):
    said = _problems(tmp_path, EDGE_TASK.replace("edges: [one-wide]", "edges: [one-column]"))
    assert "'one-column' is not among the task's edges: (one-wide)" in said
