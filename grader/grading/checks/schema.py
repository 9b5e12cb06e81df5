"""The JSON Schema of task.yaml: the published file with its ``check`` part assembled from
the kinds (the common fields, then each kind's piece), so that a kind's fields are declared
once, in its module. ``python -m grader.grading.checks.schema`` rewrites the published file (which
editors read); a unit test fails while it is out of date."""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

from grader.grading.checks import KINDS
from grader.grading.checks.kind import COMMON_FIELDS, Kind
from grader.task.spec import SCHEMA_PATH


def check_schema(kinds: dict[str, Kind]) -> dict[str, Any]:
    properties = copy.deepcopy(COMMON_FIELDS)
    properties["kind"] = {"enum": list(kinds)}
    return {
        "type": "object",
        "required": ["name", "kind"],
        "properties": properties,
        "allOf": [kind.schema() for kind in kinds.values()],
    }


def task_schema() -> dict[str, Any]:

    with open(SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    schema["$defs"]["check"] = check_schema(KINDS)
    return schema


def text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2) + "\n"


if __name__ == "__main__":
    fresh = text(task_schema())  # (read in full before the file is rewritten)
    with open(SCHEMA_PATH, "w", encoding="utf-8") as f:
        f.write(fresh)
    print(f"wrote {SCHEMA_PATH}", file=sys.stderr)
