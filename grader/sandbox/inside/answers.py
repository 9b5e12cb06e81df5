"""What the worker sends back, encoded as plain data within the answer's caps: a call's
return value (``describe``), a script's numbers (``numbers_sent``: those left in its globals
and those it computed elsewhere, computed.py), and the display libraries it was served
stand-ins for (``with_stand_ins``).

The caps on arrays are this module's state: protocol.py's, lowered for a task by
``limit_outputs`` (the grader's cap on one answer). A courtesy only: the grader enforces
them whatever the worker sends.
"""

from __future__ import annotations

from typing import Any

import computed
import display
import numpy as np
import protocol
import wire

TEXT_CAP = protocol.TEXT_CAP
GLOBALS_CAP = protocol.GLOBALS_CAP
COMPUTED_CAP = protocol.COMPUTED_CAP
OUTPUT_BYTES_CAP = protocol.OUTPUT_BYTES_CAP  # a returned array's bytes, lowered by limit_outputs
ARRAYS_BYTES_CAP = protocol.ARRAYS_BYTES_CAP  # a script's arrays' bytes, lowered by limit_outputs


def limit_outputs(answer_bytes: int) -> None:
    """The grader's cap on the arrays of one answer (derived from the task): larger outputs
    are refused here with a clear description."""
    global OUTPUT_BYTES_CAP, ARRAYS_BYTES_CAP
    OUTPUT_BYTES_CAP = min(OUTPUT_BYTES_CAP, max(0, answer_bytes))
    ARRAYS_BYTES_CAP = min(ARRAYS_BYTES_CAP, max(0, answer_bytes))


def describe(value: Any, blobs: list[bytes], depth: int = 0) -> Any:
    """Encode a student's return value as plain data, saying what kind of object it was."""
    if depth > 16:
        return {"$obj": "nested value", "repr": "<nested too deeply>"}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in wire.ALLOWED_DTYPE_KINDS or value.dtype.fields:
            return {"$obj": f"ndarray of dtype {value.dtype}", "repr": _safe_repr(value)}
        if value.size * value.dtype.itemsize > OUTPUT_BYTES_CAP:
            return {
                "$obj": "oversized array",
                "repr": f"an array of shape {value.shape} ({value.dtype}) is too large to return",
            }
        plain = np.ndarray.view(value, np.ndarray) if type(value) is not np.ndarray else value
        blobs.append(wire.array_to_npy(np.array(plain, copy=True)))
        record: dict[str, object] = {"$nd": len(blobs) - 1}
        if type(value) is not np.ndarray:
            record["subclass"] = type(value).__qualname__
        return record
    if isinstance(value, np.generic):
        if value.dtype.kind not in wire.ALLOWED_DTYPE_KINDS:
            return {"$obj": type(value).__name__, "repr": _safe_repr(value)}
        blobs.append(wire.array_to_npy(np.asarray(value)))
        return {"$nd": len(blobs) - 1, "scalar": True}
    if value is None or type(value) in (bool, int, float, str):
        if isinstance(value, float):
            return wire.encode(value, blobs)
        if isinstance(value, str):
            return value[:TEXT_CAP]
        if isinstance(value, int) and abs(value) > 1 << 62:
            return {"$obj": "int", "repr": "<a very large integer>"}
        return value
    if type(value) in (list, tuple):
        # A list of numbers is sent as an array, marked with the container it came in.
        try:
            arr = np.array(value)
        except Exception:
            arr = None
        if arr is not None and arr.dtype.kind in wire.ALLOWED_DTYPE_KINDS and arr.nbytes <= OUTPUT_BYTES_CAP:
            blobs.append(wire.array_to_npy(arr))
            return {"$nd": len(blobs) - 1, "subclass": type(value).__name__}
        if len(value) <= 1000:
            items = [describe(v, blobs, depth + 1) for v in value]
            return {"$tuple": items} if type(value) is tuple else items
    return {"$obj": type(value).__qualname__[:100], "repr": _safe_repr(value)}


GLOBALS_CAP = protocol.GLOBALS_CAP
COMPUTED_CAP = protocol.COMPUTED_CAP
ARRAYS_BYTES_CAP = protocol.ARRAYS_BYTES_CAP  # lowered for a task by _limit_outputs


