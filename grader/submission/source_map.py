"""Where a line of the code that ran came from, said the way its author can find it.

A ``.py`` submission runs as written: line 7 is line 7. A notebook runs as one module made
of its code cells (notebook.py), so line 40 of that module is, say, line 2 of cell 4.
Every place that shows a person a line of the submission (tracebacks, SyntaxErrors, the
import scan's findings, a check's ``line``) gets it from here, and ``location_text`` is the
one function that writes a location.

Cells are numbered 1, 2, 3... among *all* the notebook's cells (markdown and raw ones
too), top to bottom, as a student counts them on the screen; never by execution count,
which is the student's (stale, or forged) record of what ran when.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from grader.records.worker_error import WorkerError
from grader.student_text import CODE_BYTES
from grader.student_text import line as one_line


def location_text(cell: int | None, line: int | None) -> str:
    """``line 7`` in a file, ``cell 4, line 2`` in a notebook."""
    return f"line {line}" if cell is None else f"cell {cell}, line {line}"


@dataclass(frozen=True)
class SourceMap:
    """For each line of the module that ran (1-based), the (cell, line in that cell) it
    came from; empty for a file that ran as written. A line outside the map (the module's
    own header, or a number a submission made up with ``compile``) keeps its number."""

    origins: tuple[tuple[int, int], ...] = ()
    # For each line of ``origins``, the line as the student wrote it in that cell (before
    # IPython syntax was left out or a last value wrapped to be shown): what a traceback
    # quotes. Empty: the module's own lines are the student's (a .py file).
    written: tuple[str, ...] = ()

    def locate(self, line: int) -> tuple[int | None, int]:
        if 1 <= line <= len(self.origins):
            cell, in_cell = self.origins[line - 1]
            if cell > 0:
                return cell, in_cell
        return None, line

    def written_line(self, line: int) -> str | None:
        """The student's own text of a module line, when it is a notebook cell's."""
        if 1 <= line <= min(len(self.origins), len(self.written)) and self.origins[line - 1][0] > 0:
            return one_line(self.written[line - 1].strip(), CODE_BYTES)
        return None

    def cells(self) -> tuple[int, ...]:
        """The module line where each code cell's lines begin, in order (the worker runs
        the notebook cell by cell from these): empty for a file that ran as written."""
        starts, last = [], 0
        for number, (cell, _line) in enumerate(self.origins, start=1):
            if cell > 0 and cell != last:
                starts.append(number)
            last = cell
        return tuple(starts)

    def where(self, line: int) -> str:
        return location_text(*self.locate(line))

    def located(self, error: WorkerError) -> WorkerError:
        """A worker's error (see sandbox/replies.py _clean_error) with every line number
        translated, and the cell it is in beside it (``cell``: None in a plain file)."""
        if not self.origins:
            return error
        if type(error.line) is int:
            cell, line = self.locate(error.line)
            error = dataclasses.replace(error, cell=cell, line=line)
        frames = []
        for frame in error.frames:
            if type(frame.line) is int:
                cell, line = self.locate(frame.line)
                written = self.written_line(frame.line)
                frame = dataclasses.replace(
                    frame, cell=cell, line=line, code=frame.code if written is None else written
                )
            frames.append(frame)
        return dataclasses.replace(error, frames=tuple(frames))
