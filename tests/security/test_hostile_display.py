"""A display library is no way around the sandbox's evidence (issue 24): what matplotlib does
at the submission's call (a process its animation writer starts, a figure hook it looks up
and runs, a module its backend registry loads by name) is the submission's, while what it
does of its own accord (the frames it looks at to place a warning, the setters' code it
reads) is not; and where matplotlib is not installed its stand-in gives nothing: it calls
nothing it is handed, hands out no module, and serves only the task's display libraries.
Each runs under every tier, fresh and warm (the attacks that need the stand-in, in the plain
install without matplotlib: conftest.py's ``container``)."""

import textwrap

import pytest
from helpers.plotting import (
    IMPORTS_CHECK,
    MUTATION_CHECK,
    by_name,
    grade,
    grader_without_matplotlib,
    task_allowing,
)
from helpers.tasks import score_without

CORRECT = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    pe = np.zeros((max_len, d_model))
    p = np.arange(max_len)[:, None]
    i = np.arange(d_model // 2)
    angles = p / base ** (2 * i / d_model)
    pe[:, 0:2 * (d_model // 2):2] = np.sin(angles)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(angles)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

"""

# matplotlib's ffmpeg writer runs whatever program rcParams names, with "-f rawvideo" first:
# /bin/sh then runs the file "rawvideo" of the submission's folder. Nothing in the source
# names a process, a module or dynamic code.
ANIMATION_SHELL = """
import matplotlib
import matplotlib.pyplot as plt
from matplotlib import animation

with open("rawvideo", "w") as script:
    script.write("echo A-SHELL-RAN > ran.txt\\n")
matplotlib.rcParams["animation.ffmpeg_path"] = "/bin/" + "sh"
figure = plt.figure()
line, = plt.plot([0, 1])
movie = animation.FuncAnimation(figure, lambda frame: [line], frames=1)
try:
    movie.save("movie.mp4", writer="ffmpeg")
except Exception:
    pass
"""

# A figure hook is "module:function", looked up by matplotlib and called with each new figure.
HOOKS = {
    "set-as-an-rcparam": """
import matplotlib.pyplot as plt
plt.rcParams["figure.hooks"] = ["builtins:" + "print"]
plt.figure()
plt.subplots()
""",
    "set-past-the-validator-and-read-back-by-a-patched-class": """
import matplotlib.pyplot as plt
dict.__setitem__(plt.rcParams, "figure.hooks", ["builtins:" + "print"])
type(plt.rcParams).__getitem__ = (lambda self, key: ["builtins:print"] if key == "figure.hooks"
                                  else dict.__getitem__(self, key))
plt.figure()
""",
    "in-a-matplotlibrc-of-its-folder": """
with open("matplotlibrc", "w") as rc:
    rc.write("figure.hooks: builtins:print\\n")
import matplotlib.pyplot as plt
plt.figure()
""",
}

# The backend registry imports any "module://NAME" and hands it back: here the worker's own
# modules (wire, the worker itself as __main__, display).
REGISTRY = """
import matplotlib
from matplotlib.backends import backend_registry
from matplotlib.backends.registry import BackendRegistry
for name in ("wi" + "re", "__main__", "dis" + "play", "compu" + "ted"):
    for got in (backend_registry.load_backend_module("module://" + name),
                BackendRegistry.load_backend_module(backend_registry, "module://" + name)):
        print("REGISTRY-GAVE", got.__name__)
matplotlib.use("module://" + "wi" + "re")
import matplotlib.pyplot as plt
plt.figure()
print("BACKEND", plt.get_backend())
"""

# matplotlib's own look at frames and code, at calls of the submission's: a warning placed by
# walking the stack, the setters listed by reading their code, a style context (contextlib).
OWN_INTROSPECTION = """
import matplotlib.pyplot as plt
line, = plt.plot([0, 1], [1, 0])
plt.setp(line)
plt.setp(line, color="red", linewidth=2)
with plt.style.context("ggplot"):
    plt.figure().add_subplot().plot([1, 2])
figure, axes = plt.subplots()
axes.plot([1, 2], label="_hidden")
axes.legend()
figure.savefig("table.pdf")
figure.savefig("table.svg")
plt.close("all")
"""


@pytest.fixture(scope="module")
def plotting_task(tmp_path_factory):
    return task_allowing(tmp_path_factory.mktemp("tasks") / "allows-matplotlib", "matplotlib")


def graded(tmp_path, tier, task, source, name="attack.py", program=None):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return grade(tmp_path, tier, task, path, program)


@pytest.mark.parametrize("named", ["attack.py", "matplotlib.py"])
def test_a_process_matplotlib_starts_at_the_submissions_call_is_the_submissions(
    tmp_path, tier, plotting_task, named
):
    """Even in a file that names itself matplotlib (and says so in __name__): its frames
    are its file's, never the library's."""
    prefix = "__name__ = 'matplotlib.animation'\n" if named == "matplotlib.py" else ""
    report = graded(tmp_path, tier, plotting_task, prefix + CORRECT + ANIMATION_SHELL, named)
    checks = by_name(report)
    assert checks[IMPORTS_CHECK]["status"] == "failed"
    assert "subprocess.Popen() (called while running)" in checks[IMPORTS_CHECK]["message"]
    assert checks[MUTATION_CHECK]["status"] != "passed"
    assert report["score"] == score_without(IMPORTS_CHECK, MUTATION_CHECK)


@pytest.mark.parametrize("attack", sorted(HOOKS))
def test_figure_hooks_are_never_run(tmp_path, tier, plotting_task, attack):
    report = graded(tmp_path, tier, plotting_task, CORRECT + HOOKS[attack])
    assert "Figure(" not in report["output"], report["output"]
    assert report["score"] == score_without()


def test_the_backend_registry_hands_out_no_module_of_the_worker(tmp_path, tier, plotting_task):
    report = graded(tmp_path, tier, plotting_task, CORRECT + REGISTRY)
    given = {line.split()[-1] for line in report["output"].splitlines() if line.startswith("REGISTRY-GAVE")}
    assert given == {"_grader_headless"}, report["output"]
    assert "BACKEND module://_grader_headless" in report["output"]
    assert report["score"] == score_without()


def test_matplotlibs_own_look_at_frames_and_code_is_not_the_submissions(tmp_path, tier, plotting_task):
    report = graded(tmp_path, tier, plotting_task, CORRECT + OWN_INTROSPECTION)
    assert report["score"] == score_without(), [c for c in report["checks"] if c["status"] != "passed"]


def test_the_submissions_own_introspection_through_matplotlib_objects_still_counts(
    tmp_path, tier, plotting_task
):
    """A callback matplotlib runs is the submission's code: what it does counts, here the
    process's own memory opened by a path the scan cannot read."""
    report = graded(
        tmp_path,
        tier,
        plotting_task,
        CORRECT
        + """
import matplotlib.pyplot as plt
figure = plt.figure()
def peek(event):
    try:
        open("/pr" + "oc/self/" + "mem", "rb").close()
    except OSError:
        pass
figure.canvas.mpl_connect("draw_event", peek)
figure.canvas.draw()
""",
    )
    checks = by_name(report)
    assert checks[IMPORTS_CHECK]["status"] == "failed"
    assert "open() of /proc/.../mem" in checks[IMPORTS_CHECK]["message"]


# --------------------------------------------------------------------------- the stand-in

STAND_IN_CALLS_NOTHING = """
import matplotlib
import matplotlib.pyplot as plt
from matplotlib import animation, cbook, ticker

def called(*args, **kwargs):
    print("THE-STAND-IN-CALLED-SOMETHING")
    return called

figure, (left, right) = plt.subplots(1, 2)
figure.canvas.mpl_connect("draw_event", called)
animation.FuncAnimation(figure, called, frames=3).save("movie.mp4")
registry = cbook.CallbackRegistry()
registry.connect("event", called)
registry.process("event", 1)
left.xaxis.set_major_formatter(ticker.FuncFormatter(called))
plt.rcParams["figure.hooks"] = ["builtins:print"]
plt.figure(FigureClass=called)
matplotlib.use("module://wire")
for given in (plt, plt.sys, matplotlib.os, cbook.sys.modules, plt.figure(), left.figure.canvas,
              matplotlib.backends.backend_registry.load_backend_module("module://wire")):
    print("GIVEN", type(given).__module__, type(given).__name__)
while plt.get_fignums():
    plt.pause(0.1)
"""


@pytest.mark.slow
def test_the_stand_in_calls_nothing_and_hands_out_nothing(tmp_path, tier, plotting_task, container):
    report = graded(
        tmp_path,
        tier,
        plotting_task,
        CORRECT + STAND_IN_CALLS_NOTHING,
        program=grader_without_matplotlib(container),
    )
    assert "THE-STAND-IN-CALLED-SOMETHING" not in report["output"]
    given = {line for line in report["output"].splitlines() if line.startswith("GIVEN")}
    assert given == {"GIVEN matplotlib NotInstalledModule", "GIVEN matplotlib NotInstalled"}, given
    # the scan still reads what the source reaches for (.sys, .os, .modules): the stand-in
    # hides nothing from it
    checks = by_name(report)
    assert checks[IMPORTS_CHECK]["status"] == "failed" and checks[MUTATION_CHECK]["status"] != "passed"
    assert report["checks"][0]["message"].startswith("note: matplotlib is not installed")


@pytest.mark.slow
@pytest.mark.parametrize("module", ["matplotlib_extras", "matplotlibrc", "pyplot", "seaborn2"])
def test_only_the_tasks_display_libraries_are_stood_in_for(
    tmp_path, plain_tier, plotting_task, container, module
):
    report = graded(
        tmp_path,
        plain_tier,
        plotting_task,
        CORRECT + f"import {module}\n",
        program=grader_without_matplotlib(container),
    )
    assert report["status"] == "error"
    assert f"No module named '{module}'" in report["checks"][0]["message"]


@pytest.mark.slow
def test_an_import_of_the_stand_in_costs_what_the_library_would(tmp_path, plain_tier, container):
    """positional-encoding allows numpy only, but matplotlib is a display library: the
    stand-in's import and its drawing cost nothing, as the library's would (issue 35);
    the function under test drawing with it costs numpy-only, with its name and line."""
    from helpers.paths import PE_TASK

    report = graded(
        tmp_path,
        plain_tier,
        PE_TASK,
        CORRECT + "import matplotlib.pyplot as plt\n"
        "from matplotlib import cm\nplt.imshow(cm.viridis(sinusoidal_pe(4, 4)))\n",
        program=grader_without_matplotlib(container),
    )
    assert report["score"] == score_without(), by_name(report)[IMPORTS_CHECK]
    drawing = CORRECT.replace("    return pe\n", "    plt.imshow(pe)\n    return pe\n", 1)
    assert drawing != CORRECT
    report = graded(
        tmp_path,
        plain_tier,
        PE_TASK,
        "import matplotlib.pyplot as plt\n" + drawing,
        program=grader_without_matplotlib(container),
    )
    checks = by_name(report)
    line = drawing[: drawing.index("plt.imshow")].count("\n") + 2
    assert (
        f"plt (line {line}: sinusoidal_pe uses the display library matplotlib"
        in (checks[IMPORTS_CHECK]["message"])
    )
    assert report["score"] == score_without(IMPORTS_CHECK)
