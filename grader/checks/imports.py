"""Imports check: the submission may import only what the task allows.

The verdict rests on a static scan of the source as Python decodes it (submission_file.py),
done here on the trusted side: the source is parsed, never run. The scan also refuses what
would hide an import from it: dynamic code (exec, eval, compile, __import__, import_module,
the builtins module) and the attributes through which an allowed package leads to processes
and C libraries (numpy.f2py, numpy.ctypeslib, numpy.distutils, an array's .ctypes). What the
worker saw the submission import or call while it ran is added as evidence: it can only
cost points, never earn them (a submission can tamper with what its own process records).

It also refuses introspection that reaches other code's frames, functions and namespaces
(sys._getframe, f_back, __globals__, __closure__, __dict__, globals(), getattr with a
computed name, ...): the way a submission would rewrite the worker's harness around it.
A submission with any such route also gets no credit from the checks whose evidence is
gathered by that harness (mutation checks, see mutation.py).

What this can prove: no import statement, dynamic import, dynamic code or listed route in
the file. What it cannot: that a determined submission reaches nothing else (a route not
listed, an object found at run time); containing that is the sandbox's job.
"""
from __future__ import annotations

import ast
import dataclasses
import time

from typing import TYPE_CHECKING, Any, Callable

from ..result import SKIPPED, CheckResult, judged
from ..source_map import location_text
from ..spec import CheckSpec, Task
from ..statuses import IMPORTS
from .kind import ANY_TASK, Kind

if TYPE_CHECKING:
    from ..grading import Context

DYNAMIC_IMPORTERS = {"__import__", "import_module"}
# Names that run code the scan cannot see, or hand out a module's or a frame's namespace.
DYNAMIC_CODE = {"exec", "eval", "compile", "__builtins__", "breakpoint", "globals", "vars"}
# Attributes of allowed packages that lead to subprocesses, compilers and C libraries.
ROUTES_OUT = {"f2py": "runs compilers and processes", "ctypeslib": "loads C libraries",
              "distutils": "runs compilers and processes", "extbuild": "builds C extensions",
              "ctypes": "gives raw memory and C calls"}
# Modules a package holds as attributes (numpy's submodules hold os and sys): reached that
# way, they need no import statement.
MODULES_AS_ATTRIBUTES = {"os", "sys", "subprocess", "socket", "builtins", "importlib", "gc",
                         "inspect", "signal", "threading", "_thread", "multiprocessing", "posix",
                         "pty", "shutil", "runpy", "ctypes", "marshal", "pickle"}
# Introspection that reaches other code's frames, functions and namespaces, the grader's
# worker included (which is how a submission would rewrite the harness that calls it).
INTROSPECTION = {"_getframe", "f_back", "f_locals", "f_globals", "f_builtins", "tb_frame",
                 "gi_frame", "cr_frame", "ag_frame", "__globals__", "__closure__",
                 "cell_contents", "__code__", "__subclasses__", "__dict__", "__builtins__",
                 "__getattribute__", "__loader__", "__spec__", "__import__", "modules"}
ATTRIBUTE_CALLS = {"getattr", "setattr", "delattr", "hasattr"}


def _attribute_route(name: str, task: Task | None) -> str | None:
    if name in ROUTES_OUT:
        return ROUTES_OUT[name]
    if name in MODULES_AS_ATTRIBUTES and not (task and allowed(task, name)):
        return f"reaches the module {name} without importing it"
    if name in INTROSPECTION:
        return "reaches into other code (frames, functions, namespaces)"
    if name in DYNAMIC_CODE or name in DYNAMIC_IMPORTERS:
        return "dynamic code"
    return None


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


def _line(number: int) -> str:
    return location_text(None, number)


