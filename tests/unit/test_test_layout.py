"""The tests' own layout: helpers are imported from tests/helpers/ (``helpers.<module>``),
never from a conftest.py, which holds only pytest's hooks and fixtures; every import of a
helper names a module of tests/helpers/ and names it defines. Read from the files' syntax:
nothing is imported here."""

import ast
import glob
import os

import pytest
from helpers.paths import ROOT

TESTS = os.path.join(ROOT, "tests")
HELPERS = os.path.join(TESTS, "helpers")


def _python_files() -> list[str]:
    return sorted(glob.glob(os.path.join(TESTS, "**", "*.py"), recursive=True))


def _tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), filename=path)


def _imports(tree: ast.Module):
    """(module, names, line) for every import anywhere in the file, functions' too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, [a.name for a in node.names], node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno


def _defined(path: str) -> set[str]:
    """The names a module binds at its top level."""
    names = set()
    for node in _tree(path).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _relative(path: str) -> str:
    return os.path.relpath(path, ROOT)


def test_no_file_of_the_tests_imports_a_conftest():
    found = [
        f"{_relative(path)}:{line}: {module}"
        for path in _python_files()
        for module, _, line in _imports(_tree(path))
        if module == "conftest" or module.startswith("conftest.") or module.endswith(".conftest")
    ]
    assert found == [], "import helpers from tests/helpers/ (helpers.<module>), not from conftest"


def test_every_import_of_a_helper_names_a_module_of_tests_helpers_and_what_it_defines():
    modules = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HELPERS, "*.py"))} - {"__init__"}
    wrong = []
    for path in _python_files():
        for module, names, line in _imports(_tree(path)):
            where = f"{_relative(path)}:{line}"
            if module == "helpers":
                wrong += [f"{where}: helpers.{n} is no module" for n in names if n not in modules]
            elif module.startswith("helpers."):
                name = module.split(".", 1)[1]
                if name not in modules:
                    wrong.append(f"{where}: {module} is no module of tests/helpers/")
                    continue
                defined = _defined(os.path.join(HELPERS, f"{name}.py"))
                wrong += [f"{where}: {module} defines no {n}" for n in names if n != "*" and n not in defined]
    assert wrong == []


def test_the_imports_of_helpers_are_checked_here():
    """(The two tests above look at something: the files import helpers, by both forms.)"""
    imported = {m for path in _python_files() for m, _, _ in _imports(_tree(path))}
    assert "helpers.paths" in imported and "helpers" in imported


@pytest.mark.parametrize(
    "path", sorted(glob.glob(os.path.join(TESTS, "**", "conftest.py"), recursive=True)), ids=_relative
)
def test_a_conftest_holds_only_pytests_hooks_and_fixtures(path):
    """Its functions are hooks (pytest_*) or fixtures; no class, nothing else to import."""

    def is_fixture(node) -> bool:
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(target, ast.Attribute) and target.attr == "fixture":
                return True
        return False

    others = [
        node.name
        for node in _tree(path).body
        if isinstance(node, ast.ClassDef)
        or (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not node.name.startswith("pytest_")
            and not is_fixture(node)
        )
    ]
    assert others == [], f"{_relative(path)}: move them to tests/helpers/"


def test_the_helpers_package_lists_each_of_its_modules():
    tree = _tree(os.path.join(HELPERS, "__init__.py"))
    listed = {line.split()[0] for line in (ast.get_docstring(tree) or "").splitlines() if line.strip()}
    modules = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HELPERS, "*.py"))} - {"__init__"}
    assert modules <= listed, sorted(modules - listed)
