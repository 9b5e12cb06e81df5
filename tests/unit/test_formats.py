"""The submission format registry (grader/submission/formats.py) is the one place that knows
what a student may hand in: every caller accepts exactly its suffixes, a format added to it
is accepted everywhere (reading, a class folder, a repository's solutions/, course CI, the
command line's help, the messages), and no module outside a format's own names a suffix."""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import pytest

import grader
from grader.classroom import discovery
from grader.classroom.collecting import solutions_tree
from grader.cli.parser import build_parser
from grader.integrations import course_ci
from grader.submission import file, formats
from grader.submission.python_file import PythonSource

ROOT = Path(grader.__file__).parent
# A format's own module names its suffixes; the worker's modules (sandbox/inside) name its own
# Python files, never a hand-in.
FORMAT_MODULES = {ROOT / "submission" / "python_file.py", ROOT / "submission" / "notebook.py"}


def _zip_source(data: bytes, shown: str, display: tuple[str, ...]) -> PythonSource:
    return PythonSource("x = 1\n", code=b"x = 1\n")


ZIP = formats.Format(
    name="zip archive",
    suffixes=(".zip",),
    source=_zip_source,
    head=lambda data: (None, ""),
    held_as="a zip archive",
)


@pytest.fixture
def with_zip(monkeypatch):
    monkeypatch.setattr(formats, "FORMATS", (*formats.FORMATS, ZIP))


def _class_folder(tmp_path: Path, names: list[str]) -> Path:
    folder = tmp_path / "class"
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"x = 1\n")
    return folder


def test_the_registry_holds_python_and_notebooks():
    assert [f.name for f in formats.FORMATS] == ["Python file", "Jupyter notebook"]
    assert formats.accepted_suffixes() == (".py", ".ipynb")
    assert formats.format_for("A.IPYNB") is formats.NOTEBOOK
    assert formats.format_for("a.Py") is formats.PYTHON
    assert formats.format_for("a.txt") is None and formats.format_of("<stdin>") is formats.DEFAULT
    assert formats.either([".a"]) == ".a" and formats.either([".a", ".b", ".c"]) == ".a, .b or .c"


def test_discovery_and_hand_ins_accept_exactly_the_registrys_suffixes(tmp_path):
    accepted = formats.accepted_suffixes()
    names = [f"s{i}{s}" for i, s in enumerate(accepted)] + [
        f"u{i}{s.upper()}" for i, s in enumerate(accepted)
    ]
    found = discovery.discover(str(_class_folder(tmp_path, [*names, "other.txt"])))
    assert sorted(s.student for s in found.submissions) == sorted(n.rsplit(".", 1)[0] for n in names)
    assert [(s.name, s.reason) for s in found.skipped] == [
        ("other.txt", f"not a {formats.accepted_text()} file")
    ]
    listing = [f"t{s}" for s in accepted] + ["t.txt", "u.py"]
    assert file.hand_ins_for("t", listing) == sorted(f"t{s}" for s in accepted)


def test_a_format_added_to_the_registry_is_accepted_everywhere(with_zip, tmp_path):
    assert formats.accepted_suffixes() == (".py", ".ipynb", ".zip")
    # reading: its suffix, its reader
    assert file.source_stem("bob.ZIP") == "bob"
    assert file.submission_source(file.SubmissionFile("bob.zip", b"PK\x03\x04")).text == "x = 1\n"
    with pytest.raises(file.SubmissionError, match=r"3 \.py, \.ipynb or \.zip files .*solution\.py "):
        file.choose_in_folder("d/", ["a.py", "b.ipynb", "c.zip"])
    # a class folder
    found = discovery.discover(str(_class_folder(tmp_path, ["ann.py", "bob.zip", "cy.txt"])))
    assert [s.student for s in found.submissions] == ["ann", "bob"]
    assert found.skipped[0].reason == "not a .py, .ipynb or .zip file"
    # a repository's solutions/ and a course repository
    assert file.hand_ins_for("t", ["t.zip", "t.txt"]) == ["t.zip"]
    assert (
        "solutions/t.py (or t.ipynb, or t.zip, or a folder solutions/t/ holding one)"
        in solutions_tree._missing("t", [])
    )
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "t.zip").write_bytes(b"PK")
    assert course_ci.solution_for(str(tmp_path), types.SimpleNamespace(id="t")) == str(
        tmp_path / "solutions" / "t.zip"
    )
    # the command line's help
    assert _help_mentions(".zip")


def _help_mentions(text: str) -> bool:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.choices and "check" in a.choices)
    return all(text in commands.choices[c].format_help() for c in ("check", "batch", "collect"))


def _constants(tree: ast.AST) -> list[tuple[int, str]]:
    """The string constants of a module but its docstrings (prose may name a suffix)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_module_but_a_formats_own_names_a_hand_in_suffix():
    # ".py" alone, or after a name in an f-string ("{task.id}.py"), never "worker.py"
    suffix = re.compile("|".join(rf"(?<![\w.]){re.escape(s)}\b" for s in formats.accepted_suffixes()))
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in sorted(ROOT.rglob("*.py"))
        if path not in FORMAT_MODULES and path.relative_to(ROOT).parts[:2] != ("sandbox", "inside")
        for line, text in _constants(ast.parse(path.read_text(encoding="utf-8")))
        if suffix.search(text)
    ]
    assert found == [], "ask grader.submission.formats instead:\n" + "\n".join(found)


def test_control_a_hard_coded_suffix_is_found():
    tree = ast.parse('"""Reads a .py file."""\nSUFFIXES = (".py", ".ipynb")\nx = f"{t}.py (or {t}.ipynb)"\n')
    suffix = re.compile("|".join(rf"(?<![\w.]){re.escape(s)}\b" for s in formats.accepted_suffixes()))
    assert [line for line, text in _constants(tree) if suffix.search(text)] == [2, 2, 3, 3]
