"""The static scan of a submission's code: what the imports check (grading/checks/imports.py)
and the mutation check decide on, read on the trusted side from the source as Python decodes
it (python_file.py); the source is parsed, never run, in a bounded child (source_scan.py).

It finds every import statement and dynamic-import call, and what would hide an import from
it or reach the worker's harness around the file: dynamic code (exec, eval, compile,
__import__, import_module, the builtins module), the attributes through which an allowed
package leads to processes and C libraries (numpy.f2py, numpy.ctypeslib, numpy.distutils,
an array's .ctypes), introspection that reaches other code's frames, functions and
namespaces (sys._getframe, f_back, __globals__, __closure__, __dict__, globals(), getattr
with a computed name, ...), and what the functions under test reach of a display library.

What this can prove: no import statement, dynamic import, dynamic code or listed route in
the file. What it cannot: that a determined submission reaches nothing else (a route not
listed, an object found at run time); containing that is the sandbox's job.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Sequence
from typing import cast

from grader.submission.python_file import SourceScan
from grader.submission.source_map import location_text

# (and importlib's loaders, which load a module without an import for the audit hook to see)
DYNAMIC_IMPORTERS = {
    "__import__",
    "import_module",
    "load_module",
    "exec_module",
    "module_from_spec",
    "find_spec",
    "spec_from_file_location",
    "spec_from_loader",
    "SourceFileLoader",
}
# Names that run code the scan cannot see, or hand out a module's or a frame's namespace.
DYNAMIC_CODE = {"exec", "eval", "compile", "__builtins__", "breakpoint", "globals", "vars"}
# Allowed APIs that turn data into running code: they evaluate a string (an annotation, a
# forward reference) or unpickle bytes, and what runs there is the submission's too.
EVALUATES_STRINGS = {
    "get_type_hints",
    "get_annotations",
    "ForwardRef",
    "_eval_type",
    "evaluate_forward_ref",
    "eval_str",
    "_evaluate",
}
UNPICKLES = {"Unpickler", "loads", "load_model", "read_array", "__reduce__", "__reduce_ex__", "__setstate__"}
UNPICKLING_KEYWORDS = {"allow_pickle", "weights_only"}  # np.load(allow_pickle=True), torch.load
# Evaluate annotations (a string annotation is code to them): a route when the file has any
# annotation that is not plainly a name.
READS_ANNOTATIONS = {"singledispatch", "singledispatchmethod"}
# Attributes of allowed packages that lead to subprocesses, compilers and C libraries.
ROUTES_OUT = {
    "f2py": "runs compilers and processes",
    "ctypeslib": "loads C libraries",
    "distutils": "runs compilers and processes",
    "extbuild": "builds C extensions",
    "ctypes": "gives raw memory and C calls",
    "_ctypes": "gives raw memory and C calls",
}
# Modules a package holds as attributes (numpy's submodules hold os and sys): reached that
# way, they need no import statement.
MODULES_AS_ATTRIBUTES = {
    "os",
    "sys",
    "subprocess",
    "socket",
    "builtins",
    "importlib",
    "gc",
    "inspect",
    "signal",
    "threading",
    "_thread",
    "multiprocessing",
    "posix",
    "pty",
    "shutil",
    "runpy",
    "ctypes",
    "marshal",
    "pickle",
}
# Introspection that reaches other code's frames, functions and namespaces, the grader's
# worker included (which is how a submission would rewrite the harness that calls it).
INTROSPECTION = {
    "_getframe",
    "f_back",
    "f_locals",
    "f_globals",
    "f_builtins",
    "tb_frame",
    "gi_frame",
    "cr_frame",
    "ag_frame",
    "__globals__",
    "__closure__",
    "cell_contents",
    "__code__",
    "__subclasses__",
    "__dict__",
    "__builtins__",
    "__getattribute__",
    "__loader__",
    "__spec__",
    "__import__",
    "modules",
    "__annotations__",
    "__defaults__",
    "__kwdefaults__",
    "__self__",
    "__func__",
    "meta_path",
    "path_hooks",
    "excepthook",
    "displayhook",
    "setrecursionlimit",
}
# The same names inside any string (an attrgetter's name, a format string's field): words
# of prose ("modules") aside, a string that holds one of them names what it reaches.
_IN_STRINGS = re.compile(
    r"(?<![A-Za-z0-9_])("
    + "|".join(
        sorted(
            {n for n in INTROSPECTION | DYNAMIC_IMPORTERS | EVALUATES_STRINGS if "_" in n}
            | {"f2py", "ctypeslib", "ctypes"},
            key=len,
            reverse=True,
        )
    )
    + r")(?![A-Za-z0-9_])"
)
# A path into the process's own memory or another process's (/proc/self/mem and friends).
_PROC = re.compile(r"/proc\b")
ATTRIBUTE_CALLS = {"getattr", "setattr", "delattr", "hasattr"}


def _attribute_route(name: str, allowed_names: Sequence[str]) -> str | None:
    if name in ROUTES_OUT:
        return ROUTES_OUT[name]
    if name in MODULES_AS_ATTRIBUTES and not allowed_by(allowed_names, name):
        return f"reaches the module {name} without importing it"
    if name in INTROSPECTION:
        return "reaches into other code (frames, functions, namespaces)"
    if name in DYNAMIC_CODE or name in DYNAMIC_IMPORTERS:
        return "dynamic code"
    if name in EVALUATES_STRINGS:
        return "evaluates a string as code"
    if name in UNPICKLES:
        return "unpickles: runs whatever code the bytes name"
    return None


def allowed_by(names: Sequence[str], module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)


def static_imports(source: str) -> list[tuple[str, int]]:
    """(module, line) for every import statement and dynamic-import call in the source."""
    return _imports(ast.parse(source))


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
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


def hidden_routes(
    source: str, allowed_names: Sequence[str] = (), where: Callable[[int], str] = _line
) -> list[str]:
    """What in the source would hide an import from the scan, or reach the worker that
    runs it, each with its line (as ``where`` shows it: a notebook's cell and line): a
    name for dynamic code, an attribute (or an attribute named by a string) that leads to
    a module, a C library or another frame, an allowed API that runs a string or bytes as
    code, and an attribute looked up by a name the scan cannot read."""
    return _routes(ast.parse(source), allowed_names, where)


def _plain_annotation(node: ast.AST | None) -> bool:
    """An annotation that is names only (``int``, ``np.ndarray``, ``list[float]``): nothing a
    reader of annotations could run as code."""
    if node is None:
        return True
    return all(
        isinstance(n, (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.Load, ast.BinOp, ast.BitOr))
        for n in ast.walk(node)
    )


def _annotations(tree: ast.AST) -> Iterator[ast.expr | None]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            for arg in (
                arguments.posonlyargs
                + arguments.args
                + arguments.kwonlyargs
                + [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            ):
                yield arg.annotation
            yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def _routes(tree: ast.AST, allowed_names: Sequence[str], where: Callable[[int], str]) -> list[str]:
    found = []
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    # (with `from __future__ import annotations` they are strings to their readers, but the
    # code in those strings is the annotation as written here: plain names are harmless)
    code_in_annotations = not all(_plain_annotation(a) for a in _annotations(tree))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        name: str | None = None
        why: str | None = None
        line = getattr(node, "lineno", 0)  # (every node that can match below has a line)
        if isinstance(node, ast.Name) and node.id in DYNAMIC_CODE:
            found.append(f"{node.id} ({where(node.lineno)}: dynamic code)")
        elif isinstance(node, ast.Name) and node.id in ATTRIBUTE_CALLS and id(node) not in called:
            # getattr passed around (to an alias, to functools) hides the names it looks up
            why = f"{node.id} used as a value"
        elif isinstance(node, ast.Name) and (node.id in EVALUATES_STRINGS or node.id in UNPICKLES):
            name = node.id  # imported by name: from typing import get_type_hints
        elif (
            isinstance(node, (ast.Name, ast.Attribute))
            and code_in_annotations
            and (node.id if isinstance(node, ast.Name) else node.attr) in READS_ANNOTATIONS
        ):
            found.append(
                f"{node.id if isinstance(node, ast.Name) else node.attr} "
                f"({where(line)}: evaluates the file's annotations, which hold code)"
            )
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.ImportFrom):
            # from typing import sys: a module reached through another one's names
            name = next((a.name for a in node.names if _attribute_route(a.name, allowed_names)), None)
        elif isinstance(node, ast.Import):
            name = next((part for a in node.names for part in a.name.split(".") if part in ROUTES_OUT), None)
        elif (
            isinstance(node, ast.keyword)
            and node.arg in UNPICKLING_KEYWORDS
            and not (
                isinstance(node.value, ast.Constant) and node.value.value is (node.arg == "weights_only")
            )
        ):
            found.append(
                f"{node.arg}= ({where(getattr(node.value, 'lineno', 0))}: unpickles: "
                "runs whatever code the bytes name)"
            )
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) in ATTRIBUTE_CALLS
            and len(node.args) >= 2
        ):
            key = node.args[1]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                name = key.value
            else:
                why = f"{cast(ast.Name, node.func).id}() with a computed name"
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
            and _attribute_route(node.slice.value, allowed_names)
        ):
            found.append(
                f"[{node.slice.value!r}] ({where(node.lineno)}: "
                f"{_attribute_route(node.slice.value, allowed_names)})"
            )
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (str, bytes))
            and id(node) not in docstrings
        ):  # (prose: a docstring may name __dict__)
            text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            named = _IN_STRINGS.search(text)
            if named:
                found.append(
                    f"{named.group(1)!r} in a string ({where(line)}: "
                    f"{_attribute_route(named.group(1), allowed_names)})"
                )
            elif _PROC.search(text):
                found.append(f"'/proc' in a string ({where(line)}: reaches a process's memory or files)")
        if why:
            found.append(f"{why} ({where(line)}: the scan cannot tell what it reaches)")
        elif name and _attribute_route(name, allowed_names):
            found.append(f".{name} ({where(line)}: {_attribute_route(name, allowed_names)})")
    return list(dict.fromkeys(found))  # (in order, each once: linear in what was found)


# --------------------------------------------------------------------------- display libraries
# A library the task names as display-only (task.yaml ``imports: display``) draws pictures
# nobody grades: importing it and drawing with it costs nothing. What the functions under
# test reach of it still costs: those are graded, and a display library is no tool to
# compute their answers with. "Reach" is read from the source, name by name, scopes
# respected (a function's own locals are its own): a name a function under test uses that
# is not its own leads to the module's bindings of that name (a def, a class, an
# assignment's value, a loop's iterable, a with's context, an import), and from each to the
# names it uses in turn; a display import met on the way (or inside one of those functions)
# is the function's use of it. A name bound by a display import is bound to the library,
# whatever it is called and whatever it holds (``from seaborn.utils import pd``).


def is_display(module: str, display: Sequence[str]) -> bool:
    """Whether ``module`` (an absolute import's name) belongs to one of ``display``."""
    return not module.startswith(".") and module.split(".")[0] in display


def _bound_by_import(alias: ast.alias, node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.Import):
        return alias.asname or alias.name.split(".")[0]
    return alias.asname or alias.name


def _imported_module(alias: ast.alias, node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.Import):
        return alias.name
    return "." * node.level + (node.module or "")


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _stored(node: ast.AST | None) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)] if node is not None else []


