"""A display library costs no imports check by being imported or drawn with (issue 35).

positional-encoding allows numpy only; matplotlib is a display library (the grader's
default): a correct file that draws its table with pyplot keeps full marks, in every tier,
fresh and warm. What the functions under test reach of a display library still costs the
imports check (and nothing else): a call of pyplot in one, a helper or an alias that leads
to it, an import of it inside one, numpy's sine taken through pyplot's namespace; so does a
library the file holds once it ran that it reached through a display library's names (PIL
through matplotlib.image). ``grader validate`` says which libraries a task treats as
display."""

import ast
import os

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.plotting import IMPORTS_CHECK, by_name, grade
from helpers.tasks import score_without, write

from grader.submission.import_scan import scan_imports

with open(os.path.join(PE_SAMPLES, "correct_vectorized.py")) as _f:
    CORRECT = _f.read().replace("# expect: full marks\n", "")

PLOTS_AT_MODULE_LEVEL = (
    "import matplotlib.pyplot as plt\nfrom matplotlib import cm\n"
    + CORRECT
    + """
table = sinusoidal_pe(50, 16)
fig, ax = plt.subplots()
ax.imshow(cm.viridis(table))
for i, d in enumerate([4, 8]):
    plt.plot(sinusoidal_pe(10, d)[:, i])
plt.show()
"""
)


def test_a_correct_file_that_plots_keeps_full_marks(tmp_path, tier):
    report = grade(tmp_path, tier, PE_TASK, write(tmp_path / "plots.py", PLOTS_AT_MODULE_LEVEL))
    assert report["score"] == score_without(), by_name(report)[IMPORTS_CHECK]
    assert report["status"] == "passed"


def _add_calls(body: str) -> str:
    """CORRECT with ``body`` run first in add_positional_encoding."""
    head = "def add_positional_encoding(x, base=10000.0):\n"
    assert head in CORRECT
    return CORRECT.replace(head, head + body, 1)


