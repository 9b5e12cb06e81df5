"""The parts of the grader import each other in one direction only, imports inside functions
counted: a lower part never imports a higher one, so the part graph has no loop.

The order (CONTRIBUTING.md, "Layout") is the architecture: records at the bottom, the
command line at the top. An import made inside a function is an import all the same (it only
hides a loop until the function runs), so each one must be declared below with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grader

ROOT = Path(grader.__file__).parent

# Bottom to top. A module directly under grader/ other than these is not a part (the package
# itself, ``__main__``).
PARTS = (
    "records",
    "student_text",
    "disk",
    "submission",
    "sandbox",
    "task",
    "cases",
    "grading",
    "authoring",
    "report",
    "classroom",
    "integrations",
    "service",
    "cli",
)

# Imports of grader modules made inside a function, each kept for a reason a reader can check.
# (Besides these, grader/cli/dispatch.py loads a command family's module by name, with
# importlib, so that a command imports only what it uses.)
# (module, imported module) -> why it is not at the module's top.
FUNCTION_LEVEL_IMPORTS = {
    ("grader.cli", "grader.cli.dispatch"): (
        "the BLAS thread settings must be made before anything imports numpy"
    ),
    ("grader.report", "grader.report.html"): (
        "the page's modules (pictures, SVG) only when a page is asked for: `grader check` stays fast"
    ),
    ("grader.cases.generate", "grader.task.hypothesis_driver"): (
        "Hypothesis (0.3 s to import) only when cases are generated, never for a frozen task"
    ),
    ("grader.cli.check", "grader.cli.check_grading"): (
        "the grading stack (numpy, the checks) after the worker's head start, so that the two start side by side"
    ),
    ("grader.grading.checks.case_runs", "grader.task.hypothesis_driver"): (
        "Hypothesis imported ahead only when a failure waits to be shrunk, never for a frozen task"
    ),
    ("grader.grading.shrinking.search", "grader.task.hypothesis_driver"): (
        "Hypothesis only when a failure is shrunk, never for a frozen task"
    ),
    ("grader.task.task_yaml", "grader.task.edges"): (
        "numpy (edges.py's) only when a whole task is read: grader check's head start reads the limits without it"
    ),
    ("grader.sandbox", "grader.sandbox.launcher"): (
        "the Sandbox (and numpy with it) only when used: grader export, kit and --version never pay for it"
    ),
}
MOST_FUNCTION_LEVEL_IMPORTS = 15


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str) -> str | None:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 and pieces[1] in PARTS else None


def grader_imports(source: str, module: str) -> list[tuple[str, bool]]:
    """(imported grader module, made inside a function) for every import in ``source``."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:  # relative: resolve against this module's package
                    package = module.split(".")[: -child.level]
                    base = ".".join(package + ([base] if base else []))
                if base.split(".")[0] == "grader":
                    found.append((base, inside))
                    found.extend((f"{base}.{a.name}", inside) for a in child.names)
            elif isinstance(child, ast.Import):
                found.extend((a.name, inside) for a in child.names if a.name.split(".")[0] == "grader")
            visit(child, inside)

    visit(ast.parse(source), False)
    return found


def trusted_modules() -> dict[str, Path]:
    # sandbox/inside/ runs in the sandbox and imports by top-level name (test_inside_imports.py)
    return {
        module_name(p): p
        for p in sorted(ROOT.rglob("*.py"))
        if p.relative_to(ROOT).parts[:2] != ("sandbox", "inside")
    }


def edges(modules: dict[str, Path]) -> list[tuple[str, str, bool]]:
    """(importer, imported, inside a function) between grader modules."""
    found = []
    for name, path in modules.items():
        for imported, inside in grader_imports(path.read_text(encoding="utf-8"), name):
            if imported in modules and imported != name:
                found.append((name, imported, inside))
    return found