def _module_bindings(
    tree: ast.AST, display: Sequence[str]
) -> tuple[dict[str, list[ast.AST]], dict[str, tuple[str, int]]]:
    """The module scope's bindings: name -> the nodes that give it its value (a def or class
    itself, an assignment's value, a loop's iterable, a with's context, an except's type),
    and name -> (display module, line) for names a display import binds there."""
    bindings: dict[str, list[ast.AST]] = {}
    to_display: dict[str, tuple[str, int]] = {}

    def bind(name: str, node: ast.AST | None) -> None:
        if node is not None:
            bindings.setdefault(name, []).append(node)

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name, node)
            # (a function that assigns a ``global`` binds it in the module too)
            declared = {n for g in ast.walk(node) if isinstance(g, ast.Global) for n in g.names}
            for inner in ast.walk(node) if declared else ():
                if isinstance(inner, ast.Assign):
                    for target in inner.targets:
                        for name in set(_stored(target)) & declared:
                            bind(name, inner.value)
                elif isinstance(inner, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and inner.value:
                    for name in set(_stored(inner.target)) & declared:
                        bind(name, inner.value)
            return
        if isinstance(node, ast.Call):
            # box.append(v), box.update(v), setattr(box, "m", v): box now leads to what it was given
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                bind(func.value.id, node)
            elif isinstance(func, ast.Name) and func.id == "setattr" and node.args:
                for name in _stored(node.args[0]):
                    bind(name, node)
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                module = _imported_module(alias, node)
                if alias.name != "*" and is_display(module, display):
                    to_display.setdefault(_bound_by_import(alias, node), (module, node.lineno))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _stored(target):
                    bind(name, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            for name in _stored(node.target):
                bind(name, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            for name in _stored(node.target):
                bind(name, node.iter)
        elif isinstance(node, ast.withitem):
            for name in _stored(node.optional_vars):
                bind(name, node.context_expr)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name, node.type)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return bindings, to_display


def _used_from_outside(scope: ast.AST) -> list[tuple[str, int]]:
    """The names a def, class or lambda uses that are not its own (nor a nested scope's):
    those it looks up in the module (``global`` ones included), with their lines."""
    own: set[str] = set()
    declared_global: set[str] = set()
    for n in ast.walk(scope):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = n.args
            own |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x}
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not scope:
            own.add(n.name)
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            own.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            own |= {_bound_by_import(alias, n) for alias in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            own.add(n.name)
        elif isinstance(n, ast.Global):
            declared_global |= set(n.names)
    own -= declared_global
    return [
        (n.id, n.lineno)
        for n in ast.walk(scope)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in own
    ]


def _display_uses(
    tree: ast.AST, display: Sequence[str], tested: Sequence[str], where: Callable[[int], str]
) -> list[str]:
    """Each use of a display library the functions under test (``tested``) make, reached as
    the section above says: ``name (where: why)``, where is the line that reaches it."""
    if not display:
        return []
    # A star import binds names no reader can follow (importlib, among a display module's):
    # it is judged as any import, whatever the functions under test use.
    stars = [
        f"{_imported_module(alias, node)} ({where(node.lineno)}: a star import of a display library "
        "binds names that cannot be followed)"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name == "*" and is_display(_imported_module(alias, node), display)
    ]
    if not tested:
        return stars
    bindings, to_display = _module_bindings(tree, display)
    work: list[tuple[ast.AST, str]] = [
        (node, name) for name in tested for node in bindings.get(name, ()) if isinstance(node, _SCOPES)
    ]
    seen: set[int] = set()
    found = []
    while work:
        node, function = work.pop(
            0
        )  # (in order: a use is named by the first function whose own body holds it)
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, _SCOPES):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    for alias in inner.names:
                        module = _imported_module(alias, inner)
                        if is_display(module, display):
                            found.append(
                                f"{module} ({where(inner.lineno)}: imported where {function} "
                                "runs it, and the checks call that function)"
                            )
            names = _used_from_outside(node)
        else:
            names = [(n.id, getattr(n, "lineno", 0)) for n in ast.walk(node) if isinstance(n, ast.Name)]
        for name, line in names:
            if name in to_display:
                module = to_display[name][0]
                found.append(
                    f"{name} ({where(line)}: {function} uses the display library "
                    f"{module.split('.')[0]}, and the checks call that function: a display "
                    "library only draws)"
                )
            work.extend((b, function) for b in bindings.get(name, ()))
    return list(dict.fromkeys(stars + found))


def scan_imports(
    source: str,
    allowed_names: Sequence[str],
    where: Callable[[int], str],
    display: Sequence[str] = (),
    tested: Sequence[str] = (),
) -> SourceScan:
    """What the static checks read of the code: its imports, its hidden routes, and the
    uses the functions under test (``tested``) make of the display libraries (``display``),
    from one parse (run in a bounded child, source_scan.py: the text is the student's)."""
    try:
        tree = ast.parse(source)
        imports = _imports(tree)
        routes = _routes(tree, allowed_names, where)
        display_uses = _display_uses(tree, display, tested, where)
    except (SyntaxError, ValueError) as exc:  # (the worker says where, when it runs it)
        return SourceScan(problem=f"the file does not parse ({type(exc).__name__})")
    definitions = tuple(
        (node.name, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    return SourceScan(tuple(imports), tuple(routes), definitions, display_uses=tuple(display_uses))
