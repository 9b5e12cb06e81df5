"""Notebooks and scripts that plot (issue 24): a display library runs headless, its figures
count neither as work nor as a fault, and a missing one costs nothing but a note. A plotting
hand-in scores exactly what the same hand-in without its plots scores: a display library
costs no imports check by being imported or drawn with (issue 35: positional-encoding
allows numpy only, and its plotting notebook keeps numpy-only), with matplotlib installed
(the test extras) and without it (the grader as a course installs it, conftest.py's
``container``), in every tier, fresh and warm. What the functions under test reach of a
display library still costs (tests/integration/test_display_imports.py); the attacks
through a display library: tests/security/test_hostile_display.py."""

import pytest
from helpers.paths import PE_TASK
from helpers.plotting import (
    DRAWING_NOTEBOOK,
    IMPORTS_CHECK,
    PLOTTING_NOTEBOOK,
    SHAPE_TASK,
    by_name,
    code_cells,
    grade,
    grader_without_matplotlib,
    task_allowing,
    without_plots,
    write_notebook,
)
from helpers.tasks import score_without

NOT_DRAWN = "matplotlib is not installed where this was graded, so what your file draws with it was not drawn"
NOISE = ("Fontconfig", "non-interactive", "font cache", "Matplotlib created a temporary")


@pytest.fixture(scope="module")
def plotting_task(tmp_path_factory):
    return task_allowing(tmp_path_factory.mktemp("tasks") / "allows-matplotlib", "matplotlib")


def _same_without_plots(tmp_path, notebook) -> str:
    return write_notebook(tmp_path / "no_plots.ipynb", *without_plots(code_cells(notebook)))


def _scores_as_without_plots(tmp_path, tier, plotting_task, program=None):
    plotted = grade(tmp_path, tier, PE_TASK, PLOTTING_NOTEBOOK, program)
    plain = grade(tmp_path, tier, PE_TASK, _same_without_plots(tmp_path, PLOTTING_NOTEBOOK), program)
    allowed = grade(tmp_path, tier, plotting_task, PLOTTING_NOTEBOOK, program)
    assert plain["score"] == score_without()
    # positional-encoding allows numpy only, but matplotlib is a display library: the
    # import and the plots cost nothing, numpy-only included
    lost = {c["name"] for c in plotted["checks"] if c["status"] != "passed"}
    assert lost == set() and plotted["score"] == plain["score"], by_name(plotted)[IMPORTS_CHECK]
    # a task that allows matplotlib: the plots cost nothing at all either
    assert allowed["score"] == plain["score"] and allowed["status"] == "passed"
    return plotted, allowed


def test_a_plotting_notebook_scores_as_without_its_plots(tmp_path, tier, plotting_task):
    plotted, allowed = _scores_as_without_plots(tmp_path, tier, plotting_task)
    for report in (plotted, allowed):
        assert NOT_DRAWN not in report["checks"][0]["message"]  # drawn here, headless
        assert not any(noise in report["output"] for noise in NOISE), report["output"]


@pytest.mark.slow  # the plain install is a virtualenv of its own
def test_without_matplotlib_a_plotting_notebook_scores_the_same_and_says_so(
    tmp_path, tier, plotting_task, container
):
    program = grader_without_matplotlib(container)
    plotted, allowed = _scores_as_without_plots(tmp_path, tier, plotting_task, program)
    for report in (plotted, allowed):  # the report's first line says why nothing was drawn
        assert report["checks"][0]["name"] == "loads"
        assert report["checks"][0]["message"].startswith(f"note: {NOT_DRAWN}")


def _drawing_script_scores(report, shape_points):
    lost = {c["name"] for c in report["checks"] if c["status"] != "passed"}
    assert lost == set(), report["checks"]  # (drawing costs no allowed-imports: issue 35)
    assert report["score"] == shape_points
    # the image the last cell shows (Jupyter draws it) is never the printed answer
    assert report["output"].strip() == "(5, 8)"