ATTACKS = {
    # the function under test draws
    "calls-pyplot": (
        "import matplotlib.pyplot as plt\n" + _add_calls("    plt.plot(x.reshape(-1))\n"),
        "plt",
    ),
    # ... through a helper, and an alias held in a list
    "through-a-helper": (
        "from matplotlib.pyplot import plot as _draw\n_kept = [_draw]\n\n"
        "def _show(a):\n    _kept[0](a)\n\n" + _add_calls("    _show(x.reshape(-1))\n"),
        "_draw",
    ),
    # ... imports it itself (pyplot imported already, for the file's own plots)
    "imports-it-inside": (
        "import matplotlib.pyplot as plt\n"
        + _add_calls("    from matplotlib import pyplot as p\n    p.close('all')\n"),
        "matplotlib (line",
    ),
    # computes its answer with what pyplot's namespace holds (numpy's sine)
    "computes-with-it": (
        "import matplotlib.pyplot as plt\n" + CORRECT.replace("np.sin(angles)", "plt.np.sin(angles)"),
        "plt",
    ),
    # a library the task forbids, reached through a display library's names
    "holds-pil-through-matplotlib": (
        "import matplotlib.pyplot as plt\n"
        + CORRECT
        + "from matplotlib.image import PIL\nplt.imshow(sinusoidal_pe(4, 4))\n",
        "PIL (held by the file once it ran",
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_what_the_functions_under_test_reach_of_a_display_library_still_costs(tmp_path, plain_tier, attack):
    source, named = ATTACKS[attack]
    assert source != CORRECT
    report = grade(tmp_path, plain_tier, PE_TASK, write(tmp_path / "attack.py", source))
    checks = by_name(report)
    lost = {name for name, c in checks.items() if c["status"] != "passed"}
    assert lost == {IMPORTS_CHECK}, {n: checks[n]["message"] for n in lost}
    assert named in checks[IMPORTS_CHECK]["message"]
    assert report["score"] == score_without(IMPORTS_CHECK)


def _uses(source: str, tested=("f",), display=("matplotlib", "seaborn")) -> tuple[str, ...]:
    ast.parse(source)
    return scan_imports(source, ["numpy"], lambda n: f"line {n}", display, tested).display_uses


def test_a_functions_own_names_are_its_own():
    """A local, a parameter or a loop variable of a function under test that shares its name
    with a module-level plotting variable is the function's own: no use of the library."""
    source = """
import matplotlib.pyplot as plt
import numpy as np

for i, ax in enumerate(plt.subplots(1, 2)[1]):
    ax.plot([i])
fig = plt.figure()

def f(x, fig=None):
    ax = np.zeros(3)
    for i in range(3):
        ax[i] = x[i]
    return [ax for ax in (ax,)][0]
"""
    assert _uses(source) == ()


def test_a_global_a_function_under_test_reads_leads_to_its_bindings():
    source = """
import seaborn as sns
palette = sns.color_palette()

def helper():
    global palette
    return palette

def f(x):
    return helper()
"""
    [use] = _uses(source)
    assert use.startswith("sns (line 3: f uses the display library seaborn")


def test_a_script_and_a_task_without_display_libraries_have_no_display_uses():
    source = "import matplotlib.pyplot as plt\ndef f(x):\n    return plt.plot(x)\n"
    assert _uses(source, tested=()) == ()
    assert _uses(source, display=()) == ()
    assert len(_uses(source)) == 1


def test_validate_says_which_libraries_a_task_treats_as_display(tmp_path):
    done = run_cli("validate", PE_TASK, "--samples", str(tmp_path), timeout=300)
    assert (
        "display libraries: matplotlib, seaborn (the default): importing one and drawing with it "
        "costs no imports check; the functions under test may not use one" in done.stdout
    ), done.stdout[-2000:]


# A hostile review's attacks on the leniency: a star import of a display module hands the
# file importlib; a forbidden library is then loaded through its loader (no import event)
# and kept under a dunder name.
THROUGH_A_STAR_IMPORT = (
    "import numpy as np\nfrom matplotlib.backends.registry import *\n\n"
    "__il = importlib\ndel importlib\n"
    '__mp = __il.util.find_spec("mpmath").loader.load_module("mpmath")\n'
    + CORRECT.replace("import numpy as np\n", "").replace(
        "np.sin(angles)", "np.sin(angles + 0 * float(__mp.pi))"
    )
)


def test_a_forbidden_library_loaded_through_a_display_module_s_star_import_still_costs(tmp_path, plain_tier):
    assert "np.sin(angles + 0 * float(__mp.pi))" in THROUGH_A_STAR_IMPORT
    report = grade(tmp_path, plain_tier, PE_TASK, write(tmp_path / "attack.py", THROUGH_A_STAR_IMPORT))
    checks = by_name(report)
    message = checks[IMPORTS_CHECK]["message"]
    assert checks[IMPORTS_CHECK]["status"] == "failed", message
    assert "star import of a display library" in message and "load_module" in message
    assert report["score"] < score_without(IMPORTS_CHECK)  # (and the mutation check is not verified)


def test_a_module_held_under_a_dunder_name_is_held(tmp_path, plain_tier):
    source = CORRECT + "\nimport matplotlib.pyplot as plt\nfrom matplotlib.image import PIL as __kept\n"
    report = grade(tmp_path, plain_tier, PE_TASK, write(tmp_path / "attack.py", source))
    checks = by_name(report)
    assert checks[IMPORTS_CHECK]["status"] == "failed"
    assert "PIL (held by the file once it ran" in checks[IMPORTS_CHECK]["message"]


@pytest.mark.parametrize(
    "lead",
    [
        "_box = []\n_box.append(mlab)\n",  # a container filled by a method call
        "_box = {}\n_box.update(m=mlab)\n",
        "class _K:\n    pass\nsetattr(_K, 'm', mlab)\n_box = [_K.m]\n",
        "def _keep():\n    global _box\n    _box = [mlab]\n_keep()\n",  # a global a function binds
    ],
)
def test_a_display_library_smuggled_to_a_function_under_test_is_still_its_use(lead):
    """A hostile review's routes: the function under test reaches matplotlib.mlab through
    a name bound by a method call, setattr, or a function's ``global``."""
    source = (
        "import numpy as np\nfrom matplotlib import mlab\n"
        + lead
        + "\ndef f(x):\n    return _box[0].detrend_none(x)\n"
    )
    if "_box = [_K.m]" in lead:
        source = source.replace("_box[0].detrend_none", "_K.m.detrend_none")
    assert any("f uses the display library matplotlib" in use for use in _uses(source)), _uses(source)


def test_an_honest_file_s_module_level_calls_do_not_make_its_functions_display_users():
    source = """
import matplotlib.pyplot as plt
import numpy as np
np.set_printoptions(precision=3)
table = np.zeros((4, 4))
plt.imshow(table)
results = []
results.append(table.sum())

def f(x):
    return np.asarray(x) + len(results)
"""
    assert _uses(source) == ()
