"""The zip's pins, made to install on the Python Gradescope builds its image with.

self_package.py pins what is installed here; Gradescope installs them with its own Python
(3.10 on its Ubuntu 22.04 base image), where a pin may have no release at all (numpy 2.3
and later need 3.11). So ``grader gradescope --python X.Y`` asks pip, against the package
index (PyPI unless told), whether the pins install there: ``pip install --dry-run --report``
for that Python, as wheels (``--only-binary=:all:``: the image has no compilers to count on)
for Linux x86_64 up to the image's C library, with the grader's own wheel among the
requirements, so its Requires-Python and its declared ranges are judged too. A pin with no
release there is let go: pip takes the newest version the grader's and the other pins'
ranges allow, and says so; when there is none, or the index cannot be reached, the build is
refused with the package and the Python named, before anything is written. pip's own
configuration here (extra indexes, local wheels, constraints) is left out: what counts is
what Gradescope's image finds on the index.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_PYTHON = "3.10"  # Gradescope's base image: Ubuntu 22.04
DEFAULT_INDEX = "https://pypi.org/simple"
# Ubuntu 22.04's C library: wheels for manylinux_2_17 (2014) up to 2_35 install there.
GLIBC_MINORS = range(17, 36)
# pip's own settings of how to reach the index, kept; every other PIP_* is this machine's
_KEPT_ENV = {"PIP_CERT", "PIP_CLIENT_CERT", "PIP_PROXY", "PIP_DEFAULT_TIMEOUT", "PIP_RETRIES"}
_UNREACHABLE = (
    "NewConnectionError",
    "Max retries exceeded",
    "ConnectTimeout",
    "ReadTimeout",
    "ProxyError",
    "SSLError",
    "Could not fetch URL",
    "Temporary failure in name resolution",
    "Network is unreachable",
)
_NAME = r"([A-Za-z0-9][A-Za-z0-9._-]*)"
_NO_MATCH = re.compile(rf"No matching distribution found for {_NAME}")
_REQUESTED = re.compile(rf"The user requested {_NAME}")
_DEPENDS = re.compile(rf"^\s*{_NAME} \S+ depends on", re.M)
_WRONG_PYTHON = re.compile(r"Package '([^']+)' requires a different Python: \S+ not in '([^']+)'")
_PIN = re.compile(rf"\s*{_NAME}\s*==\s*([^\s;]+)\s*(?:;(.*))?$")


class PinsRefused(Exception):
    """The pins cannot be made to install on that Python (or it cannot be told): the
    message names the package, the Python and what to do."""


@dataclass(frozen=True)
class TargetPins:
    lines: list[str]  # name==version[ ; marker], for the target Python
    changed: list[str]  # what differs from here, said to the instructor


def key(name: str) -> str:
    """A distribution's name as pip compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def python_version(text: str) -> str:
    """``3.10``, ``3.12``...: the form pip's --python-version takes; ValueError otherwise."""
    if not re.fullmatch(r"3\.\d{1,2}", text):
        raise ValueError(f"--python {text}: give the Python's major.minor version, e.g. {DEFAULT_PYTHON}")
    return text


def pip_command(requirements: str, report: str, target: str, python: str, index: str) -> list[str]:
    platforms = [f"manylinux_2_{minor}_x86_64" for minor in GLIBC_MINORS]
    platforms += ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--ignore-installed",
        "--quiet",
        "--no-input",
        "--disable-pip-version-check",
        "--report",
        report,
        "--target",
        target,  # (pip wants it with --python-version; nothing is written there)
        "--python-version",
        python,
        "--implementation",
        "cp",
        "--only-binary=:all:",
        *(arg for platform in platforms for arg in ("--platform", platform)),
        "--index-url",
        index,
        "--retries",
        "2",
        "--timeout",
        "30",
        "-r",
        requirements,
    ]


def pip_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k in _KEPT_ENV}
    env["PIP_CONFIG_FILE"] = os.devnull  # no pip.conf: no extra index, local wheels, constraints
    return env


def to_let_go(stderr: str, pinned: set[str]) -> set[str]:
    """The pinned distributions pip's failure names: one with no release for the target,
    or those a conflict names (a pin let go may need other versions of its dependencies)."""
    found = {key(m) for m in _NO_MATCH.findall(stderr)}
    if "conflict is caused by" in stderr:
        found |= {key(m) for m in _REQUESTED.findall(stderr)} | {key(m) for m in _DEPENDS.findall(stderr)}
    return found & pinned


