"""The picture of a failed array check: the expected output and the submission's on the
failing input, as plain data a page can draw (result.Picture). Made on the trusted side
from values that came back over the wire (compare.numbers_of), never for a hidden check."""

from __future__ import annotations

import math

import numpy as np

from grader.grading.compare import numbers_of
from grader.records.result import PICTURE_SIDE, Picture
from grader.task.index_expr import parse_select


def _plain(values: np.ndarray) -> list:
    """Rows of floats (6 significant digits: a picture, not a proof), None where not finite."""

    def one(v: float) -> float | None:
        return float(f"{v:.6g}") if math.isfinite(v) else None

    return [[one(float(v)) for v in row] for row in values]


def _cut(array: np.ndarray) -> tuple[np.ndarray, str]:
    """At most 2-D (a higher one: its first entry along the leading axes) and at most
    PICTURE_SIDE per side (the top-left corner), with words for what was cut."""
    parts = []
    if array.ndim > 2:
        lead = (0,) * (array.ndim - 2)
        array = array[lead]
        parts.append(f"batch entry [{', '.join('0' for _ in lead)}]")
    if array.ndim < 2:
        array = array.reshape(1, -1)
    rows, columns = array.shape
    if rows > PICTURE_SIDE:
        parts.append(f"rows 0-{PICTURE_SIDE - 1} of {rows}")
    if columns > PICTURE_SIDE:
        parts.append(f"columns 0-{PICTURE_SIDE - 1} of {columns}")
    return array[:PICTURE_SIDE, :PICTURE_SIDE], ", ".join(parts)


def picture(expected: object, actual: object, select: str | None = None) -> Picture | None:
    """Both outputs, drawn alike (the same ``select`` as the check, when the shapes allow
    it); None when either holds no real numbers or none at all."""
    want, got = numbers_of(expected), numbers_of(actual)
    if want is None or got is None or want.dtype.kind not in "biuf" or got.dtype.kind not in "biuf":
        return None
    if select and got.shape == want.shape:
        try:
            index = parse_select(select)
            want, got = want[index], got[index]
        except (IndexError, ValueError):
            return None
    if want.size == 0 or got.size == 0:  # nothing to draw (and no first entry to cut to)
        return None
    # cut first, then convert: an answer as large as the wire allows is never copied whole
    (want_cut, want_where), (got_cut, got_where) = _cut(want), _cut(got)
    if want_where == got_where:
        where = want_where
    else:
        where = "; ".join(
            f"{side}: {words or 'all'}" for side, words in (("expected", want_where), ("yours", got_where))
        )
    return Picture(
        expected=_plain(np.asarray(want_cut, dtype=np.float64)),
        got=_plain(np.asarray(got_cut, dtype=np.float64)),
        expected_shape=list(want.shape),
        got_shape=list(got.shape),
        where=where,
    )
