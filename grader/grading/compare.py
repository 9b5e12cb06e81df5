"""numpy-aware comparison on the trusted side -> a verdict and a message a student understands.

Everything here works on values that came back over the wire (plain ndarrays, numbers,
``ForeignArray`` for lists/subclasses, ``Opaque`` for other objects): no student object is
ever touched, so no lying ``__eq__`` can take part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.sandbox import ForeignArray, Opaque
from grader.task.index_expr import parse_select
from grader.task.tolerance import Tolerance


@dataclass(frozen=True)
class Verdict:
    ok: bool
    message: str = ""


PASS = Verdict(True)

# --------------------------------------------------------------------------- describing values


def describe(value: object) -> str:
    """A short, student-readable description of a returned value."""
    if value is None:
        return "None (did you forget a return statement?)"
    if isinstance(value, Opaque):
        return f"a {value.type_name} ({_shorten(value.text)})"
    if isinstance(value, ForeignArray):
        return f"a {value.container} holding numbers of shape {value.array.shape}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"a {type(value).__name__} ({_shorten(repr(value))})"


def _shorten(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def fmt(x: object) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{x:.8g}"
    return str(x)


def fmt_apart(a: object, b: object) -> tuple[str, str]:
    """Two numbers that differ, each with as many significant digits as it takes to tell
    them apart: 8 at least, then more, then the shortest form that reads back as the same
    float (distinct floats never share it)."""
    if not (isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating))):
        return fmt(a), fmt(b)
    for digits in range(8, 17):
        shown = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if shown[0] != shown[1]:
            return shown
    return repr(float(a)), repr(float(b))


def numbers_of(value: object) -> np.ndarray | None:
    """The numeric array inside a returned value, or None if it holds no numbers."""
    if isinstance(value, ForeignArray):
        return value.array
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return np.asarray(value)
    return None


# --------------------------------------------------------------------------- verdicts


def check_type(actual: Any, returns: dict[str, Any], expected: object) -> Verdict:
    """The returned object's kind: a real ndarray, with a dtype of the expected family."""
    wanted_class = returns.get("class", "ndarray")
    if wanted_class == "ndarray" and not (isinstance(actual, np.ndarray)):
        return Verdict(False, f"returned {describe(actual)}; it must be a numpy array (np.ndarray).")
    dtype_name = returns.get("dtype")
    if dtype_name is None and isinstance(expected, np.ndarray):
        family = {
            "f": "floating",
            "i": "integer",
            "u": "unsignedinteger",
            "b": "bool_",
            "c": "complexfloating",
        }[expected.dtype.kind]
        dtype_name = family
    if dtype_name:
        wanted = getattr(np, dtype_name, None)
        ok = (
            np.issubdtype(actual.dtype, wanted)
            if isinstance(wanted, type)
            else actual.dtype == np.dtype(dtype_name)
        )
        if not ok:
            return Verdict(
                False, f"returned an array of dtype {actual.dtype}; it must have a {dtype_name} dtype."
            )
    return PASS


def check_shape(expected: Any, actual: object) -> Verdict:
    got = numbers_of(actual)
    want = np.shape(expected)
    if got is None:
        return Verdict(False, f"returned {describe(actual)}; expected an array of shape {want}.")
    if got.shape != want:
        return Verdict(False, f"returned shape {got.shape}; expected shape {want}.")
    return PASS


def check_values(
    expected: object, actual: object, tolerance: Tolerance, select: str | None = None, name: str = ""
) -> Verdict:
    """``name`` says what the values are (``the result``); a ``select`` names them itself."""
    got = numbers_of(actual)
    want = numbers_of(expected)
    if want is None:  # a non-numeric expected value: plain equality on plain data
        return (
            PASS
            if actual == expected
            else Verdict(False, f"returned {describe(actual)}; expected {describe(expected)}.")
        )
    if got is None:
        return Verdict(False, f"returned {describe(actual)}; expected {describe(expected)}.")
    if got.shape != want.shape:
        return Verdict(
            False,
            f"returned shape {got.shape}; expected shape {want.shape}, so the values cannot be compared.",
        )
    where = f" in {name}" if name else ""
    if select:
        index = parse_select(select)
        want, got, where = want[index], got[index], f" in result{select}"
    if got.dtype.kind == "c" and want.dtype.kind != "c":
        return Verdict(False, "returned complex numbers; expected real ones.")
    return _close(
        np.asarray(want, dtype=np.complex128 if want.dtype.kind == "c" else np.float64), got, tolerance, where
    )


