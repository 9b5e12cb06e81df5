"""A wrong task spec gets a message naming the file, the line, the field and the fix."""

import pytest
from helpers.tasks import make_task

from grader.authoring import load_task
from grader.task.spec import DEFAULT_HIDDEN_VISIBILITY, HIDDEN_VISIBILITIES, SCHEMA_PATH, SpecError

GOOD_YAML = """
id: square
title: Square
version: 1
functions:
  square: [x]
checks:
  - name: values
    kind: property
    call: square
    args:
      x: {array: {shape: [3]}}
    cases: 5
"""


def _problems(tmp_path, yaml_text):
    folder = make_task(tmp_path / "task", yaml_text)
    with pytest.raises(SpecError) as caught:
        load_task(folder)
    return "\n".join(caught.value.problems)


def test_good_spec_loads(tmp_path):
    task = load_task(make_task(tmp_path / "task", GOOD_YAML))
    assert task.id == "square" and task.checks[0].options.cases == 5


def test_hidden_visibility_is_read_and_defaults_to_after_the_due_date(tmp_path):
    assert load_task(make_task(tmp_path / "default", GOOD_YAML)).hidden_visibility == "after_due_date"
    assert DEFAULT_HIDDEN_VISIBILITY == "after_due_date"
    for value in HIDDEN_VISIBILITIES:
        task = load_task(make_task(tmp_path / value, GOOD_YAML + f"hidden_visibility: {value}\n"))
        assert task.hidden_visibility == value


def test_a_bad_hidden_visibility_names_its_line_and_the_allowed_values(tmp_path):
    for wrong in ("visible", "later", "[hidden]"):
        text = _problems(
            tmp_path, GOOD_YAML.replace("version: 1\n", f"version: 1\nhidden_visibility: {wrong}\n")
        )
        assert "task.yaml:4: hidden_visibility:" in text, text
        assert "after_due_date, after_published, hidden" in text, text


def test_attempts_is_read_and_a_bad_one_names_its_line(tmp_path):
    assert load_task(make_task(tmp_path / "none", GOOD_YAML)).attempts is None
    assert load_task(make_task(tmp_path / "three", GOOD_YAML + "attempts: 3\n")).attempts == 3
    for wrong in ("0", "-1", "many", "2.5"):
        text = _problems(tmp_path, GOOD_YAML.replace("version: 1\n", f"version: 1\nattempts: {wrong}\n"))
        assert "task.yaml:4: attempts:" in text, text


def test_the_schema_offers_the_visibilities_the_record_knows():
    import json

    published = json.load(open(SCHEMA_PATH))["properties"]["hidden_visibility"]
    assert tuple(published["enum"]) == HIDDEN_VISIBILITIES


def test_unknown_field_is_named_with_its_line(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("    cases: 5", "    cases: 5\n    casez: 3"))
    assert "task.yaml:13: checks[0].casez: unknown field" in text
    assert "casez" in text


def test_bad_kind_lists_the_choices(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("kind: property", "kind: propertee"))
    assert "task.yaml:8: checks[0].kind" in text
    assert "imports, example, property, mutation" in text
    assert "unknown field" not in text


def test_missing_required_field(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("title: Square\n", ""))
    assert "'title' is a required property" in text and "Add it." in text


def test_call_of_undeclared_function(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("call: square", "call: cube"))
    assert "task.yaml:9: checks[0].call: 'cube' is not among functions: (square)" in text


def test_argument_that_is_not_a_parameter(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("      x: {array", "      y: {array"))
    assert "'y' is not a parameter of square(x)" in text


def test_ref_to_nothing_drawn_before(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("shape: [3]", "shape: [{ref: n}]"))
    assert "{ref: n} refers to nothing drawn before 'x'" in text


def test_needs_must_name_an_earlier_check(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("    cases: 5", "    cases: 5\n    needs: [later]"))
    assert "'later' is not a check defined above this one" in text


def test_select_must_parse(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("    cases: 5", "    cases: 5\n    select: '[:, foo]'"))
    assert "checks[0].select" in text and "'foo' is not an integer, a slice or ..." in text


def test_duplicate_key(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("version: 1", "version: 1\nversion: 2"))
    assert "task.yaml:4: version: duplicate key" in text


def test_invalid_yaml_names_the_line(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("  square: [x]", "  square: [x"))
    assert "task.yaml:" in text and "not valid YAML" in text


def test_missing_reference_file(tmp_path):
    text = _problems(tmp_path, GOOD_YAML.replace("version: 1", "version: 1\nreference: ref.py"))
    assert "reference: file" in text and "ref.py does not exist" in text


def test_published_schema_accepts_the_bundled_task():
    import json

    import jsonschema
    import yaml
    from helpers.paths import PE_TASK

    from grader.task.spec import SCHEMA_PATH

    schema = json.load(open(SCHEMA_PATH))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(yaml.safe_load(open(f"{PE_TASK}/task.yaml")), schema)
