"""The charts of the HTML pages, written as inline SVG: heatmaps of a check's outputs and
their difference (the student page), horizontal bars (the class page).

Plain SVG, no plotting library: a page must work offline, with no script (its
Content-Security-Policy forbids them) and no request, and a heatmap is a grid of coloured
squares, which SVG says directly; a library would be a dependency, and its import would
cost `grader check` start-up (this module is imported only when a page is asked for).

Every piece of text is escaped (student_text.for_html), labels and tooltips included: a check's
name or a value's label may come from a stored report, which is student-controlled data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from grader.student_text import for_html

NOT_FINITE = "#1a1a1a"  # nan or inf (None in a Picture): darker than any step of a scale
STEPS = 8  # colour steps on each side of zero
TARGET_SIDE = 448  # a heatmap's longer side, in px, before the cell limits below
CELL_MIN, CELL_MAX = 6, 48  # a 64-wide table keeps 7 px cells; a 1x2 input gets 48 px ones
VALUES_SHOWN_FROM = 40  # cells this wide show their value as text
TOOLTIPS_UP_TO = 400  # pictures of at most this many cells give each cell a tooltip
LABEL_SPACE = 28  # room for row and column numbers


@dataclass(frozen=True)
class Scale:
    """A diverging colour scale, symmetric about zero: ``limit`` is the largest magnitude."""

    limit: float
    negative: tuple[int, int, int]
    positive: tuple[int, int, int]
    name: str

    def colour(self, value: float | None) -> str:
        if value is None:
            return NOT_FINITE
        share = 0.0 if self.limit == 0 else max(-1.0, min(1.0, value / self.limit))
        step = round(abs(share) * STEPS) / STEPS  # quantised: a legend can show every colour
        end = self.positive if share >= 0 else self.negative
        return _mix(step, end)

    def dark(self, value: float | None) -> bool:
        """Would black text be hard to read on this value's colour?"""
        return value is None or (self.limit > 0 and abs(value) / self.limit > 0.6)


NEUTRAL = (247, 247, 247)


def _mix(share: float, end: tuple[int, int, int]) -> str:
    r, g, b = (round(n + (e - n) * share) for n, e in zip(NEUTRAL, end))
    return f"#{r:02x}{g:02x}{b:02x}"


def values_scale(*grids: list) -> Scale:
    """Blue below zero, red above, spanning ``grids`` (a page draws every grid on it, so equal
    values look equal)."""
    return Scale(_largest(grids), (33, 102, 172), (178, 24, 43), "values")


def difference_scale(grid: list) -> Scale:
    """Purple where yours is smaller, green where larger: not to be confused with values."""
    return Scale(_largest([grid]), (118, 42, 131), (27, 120, 55), "difference")


def _largest(grids: Iterable[list[list[float | None]]]) -> float:
    finite = [abs(v) for grid in grids for row in grid for v in row if v is not None]
    return max(finite, default=0.0) or 1.0


def difference(expected: list, got: list) -> list:
    """Yours minus expected, cell by cell (the same shape); None where either is not finite."""
    return [
        [None if e is None or g is None else _finite(g - e) for e, g in zip(er, gr)]
        for er, gr in zip(expected, got)
    ]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _number(value: float | None, digits: int = 3) -> str:
    return "nan/inf" if value is None else f"{value:.{digits}g}"


