"""Argument arrays in memory the grader keeps its own handle to: the mutation checks' evidence.

For a call whose arguments must be unchanged afterwards, the grader does not ask the worker
what they look like after the call (the worker runs student code, which can rewrite any
answer it sends). Instead each argument array is written by the grader into a file of its
own in memory (a memfd, sealed so it can be neither shrunk nor grown), a descriptor of it is
passed to the worker with SCM_RIGHTS, and the worker maps it MAP_SHARED and calls the
function on an ndarray over that memory. An in-place change lands in memory the grader
reads back and compares itself once the answer has come.

Descriptors travel one way only, grader to worker: the grader reads with no ancillary
buffer, so the kernel discards any descriptor a worker attaches to its answers. They follow
their frame as one marker byte on the (stream) channel, which the worker takes with
``recv_fds`` when the frame's header says how many there are.

Imported on both sides of the trust boundary: standard library and numpy only.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import socket
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy itself is imported on first use
    import numpy as np

MARKER = b"F"
MAX_FDS = 64  # per message: a worker may hold 256 open files (and SCM_MAX_FD is 253)


# --------------------------------------------------------------------------- grader side


def shareable(value: object) -> bool:
    """Whether an argument goes to the worker in shared memory (a plain array of numbers
    with at least one element; an empty array cannot change)."""
    import numpy as np

    return (
        type(value) is np.ndarray
        and value.dtype.kind in "biufc"
        and not value.dtype.fields
        and value.nbytes > 0
    )


class SharedArray:
    """One argument array in a memfd of the grader's (a temporary file where there is no
    memfd_create); the grader keeps this handle and reads the array back after the call."""

    def __init__(self, value: np.ndarray, position: int) -> None:
        import numpy as np

        arr = np.ascontiguousarray(value)
        self.position = position
        self.shape, self.descr, self.nbytes = arr.shape, arr.dtype.str, arr.nbytes
        self.fd = _new_file()
        try:
            view, done = arr.reshape(-1).view(np.uint8).data, 0
            while done < len(view):
                done += os.write(self.fd, view[done:])
            _seal(self.fd)
        except BaseException:
            self.close()
            raise

    def reference(self, index: int) -> dict:
        """How the call's message names this argument: the index of its descriptor."""
        return {"$shared": index, "descr": self.descr, "shape": list(self.shape)}

    def read_back(self) -> np.ndarray | None:
        """The array as it is now in the shared memory (None if the file lost bytes, which
        only a file without seals allows)."""
        import numpy as np

        data = os.pread(self.fd, self.nbytes, 0)
        if len(data) != self.nbytes:
            return None
        return np.frombuffer(data, dtype=np.dtype(self.descr)).reshape(self.shape)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _new_file() -> int:
    if hasattr(os, "memfd_create"):
        return os.memfd_create("grader-argument", os.MFD_CLOEXEC | getattr(os, "MFD_ALLOW_SEALING", 0))
    with tempfile.TemporaryFile() as f:  # elsewhere (macOS): an unlinked temporary file
        return os.dup(f.fileno())


def _seal(fd: int) -> None:
    """Neither side may resize the file from now on (the worker could otherwise shrink it
    under a mapping); its bytes stay writable."""
    import fcntl

    if not hasattr(fcntl, "F_ADD_SEALS"):
        return
    try:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    except OSError:
        pass  # a temporary file cannot be sealed; read_back checks the size


def send_fds(sock: socket.socket, fds: list[int]) -> None:
    """The descriptors of a frame just sent, on one marker byte right after it."""
    socket.send_fds(sock, [MARKER], fds)


# --------------------------------------------------------------------------- worker side


def receive_fds(sock: socket.socket, count: int) -> list[int]:
    """The descriptors that follow a frame whose header announced ``count`` of them (fewer
    if this process ran out of open files)."""
    data, fds, _, _ = socket.recv_fds(sock, 1, count)
    if data != MARKER:
        for fd in fds:
            os.close(fd)
        raise ConnectionError("the channel lost its place (no descriptor marker)")
    return list(fds)


_libc = None
# Bound when the worker starts, before any submission runs: a submission that rebinds
# numpy.frombuffer (say, to hand its function a copy) changes nothing here.
try:
    import weakref

    import numpy as _np

    _dtype, _frombuffer = _np.dtype, _np.frombuffer
except ImportError:  # (the grader's side imports this module too; it needs none of it)
    pass
# (Windows' mmap has neither: nothing is shared there, see the unsandboxed tier)
_PROT = getattr(mmap, "PROT_READ", 0) | getattr(mmap, "PROT_WRITE", 0)
_MAP_SHARED = getattr(mmap, "MAP_SHARED", 0)


def map_array(fd: int, descr: str, shape: list[int]) -> np.ndarray:
    """An ndarray over the shared file ``fd`` (MAP_SHARED: writes reach the grader's copy).
    The mapping holds no descriptor (``fd`` may be closed at once) and is unmapped when the
    last array over it is gone."""
    global _libc
    dtype = _dtype(descr)
    count = 1
    for d in shape:
        count *= int(d)
    size = count * dtype.itemsize
    if size <= 0:
        raise ValueError("an empty array is not shared")
    if _libc is None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_long,
        ]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        _libc = libc
    address = _libc.mmap(None, size, _PROT, _MAP_SHARED, fd, 0)
    if address is None or address == ctypes.c_void_p(-1).value:
        err = ctypes.get_errno()
        raise OSError(err, f"mmap of a shared argument failed: {os.strerror(err)}")
    buffer = (ctypes.c_ubyte * size).from_address(address)
    weakref.finalize(buffer, _libc.munmap, address, size)
    return _frombuffer(buffer, dtype=dtype, count=count).reshape(shape)  # type: ignore[call-overload]
