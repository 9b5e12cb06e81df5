"""What students install the grader from, beside their kits (`grader kit TASK... -o DIR`):
the grader itself as a wheel (self_package.py: the one being run, repacked), a README with
the two commands a student types, and a .gitattributes that keeps git from converting the
kits' line endings (a kit is checked byte for byte: its freeze records its files' SHA-256,
and Git for Windows converts text files by default).

Nothing is published anywhere: the instructor hands DIR out (a course repository, a zip), and
pip installs the wheel from the file, with its dependencies (numpy, Hypothesis, ...) from PyPI.
"""

from __future__ import annotations

import glob
import os

from grader.integrations.self_package import distribution, wheel_bytes, wheel_name

README = "README.md"
MARK = "<!-- written by grader kit -->"  # a README without it is the instructor's: left alone
GITATTRIBUTES = ".gitattributes"
KEEP_BYTES = (
    "# Written by grader kit: the kits are checked byte for byte (their freeze records the\n"
    "# SHA-256 of their files), so git must never convert their line endings.\n"
    "* -text\n"
)


def write_installer(out_dir: str, task_ids: list[str]) -> list[str]:
    """The wheel, the README and the .gitattributes in ``out_dir``; the paths written. A
    wheel of another version there is replaced; NotInstalled (self_package.py) when the
    grader being run cannot be packed."""
    dist = distribution()
    name = wheel_name(dist)
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(glob.escape(out_dir), "numgrader-*-py3-none-any.whl")):
        if os.path.basename(old) != name:
            os.remove(old)
    written = [os.path.join(out_dir, name)]
    with open(written[0], "wb") as f:
        f.write(wheel_bytes(dist))
    readme = os.path.join(out_dir, README)
    if not os.path.exists(readme) or _ours(readme):
        with open(readme, "w", encoding="utf-8", newline="\n") as f:
            f.write(
                readme_text(
                    os.path.basename(os.path.abspath(out_dir)),
                    name,
                    task_ids,
                    dist.metadata["Requires-Python"],
                )
            )
        written.append(readme)
    attributes = os.path.join(out_dir, GITATTRIBUTES)
    if not os.path.exists(attributes):
        with open(attributes, "w", encoding="utf-8", newline="\n") as f:
            f.write(KEEP_BYTES)
        written.append(attributes)
    return written


def _ours(path: str) -> bool:
    with open(path, encoding="utf-8", errors="replace") as f:
        return MARK in f.read(4096)


def readme_text(folder: str, wheel: str, task_ids: list[str], python: str | None) -> str:
    """The students' README: install the wheel, check a file; what the report then says."""
    example = task_ids[0] if task_ids else "TASK"
    kits = "".join(f"    {folder}/{t}/\n" for t in task_ids)
    version = f"Python {python.lstrip('>=')} or newer" if python and python.startswith(">=") else "Python 3"
    return f"""{MARK}
# Checking your work on your own machine

This folder holds the kits of your exercises (each one's statement, its public checks and
their cases):

{kits}
and the grader that checks them, as a wheel: nothing of it needs publishing or downloading
(pip fetches only its dependencies, numpy and a few others, from PyPI). With {version}
(on Windows, type `py` where `python` is not found), from the folder that holds `{folder}/`:

    python -m pip install {folder}/{wheel}
    grader check {folder}/{example} my_solution.py

`python -m grader check ...` does the same where pip did not put `grader` on your PATH.

On Linux your file is checked in a sandbox. On macOS and Windows, where no sandbox can
start, it is checked unsandboxed, on your own machine, as your own program: the report says
so on its first lines. The score covers the public checks only; your instructor grades your
hand-in in the sandbox, where hidden checks may be added.
"""
