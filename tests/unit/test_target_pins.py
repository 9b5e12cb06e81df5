"""target_pins.py, in process, with pip played by a stand-in (no network, no subprocess): a
pin with no release for the target Python is let go to what pip chooses, and the build is
refused, naming the package and the Python, when pip finds nothing or cannot reach the index.
(pip itself, against PyPI: tests/integration/test_gradescope.py.)"""

import json
import subprocess

import pytest

from grader.integrations.target_pins import PinsRefused, pip_command, pip_env, python_version, resolve

PINS = ["hypothesis==6.170.17", "numpy==2.4.6", 'pyseccomp==0.1.2 ; sys_platform == "linux"']
WHEEL = "numgrader-0.1.0-py3-none-any.whl"


class Pip:
    """pip install --dry-run as the stand-in for it: ``answers`` in turn, each (exit code,
    stderr, what it would install); the requirements it was given, each time."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.seen = []

    def __call__(self, command, **_kwargs):
        requirements = command[command.index("-r") + 1]
        self.seen.append(open(requirements).read().splitlines())
        code, stderr, install = self.answers.pop(0)
        if code == 0:
            report = {"install": [{"metadata": {"name": n, "version": v}} for n, v in install]}
            with open(command[command.index("--report") + 1], "w") as f:
                json.dump(report, f)
        return subprocess.CompletedProcess(command, code, "", stderr)


INSTALLS = [("hypothesis", "6.170.17"), ("numpy", "2.4.6"), ("pyseccomp", "0.1.2"), ("numgrader", "0.1.0")]


def test_pins_that_install_are_kept_as_they_are():
    pip = Pip((0, "", INSTALLS))
    chosen = resolve(PINS, b"wheel", WHEEL, (), "3.11", run=pip)
    assert chosen.lines == PINS and chosen.changed == []
    assert pip.seen[0][:3] == PINS and pip.seen[0][-1].endswith(WHEEL)  # the grader's wheel too


def test_a_pin_with_no_release_for_that_python_is_let_go_to_the_newest_that_installs():
    pip = Pip(
        (1, "ERROR: No matching distribution found for numpy==2.4.6\n", []),
        (1, "ERROR: No matching distribution found for hypothesis==6.170.17\n", []),
        (
            0,
            "",
            [
                ("hypothesis", "6.168.5"),
                ("numpy", "2.2.6"),
                ("pyseccomp", "0.1.2"),
                ("exceptiongroup", "1.3.0"),
            ],
        ),
    )
    chosen = resolve(PINS, b"wheel", WHEEL, ("torch",), "3.10", run=pip)
    assert chosen.lines == [
        "exceptiongroup==1.3.0",
        "hypothesis==6.168.5",
        "numpy==2.2.6",
        'pyseccomp==0.1.2 ; sys_platform == "linux"',
    ]
    assert pip.seen[1][1] == "numpy" and pip.seen[2][:2] == ["hypothesis", "numpy"]  # let go, one by one
    assert pip.seen[0][-1].endswith(f"{WHEEL}[torch]")
    said = "\n".join(chosen.changed)
    assert "numpy 2.4.6 (installed here) does not install on Python 3.10" in said and "pins 2.2.6" in said
    assert "exceptiongroup 1.3.0 is pinned too" in said


def test_a_conflict_lets_go_of_the_pins_it_names():
    conflict = (
        "ERROR: Cannot install numpy==2.2.6 and hypothesis==6.168.5 because these package versions "
        "have conflicting dependencies.\nThe conflict is caused by:\n    The user requested numpy==2.4.6\n"
        "    hypothesis 6.170.17 depends on numpy>=2.3\n"
    )
    pip = Pip((1, conflict, []), (0, "", INSTALLS))
    resolve(PINS, b"wheel", WHEEL, (), "3.10", run=pip)
    assert pip.seen[1][:2] == ["hypothesis", "numpy"]


def test_no_release_at_all_refuses_naming_the_package_and_the_python():
    pip = Pip(
        (1, "ERROR: No matching distribution found for numpy==2.4.6\n", []),
        (
            1,
            "ERROR: Could not find a version that satisfies the requirement numpy (from versions: none)\n"
            "ERROR: No matching distribution found for numpy\n",
            [],
        ),
    )
    with pytest.raises(PinsRefused, match=r"no release of numpy .* wheel for Python 3\.9"):
        resolve(PINS, b"wheel", WHEEL, (), "3.9", run=pip)


def test_the_graders_own_python_range_refuses():
    pip = Pip((1, "ERROR: Package 'numgrader' requires a different Python: 3.9.0 not in '>=3.10'\n", []))
    with pytest.raises(PinsRefused, match=r"numgrader needs Python >=3\.10, so it cannot run on Python 3\.9"):
        resolve(PINS, b"wheel", WHEEL, (), "3.9", run=pip)


def test_an_index_out_of_reach_refuses_and_says_what_to_do():
    stderr = (
        "WARNING: Retrying (Retry(total=1)) after connection broken by 'NewConnectionError(...)'\n"
        "ERROR: Could not find a version that satisfies the requirement numpy==2.4.6 (from versions: none)\n"
        "ERROR: No matching distribution found for numpy==2.4.6\n"
    )
    with pytest.raises(PinsRefused, match=r"could not be reached[\s\S]*--offline"):
        resolve(PINS, b"wheel", WHEEL, (), "3.10", run=Pip((1, stderr, [])))


def test_pip_is_asked_as_gradescope_s_image_would_ask_it(monkeypatch):
    command = pip_command("r.txt", "report.json", "target", "3.10", "https://pypi.org/simple")
    assert command[command.index("--python-version") + 1] == "3.10"
    assert "--only-binary=:all:" in command and "--dry-run" in command
    platforms = {command[i + 1] for i, arg in enumerate(command) if arg == "--platform"}
    assert {"manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_35_x86_64"} <= platforms
    assert "manylinux_2_36_x86_64" not in platforms  # newer than Ubuntu 22.04's C library
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "file:///opt/pypi/simple")
    monkeypatch.setenv("PIP_CERT", "/etc/ssl/certs/ca.crt")
    env = pip_env()
    assert "PIP_EXTRA_INDEX_URL" not in env and env["PIP_CERT"] == "/etc/ssl/certs/ca.crt"
    assert env["PIP_CONFIG_FILE"] == "/dev/null"


@pytest.mark.parametrize("text", ["3", "3.10.4", "python3.10", "2.7.1", ""])
def test_a_python_is_major_dot_minor(text):
    with pytest.raises(ValueError):
        python_version(text)
    assert python_version("3.12") == "3.12"
