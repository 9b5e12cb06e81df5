"""Whether an array's values were typed in: the rule that "did the work" means computed.

Decided on the trusted side from two things it trusts: the numbers the source text holds
(source_numbers.py: written or encoded, with their lines) and the array's values as the
worker sent them back. Nothing the worker says about where an array came from is used.

The rule. Take the array's distinct **non-trivial** values: finite, and not within the
check's tolerance of a number with fewer than ``precise`` significant digits (3 for a
table: 0, 1, 0.5, 0.99 and the like say nothing either way, and neither do the short
numbers an honest script holds, such as 5, 8, 10000). The array is **typed in** when
at least half of them (and at least two, or its only one) are numbers of the source,
within the tolerance, in one of these ways:

- as they are, up to a power of ten each (``84147098 / 1e8``, ``0.0840 * 10``), or squared,
  rooted or inverted the same way (``np.sqrt([0.70807...])``, ``1 / np.array([...])``);
- all scaled by one common factor (``np.array([...]) / 7``), or all shifted by one common
  offset (``np.array([...]) - 1``): tried against the numbers written in digits, and only
  for arrays with eight or more such values (one factor fitted to fewer proves nothing).

A source with more numbers than ``source_numbers`` keeps (``capped``) cannot be cleared:
such an array is reported as typed in, "the file holds too many numbers to tell".

Values made from typed ones by any other arithmetic (an affine map, a polynomial, the
values split into two typed arrays added, fractions ``p / q``) are caught by their count: a
file that writes at least half as many distinct precise numbers (4 significant digits or
more) as the array has telling values, and at least 8, holds the array in its text (an
honest script writes a handful: 10000, 2, a size, a short typed batch).

What this does not see, said plainly: numbers hidden by a cipher of the student's own
(shuffled alphabets, digits spelled as words) and arrays with no non-trivial value at all.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grader.submission.source_numbers import SourceNumbers
from grader.task.tolerance import Tolerance

SAMPLE = 256  # distinct values looked up (spread over the sorted values)
FITTED_SAMPLE = 32  # of them, values a common factor or offset is fitted to
FITTED_AT_LEAST = 8  # fewer non-trivial values than this: no factor or offset is fitted
COUNTED_AT_LEAST = 8  # precise typed numbers (source_numbers.PRECISE_TOKEN_DIGITS) a file needs
# before their count says anything
LN10 = math.log(10.0)


@dataclass(frozen=True)
class Typed:
    """An array found typed in."""

    line: int | None  # where most of its values are typed (None: the file holds too many numbers)
    found: int  # how many of its distinct non-trivial values were found typed
    of: int  # how many it has
    # the file holds about as many precise numbers as the array has telling values, which
    # no computation needs (an affine map of the values, the values split in two, fractions)
    by_count: bool = False


class Numbers:
    """A source's numbers made ready for lookups (built once per submission)."""

    def __init__(self, numbers: SourceNumbers):
        self.capped = numbers.capped
        self.precise_tokens = numbers.precise_tokens
        pairs = list(numbers.written) + list(numbers.decoded)
        values = np.array([v for v, _ in pairs], dtype=np.float64)
        lines = np.array([line for _, line in pairs], dtype=np.int64)
        # each number's place among powers of ten (log10 mod 1), sorted, with its line
        fraction = np.mod(np.log10(values), 1.0) if values.size else values
        order = np.argsort(fraction, kind="stable")
        self.fractions, self.lines = fraction[order], lines[order]
        written = np.array([v for v, _ in numbers.written], dtype=np.float64)
        self.written = written
        self.written_lines = np.array([line for _, line in numbers.written], dtype=np.int64)

    def nearest(self, fractions: np.ndarray, widths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each place among powers of ten, whether a number of the source is within
        its width (circular: 0.9999 is next to 0.0001), and the line of the nearest one."""
        hit = np.zeros(fractions.shape, dtype=bool)
        line = np.zeros(fractions.shape, dtype=np.int64)
        size = self.fractions.size
        if size == 0:
            return hit, line
        at = np.searchsorted(self.fractions, fractions)
        for candidate in (at - 1, at):
            index = np.mod(candidate, size)
            gap = np.abs(self.fractions[index] - fractions)
            gap = np.minimum(gap, 1.0 - gap)
            better = (gap <= widths) & ~hit
            hit |= better
            line = np.where(better, self.lines[index], line)
        return hit, line


def typed_in(values: npt.ArrayLike, numbers: Numbers, tolerance: Tolerance, precise: int = 3) -> Typed | None:
    """The array's values typed in, or None (see the module's docstring for the rule)."""
    chosen = non_trivial(values, tolerance, precise)
    if chosen.size == 0:
        return None
    needed = max(min(2, chosen.size), math.ceil(chosen.size / 2))
    if numbers.capped:
        return Typed(None, chosen.size, chosen.size)
    relative = (tolerance.atol + tolerance.rtol * chosen) / chosen
    found = np.zeros(chosen.shape, dtype=bool)
    lines = np.zeros(chosen.shape, dtype=np.int64)
    # as they are, squared, rooted and inverted: (power, how the tolerance grows)
    for power in (1.0, 2.0, 0.5, -1.0):
        changed = chosen**power
        width = np.log1p(relative * abs(power)) / LN10
        usable = ~_trivial(changed, relative * abs(power), precise) & ~found
        hit, line = numbers.nearest(np.mod(np.log10(changed), 1.0), width)
        hit &= usable
        lines = np.where(hit, line, lines)
        found |= hit
    if int(found.sum()) >= needed:
        return Typed(_most_common(lines[found]), int(found.sum()), chosen.size)
    if chosen.size >= FITTED_AT_LEAST and numbers.written.size:
        fitted = _fitted(chosen, numbers, tolerance)
        if fitted is not None and fitted[0] >= max(needed, FITTED_AT_LEAST // 2 + 2):
            return Typed(fitted[1], fitted[0], chosen.size)
    return _by_count(chosen, numbers, needed)


def _by_count(chosen: np.ndarray, numbers: Numbers, needed: int) -> Typed | None:
    """The catch-all: an array whose values come from numbers the file types in by *any*
    arithmetic needs about one precise typed number per value (two, split in a sum; a
    numerator and a denominator), while computing it needs a handful (10000, 2, a size).
    A file that writes at least half as many distinct precise numbers (``PRECISE_DIGITS``
    significant digits or more) as the array has telling values, and at least
    COUNTED_AT_LEAST, holds the array's information in its text."""
    count = numbers.precise_tokens  # (source_numbers.py: tokens, not windows of digit runs)
    if chosen.size < FITTED_AT_LEAST or count < max(needed, COUNTED_AT_LEAST):
        return None
    line = _most_common(numbers.written_lines) if numbers.written_lines.size else None
    return Typed(line, count, chosen.size, by_count=True)


