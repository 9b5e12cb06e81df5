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


def location_text(cell: int | None, line: int | None) -> str:
    """``line 7`` in a file, ``cell 4, line 2`` in a notebook."""
    return f"line {line}" if cell is None else f"cell {cell}, line {line}"


@dataclass(frozen=True)
class SourceMap:
    """For each line of the module that ran (1-based), the (cell, line in that cell) it
    came from; empty for a file that ran as written. A line outside the map (the module's
    own header, or a number a submission made up with ``compile``) keeps its number."""

    origins: tuple[tuple[int, int], ...] = ()

    def locate(self, line: int) -> tuple[int | None, int]:
        if 1 <= line <= len(self.origins):
            cell, in_cell = self.origins[line - 1]
            if cell > 0:
                return cell, in_cell
        return None, line

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
                frame = dataclasses.replace(frame, cell=cell, line=line)
            frames.append(frame)
        return dataclasses.replace(error, frames=tuple(frames))
