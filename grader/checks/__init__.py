"""Check kinds: each module has ``run(ctx, check) -> CheckResult``; add a kind here."""
from . import examples, imports, mutation, properties

KINDS = {
    "imports": imports.run,
    "example": examples.run,
    "property": properties.run,
    "mutation": mutation.run,
}
