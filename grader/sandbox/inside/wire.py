"""The message format between the trusted grader and the sandboxed worker.

A frame is ``b"GRDR"`` + a 4-byte big-endian JSON length + the JSON header + raw blobs.
The header lists the blob lengths (``"blobs": [n, ...]``); arrays travel as ``.npy`` blobs.
Every length is checked against a cap *before* anything is read or allocated, and ``.npy``
headers are parsed by hand so a forged shape can never make numpy allocate.

This module is imported on both sides of the trust boundary, so it uses only the standard
library and numpy, and it never unpickles anything. numpy is imported on first use, so the
grader can start a worker before it pays for numpy itself.
"""

from __future__ import annotations

import io
import json
import math
import re
import select
import socket
import struct
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:  # numpy itself is imported on first use (see above)
    import numpy as np


MAGIC = b"GRDR"
PREFIX = struct.Struct(">4sI")

# Kinds of arrays that may cross the boundary: numbers only (no objects, no records).
ALLOWED_DTYPE_KINDS = frozenset("biufc")


@dataclass(frozen=True)
class Caps:
    """Upper bounds on what one frame may carry."""

    json_bytes: int = 1 << 20
    blob_count: int = 256  # a script's answer: 64 globals and 128 computed arrays
    blob_bytes: int = 512 << 20
    total_bytes: int = 1 << 30
    ndim: int = 32
    nesting: int = 64


DEFAULT_CAPS = Caps()

# The slack of an answer over its arrays' bytes: .npy headers, JSON, a few small values.
ANSWER_SLACK = 1 << 20


def answer_caps(payload_bytes: int) -> Caps:
    """The caps of one answer whose arrays may hold ``payload_bytes`` in all (derived from
    the task by the grader): no blob and no frame may carry more."""
    payload_bytes = max(0, int(payload_bytes))
    return Caps(blob_bytes=payload_bytes + ANSWER_SLACK, total_bytes=payload_bytes + ANSWER_SLACK)


class WireError(Exception):
    """The peer sent something malformed or over a cap."""


class WireTimeout(WireError):
    """The peer did not answer before the deadline."""


class WireClosed(WireError):
    """The peer closed the channel (it exited or crashed)."""


# --------------------------------------------------------------------------- frames


def _prefix_and_header(header: Mapping[str, object], blobs: Sequence[bytes]) -> bytes:
    framed = dict(header, blobs=[len(b) for b in blobs])
    body = json.dumps(framed, separators=(",", ":"), allow_nan=False).encode()
    return PREFIX.pack(MAGIC, len(body)) + body


SMALL_FRAME = 1 << 16


def send(sock: socket.socket, header: Mapping[str, object], blobs: Sequence[bytes] = ()) -> None:
    head = _prefix_and_header(header, blobs)
    if len(head) + sum(len(b) for b in blobs) <= SMALL_FRAME:
        sock.sendall(b"".join([head, *blobs]))  # one system call for the common small frame
        return
    sock.sendall(head)
    for blob in blobs:
        sock.sendall(blob)


def pack(header: dict, blobs: Sequence[bytes] = ()) -> bytes:
    """One frame as bytes (used for on-disk caches in the same format)."""
    return b"".join([_prefix_and_header(header, blobs), *blobs])


class _Channel(Protocol):
    """What ``recv`` reads from: a socket, or frame bytes (_BytesChannel)."""

    def recv(self, n: int, flags: int = ..., /) -> bytes: ...


class _BytesChannel:
    """Lets ``recv`` read a frame from bytes instead of a socket."""

    def __init__(self, data: bytes):
        self.data, self.at = memoryview(data), 0

    def recv(self, n: int, flags: int = 0, /) -> bytes:
        chunk = bytes(self.data[self.at : self.at + n])
        self.at += len(chunk)
        return chunk


def unpack(data: bytes, caps: Caps = DEFAULT_CAPS) -> tuple[dict, list[bytearray]]:
    return recv(_BytesChannel(data), None, caps)


READ_CHUNK = 1 << 22  # a payload is read this much at a time, as it arrives


def _recv_exact(sock: _Channel, n: int, deadline: float | None) -> bytearray:
    """Exactly ``n`` bytes. Memory grows with what has arrived, never with what was merely
    declared: a peer that declares a large payload and sends nothing costs nothing."""
    buf = bytearray()
    while len(buf) < n:
        want = min(n - len(buf), READ_CHUNK)
        try:
            if deadline is None:
                chunk = sock.recv(want)
            else:  # what has arrived is taken at once; select only waits for the rest
                chunk = _recv_now(sock, want)
        except BlockingIOError:
            if deadline is None:  # (only a read with a deadline does not block)
                raise
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WireTimeout("no answer before the time limit") from None
            ready, _, _ = select.select(
                [cast(socket.socket, sock)], [], [], remaining
            )  # (a socket: it has a deadline)
            if not ready:
                raise WireTimeout("no answer before the time limit") from None
            continue
        except (ConnectionError, OSError) as exc:
            raise WireClosed(f"channel closed: {exc}") from None
        if not chunk:
            raise WireClosed("channel closed")
        buf += chunk
    return buf


