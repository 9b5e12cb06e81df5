"""What a call in the worker raised, or why it has no answer: the error of a CallOutcome.

Built on the trusted side only, from fields checked there (sandbox/replies.py) or from the
sandbox's own words (a timeout, a crash, the budget); its strings are made visible
(student_text.visible) and its lines located in a notebook (source_map.located) later.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorFrame:
    """One of the submission's own frames of a traceback (the worker keeps only those)."""

    line: int | None
    function: str = ""
    code: str = ""
    cell: int | None = None  # in a notebook, the cell of ``line`` (source_map.located)


@dataclass(frozen=True)
class WorkerError:
    """``message`` always; ``type`` and the rest where an exception was raised (``type`` is
    None for the sandbox's own: a timeout, a crash, a malformed answer, the budget)."""

    message: str
    type: str | None = None
    missing_module: str | None = None  # an ImportError's module: a package the machine lacks
    line: int | None = None  # a SyntaxError's line
    cell: int | None = None  # in a notebook, the cell of ``line``
    frames: tuple[ErrorFrame, ...] = ()
