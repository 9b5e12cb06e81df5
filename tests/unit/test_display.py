"""Display libraries, the pure parts (issue 24): the task's list (task.yaml imports:
display), what a notebook cell's last value of theirs shows, the stand-in that takes the
place of one that is not installed, and the recorder leaving their arrays out of a script's
work. In process: the stand-in classes and the recorder run the tests' own code here; the
worker's use of them (its import finder, matplotlib headless) is graded through the
sandbox in tests/integration/test_plotting_notebooks.py and tests/security/test_hostile_display.py."""

import io
import textwrap
from contextlib import redirect_stdout

import numpy as np
import pytest
from helpers.inside_modules import inside_module
from helpers.tasks import make_task
from test_spec import GOOD_YAML

from grader.authoring import load_task
from grader.sandbox.inside import display
from grader.submission.notebook import display_helper, notebook_code
from grader.task.spec import SpecError

computed = inside_module("computed")
rewriting = inside_module("rewriting")


def test_a_task_displays_matplotlib_and_seaborn_unless_it_says_otherwise(tmp_path):
    assert load_task(make_task(tmp_path / "a", GOOD_YAML)).display_imports == ("matplotlib", "seaborn")
    none = GOOD_YAML.replace("checks:", "imports: {allowed: [numpy], display: []}\nchecks:")
    assert load_task(make_task(tmp_path / "b", none)).display_imports == ()
    plotly = GOOD_YAML.replace("checks:", "imports: {display: [matplotlib, plotly]}\nchecks:")
    assert load_task(make_task(tmp_path / "c", plotly)).display_imports == ("matplotlib", "plotly")


def test_a_display_library_is_named_by_its_top_level_name(tmp_path):
    dotted = GOOD_YAML.replace("checks:", "imports: {display: [matplotlib.pyplot]}\nchecks:")
    with pytest.raises(SpecError) as caught:
        load_task(make_task(tmp_path / "task", dotted))
    assert "imports.display" in "\n".join(caught.value.problems)


class Picture:  # stands for an object of matplotlib's (its class's module says whose it is)
    __module__ = "matplotlib.image"


def shown(value, names=("matplotlib", "seaborn")) -> str:
    namespace: dict = {}
    exec(display_helper(names), namespace)
    with redirect_stdout(io.StringIO()) as out:
        namespace["__grader_display__"](value)
    return out.getvalue()


def test_a_cells_last_value_of_a_display_library_shows_nothing():
    assert shown(Picture()) == "" and shown([Picture(), Picture()]) == ""
    assert shown((np.zeros(3), np.zeros(4), Picture())) == ""  # plt.hist's counts, edges, bars
    assert shown((5, 8)) == "(5, 8)\n" and shown([1, 2]) == "[1, 2]\n"
    assert shown(Picture(), names=()).startswith("<")  # a task that lists none
    assert shown(None) == ""


def test_the_helper_is_on_line_2_whatever_the_display_libraries():
    data = (
        b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code", '
        b'"id": "a", "metadata": {}, "outputs": [], "execution_count": null, '
        b'"source": "import matplotlib.pyplot as plt\\nplt.imshow([[1]])"}]}'
    )
    code = notebook_code(data, ("matplotlib",))
    lines = code.text.splitlines()
    assert lines[1] == display_helper(("matplotlib",)) and "getattr" not in lines[1]
    assert lines[3] == "__grader_display__((plt.imshow([[1]])))"
    assert code.source_map.locate(4) == (1, 2)


STAND_IN = display._kinds("examplelib")[0]


def test_whatever_is_done_with_the_stand_in_gives_the_stand_in():
    plt = STAND_IN
    fig = plt.figure(figsize=(3, 4))
    assert fig is plt and plt.cm.viridis(np.zeros(3)) is plt and plt["x"] is plt
    assert (plt + 1, 2 * plt, -plt, plt**2, plt @ plt) == (plt,) * 5
    plt.title = "no effect"
    plt.rcParams["figure.figsize"] = (8, 4)
    del plt.rcParams["x"]
    with plt.style.context("ggplot") as styled:
        assert styled is plt
    assert f"{plt.gca().get_xlim()[0]:.2f}" == "<examplelib is not installed here: nothing was drawn>"
    assert str(plt) == repr(plt) == "<examplelib is not installed here: nothing was drawn>"
    assert (int(plt), float(plt), len(plt), bool(plt), 1 in plt, plt < 1, plt >= 1) == (
        0,
        0.0,
        0,
        False,
        False,
        False,
        False,
    )


