"""The project's metadata: its PyPI name and licence, read from the files (the built sdist
and the installed command are tested in tests/integration/test_packaging.py)."""

import glob
import os
import re

from helpers.paths import ROOT


def _pyproject() -> str:
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        return f.read()


def test_distribution_name_is_not_the_unrelated_grader_on_pypi():
    name = re.search(r'^name = "([^"]+)"', _pyproject(), re.M).group(1)
    assert name == "numgrader"
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    docs = readme  # the install lines of the frameworks and Dask moved into docs/
    for path in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + [
        os.path.join(ROOT, "CONTRIBUTING.md")
    ]:
        with open(path, encoding="utf-8") as f:
            docs += "\n" + f.read()
    installs = re.findall(r"pip install[^`\n]*", docs)
    assert installs, "the README shows how to install"
    for line in installs:  # every install line names the real distribution, this tree, or its wheel
        target = re.sub(r"\s-[-\w]+", " ", line[len("pip install") :]).split()[0].strip("'")
        assert target.startswith((".", name)) or os.path.basename(target).startswith(f"{name}-"), line
    assert f"pip install '{name}[dask]'" in docs and "pip install '.[dask]'" in docs


def test_mit_licence_file_and_metadata():
    with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("MIT License") and "Copyright (c) 2026 the grader authors" in text
    assert 'license = "MIT"' in _pyproject() and 'license-files = ["LICENSE"]' in _pyproject()
