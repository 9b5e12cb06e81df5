"""imports checks (grading/checks/imports.py) judged against a fake sandbox
(tests/helpers/fake_sandbox.py): the verdict rests on the source's scan, read as grade()
reads it; what the sandbox's workers saw (its evidence) can only cost the point.

One module per kind, named after the kind's module: tests/unit/test_checks_<module>.py.
"""

import pytest
from helpers.fake_sandbox import context, run_check
from helpers.tasks import make_task

from grader.authoring import load_task
from grader.grading.prepared import prepare
from grader.records.statuses import FAILED, IMPORTS, PASSED, SKIPPED

TASK = """
id: plotting
title: Plotting
version: 1
functions:
  total: [x]
imports:
  allowed: [numpy]
  stdlib: [math]
  display: [matplotlib]
checks:
  - name: numpy-only
    kind: imports
    points: 1
"""

REFERENCE = """
import numpy as np

def total(x):
    return np.sum(x)
"""

ALLOWED = "import math\nimport numpy as np\n\n\ndef total(x):\n    return np.sum(x) + math.fsum([])\n"


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return prepare(
        load_task(make_task(tmp_path_factory.mktemp("t") / "task", TASK, REFERENCE)), use_cache=False
    )


def judge(prepared, source, evidence=()):
    return run_check(context(prepared, source=source, evidence=evidence), "numpy-only")


def test_allowed_imports_pass_with_the_point(prepared):
    result = judge(prepared, ALLOWED, evidence=("numpy", "math"))
    assert (result.status, result.score, result.max_score) == (PASSED, 1.0, 1.0)


def test_a_forbidden_import_fails_naming_it_and_its_line(prepared):
    result = judge(prepared, "import numpy as np\nimport os\n\ndef total(x):\n    return np.sum(x)\n")
    assert (result.status, result.score, result.reason) == (FAILED, 0.0, IMPORTS)
    assert result.message.startswith("imports that this task does not allow: os (line 2).")
    assert "Allowed: numpy; from the standard library: math" in result.message


def test_a_display_library_used_at_module_level_only_costs_nothing(prepared):
    source = (
        "import matplotlib.pyplot as plt\nimport numpy as np\n\n\ndef total(x):\n"
        "    return np.sum(x)\n\n\nplt.plot([total([1, 2])])\n"
    )
    assert judge(prepared, source, evidence=("matplotlib", "matplotlib.pyplot")).status == PASSED


def test_a_display_library_the_tested_function_uses_fails(prepared):
    source = (
        "import matplotlib.pyplot as plt\nimport numpy as np\n\n\ndef total(x):\n"
        "    plt.plot(x)\n    return np.sum(x)\n"
    )
    result = judge(prepared, source)
    assert result.status == FAILED
    assert "plt (line 6: total uses the display library matplotlib" in result.message


def test_what_the_worker_saw_imported_costs_the_point(prepared):
    result = judge(prepared, ALLOWED, evidence=("numpy", "socket"))
    assert result.status == FAILED and "socket (imported while running)" in result.message


def test_dynamic_code_fails_as_a_route(prepared):
    result = judge(prepared, ALLOWED + "exec('import os')\n")
    assert result.status == FAILED and "exec (line 7: dynamic code)" in result.message


def test_a_file_that_does_not_parse_is_skipped_saying_so(prepared):
    result = judge(prepared, "def total(x)\n    return x\n")
    assert (result.status, result.score) == (SKIPPED, 0.0)
    assert result.message == "skipped: the file does not parse (SyntaxError)"
