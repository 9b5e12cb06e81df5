"""The grader as a package: its PyPI name, licence, complete sdist, --version."""

import tarfile

import pytest
from helpers.built import build_sdist
from helpers.cli import run_cli

import grader


def test_version_prints_and_exits_0():
    done = run_cli("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"grader {grader.__version__}"


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    return build_sdist(str(tmp_path_factory.mktemp("sdist")))


@pytest.mark.slow  # builds the sdist
def test_sdist_is_complete(sdist):
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
        pkg_info = archive.extractfile(f"{archive.getnames()[0].split('/')[0]}/PKG-INFO").read().decode()
    for shipped in (
        "LICENSE",
        "README.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
        "docs/students.md",
        "docs/operators.md",
        "pyproject.toml",
        "grader/cli/__init__.py",
        "grader/schema/task.schema.json",
        "tests/conftest.py",
        "tests/integration/test_packaging.py",
        "tests/helpers/built.py",
        "tests/unit/test_spec.py",
        "tests/security/test_adversarial.py",
        "tasks/positional-encoding/task.yaml",
        "tasks/positional-encoding/reference.py",
        "submissions/positional-encoding/mistake_ignores_base.py",
        "examples/course/.github/workflows/grade.yml",
    ):
        assert shipped in names, shipped
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert "Name: numgrader" in pkg_info and "License-Expression: MIT" in pkg_info
    assert f"Version: {grader.__version__}" in pkg_info