def part_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every loop of a directed graph, each once (as the path from its smallest node)."""
    loops: list[list[str]] = []

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                loops.append([*path, start])
            elif nxt > start and nxt not in path:
                walk(start, nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return loops


def part_graph(found: list[tuple[str, str, bool]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for importer, imported, _ in found:
        a, b = part_of(importer), part_of(imported)
        if a and b and a != b:
            graph.setdefault(a, set()).add(b)
    return graph


def test_every_module_belongs_to_a_part():
    strays = [m for m in trusted_modules() if m.count(".") >= 1 and part_of(m) is None]
    assert strays == ["grader.__main__"], strays


def test_a_part_imports_only_the_parts_below_it():
    upward = [
        f"{importer} imports {imported}{' (inside a function)' if inside else ''}"
        for importer, imported, inside in edges(trusted_modules())
        if (a := part_of(importer)) and (b := part_of(imported)) and PARTS.index(b) > PARTS.index(a)
    ]
    assert upward == [], "a lower part imports a higher one:\n" + "\n".join(upward)


def test_the_part_graph_has_no_loop():
    assert part_loops(part_graph(edges(trusted_modules()))) == []


def test_every_import_inside_a_function_is_declared_with_its_reason():
    inside = {(a, b) for a, b, fn in edges(trusted_modules()) if fn}
    # a `from grader.x import y` names both the package and the module: keep the module
    inside = {(a, b) for a, b in inside if not any(c != b and c.startswith(b + ".") for _, c in inside)}
    assert inside <= set(FUNCTION_LEVEL_IMPORTS), sorted(inside - set(FUNCTION_LEVEL_IMPORTS))
    assert len(FUNCTION_LEVEL_IMPORTS) <= MOST_FUNCTION_LEVEL_IMPORTS
    stale = set(FUNCTION_LEVEL_IMPORTS) - inside
    assert not stale, f"declared but no longer made (remove them): {sorted(stale)}"


def module_graph(found: list[tuple[str, str, bool]]) -> dict[str, set[str]]:
    """Module -> the modules it imports, inside functions too. ``from grader.x import y``
    where y is a module is an import of y (not of x's face: a face that imports its own
    modules is no loop with them)."""
    imports: dict[str, set[str]] = {}
    for importer, imported, _ in found:
        imports.setdefault(importer, set()).add(imported)
    return {
        importer: {b for b in named if not any(c.startswith(b + ".") for c in named)}
        for importer, named in imports.items()
    }


def module_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm), each
    sorted: every module in one imports, through the others, every other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def test_no_module_imports_itself_through_others_inside_functions_or_not():
    loops = module_loops(module_graph(edges(trusted_modules())))
    assert loops == [], "modules that import each other:\n" + "\n".join(" <-> ".join(g) for g in loops)


# Packages with a face: the rest of the grader imports only the package itself (its
# ``__init__.py``, which names the public API), never a module inside it.
FACED = ("grader.sandbox", "grader.cases", "grader.grading", "grader.authoring")


def through_the_back(found: list[tuple[str, str, bool]], faced: tuple[str, ...]) -> list[str]:
    """Imports from outside a faced package of a module inside it."""
    return sorted(
        {
            f"{importer} imports {imported}"
            for importer, imported, _ in found
            for package in faced
            if imported.startswith(package + ".")
            and not (importer == package or importer.startswith(package + "."))
        }
    )


def test_the_rest_of_the_grader_imports_a_package_through_its_face():
    assert through_the_back(edges(trusted_modules()), FACED) == []


# --------------------------------------------------------------------------- controls


def test_control_an_import_past_a_face_is_found():
    found = [
        ("grader.cli.check", "grader.cases", False),
        ("grader.cli.check", "grader.cases.generate", True),
        ("grader.cases.generate", "grader.cases.model", False),
    ]
    assert through_the_back(found, ("grader.cases",)) == ["grader.cli.check imports grader.cases.generate"]


def test_control_a_module_loop_inside_a_package_is_found_and_a_face_is_none(tmp_path):
    tree = {
        "grader/__init__.py": "",
        "grader/cases/__init__.py": "from grader.cases.generate import cases_of\n",
        "grader/cases/generate.py": "from grader.cases import model\n",
        "grader/cases/model.py": "def later():\n    from grader.cases.generate import cases_of\n",
        "grader/grading/__init__.py": "from grader.grading import run\n",
        "grader/grading/run.py": "from grader.cases import cases_of\n",
    }
    for name, source in tree.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source)
    found = []
    for name, source in tree.items():
        module = module_name_under(tmp_path, tmp_path / name)
        modules = {module_name_under(tmp_path, tmp_path / n) for n in tree}
        found += [(module, b, fn) for b, fn in grader_imports(source, module) if b in modules and b != module]
    assert module_loops(module_graph(found)) == [["grader.cases.generate", "grader.cases.model"]]


def module_name_under(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_control_a_loop_between_parts_is_found():
    graph = part_graph(
        [
            ("grader.task.spec", "grader.grading.checks", True),
            ("grader.grading.run", "grader.task.spec", False),
            ("grader.records.result", "grader.records.statuses", False),
        ]
    )
    assert part_loops(graph) == [["grading", "task", "grading"]]


def test_control_an_import_inside_a_function_is_seen_and_so_is_a_relative_one():
    source = (
        "from grader.records import result\n"
        "def later():\n"
        "    from grader.classroom.batch import run\n"
        "from .cases import CaseSet\n"
    )
    found = grader_imports(source, "grader.grading.run")
    assert ("grader.classroom.batch", True) in found
    assert ("grader.records.result", False) in found
    assert ("grader.grading.cases", False) in found
