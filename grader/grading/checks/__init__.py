"""The check kinds: each module declares one ``KIND`` (a kind.Kind subclass meeting the
contract of task/check_kind.py). To add a kind, write its module and add its ``KIND`` below,
one line; the order is the one task.yaml errors list the kinds in."""

from __future__ import annotations

from grader.grading.checks import (
    examples,
    imports,
    leaves_array,
    leaves_sum,
    mutation,
    properties,
    script_output,
)
from grader.grading.checks.kind import Kind

KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        imports.KIND,
        examples.KIND,
        properties.KIND,
        mutation.KIND,
        script_output.KIND,
        leaves_array.KIND,
        leaves_sum.KIND,
    )
}