CHUNK = 1 << 15  # values compared at a time in a large array: the temporaries stay in cache


def output_verdict(
    expected: Any,
    actual: object,
    compare: str = "values",
    tolerance: Tolerance = Tolerance(),
    select: str | None = None,
    returns: dict[str, Any] | None = None,
) -> Verdict:
    """A function's output against the expected one, as a check that compares outputs says
    (its options: ``compare`` type, shape or values; the dtype it ``returns``; the values'
    ``tolerance`` and ``select``): a student's output, or a known mistake's (mistakes.py)."""
    if compare == "type":
        return check_type(actual, returns or {}, expected)
    if compare == "shape":
        return check_shape(expected, actual)
    return check_values(expected, actual, tolerance, select, name="the result")


def _all_within(want: np.ndarray, got: np.ndarray, tol: Tolerance) -> bool:
    """Whether every value of a large real array is within the tolerance, a chunk at a
    time (about twice as fast as whole-array temporaries at a million values)."""
    flat_want, flat_got = want.reshape(-1), got.reshape(-1)
    error, allowed = np.empty(CHUNK), np.empty(CHUNK)
    within = np.empty(CHUNK, dtype=bool)
    for start in range(0, flat_want.size, CHUNK):
        w, g = flat_want[start : start + CHUNK], flat_got[start : start + CHUNK]
        e, a, ok = error[: w.size], allowed[: w.size], within[: w.size]
        np.subtract(g, w, out=e)
        np.abs(e, out=e)
        np.abs(w, out=a)
        a *= tol.rtol
        a += tol.atol
        np.less_equal(e, a, out=ok)
        if not ok.all():
            return False
    return True


def _close(want: np.ndarray, got: np.ndarray, tol: Tolerance, where: str) -> Verdict:
    got_f = np.asarray(got, dtype=want.dtype)
    if want.dtype == np.float64 and want.size > CHUNK:
        with np.errstate(invalid="ignore", over="ignore"):
            if _all_within(want, got_f, tol):
                return PASS  # (else the whole arrays are looked at below, for the message)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(got_f - want)
        allowed = tol.atol + tol.rtol * np.abs(want)
        within = error <= allowed
        if within.all():  # (the common case: the NaN and infinity rules have nothing to add)
            return PASS
        bad = ~(within | (np.isnan(want) & np.isnan(got_f)) | ((want == got_f) & np.isinf(want)))
    count = int(np.count_nonzero(bad))
    if count == 0:
        return PASS
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    finite_error = np.where(bad & np.isfinite(error), error, -1.0)
    worst = np.unravel_index(int(np.argmax(finite_error)), bad.shape) if bad.ndim else ()
    pos = _position(first)
    expected, returned = fmt_apart(want[first], got_f[first])
    text = (
        f"values differ{where}: at {pos} expected {expected}, got {returned}; "
        f"{count} of {want.size} values are off"
    )
    if finite_error.max(initial=-1.0) >= 0:
        text += f", largest error {fmt(float(error[worst]))} at {_position(worst)}"
    if np.isnan(got_f).any() and not np.isnan(want).any():
        text += "; your result contains NaN"
    text += f" (tolerance {tol})."
    if got.dtype.kind == "f" and got.dtype.itemsize < 8 and want.dtype.itemsize >= 8:
        text += f" Your array is {got.dtype}: compute in float64 for full precision."
    return Verdict(False, text)


def _position(index: tuple) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]" if index else "the value"


def check_inputs_unchanged(before: dict[str, Any], after: object) -> Verdict:
    """Compare the arguments as sent (by the names the task gives them, in the order sent)
    with the same arguments after the call, as the grader read them back from the memory it
    shared with the worker (never the worker's account)."""
    if not isinstance(after, list) or len(after) != len(before):
        return Verdict(False, "the arguments could not be read back after the call.")
    for (name, old), new in zip(before.items(), after):
        if isinstance(old, np.ndarray):
            changed_in_place = f"your function changed its argument `{name}` in place"
            if not isinstance(new, np.ndarray) or new.shape != old.shape or new.dtype != old.dtype:
                return Verdict(False, f"{changed_in_place} (its shape or dtype changed).")
            changed = ~((old == new) | (np.isnan(old) & np.isnan(new)))
            if changed.any():
                at = tuple(int(i) for i in np.argwhere(changed)[0])
                was, now = fmt_apart(old[at], new[at])
                return Verdict(
                    False,
                    f"{changed_in_place}: at {_position(at)} it was "
                    f"{was} before the call and {now} after. "
                    f"Leave `{name}` as it is and return a new array.",
                )
    return PASS
