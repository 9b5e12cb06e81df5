"""Imports check: the submission may import only what the task allows.

The verdict rests on a static scan of the source as Python decodes it (submission_file.py),
done here on the trusted side: the source is parsed, never run. The scan also refuses what
would hide an import from it: dynamic code (exec, eval, compile, __import__, import_module,
the builtins module) and the attributes through which an allowed package leads to processes
and C libraries (numpy.f2py, numpy.ctypeslib, numpy.distutils, an array's .ctypes). What the
worker saw the submission import or call while it ran is added as evidence: it can only
cost points, never earn them (a submission can tamper with what its own process records).

What this can prove: no import statement, dynamic import, dynamic code or listed route in
the file. What it cannot: that a determined submission reaches nothing else (a route not
listed, an object found at run time); containing that is the sandbox's job.
"""
from __future__ import annotations

import ast
import dataclasses
import time

from ..result import SKIPPED, CheckResult, judged
from ..spec import CheckSpec, Task

DYNAMIC_IMPORTERS = {"__import__", "import_module"}
DYNAMIC_CODE = {"exec", "eval", "compile", "__builtins__", "breakpoint"}
# Attributes of allowed packages that lead to subprocesses, compilers and C libraries.
ROUTES_OUT = {"f2py": "runs compilers and processes", "ctypeslib": "loads C libraries",
              "distutils": "runs compilers and processes", "extbuild": "builds C extensions",
              "ctypes": "gives raw memory and C calls"}


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


def hidden_routes(source: str) -> list[str]:
    """What in the source would hide an import from the scan, each with its line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = None
        if isinstance(node, ast.Name) and node.id in DYNAMIC_CODE:
            found.append(f"{node.id} (line {node.lineno}: dynamic code)")
        elif isinstance(node, ast.Attribute) and node.attr in ROUTES_OUT:
            name = node.attr
        elif isinstance(node, ast.ImportFrom):
            name = next((a.name for a in node.names if a.name in ROUTES_OUT), None)
        elif isinstance(node, ast.Import):
            name = next((part for a in node.names for part in a.name.split(".")
                         if part in ROUTES_OUT), None)
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and node.args[1].value in ROUTES_OUT):
            name = node.args[1].value
        if name:
            found.append(f".{name} (line {node.lineno}: {ROUTES_OUT[name]})")
    return sorted(set(found), key=found.index)


def run(ctx, check: CheckSpec) -> CheckResult:
    start = time.monotonic()
    task = ctx.task
    if ctx.source.text is None:
        return CheckResult(check.name, SKIPPED, 0.0, check.points, hidden=check.hidden,
                           message=f"skipped: {ctx.source.problem}",
                           description=check.description)
    try:
        found = static_imports(ctx.source.text)
        routes = hidden_routes(ctx.source.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return CheckResult(check.name, SKIPPED, 0.0, check.points, hidden=check.hidden,
                           message=f"skipped: the file does not parse ({type(exc).__name__})",
                           description=check.description)
    problems = [f"{module} (line {line})" for module, line in found if not allowed(task, module)]
    problems += routes
    static_names = {module for module, _ in found}
    for entry in ctx.runtime_imports:
        if entry.endswith("()"):
            problems.append(f"{entry} (called while running)")
        elif not allowed(task, entry) and entry not in static_names:
            problems.append(f"{entry} (imported while running)")
    allowed_text = ", ".join(task.allowed_imports) or "nothing"
    if task.stdlib_imports:
        allowed_text += f"; from the standard library: {', '.join(task.stdlib_imports)}"
    seconds = time.monotonic() - start
    message = (f"imports that this task does not allow: {', '.join(problems)}. "
               f"Allowed: {allowed_text}; no dynamic code (exec, eval, compile, __import__).") \
        if problems else ""
    return dataclasses.replace(judged(check, not problems, message), seconds=seconds)