# Windows has no MSG_DONTWAIT: there a socket is first asked (select) whether bytes wait.
_DONTWAIT = getattr(socket, "MSG_DONTWAIT", None)


def _recv_now(sock: _Channel, want: int) -> bytes:
    """What has arrived, up to ``want`` bytes, without waiting (BlockingIOError: nothing)."""
    if _DONTWAIT is not None:
        return sock.recv(want, _DONTWAIT)
    if isinstance(sock, _BytesChannel):
        return sock.recv(want)
    ready, _, _ = select.select([cast(socket.socket, sock)], [], [], 0)
    if not ready:
        raise BlockingIOError
    return sock.recv(want)


def recv(
    sock: _Channel, deadline: float | None = None, caps: Caps = DEFAULT_CAPS
) -> tuple[dict, list[bytearray]]:
    magic, length = PREFIX.unpack(_recv_exact(sock, PREFIX.size, deadline))
    if magic != MAGIC:
        raise WireError("corrupted channel (bad frame marker)")
    if length > caps.json_bytes:
        raise WireError(f"message header of {length} bytes is over the {caps.json_bytes} cap")
    try:
        header = json.loads(_recv_exact(sock, length, deadline))
    except (ValueError, RecursionError) as exc:
        raise WireError(f"message header is not valid JSON: {exc}") from None
    if not isinstance(header, dict):
        raise WireError("message header is not a JSON object")
    sizes = header.get("blobs", [])
    if (
        not isinstance(sizes, list)
        or len(sizes) > caps.blob_count
        or not all(type(s) is int and s >= 0 for s in sizes)
    ):
        raise WireError("message declares payloads that are not a list of sizes")
    if any(s > caps.blob_bytes for s in sizes) or sum(sizes) > caps.total_bytes:
        raise WireError(
            f"message declares {sum(sizes)} bytes of payloads, over the size caps "
            f"({caps.blob_bytes} bytes each, {caps.total_bytes} in all)"
        )
    return header, [_recv_exact(sock, s, deadline) for s in sizes]


# --------------------------------------------------------------------------- arrays


def array_to_npy(arr: object) -> bytes:
    import numpy as np

    arr = np.asarray(arr)
    if not arr.flags.c_contiguous:  # (not ascontiguousarray: it would make a 0-d array 1-d)
        arr = np.ascontiguousarray(arr)
    descr = arr.dtype.str
    if _PLAIN_DESCR.fullmatch(descr.encode()):
        # The .npy 1.0 layout numpy writes, without its slow generic path.
        header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {arr.shape!r}, }}"
        padding = 63 - (10 + len(header)) % 64
        header = header + " " * padding + "\n"
        return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + arr.tobytes()
    out = io.BytesIO()
    np.lib.format.write_array(out, arr, allow_pickle=False)
    return out.getvalue()


# The header numpy writes for a plain array, e.g. {'descr': '<f8', 'fortran_order': False,
# 'shape': (3, 4), }: read by this pattern, which admits nothing else (numpy's own parser,
# which evaluates a Python literal, is several times slower and kept for other headers).
_PLAIN_DESCR = re.compile(rb"[<>|=][biufc][0-9]{1,2}")
_NPY_V1_HEADER = re.compile(
    rb"\{'descr': '(" + _PLAIN_DESCR.pattern + rb")', 'fortran_order': (True|False), "
    rb"'shape': \(((?:[0-9]{1,18}, ?)*(?:[0-9]{1,18})?)\), \} *\n"
)


def _plain_header(data: bytes | bytearray) -> tuple[tuple[int, ...], bool, np.dtype, int] | None:
    import numpy as np

    if len(data) < 10 or data[:8] != b"\x93NUMPY\x01\x00":
        return None
    end = 10 + int.from_bytes(data[8:10], "little")
    match = _NPY_V1_HEADER.fullmatch(bytes(data[10:end]))
    if match is None:
        return None
    descr, fortran, dims = match.groups()
    shape = tuple(int(d) for d in dims.replace(b" ", b"").split(b",") if d)
    try:
        dtype = np.dtype(descr.decode())
    except (TypeError, ValueError) as exc:  # '<f99' reads as plain, but is no dtype
        raise WireError(f"malformed array payload: dtype {descr.decode()!r}: {exc}") from None
    return shape, fortran == b"True", dtype, end


