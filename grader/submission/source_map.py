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

from dataclasses import dataclass


def location_text(cell: int | None, line: int) -> str:
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

    def located(self, error: dict) -> dict:
        """A worker's error record (see sandbox/replies.py _clean_error) with every line number
        translated, and the cell it is in beside it (``cell``: None in a plain file)."""
        if not self.origins:
            return error
        error = dict(error)
        if type(error.get("line")) is int:
            error["cell"], error["line"] = self.locate(error["line"])
        frames = []
        for frame in error.get("frames") or []:
            frame = dict(frame)
            if type(frame.get("line")) is int:
                frame["cell"], frame["line"] = self.locate(frame["line"])
            frames.append(frame)
        error["frames"] = frames
        return error