def cell_size(rows: int, columns: int) -> int:
    return max(CELL_MIN, min(CELL_MAX, TARGET_SIDE // max(rows, columns, 1)))


def heatmap(grid: list, scale: Scale, label: str) -> str:
    """One grid of values as coloured squares, row and column numbers at the edges; small
    grids show each value in its square and as a tooltip."""
    rows, columns = len(grid), max((len(r) for r in grid), default=0)
    cell = cell_size(rows, columns)
    width, height = LABEL_SPACE + columns * cell, LABEL_SPACE + rows * cell
    # One path per colour, a run of equal colours in a row one rectangle: a 64x64 picture
    # stays tens of kB (a <rect> per cell would be hundreds).
    paths: dict[str, list[str]] = {}
    for r, row in enumerate(grid):
        colours = [scale.colour(v) for v in row]
        start = 0
        for c in range(1, len(colours) + 1):
            if c == len(colours) or colours[c] != colours[start]:
                x, y, run = LABEL_SPACE + start * cell, LABEL_SPACE + r * cell, (c - start) * cell
                paths.setdefault(colours[start], []).append(f"M{x} {y}h{run}v{cell}h-{run}z")
                start = c
    parts = [
        f'<svg class="heatmap" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{for_html(label)}">',
        f"<title>{for_html(label)}</title>",
    ]
    parts += [f'<path fill="{colour}" d="{"".join(d)}"/>' for colour, d in sorted(paths.items())]
    parts.append(_axis_numbers(rows, columns, cell))
    if rows * columns <= TOOLTIPS_UP_TO:
        parts.append(_cell_details(grid, scale, cell))
    parts.append(
        f'<rect x="{LABEL_SPACE - 0.5}" y="{LABEL_SPACE - 0.5}" width="{columns * cell + 1}" '
        f'height="{rows * cell + 1}" fill="none" stroke="#777"/>'
    )
    parts.append("</svg>")
    return "".join(parts)


def _axis_numbers(rows: int, columns: int, cell: int) -> str:
    """Column numbers above, row numbers on the left, every few cells so they never touch."""
    every = max(1, math.ceil(22 / cell))
    marks = ['<g class="axis" font-size="10" fill="#444">']
    for c in range(0, columns, every):
        marks.append(
            f'<text x="{LABEL_SPACE + c * cell + cell / 2}" y="{LABEL_SPACE - 6}" '
            f'text-anchor="middle">{c}</text>'
        )
    for r in range(0, rows, every):
        marks.append(
            f'<text x="{LABEL_SPACE - 4}" y="{LABEL_SPACE + r * cell + cell / 2 + 3.5}" '
            f'text-anchor="end">{r}</text>'
        )
    marks.append("</g>")
    return "".join(marks)


def _cell_details(grid: list, scale: Scale, cell: int) -> str:
    """Each cell's exact value as a tooltip, and as text in the cell when it fits."""
    parts = ['<g class="cells">']
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            x, y = LABEL_SPACE + c * cell, LABEL_SPACE + r * cell
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill-opacity="0">'
                f"<title>[{r}, {c}] = {_number(value, 8)}</title></rect>"
            )
            if cell >= VALUES_SHOWN_FROM:
                ink = "#fff" if scale.dark(value) else "#111"
                parts.append(
                    f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" font-size="11" '
                    f'text-anchor="middle" fill="{ink}" pointer-events="none">'
                    f"{'nan' if value is None else _number(value)}</text>"
                )
    parts.append("</g>")
    return "".join(parts)


def legend(scale: Scale, label: str) -> str:
    """Every colour of the scale with the values at its ends and middle, and the colour of
    a value that is not finite."""
    swatch, top = 14, 16
    steps = (
        [scale.colour(-scale.limit * k / STEPS) for k in range(STEPS, 0, -1)]
        + [scale.colour(0.0)]
        + [scale.colour(scale.limit * k / STEPS) for k in range(1, STEPS + 1)]
    )
    bar = len(steps) * swatch
    width = bar + 150
    parts = [
        f'<svg class="legend" xmlns="http://www.w3.org/2000/svg" width="{width}" height="48" '
        f'viewBox="0 0 {width} 48" role="img" aria-label="{for_html(label)}">',
        f"<title>{for_html(label)}</title>",
        f'<text x="0" y="11" font-size="11" fill="#333">{for_html(label)}</text>',
    ]
    parts += [
        f'<rect x="{i * swatch}" y="{top}" width="{swatch}" height="12" fill="{colour}"/>'
        for i, colour in enumerate(steps)
    ]
    for x, value, anchor in ((0, -scale.limit, "start"), (bar / 2, 0.0, "middle"), (bar, scale.limit, "end")):
        parts.append(
            f'<text x="{x}" y="42" font-size="10" fill="#333" text-anchor="{anchor}">{_number(value)}</text>'
        )
    parts.append(
        f'<rect x="{bar + 16}" y="{top}" width="{swatch}" height="12" fill="{NOT_FINITE}"/>'
        f'<text x="{bar + 34}" y="{top + 10}" font-size="10" fill="#333">nan or inf</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Bar:
    label: str  # escaped here
    value: float  # the bar's length, in units of the chart's ``full``
    shown: str  # the figure written at its end ("12", "85%")
    detail: str = ""  # a tooltip (escaped here)


def bars(items: list[Bar], full: float, colour: str, label: str) -> str:
    """Horizontal bars, one per item, longest = ``full``; labels cut to fit, whole in the tooltip."""
    row, name_width, bar_width = 22, 260, 360
    height = max(1, len(items)) * row + 4
    width = name_width + bar_width + 70
    parts = [
        f'<svg class="bars" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{for_html(label)}">',
        f"<title>{for_html(label)}</title>",
    ]
    for i, item in enumerate(items):
        y = i * row + 2
        name = item.label if len(item.label) <= 40 else item.label[:39] + "…"
        length = 0.0 if full <= 0 else bar_width * max(0.0, min(1.0, item.value / full))
        parts.append(
            f"<g><title>{for_html(item.detail or item.label)}</title>"
            f'<text x="{name_width - 8}" y="{y + 14}" font-size="12" text-anchor="end" '
            f'fill="#222">{for_html(name)}</text>'
            f'<rect x="{name_width}" y="{y + 2}" width="{bar_width}" height="16" fill="#eee"/>'
            f'<rect x="{name_width}" y="{y + 2}" width="{length:.1f}" height="16" '
            f'fill="{colour}"/>'
            f'<text x="{name_width + bar_width + 6}" y="{y + 14}" font-size="12" '
            f'fill="#222">{for_html(item.shown)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
