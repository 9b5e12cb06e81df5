"""Check kinds: each module has ``run(ctx, check) -> CheckResult``; add a kind here."""
from . import examples, imports, mutation, properties, script_output, script_work

KINDS = {
    "imports": imports.run,
    "example": examples.run,
    "property": properties.run,
    "mutation": mutation.run,
    "prints": script_output.run,
    "leaves-array": script_work.leaves_array,
    "leaves-sum": script_work.leaves_sum,
}