def test_the_stand_in_unpacks_to_what_the_code_unpacks_and_loops_no_time():
    plt = STAND_IN
    fig, (left, right) = plt.subplots(1, 2)
    first, *rest, last = plt.hist([1, 2, 3])
    assert (fig, left, right, first, last, rest) == (plt, plt, plt, plt, plt, [])
    for _ in plt.subplots(2, 2)[1].flat:
        raise AssertionError("a loop over the stand-in ran")
    assert list(plt) == [] and list(zip(plt, [1, 2])) == []
    while plt.get_fignums():
        raise AssertionError("a wait on the stand-in's figures ran")


def test_the_stand_in_calls_nothing_it_is_handed():
    plt = STAND_IN
    called = []
    plt.connect("draw_event", lambda *args: called.append(args))
    plt.FuncAnimation(plt.figure(), called.append, frames=3).save("movie.mp4")
    plt.figure(FigureClass=lambda: called.append("class"))
    assert called == []


def test_a_class_may_subclass_the_stand_in_and_keeps_its_own_attributes():
    class Midpoint(STAND_IN):
        def __init__(self, vmin, vmax, midpoint):
            super().__init__(vmin, vmax)
            self.midpoint = midpoint

    norm = Midpoint(0, 1, 0.5)
    assert norm.midpoint == 0.5 and norm.autoscale(3) is STAND_IN and norm(0.2) is STAND_IN
    assert not isinstance(norm, type(STAND_IN))


def test_a_stand_in_module_gives_the_stand_in_and_no_protocol_it_lacks():
    module = display._stand_in_module("examplelib", "examplelib.pyplot")
    assert module.imshow is STAND_IN and module.sys is STAND_IN and module.__all__ == []
    for name in ("__file__", "__array__", "__fspath__", "__wrapped__"):
        assert not hasattr(module, name) and not hasattr(STAND_IN, name)
    assert np.asarray(STAND_IN).size == 0  # an empty array, never the stand-in's innards


def test_values_are_known_as_a_display_librarys_by_their_type(monkeypatch):
    monkeypatch.setattr(display, "_names", ("matplotlib", "examplelib"))
    objects = np.empty(2, dtype=object)
    objects[:] = [Picture(), Picture()]
    for value in (Picture(), STAND_IN, objects, display._stand_in_module("examplelib", "examplelib.x")):
        assert display.made_by_display(value), value
    for value in (np.zeros(3), np, 1, "matplotlib", [Picture()], np.sin):
        assert not display.made_by_display(value), value


def recorded(source, drawn_by):
    code, sites = rewriting.instrument(textwrap.dedent(source), "script.py")
    recorder = computed.Recorder(sites, 1 << 30, drawn_by=drawn_by)
    namespace = {"__name__": "__main__", "Picture": Picture, "np": np}
    namespace.update(recorder.names())
    exec(code, namespace)
    texts = [computed.describe(c)["code"] for c in computed.candidates(recorder)]
    return texts, recorder, namespace


def test_a_display_librarys_call_is_not_the_scripts_work():
    Picture.counts = staticmethod(lambda: np.arange(5.0))
    Picture.same = staticmethod(lambda a: a)
    texts, recorder, namespace = recorded(
        """
        table = np.arange(40.0).reshape(5, 8)
        picture = Picture()
        counts = picture.counts()
        ticks = Picture().counts()
        back = picture.same(table)
        mine = np.sqrt(table)
    """,
        drawn_by=lambda owner: isinstance(owner, Picture) or owner is Picture,
    )
    assert "picture.counts()" not in texts and "Picture().counts()" not in texts
    assert "np.arange(40.0).reshape(5, 8)" in texts and "np.sqrt(table)" in texts
    drawn = recorder.drawn_ids()
    assert id(namespace["counts"]) in drawn and id(namespace["ticks"]) in drawn
    # an array the script's own call gave, handed back by the library, is still the script's
    assert id(namespace["table"]) not in drawn and id(namespace["mine"]) not in drawn