def _tail(text: str, lines: int = 4) -> str:
    """pip's last words, on one line (the command line prints one line per problem)."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()]
    kept = [line for line in kept if not line.startswith("ERROR: Ignored the following")]
    return "pip said: " + " | ".join(line[:300] for line in kept[-lines:])


Runner = Callable[..., subprocess.CompletedProcess]


def resolve(
    pins: list[str],
    wheel: bytes,
    wheel_name: str,
    extras: tuple[str, ...],
    python: str,
    index: str = DEFAULT_INDEX,
    extra_index: str | None = None,
    run: Runner = subprocess.run,
) -> TargetPins:
    """``pins`` (self_package.pinned_requirements) as they install on ``python``: unchanged
    where they do, else let go one by one to what pip finds. Raises PinsRefused."""
    parsed = {}
    for line in pins:
        match = _PIN.match(line)
        if match:
            parsed[key(match.group(1))] = (match.group(1), match.group(2), (match.group(3) or "").strip())
    let_go: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="grader-pins-") as work:
        wheel_path = os.path.join(work, wheel_name)
        with open(wheel_path, "wb") as f:
            f.write(wheel)
        grader = wheel_path + (f"[{','.join(extras)}]" if extras else "")
        for _ in range(len(parsed) + 2):
            requirements = os.path.join(work, "requirements.txt")
            with open(requirements, "w", encoding="utf-8") as f:
                if extra_index:
                    f.write(f"--extra-index-url {extra_index}\n")
                for name_key, (name, version, marker) in parsed.items():
                    pin = name if name_key in let_go else f"{name}=={version}"
                    f.write(pin + (f" ; {marker}" if marker else "") + "\n")
                f.write(grader + "\n")
            report = os.path.join(work, "report.json")
            command = pip_command(requirements, report, os.path.join(work, "target"), python, index)
            try:
                done = run(command, capture_output=True, text=True, env=pip_env(), timeout=600)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise PinsRefused(
                    f"pip could not be run to check the pins for Python {python}: {exc}"
                ) from None
            if done.returncode == 0:
                with open(report, encoding="utf-8") as f:
                    return _pinned(json.load(f), parsed, python, wheel_name)
            _refuse_unless_let_go(done, parsed, let_go, python, index)
    raise PinsRefused(f"pip found no set of versions for Python {python}. {_tail(done.stderr)}")


def _refuse_unless_let_go(
    done: subprocess.CompletedProcess, parsed: dict, let_go: set[str], python: str, index: str
) -> None:
    """Adds to ``let_go`` what pip's failure names, or raises PinsRefused saying why not."""
    stderr = done.stderr or ""
    wrong = _WRONG_PYTHON.search(stderr)
    if wrong:
        raise PinsRefused(
            f"{wrong.group(1)} needs Python {wrong.group(2)}, so it cannot run on Python {python}"
        )
    if "No module named pip" in stderr:
        raise PinsRefused(
            f"pip is not installed for {sys.executable}; it checks the pins (or give --offline)"
        )
    unreachable = [line.strip() for line in stderr.splitlines() if any(s in line for s in _UNREACHABLE)]
    if unreachable:
        raise PinsRefused(
            f"the package index {index} could not be reached to check that the pins install on "
            f"Python {python}. Connect and build again, give --index-url of a mirror, or --offline "
            f"to pin what is installed here unchecked. {_tail(unreachable[0], 1)}"
        )
    new = to_let_go(stderr, set(parsed)) - let_go
    if new:
        let_go.update(new)
        return
    missing = [key(m) for m in _NO_MATCH.findall(stderr)]
    if missing:
        name = missing[0]
        what = parsed[name][0] if name in parsed else name
        raise PinsRefused(
            f"no release of {what} that the grader can use has a wheel for Python {python} "
            "on Linux x86_64: build with --python set to the Python of the Gradescope image you "
            f"use, or install a grader whose requirements allow one. {_tail(stderr, 2)}"
        )
    raise PinsRefused(f"the pins do not install on Python {python}. {_tail(stderr)}")


def _pinned(report: dict, parsed: dict, python: str, wheel_name: str) -> TargetPins:
    """Exact pins of what pip chose: each pin's own line (its marker kept), at the version
    chosen; and what a version let go brought that was not pinned."""
    grader = key(wheel_name.split("-")[0])
    chosen = {
        key(item["metadata"]["name"]): (item["metadata"]["name"], item["metadata"]["version"])
        for item in report.get("install", [])
    }
    lines, changed = [], []
    for name_key, (name, version, marker) in parsed.items():
        now = chosen.get(name_key, (name, version))[1]
        if now != version:
            changed.append(
                f"{name} {version} (installed here) does not install on Python {python} with the "
                f"other pins: the zip pins {now}, the newest that does"
            )
        lines.append(f"{name}=={now}" + (f" ; {marker}" if marker else ""))
    for name_key, (name, version) in sorted(chosen.items()):
        if name_key not in parsed and name_key != grader:
            lines.append(f"{name}=={version}")
            changed.append(f"{name} {version} is pinned too: a version chosen for Python {python} needs it")
    return TargetPins(sorted(lines, key=lambda line: key(line.split("=")[0])), changed)