def hidden_routes(source: str, task: Task | None = None,
                  where: Callable[[int], str] = _line) -> list[str]:
    """What in the source would hide an import from the scan, or reach the worker that
    runs it, each with its line (as ``where`` shows it: a notebook's cell and line): a
    name for dynamic code, an attribute (or an attribute named by a string) that leads to
    a module, a C library or another frame, and an attribute looked up by a name the scan
    cannot read."""
    found = []
    tree = ast.parse(source)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        name: str | None = None
        why: str | None = None
        line = getattr(node, "lineno", 0)   # (every node that can match below has a line)
        if isinstance(node, ast.Name) and node.id in DYNAMIC_CODE:
            found.append(f"{node.id} ({where(node.lineno)}: dynamic code)")
        elif isinstance(node, ast.Name) and node.id in ATTRIBUTE_CALLS and id(node) not in called:
            # getattr passed around (to an alias, to functools) hides the names it looks up
            why = f"{node.id} used as a value"
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.ImportFrom):
            # from typing import sys: a module reached through another one's names
            name = next((a.name for a in node.names if _attribute_route(a.name, task)), None)
        elif isinstance(node, ast.Import):
            name = next((part for a in node.names for part in a.name.split(".")
                         if part in ROUTES_OUT), None)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in ATTRIBUTE_CALLS \
                and len(node.args) >= 2:
            key = node.args[1]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                name = key.value
            else:
                why = f"{getattr(node.func, 'id')}() with a computed name"
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str) and _attribute_route(node.slice.value, task):
            found.append(f"[{node.slice.value!r}] ({where(node.lineno)}: "
                         f"{_attribute_route(node.slice.value, task)})")
        if why:
            found.append(f"{why} ({where(line)}: the scan cannot tell what it reaches)")
        elif name and _attribute_route(name, task):
            found.append(f".{name} ({where(line)}: {_attribute_route(name, task)})")
    return sorted(set(found), key=found.index)


def _runtime_problem(entry: str) -> str:
    if entry.endswith("()"):
        return f"{entry} (called while running)"
    if entry.startswith("."):
        return f"{entry} (read while running)"
    return f"{entry} (imported while running)"


def harness_reach(ctx: Context) -> list[str]:
    """What in the submission could reach the worker's harness around it: every hidden
    route of the scan, an import the task does not allow (any module can be a way in:
    mmap, threading, ...; for a task without an imports policy, those that open a route:
    sys, gc, inspect, ...), and what the worker saw it call, read or replace while it ran. Checks
    whose evidence that harness gathers (mutation) give no credit when this is not empty."""
    found = []
    policy = bool(ctx.task.allowed_imports)   # (a task with no imports: section allows any)

    def opens_a_route(module: str) -> bool:
        if allowed(ctx.task, module):
            return False
        return policy or module.split(".")[0] in MODULES_AS_ATTRIBUTES | DYNAMIC_IMPORTERS

    if ctx.source.text is not None:
        try:
            found += hidden_routes(ctx.source.text, ctx.task, ctx.source.where)
            found += [f"{module} ({ctx.source.where(line)})" for module, line in static_imports(ctx.source.text)
                      if opens_a_route(module)]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    found += [_runtime_problem(entry) for entry in ctx.runtime_imports
              if entry.endswith("()") or entry.startswith(".") or opens_a_route(entry)]
    return found


def run(ctx: Context, check: CheckSpec[Any]) -> CheckResult:
    start = time.monotonic()
    task = ctx.task
    if ctx.source.text is None:
        return CheckResult(check.name, SKIPPED, 0.0, check.points, hidden=check.hidden,
                           message=f"skipped: {ctx.source.problem}",
                           description=check.description)
    try:
        found = static_imports(ctx.source.text)
        routes = hidden_routes(ctx.source.text, task, ctx.source.where)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return CheckResult(check.name, SKIPPED, 0.0, check.points, hidden=check.hidden,
                           message=f"skipped: the file does not parse ({type(exc).__name__})",
                           description=check.description)
    problems = [f"{module} ({ctx.source.where(line)})" for module, line in found if not allowed(task, module)]
    problems += routes
    static_names = {module for module, _ in found}
    for entry in ctx.runtime_imports:
        if entry.endswith("()") or entry.startswith(".") or (
                not allowed(task, entry) and entry not in static_names):
            problems.append(_runtime_problem(entry))
    allowed_text = ", ".join(task.allowed_imports) or "nothing"
    if task.stdlib_imports:
        allowed_text += f"; from the standard library: {', '.join(task.stdlib_imports)}"
    seconds = time.monotonic() - start
    message = (f"imports that this task does not allow: {', '.join(problems)}. "
               f"Allowed: {allowed_text}; no dynamic code (exec, eval, compile, __import__) "
               f"and no introspection of other code.") if problems else ""
    return dataclasses.replace(judged(check, not problems, message, IMPORTS), seconds=seconds)


# It takes no fields of its own; it reads the source, so it runs even when the file did not load;
# it judges how, not what: its point counts only for a file that does some of the work.
KIND = Kind("imports", ANY_TASK, run, reads_source=True, policy=True)
