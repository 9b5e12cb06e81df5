"""A notebook cell's IPython syntax (magics, shell escapes, help lines) replaced line for line
with Python that keeps its blocks valid, and a note of each for the report (notebook.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader.student_text import line as _one_line
from grader.submission.source_map import location_text


def _shown(text: object, max_bytes: int = 120) -> str:
    return _one_line(text, max_bytes)


# The cell magics whose body IPython runs as Python code in the kernel, and what the report
# says of running just the body; every other cell magic (%%bash, %%writefile, %%html, %%script,
# unknown ones) decides what its body means, and the cell is left out whole.
_BODY_RUNS = {
    "%%time": "its code is kept and run, not timed",
    "%%timeit": "its code is kept and run once, not timed many times",
    "%%capture": "its code is kept and run; what it prints is shown, not captured",
}
# In Jupyter, these cells show no value: %%timeit prints timings, %%capture keeps the output.
HIDES_VALUE = ("%%timeit", "%%capture")
# %%timeit's options (those that take a value first); what follows them is setup code
_TIMEIT_OPTIONS = re.compile(r"\s*(?:-[nrp]\s*\S+|-[tcqo]\b)")


def _timeit_setup(magic_line: str) -> str:
    """``%%timeit -n 10 x = f()``: its setup statement, run once before the body as IPython
    runs it (an empty line when there is none)."""
    rest = magic_line[len("%%timeit") :]
    while True:
        match = _TIMEIT_OPTIONS.match(rest)
        if not match:
            return rest.strip()
        rest = rest[match.end() :]


_SHELL_OR_MAGIC_ASSIGNED = re.compile(r"[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[!%]")


def python_lines(source: str, cell: int) -> tuple[list[str], list[str]]:
    """The cell's lines with IPython syntax replaced (``pass`` keeps a block valid), one
    for one, and a note for each; no lines at all for a cell magic's cell."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # as Python reads a file
    if lines[-1] == "":
        lines.pop()
    first = next((number for number, text in enumerate(lines) if text.strip()), None)
    kept: list[str] = []
    notes: list[str] = []
    if first is not None and lines[first].strip().startswith("%%"):
        magic_line = lines[first].strip()
        magic = magic_line.split()[0]
        if magic not in _BODY_RUNS:
            return [], [f"cell {cell}, the whole cell (it opens with the cell magic {_shown(magic, 40)})"]
        # IPython runs the body as Python: keep it, and only the magic line goes.
        notes.append(f"{location_text(cell, first + 1)}: {_shown(magic_line, 80)} ({_BODY_RUNS[magic]})")
        lines[first] = _timeit_setup(magic_line) if magic == "%%timeit" else ""
    state = _Scan()
    in_magic = False  # a magic line that ends in a backslash goes on on the next line
    for number, text in enumerate(lines, start=1):
        if in_magic:
            kept.append("")
            in_magic = text.endswith("\\")
            continue
        if state.at_statement_start():
            stripped = text.lstrip()
            after = state.after(text)
            if (
                stripped[:1] in ("%", "!", "?")
                or _SHELL_OR_MAGIC_ASSIGNED.match(stripped)
                or (after.at_statement_start() and text[: after.comment].rstrip().endswith("?"))
            ):
                kept.append(text[: len(text) - len(stripped)] + "pass")
                notes.append(f"{location_text(cell, number)}: {_shown(stripped, 80)}")
                in_magic = text.endswith("\\")
                continue
            state = after
        else:
            state = state.after(text)
        kept.append(text)
    return kept, notes


@dataclass(frozen=True)
class _Scan:
    """Where Python is at the end of a line: how many brackets are open, which string (by
    its quote) is, whether a backslash continues the line; ``comment`` is where the last
    line's comment started (its length when it had none)."""

    depth: int = 0
    quote: str = ""
    continued: bool = False
    comment: int = 0

    def at_statement_start(self) -> bool:
        return self.depth == 0 and not self.quote and not self.continued

    def after(self, text: str) -> _Scan:
        depth, quote, continued = self.depth, self.quote, False
        i, n, comment = 0, len(text), len(text)
        while i < n:
            char = text[i]
            if quote:
                if char == "\\":
                    continued = i == n - 1
                    i += 2
                elif text.startswith(quote, i):
                    i += len(quote)
                    quote = ""
                else:
                    i += 1
                continue
            if char == "#":
                comment = i
                break
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(0, depth - 1)
            elif char in "'\"":
                quote = char * 3 if text.startswith(char * 3, i) else char
                i += len(quote)
                continue
            elif char == "\\" and i == n - 1:
                continued = True
            i += 1
        if len(quote) == 1 and not continued:
            quote = ""  # a one-quote string ends with its line (else Python says so)
        return _Scan(depth, quote, continued and not (quote and len(quote) == 3), comment)
