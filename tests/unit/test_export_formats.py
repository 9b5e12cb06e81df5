"""The LMS export formats are one registry (grader/classroom/export_formats.py: EXPORT_FORMATS):
the CLI's choices and help, the batch's hint and the service's links read it, and no other
module spells a format's name."""

import argparse
import ast
from pathlib import Path

import grader
from grader.classroom import grade_files
from grader.classroom.export_formats import DETAILED, EXPORT_FORMATS, LMS_FORMATS
from grader.cli.parser import build_parser


def test_the_cli_offers_the_registry_s_lms_formats_and_describes_each():
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    export = commands.choices["export"]
    option = next(a for a in export._actions if a.dest == "formats")
    assert option.choices == [f.name for f in LMS_FORMATS] == ["canvas", "moodle"]
    assert all(f.pattern in option.help and f.description in option.help for f in LMS_FORMATS)
    assert all(callable(getattr(grade_files, f.writer)) for f in LMS_FORMATS)
    assert DETAILED.writer == "" and DETAILED.pattern == "grades-<task>.csv"


def test_no_module_but_the_registry_names_an_export_format():
    root = Path(grader.__file__).parent
    names = set(EXPORT_FORMATS) - {DETAILED.name}  # ("csv" is a word of many other things)
    spelled = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "export_formats.py" and path.parent.name == "classroom":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                spelled.append(f"{path.relative_to(root)}:{node.lineno}: {node.value!r}")
    assert spelled == []