def non_trivial(values: npt.ArrayLike, tolerance: Tolerance, precise: int = 3) -> np.ndarray:
    """The distinct magnitudes of ``values`` that say something (at most SAMPLE of them)."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    magnitudes = np.unique(np.abs(flat[np.isfinite(flat)]))
    magnitudes = magnitudes[(magnitudes > 0) & (magnitudes < 1e300)]
    if magnitudes.size == 0:
        return magnitudes
    relative = (tolerance.atol + tolerance.rtol * magnitudes) / magnitudes
    chosen = magnitudes[~_trivial(magnitudes, relative, precise)]
    if chosen.size > SAMPLE:
        chosen = chosen[np.linspace(0, chosen.size - 1, SAMPLE).astype(int)]
    return chosen


def _trivial(values: np.ndarray, relative: np.ndarray, precise: int) -> np.ndarray:
    """Within ``relative`` of an integer or of a number of fewer than ``precise``
    significant digits."""
    allowed = relative * values
    with np.errstate(all="ignore"):
        exponent = np.floor(np.log10(values)) - (precise - 2)
        step = np.power(10.0, exponent)
        short = np.round(values / step) * step
        return (np.abs(values - np.round(values)) <= allowed) | (np.abs(values - short) <= allowed)


def _fitted(chosen: np.ndarray, numbers: Numbers, tolerance: Tolerance) -> tuple[int, int] | None:
    """The most values that one common factor (up to powers of ten each) or one common
    offset maps onto numbers written in the source, and the line most of those are on."""
    sample = chosen[np.linspace(0, chosen.size - 1, min(chosen.size, FITTED_SAMPLE)).astype(int)]
    written = numbers.written
    best: tuple[int, int] | None = None
    # a factor: the same place among powers of ten between value and number
    width = max(math.log1p(max(tolerance.rtol, 1e-12)) / LN10, 1e-15)
    shifts = [np.mod(np.log10(v) - np.log10(written), 1.0) for v in sample]
    best = _common(shifts, width, 1.0 / width, numbers.written_lines, best)
    # an offset: the same difference between value and number (either sign)
    small = np.abs(written) <= 1e6
    signed = np.concatenate([written[small], -written[small]])
    lines = np.concatenate([numbers.written_lines[small]] * 2)
    gap = tolerance.atol + tolerance.rtol * float(chosen.max())
    offsets = [v - signed for v in sample]
    return _common(offsets, gap, None, lines, best)


def _common(
    shifts: Sequence[np.ndarray],
    width: float,
    period: float | None,
    lines: np.ndarray,
    best: tuple[int, int] | None,
) -> tuple[int, int] | None:
    """How many of the values share one shift (within ``width``), and the line of the
    numbers that give it; ``best`` if that is more."""
    bins = []
    for shift in shifts:
        index = np.floor(shift / width).astype(np.int64)
        if period is not None:
            index = np.mod(index, int(period) + 1)
        bins.append(np.unique(np.concatenate([index, index + 1])))  # (neighbours share a bin)
    if not bins:
        return best
    every = np.concatenate(bins)
    if every.size == 0:
        return best
    kinds, counts = np.unique(every, return_counts=True)
    top = int(counts.argmax())
    count = int(counts[top])
    if best is not None and best[0] >= count:
        return best
    where = []
    for shift in shifts:
        index = np.floor(shift / width).astype(np.int64)
        if period is not None:
            index = np.mod(index, int(period) + 1)
        near = np.flatnonzero((index == kinds[top]) | (index + 1 == kinds[top]))
        if near.size:
            where.append(int(lines[near[0]]))
    return count, _most_common(np.array(where)) if where else 0


def _most_common(lines: np.ndarray) -> int:
    return int(Counter(lines.tolist()).most_common(1)[0][0])