def npy_to_array(data: bytes | bytearray, caps: Caps = DEFAULT_CAPS, read_only: bool = False) -> np.ndarray:
    """Parse a .npy blob without trusting its header: the shape must match the bytes.
    A bytearray (as ``recv`` returns) is used in place; immutable bytes are copied, unless
    a ``read_only`` array will do (it is then a view of them)."""
    import numpy as np

    plain = _plain_header(data)
    if plain is not None:
        shape, fortran, dtype, offset = plain
    else:
        fp = io.BytesIO(data)
        try:
            version = np.lib.format.read_magic(fp)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
            elif version in ((2, 0), (3, 0)):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
            else:
                raise WireError(f"unsupported .npy version {version}")
        except WireError:
            raise
        except Exception as exc:  # numpy's parser on a hostile header: any failure is malformed
            raise WireError(f"malformed array payload: {type(exc).__name__}: {exc}") from None
        offset = fp.tell()
    if dtype.kind not in ALLOWED_DTYPE_KINDS or dtype.hasobject or dtype.fields:
        raise WireError(f"arrays of dtype {dtype} are not accepted (numbers only)")
    if len(shape) > caps.ndim or any(type(d) is not int or d < 0 for d in shape):
        raise WireError(f"array shape {shape!r} is not acceptable")
    count = math.prod(shape)
    if count * dtype.itemsize != len(data) - offset:
        raise WireError(f"array payload size does not match its shape {shape}")
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    arr = flat.reshape(shape, order="F" if fortran else "C")
    return arr if isinstance(data, bytearray) or read_only else arr.copy()


# --------------------------------------------------------------------------- values


def encode(value: object, blobs: list[bytes], depth: int = 0) -> Any:
    """Turn plain data and arrays into JSON-able data, appending arrays to ``blobs``."""
    import numpy as np

    if depth > DEFAULT_CAPS.nesting:
        raise ValueError("value is nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        blobs.append(array_to_npy(np.asarray(value)))
        return {"$nd": len(blobs) - 1, "scalar": isinstance(value, np.generic)}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v, blobs, depth + 1) for v in value]}
    if isinstance(value, list):
        return [encode(v, blobs, depth + 1) for v in value]
    if isinstance(value, dict):
        return {"$dict": {str(k): encode(v, blobs, depth + 1) for k, v in value.items()}}
    raise TypeError(f"cannot send a {type(value).__name__}")


class Opaque:
    """A value the worker could only describe (an object that is not plain data)."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return self.text


def decode(
    data: object,
    blobs: Sequence[bytes | bytearray],
    caps: Caps = DEFAULT_CAPS,
    depth: int = 0,
    read_only: bool = False,
) -> Any:
    """Inverse of ``encode``, strict: anything unexpected is a ``WireError``. With
    ``read_only``, arrays from immutable bytes are read-only views of them, not copies."""
    if depth > caps.nesting:
        raise WireError("value is nested too deeply")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v, blobs, caps, depth + 1, read_only) for v in data]
    if not isinstance(data, dict) or len(data) == 0:
        raise WireError("unexpected value in message")
    if "$nd" in data:
        index = data["$nd"]
        if type(index) is not int or not 0 <= index < len(blobs):
            raise WireError("array reference out of range")
        arr = npy_to_array(blobs[index], caps, read_only)
        if data.get("scalar"):
            return arr[()]
        if data.get("subclass"):
            return ForeignArray(arr, str(data["subclass"])[:200])
        return arr
    if "$float" in data:
        text = data["$float"]
        if text not in ("nan", "inf", "-inf"):
            raise WireError("bad float value")
        return float(text)
    if "$tuple" in data and isinstance(data["$tuple"], list):
        return tuple(decode(v, blobs, caps, depth + 1, read_only) for v in data["$tuple"])
    if "$dict" in data and isinstance(data["$dict"], dict):
        return {str(k): decode(v, blobs, caps, depth + 1, read_only) for k, v in data["$dict"].items()}
    if "$obj" in data:
        return Opaque(str(data["$obj"])[:200], str(data.get("repr", ""))[:2000])
    raise WireError("unexpected value in message")


@dataclass(frozen=True)
class ForeignArray:
    """Numbers the student returned in something other than a plain ndarray: a list, a
    tuple or an ndarray subclass. ``container`` names what it was."""

    array: np.ndarray
    container: str
