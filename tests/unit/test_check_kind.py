"""Check kinds: one module each, one registry line, the schema assembled from them; what
each answers of the contract (task/check_kind.py)."""

import dataclasses
import json
import os
import textwrap

import jsonschema
import pytest

from grader.authoring import load_task
from grader.grading.checks import KINDS
from grader.grading.checks.kind import ANY_TASK, FUNCTIONS, SCRIPT, Kind
from grader.grading.checks.schema import SCHEMA_PATH, grader_schema, text
from grader.task.check_kind import COMMON_FIELDS, CheckKind, CheckOptions, Reading
from grader.task.spec import SpecError
from grader.task.task_yaml import check_schema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_published_schema_is_the_one_assembled_from_the_kinds():
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        published = f.read()
    assert published == text(grader_schema()), (
        "grader/schema/task.schema.json is out of date: run python -m grader.grading.checks.schema"
    )


def test_registry_order_and_families():
    assert list(KINDS) == [
        "imports",
        "example",
        "property",
        "mutation",
        "prints",
        "leaves-array",
        "leaves-sum",
    ]
    assert KINDS["imports"].families == ANY_TASK
    assert KINDS["imports"].fits("script") and not KINDS["example"].fits("script")
    assert {n for n, k in KINDS.items() if k.families == FUNCTIONS} == {"example", "property", "mutation"}
    assert {n for n, k in KINDS.items() if k.families == SCRIPT} == {"prints", "leaves-array", "leaves-sum"}


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_declares_what_it_requires(name):
    kind = KINDS[name]
    assert kind.name == name
    assert set(kind.required) <= set(kind.fields)
    assert not set(kind.fields) & set(COMMON_FIELDS)
    assert kind.schema()["then"]["propertyNames"]["enum"][: len(COMMON_FIELDS)] == list(COMMON_FIELDS)


def test_what_the_kinds_say_about_cases():
    task = load_task(os.path.join(ROOT, "tasks", "positional-encoding"))
    options = {c.kind.name: c.options for c in task.checks}
    generated = {n for n, k in KINDS.items() if k.draws_cases()}
    expected = {n for n, k in KINDS.items() if n in options and k.reference_computes_expected(options[n])}
    assert generated == {"property", "mutation"}
    assert expected == {"example", "property"}
    assert {n for n, k in KINDS.items() if k.compares_outputs()} == {"example", "property"}
    assert {n for n, k in KINDS.items() if k.compares_with_reference_value()} == {
        "prints",
        "leaves-array",
        "leaves-sum",
    }
    assert [n for n, k in KINDS.items() if k.judges_the_file()] == ["imports"]
    assert {n for n, k in KINDS.items() if k.answer_carries_arrays()} == {"leaves-array", "leaves-sum"}


def test_an_example_with_a_literal_expect_tries_that_case_alone():
    task = load_task(os.path.join(ROOT, "tasks", "positional-encoding"))
    given = [c for c in task.checks if c.kind.given_case(c.options) is not None]
    assert given and all(c.options.expected_given for c in given)
    example = given[0]
    args, expected = example.kind.given_case(example.options)
    assert args == example.options.literal_cases[0] and expected is not None
    assert not example.kind.reference_computes_expected(example.options)


def test_every_kind_meets_the_contract():
    """Each registered kind has every method the contract names (task/check_kind.py)."""
    asked = [m for m in vars(CheckKind) if not m.startswith("_")]
    assert "counts_only_with_work" in asked and "run" in asked
    for kind in KINDS.values():
        assert all(callable(getattr(kind, m)) for m in asked if m != "name"), kind.name


def test_a_new_kind_is_its_module_and_one_registry_line(tmp_path, monkeypatch):
    """What CONTRIBUTING.md promises: a Kind added to the registry brings its fields into the
    schema, its reading into task loading and its run into grading."""

    @dataclasses.dataclass(frozen=True)
    class CountsOptions(CheckOptions):
        at_least: int = 0

    def read(r: Reading) -> CountsOptions:
        if r.raw["at_least"] > 100:
            r.problem(r.at + ("at_least",), "too many.")
        return CountsOptions(at_least=r.raw["at_least"])

    class Counts(Kind):
        name = "counts"
        families = SCRIPT
        required = ("at_least",)
        fields = {"at_least": {"type": "integer", "minimum": 0}}

        def read(self, reading: Reading) -> CountsOptions:
            return read(reading)

    counts = Counts()
    registry = {**KINDS, "counts": counts}
    schema = json.loads(text(grader_schema()))
    schema["$defs"]["check"] = check_schema(registry)
    validator = jsonschema.Draft202012Validator(schema)
    good = {
        "id": "t",
        "title": "t",
        "version": 1,
        "kind": "script",
        "checks": [{"name": "c", "kind": "counts", "at_least": 3}],
    }
    assert not list(validator.iter_errors(good))
    bad = {**good, "checks": [{"name": "c", "kind": "counts", "at_least": 3, "call": "f"}]}
    assert list(validator.iter_errors(bad))  # a field of another kind is refused

    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "statement.md").write_text("s")
    (folder / "reference.py").write_text("")
    (folder / "task.yaml").write_text(
        textwrap.dedent("""\
        id: t
        title: t
        version: 1
        kind: script
        checks:
          - {name: c, kind: counts, at_least: 3}
          - {name: d, kind: counts, at_least: 300}
        """)
    )
    monkeypatch.setitem(KINDS, "counts", counts)  # (the one registry line)
    with pytest.raises(SpecError) as caught:
        load_task(str(folder))
    assert "checks[1].at_least: too many." in str(caught.value)
    (folder / "task.yaml").write_text((folder / "task.yaml").read_text().replace("300", "30"))
    task = load_task(str(folder))
    assert task.checks[1].options == CountsOptions(at_least=30)
    assert task.checks[1].kind is counts


def test_each_check_of_the_sample_task_has_its_kinds_options():
    task = load_task(os.path.join(ROOT, "tasks", "positional-encoding"))
    by_name = {c.name: c for c in task.checks}
    example = by_name["example-table-3x4"]
    assert example.options.literal_cases == ({"max_len": 3, "d_model": 4},)
    assert example.options.expected_given and example.options.tolerance.atol == 1.0e-6
    prop = by_name["table-shape"]
    assert prop.options.cases == 40 and len(prop.options.edge_cases) == 2
    assert prop.options.literal_cases == prop.options.edge_cases
    assert prop.reference_functions == ("sinusoidal_pe",)
    script = load_task(os.path.join(ROOT, "tasks", "pe-batch-sum"))
    leaves_sum = next(c for c in script.checks if c.kind.name == "leaves-sum")
    assert leaves_sum.options.shape and leaves_sum.options.select
    assert leaves_sum.reference_functions == (leaves_sum.options.reference,)


def test_a_kind_that_does_not_fit_the_task_names_those_that_do(tmp_path):
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "statement.md").write_text("s")
    (folder / "reference.py").write_text("")
    (folder / "task.yaml").write_text(
        textwrap.dedent("""\
        id: t
        title: t
        version: 1
        kind: script
        checks:
          - {name: c, kind: example, call: f}
        """)
    )
    with pytest.raises(SpecError) as caught:
        load_task(str(folder))
    assert (
        "an example check does not fit a script task. Use imports, prints, leaves-array, leaves-sum."
    ) in str(caught.value)
