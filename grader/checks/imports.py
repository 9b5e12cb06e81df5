"""Imports check: the submission may import only what the task allows.

The verdict rests on a static scan of the source, done here on the trusted side (the source
is parsed, never run). What the worker saw imported at run time (e.g. through
``__import__`` or ``exec``) is added as evidence: it can only cost points, never earn them.
"""
from __future__ import annotations

import ast
import dataclasses
import time

from ..result import SKIPPED, CheckResult, judged
from ..spec import CheckSpec, Task

DYNAMIC_IMPORTERS = {"__import__", "import_module"}


def allowed(task: Task, module: str) -> bool:
    names = task.allowed_imports + task.stdlib_imports
    return any(module == name or module.startswith(name + ".") for name in names)


def static_imports(source: str) -> list[tuple[str, int]]:
    """(module, line) for every import statement and dynamic-import call in the source."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append(("." * node.level + (node.module or ""), node.lineno))
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in DYNAMIC_IMPORTERS:
                found.append((f"{name}(...)", node.lineno))
    return found


def run(ctx, check: CheckSpec) -> CheckResult:
    start = time.monotonic()
    task = ctx.task
    try:
        found = static_imports(ctx.source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return CheckResult(check.name, SKIPPED, 0.0, check.points, hidden=check.hidden,
                           message=f"skipped: the file does not parse ({type(exc).__name__})",
                           description=check.description)
    problems = [f"{module} (line {line})" for module, line in found if not allowed(task, module)]
    static_names = {module for module, _ in found}
    problems += [f"{module} (imported while running)" for module in ctx.runtime_imports
                 if not allowed(task, module) and module not in static_names]
    allowed_text = ", ".join(task.allowed_imports) or "nothing"
    if task.stdlib_imports:
        allowed_text += f"; from the standard library: {', '.join(task.stdlib_imports)}"
    seconds = time.monotonic() - start
    message = (f"imports that this task does not allow: {', '.join(problems)}. "
               f"Allowed: {allowed_text}.") if problems else ""
    return dataclasses.replace(judged(check, not problems, message), seconds=seconds)