def test_a_script_notebook_that_draws_its_table_keeps_its_answer(tmp_path, tier):
    report = grade(tmp_path, tier, SHAPE_TASK, DRAWING_NOTEBOOK)
    _drawing_script_scores(report, score_without(task=SHAPE_TASK))


@pytest.mark.slow
def test_without_matplotlib_a_script_notebook_that_draws_keeps_its_answer(tmp_path, tier, container):
    report = grade(tmp_path, tier, SHAPE_TASK, DRAWING_NOTEBOOK, grader_without_matplotlib(container))
    _drawing_script_scores(report, score_without(task=SHAPE_TASK))
    assert report["checks"][0]["message"].startswith(f"note: {NOT_DRAWN}")


@pytest.mark.parametrize(
    "opening",
    [
        "import matplotlib\nmatplotlib.use('TkAgg')\nimport matplotlib.pyplot as plt",
        "import matplotlib.pyplot as plt\nplt.switch_backend('qtagg')",
        "import matplotlib.pyplot as plt\nplt.ion()",
    ],
)
def test_a_window_asked_for_is_no_window_and_no_fault(tmp_path, plain_tier, plotting_task, opening):
    """A notebook that asks for a GUI backend (TkAgg, Qt) or interactive mode is drawn by the
    headless one here: the same full marks, and nothing about windows in its output."""
    cells = code_cells(PLOTTING_NOTEBOOK)
    notebook = write_notebook(
        tmp_path / "window.ipynb", opening, *cells, "fig.show()\nplt.pause(0.01)\nplt.show(block=True)"
    )
    report = grade(tmp_path, plain_tier, plotting_task, notebook)
    assert report["score"] == score_without() and report["status"] == "passed", report["checks"][0]
    assert not any(noise in report["output"] for noise in NOISE), report["output"]


def test_a_task_that_lists_no_display_library_keeps_todays_import(tmp_path, plotting_task):
    """``imports: display: []``: matplotlib is then a library like any other (no stand-in
    where it is missing, no note), the rule that task writers can choose."""
    task = task_allowing(tmp_path / "plain", "matplotlib", display=[])
    report = grade(tmp_path, "rlimits", task, PLOTTING_NOTEBOOK)
    assert report["score"] == score_without()
    assert "not installed" not in report["checks"][0]["message"]


@pytest.mark.slow
def test_without_matplotlib_a_task_that_lists_no_display_library_says_the_environment_lacks_it(
    tmp_path, container
):
    task = task_allowing(tmp_path / "plain", "matplotlib", display=[])
    report = grade(tmp_path, "rlimits", task, PLOTTING_NOTEBOOK, grader_without_matplotlib(container))
    assert report["status"] == "error"
    assert "this grading environment does not have 'matplotlib'" in report["checks"][0]["message"]


def test_arrays_a_display_library_makes_are_not_the_scripts_work(tmp_path, tier):
    """What matplotlib's calls give (a histogram's counts and edges, an axis' ticks, a
    colour map's image) is never named among the arrays the script computed; the script's
    own arrays still are."""
    script = tmp_path / "transposed.py"
    script.write_text(
        "import numpy as np\nimport matplotlib.pyplot as plt\nfrom matplotlib import cm\n"
        "length, depth = 5, 8\n"
        "position = np.arange(depth)[:, np.newaxis]\n"
        "i = np.arange(length)[np.newaxis, :]\n"
        "angles = position / np.power(10000.0, (2 * (i // 2)) / length)\n"
        "table = np.where(i % 2 == 0, np.sin(angles), np.cos(angles))\n"  # transposed: (8, 5)
        "counts, edges, _ = plt.hist(table.ravel(), bins=7)\n"
        "ticks = plt.gca().get_xticks()\n"
        "picture = cm.viridis(table)\n"
        "plt.imshow(table)\n"
        "print(table.shape[::-1])\n"
    )
    report = grade(tmp_path, tier, SHAPE_TASK, script)
    builds = by_name(report)["builds-the-table"]
    assert builds["status"] == "failed" and "variable 'table'" in builds["message"]
    for made in ("counts", "edges", "ticks", "picture", "get_xticks", "viridis"):
        assert made not in builds["message"], builds["message"]
