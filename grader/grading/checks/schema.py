"""The JSON Schema of task.yaml: the published file with its ``check`` part assembled from
the kinds (task/task_yaml.py: the common fields, then each kind's piece), so that a kind's
fields are declared once, in its module. ``python -m grader.grading.checks.schema`` rewrites
the published file (which editors read); a unit test fails while it is out of date."""

from __future__ import annotations

import json
import sys
from typing import Any

from grader.grading.checks import KINDS
from grader.task import task_yaml
from grader.task.spec import SCHEMA_PATH


def grader_schema() -> dict[str, Any]:
    """The schema in force with the grader's kinds."""
    return task_yaml.task_schema(KINDS)


def text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2) + "\n"


if __name__ == "__main__":
    fresh = text(grader_schema())  # (read in full before the file is rewritten)
    with open(SCHEMA_PATH, "w", encoding="utf-8") as f:
        f.write(fresh)
    print(f"wrote {SCHEMA_PATH}", file=sys.stderr)
