"""CONTRIBUTING.md's module map ("### Modules") names every module of the grader by its path,
and names no module that is not there: a newcomer reads the map, so it cannot drift."""

from __future__ import annotations

import os
import re
from pathlib import Path

import grader

ROOT = Path(grader.__file__).parent.parent
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
PATH = re.compile(r"\bgrader/[\w/]+\.py\b")


def module_map(text: str) -> str:
    """The text of the "### Modules" section."""
    start = text.index("### Modules")
    end = text.find("\n## ", start)
    return text[start : end if end != -1 else len(text)]


def modules() -> set[str]:
    """Every module of the grader, as a path from the repository's root; a package's
    ``__init__.py`` counts (it is the package's face), a migration's revision does not (its
    history is the folder's, named once)."""
    found = set()
    for path in (ROOT / "grader").rglob("*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if "/migrations/versions/" in relative or relative == "grader/__main__.py":
            continue
        found.add(relative)
    return found


def named_in(text: str) -> set[str]:
    return set(PATH.findall(module_map(text)))


def test_every_module_is_in_the_map_and_every_path_there_exists():
    text = CONTRIBUTING.read_text(encoding="utf-8")
    named, present = named_in(text), modules()
    assert sorted(present - named) == [], "modules missing from CONTRIBUTING.md's map"
    assert sorted(named - present) == [], "the map names modules that do not exist"


def test_control_a_module_left_out_is_seen():
    text = (
        "### Modules\n\n    grader/task/spec.py  the task records\n\n## Extending it\n    grader/cli/x.py\n"
    )
    assert named_in(text) == {"grader/task/spec.py"}
    assert os.path.exists(ROOT / "grader/task/spec.py")


# Unit tests named for a rule across modules, not for one module.
RULE_TESTS = {
    "test_doc_links",  # the documents' links
    "test_framework_rules",  # the frameworks' rules, from task/ to the integrations
    "test_hint_text",  # a check's hint in every renderer
    "test_inside_imports",  # what sandbox/inside/ may import
    "test_layers",  # the parts, their faces, no loop
    "test_module_map",  # this file
    "test_project_metadata",  # pyproject.toml
    "test_report_formats",  # every renderer from one Result
    "test_reports",  # the renderers' shared rules
    "test_script_recording",  # inside/computed.py and rewriting.py, run by path
    "test_startup_imports",  # what a command imports
    "test_test_layout",  # tests/ itself
}


def test_a_unit_test_file_is_named_for_the_module_it_tests():
    """tests/unit/test_<module>.py tests grader's <module> (test_<package>_<module> where
    two modules share a name), so that a newcomer finds a module's tests by its name."""
    names = {Path(m).stem for m in modules()} | {Path(m).parent.name for m in modules()}
    names |= {f"{Path(m).parent.name}_{Path(m).stem}" for m in modules()}
    unit = {p.stem for p in (ROOT / "tests" / "unit").glob("test_*.py")}
    strays = sorted(u for u in unit - RULE_TESTS if u.removeprefix("test_") not in names)
    assert strays == [], "name them for their module, or list them in RULE_TESTS with their rule"
    assert RULE_TESTS <= unit, sorted(RULE_TESTS - unit)