def _as_numbers(value: Any) -> np.ndarray | None:
    """numpy's view of an array-like: ndarray, TF or PyTorch tensor, shape, list of numbers."""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    if hasattr(value, "as_list") and type(value).__name__ == "TensorShape":
        return np.asarray(value.as_list())
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # torch.Tensor
        return value.detach().cpu().numpy()
    if hasattr(value, "numpy") and callable(value.numpy):  # tf.Tensor / Variable
        return np.asarray(value.numpy())
    if type(value) in (list, tuple) or isinstance(value, tuple):  # torch.Size is a tuple
        arr = np.array(value)
        return arr if arr.dtype.kind in wire.ALLOWED_DTYPE_KINDS else None
    return None


def _plain_numbers(value: object, room: int) -> np.ndarray | None:
    """The value as a numeric array of at most ``room`` bytes, or None. Converting runs
    the submission's code (a tensor's .numpy()): whatever it raises, the value is skipped."""
    try:
        arr = _as_numbers(value)
    except BaseException:
        return None
    if arr is None or arr.dtype.kind not in wire.ALLOWED_DTYPE_KINDS or arr.dtype.fields:
        return None
    return arr if arr.size * arr.dtype.itemsize <= room else None


def _numbers_left(
    namespace: dict[str, object], drawn: frozenset[int] = frozenset()
) -> list[tuple[str, object, np.ndarray]]:
    """The numbers in the script's globals: (name, value, numpy view) each; not those a
    display library's call gave (``drawn``: their ids, computed.Recorder.drawn_ids)."""
    left = []
    for name, value in list(namespace.items()):
        if type(name) is not str or name.startswith("__") or id(value) in drawn:
            continue
        arr = _plain_numbers(value, ARRAYS_BYTES_CAP)
        if arr is not None:
            left.append((name, value, arr))
    return left


def numbers_sent(
    namespace: dict, recorder: computed.Recorder, wanted: frozenset, out: list[bytes]
) -> tuple[dict, list[dict]]:
    """The arrays the script left in its globals ({name: wire record}) and those it computed
    elsewhere ([wire record naming it], most telling first: computed.candidates), within
    the caps. Arrays of the shapes the checks want are chosen first, then the others, smallest
    first: big arrays never crowd the wanted ones out. A value is sent once."""
    left = _numbers_left(namespace, recorder.drawn_ids())
    made = []
    for candidate in computed.candidates(recorder):
        arr = _plain_numbers(candidate.value, ARRAYS_BYTES_CAP)
        if arr is not None and arr.ndim > 0:
            made.append((candidate, arr))
    entries = [(0, i, arr) for i, (_, _, arr) in enumerate(left)] + [
        (1, i, arr) for i, (_, arr) in enumerate(made)
    ]
    order = sorted(
        range(len(entries)), key=lambda k: (tuple(entries[k][2].shape) not in wanted, entries[k][2].nbytes, k)
    )
    chosen: set[int] = set()
    seen: set[int] = set()
    counts, total = [0, 0], 0
    for k in order:
        group, i, arr = entries[k]
        value = left[i][1] if group == 0 else made[i][0].value
        if (
            counts[group] >= (GLOBALS_CAP, COMPUTED_CAP)[group]
            or total + arr.nbytes > ARRAYS_BYTES_CAP
            or (group == 1 and id(value) in seen)
        ):
            continue
        seen.add(id(value))
        counts[group] += 1
        total += arr.nbytes
        chosen.add(k)
    sent_left: dict[str, dict] = {}
    sent_made: list[dict] = []
    for k, (group, i, arr) in enumerate(entries):  # in the script's order
        if k not in chosen:
            continue
        out.append(wire.array_to_npy(np.array(arr, copy=True)))
        if group == 0:
            name, value, _ = left[i]
            sent_left[name[:100]] = {"$nd": len(out) - 1, "type": type(value).__name__[:100]}
        else:
            candidate = made[i][0]
            sent_made.append(
                dict(
                    computed.describe(candidate),
                    **{"$nd": len(out) - 1, "type": type(candidate.value).__name__[:100]},
                )
            )
    return sent_left, sent_made


def with_stand_ins(reply: protocol.Answer) -> protocol.Answer:
    """A load or run answer, with the display libraries whose stand-in the submission
    imported (display.py), for the report's note."""
    served = display.stand_ins()
    if served:
        reply["stand_ins"] = served
    return reply


def _safe_repr(value: object) -> str:
    try:
        return repr(value)[:TEXT_CAP]
    except Exception:
        return f"<a {type(value).__name__} whose repr failed>"
