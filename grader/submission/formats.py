"""The hand-in formats: the one place that knows what a student may hand in.

A format is a plain record (``Format``): its suffixes, and the functions of its own module
that turn the bytes read from a hand-in (file.py: read once, capped, never a link) into the
Python source the worker runs, with its source map. Every caller asks here: reading a
submission and choosing one in a folder (file.py), a class folder (classroom/discovery.py),
a student's repository (classroom/collecting/solutions_tree.py), a course repository
(integrations/course_ci.py), the command line's help, the messages that list what may be
handed in. A new format is its module and one line in ``FORMATS`` (CONTRIBUTING.md, "To add
a submission format").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from grader.submission import notebook, python_file
from grader.submission.python_file import PythonSource


@dataclass(frozen=True)
class Format:
    """One hand-in format, as its module provides it."""

    name: str  # as people call it: "Python file", "Jupyter notebook"
    suffixes: tuple[str, ...]  # lower case, compared with a name lower-cased; the first names a copy
    # (bytes, the file's name as shown, the task's display libraries) -> the code the worker
    # runs and the import scan reads, its source map and notes; or why it is refused
    source: Callable[[bytes, str, tuple[str, ...]], PythonSource]
    # bytes -> the text where a comment about the whole file is (a sample's declared verdict)
    # and the cell it is in (None: the file's first lines); ValueError saying why it is unreadable
    head: Callable[[bytes], tuple[int | None, str]]
    held_as: str  # what a file holds, said when it is handed in under another format's name
    # whether bytes handed in under another format's name are this format's (None: any bytes
    # may be, as any bytes may be Python source: such a format is the one checked)
    holds: Callable[[bytes], bool] | None = None
    # a cheap look at whether bytes may be this format's, whatever the name (before ``warm``)
    may_hold: Callable[[bytes], bool] | None = None
    # prepares the reader once in the parent, so each bounded child starts with it
    warm: Callable[[], None] | None = None
    too_large_hint: str = ""  # appended to the message refusing an oversized file
    file_lines: bool = True  # a line of the source is that line of the file (GitHub annotations)
    # entries that are not this format's hand-in but look like one: (suffix, why skipped)
    lookalikes: tuple[tuple[str, str], ...] = ()


PYTHON = Format(
    name="Python file",
    suffixes=python_file.SUFFIXES,
    source=python_file.python_file_source,
    head=python_file.python_head,
    held_as=python_file.HELD_AS,
    lookalikes=python_file.LOOKALIKES,
)
NOTEBOOK = Format(
    name="Jupyter notebook",
    suffixes=notebook.SUFFIXES,
    source=notebook.notebook_source,
    head=notebook.notebook_head,
    held_as=notebook.HELD_AS,
    holds=notebook.holds_notebook,
    may_hold=notebook.may_hold_notebook,
    warm=notebook.warm_reader,
    too_large_hint=notebook.TOO_LARGE_HINT,
    file_lines=False,
)

# Every format a hand-in may be, in the order messages name them. One line per format.
FORMATS: tuple[Format, ...] = (PYTHON, NOTEBOOK)
DEFAULT = PYTHON  # what a name of no format's suffix is read as (standard input, a bare name)


def format_for(name: str) -> Format | None:
    """The format a file name's suffix (in any case) says, or None."""
    lower = name.lower()
    for form in FORMATS:
        if lower.endswith(form.suffixes):
            return form
    return None


def format_of(name: str) -> Format:
    """The format a file of this name is read as: its suffix's, else ``DEFAULT``."""
    return format_for(name) or DEFAULT


def accepted_suffixes() -> tuple[str, ...]:
    """Every suffix a hand-in may have (lower case; a name is compared lower-cased)."""
    return tuple(s for form in FORMATS for s in form.suffixes)


def written_suffixes() -> tuple[str, ...]:
    """Each format's first suffix: the one a copy of a hand-in is written with."""
    return tuple(form.suffixes[0] for form in FORMATS)


def either(words: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return " or ".join(words) if len(words) < 3 else f"{', '.join(words[:-1])} or {words[-1]}"


def accepted_text() -> str:
    """The suffixes as messages list them: ``.py or .ipynb``."""
    return either(accepted_suffixes())


def named_each_way(stem: str, more: Sequence[str] = ()) -> str:
    """``stem.py (or stem.ipynb)``: the name with the first format's suffix, then the others
    (and ``more`` ways, after them) in brackets."""
    first, *others = (stem + suffix for suffix in written_suffixes())
    others += more
    return f"{first} (or {', or '.join(others)})" if others else first


def lookalike_reason(name: str) -> str | None:
    """Why a file that looks like a hand-in is none (``x.pyc``: compiled Python), or None."""
    lower = name.lower()
    for form in FORMATS:
        for suffix, reason in form.lookalikes:
            if lower.endswith(suffix):
                return reason
    return None


def source_of(name: str, data: bytes, shown: str, display: tuple[str, ...] = ()) -> PythonSource:
    """The code of a hand-in named ``name`` (shown as ``shown``), read by the format its name
    says. A format that cannot tell its own bytes (Python: any bytes may be source) refuses
    the bytes another format recognizes, saying which to hand in."""
    form = format_of(name)
    if form.holds is None:
        for other in FORMATS:
            if other is not form and other.holds is not None and other.holds(data):
                return PythonSource(
                    None,
                    f"{shown} holds {other.held_as}, not {form.held_as}: "
                    f"hand it in as a {other.suffixes[0]} file",
                )
    return form.source(data, shown, display)


def warm_readers(name: str, data: bytes) -> None:
    """Prepare, in this process, the reader of every format the hand-in may be read as."""
    form = format_of(name)
    for other in FORMATS:
        if other.warm is not None and (
            other is form or (other.may_hold is not None and other.may_hold(data))
        ):
            other.warm()
