"""The students' install path without PyPI (issue 25): `grader kit TASK... -o DIR` writes,
beside the kits, the grader itself as a wheel, a README with the two commands a student
types, and a .gitattributes that keeps git from converting the kits' line endings."""

import glob
import os
import shlex
import shutil
import subprocess
import zipfile

import pytest
from helpers.built import clean_env, fresh_venv
from helpers.cli import run_cli
from helpers.paths import COURSE, INSTRUCTOR_TASKS, ROOT
from helpers.tasks import WRONG_NORMALIZE

import grader

FULL = os.path.join(INSTRUCTOR_TASKS, "normalize-rows")
CORRECT = os.path.join(COURSE, "solutions", "normalize-rows.py")
SHIM = os.path.join(ROOT, "tests", "without_posix")
WHEEL = f"numgrader-{grader.__version__}-py3-none-any.whl"


def _readme_commands(out):
    text = (out / "README.md").read_text()
    return [
        line.strip() for line in text.splitlines() if line.startswith(("    python -m pip ", "    grader "))
    ]


def test_grader_kit_writes_the_grader_as_a_wheel_and_the_students_readme_beside_the_kits(tmp_path):
    out = tmp_path / "kits"
    out.mkdir()
    (out / "numgrader-0.0.1-py3-none-any.whl").write_bytes(b"an older grader")
    done = run_cli("kit", FULL, "-o", str(out))  # (from the checkout, as an instructor runs it)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(out)) == [".gitattributes", "README.md", "normalize-rows", WHEEL]
    with zipfile.ZipFile(out / WHEEL) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"numgrader-{grader.__version__}.dist-info/METADATA").decode()
    assert f"Version: {grader.__version__}" in metadata  # (not an egg-info's, without METADATA)
    for shipped in ("grader/sandbox/inside/connect_back.py", "grader/sandbox/tiers/unsandboxed.py"):
        assert shipped in names
    assert _readme_commands(out) == [
        f"python -m pip install kits/{WHEEL}",
        "grader check kits/normalize-rows my_solution.py",
    ]
    assert "* -text" in (out / ".gitattributes").read_text()
    # The instructor's own README is theirs: left as it is.
    (out / "README.md").write_text("# Our course\n")
    assert run_cli("kit", FULL, "-o", str(out)).returncode == 0
    assert (out / "README.md").read_text() == "# Our course\n"


@pytest.mark.slow  # a virtualenv
def test_a_kits_wheel_installs_in_a_fresh_venv_and_grades_as_its_readme_says(tmp_path):
    out = tmp_path / "kits"
    assert run_cli("kit", FULL, "-o", str(out)).returncode == 0
    python = fresh_venv(str(tmp_path / "student-venv"))  # (it sees numpy... of this machine)
    shutil.copy(CORRECT, tmp_path / "my_solution.py")
    (tmp_path / "wrong.py").write_text(WRONG_NORMALIZE)
    env = clean_env(PATH=f"{os.path.dirname(python)}{os.pathsep}{os.environ['PATH']}", PIP_NO_INDEX="1")
    install, check = (shlex.split(c) for c in _readme_commands(out))
    for command in (install, check):
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert glob.glob(str(tmp_path / "student-venv" / "lib" / "python*" / "site-packages" / "grader"))
    assert done.stdout.startswith("normalize-rows · my_solution.py") and "Score: 5/5" in done.stdout
    # The same installed grader where no sandbox can start (macOS, Windows): unsandboxed,
    # the same scores.
    for solution, code in (("my_solution.py", 0), ("wrong.py", 1)):
        sandboxed = subprocess.run(
            check[:-1] + [solution], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        home = subprocess.run(
            check[:-1] + [solution],
            cwd=tmp_path,
            env=dict(env, PYTHONPATH=SHIM),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert (sandboxed.returncode, home.returncode) == (code, code), home.stderr[-2000:]
        assert "(isolation: unsandboxed)" in home.stdout.splitlines()[0]
        assert home.stdout.splitlines()[-1] == sandboxed.stdout.splitlines()[-1]  # the score line
