"""The channel between grader and worker: caps are checked before anything is allocated,
and only plain numbers cross."""

import io
import socket
import struct

import numpy as np
import pytest

from grader.sandbox import wire


def _frame(header_bytes):
    return wire.PREFIX.pack(wire.MAGIC, len(header_bytes)) + header_bytes


def test_round_trip_of_plain_values():
    blobs = []
    value = [np.arange(6.0).reshape(2, 3), (1, float("nan"), "text"), {"k": np.float32(2.5)}]
    header, got_blobs = wire.unpack(wire.pack({"v": wire.encode(value, blobs)}, blobs))
    back = wire.decode(header["v"], got_blobs)
    np.testing.assert_array_equal(back[0], value[0])
    assert back[1][0] == 1 and np.isnan(back[1][1]) and back[1][2] == "text"
    assert back[2]["k"] == np.float32(2.5)


def test_forged_npy_shape_is_rejected_without_allocating():
    forged = io.BytesIO()  # a header that claims 80 GB in front of 32 bytes
    np.lib.format.write_array_header_1_0(
        forged, {"descr": "<f8", "fortran_order": False, "shape": (10_000_000_000,)}
    )
    with pytest.raises(wire.WireError, match="does not match its shape"):
        wire.npy_to_array(forged.getvalue() + bytes(32))


def test_object_arrays_never_cross():
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": "|O", "fortran_order": False, "shape": (1,)})
    with pytest.raises(wire.WireError, match="numbers only"):
        wire.npy_to_array(out.getvalue() + bytes(8))


def test_oversized_header_is_refused_before_reading():
    a, b = socket.socketpair()
    a.sendall(wire.PREFIX.pack(wire.MAGIC, 1 << 30))
    with pytest.raises(wire.WireError, match="over the"):
        wire.recv(b, deadline=None)


def test_declared_payload_over_cap_is_refused():
    header = b'{"blobs": [999999999999]}'
    with pytest.raises(wire.WireError, match="size caps"):
        wire.unpack(_frame(header))


def test_garbage_is_a_wire_error_not_a_crash():
    with pytest.raises(wire.WireError):
        wire.unpack(b"garbage that is long enough")
    with pytest.raises(wire.WireError):
        wire.unpack(_frame(b"[[[[[[[[[[" * 10000))
    with pytest.raises(wire.WireError):
        wire.decode({"$nd": 5}, [])
    with pytest.raises(wire.WireError):
        wire.decode({"$float": "1e400"}, [])


def test_silent_peer_times_out():
    import time

    a, b = socket.socketpair()
    with pytest.raises(wire.WireTimeout):
        wire.recv(b, deadline=time.monotonic() + 0.1)
    a.close()
    with pytest.raises(wire.WireClosed):
        wire.recv(b, deadline=None)


def test_struct_prefix_is_big_endian():
    assert wire.PREFIX.pack(wire.MAGIC, 1) == b"GRDR" + struct.pack(">I", 1)


def test_declared_but_unsent_payload_allocates_nothing():
    """A peer declares 400 MiB (under the caps it was given) and sends 10 bytes: memory
    grows with what arrived, not with what was declared."""
    import tracemalloc

    a, b = socket.socketpair()
    a.sendall(_frame(b'{"blobs": [419430400]}') + bytes(10))
    a.close()
    caps = wire.Caps(blob_bytes=1 << 30, total_bytes=1 << 30)
    tracemalloc.start()
    try:
        with pytest.raises(wire.WireClosed):
            wire.recv(b, deadline=None, caps=caps)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{peak} bytes allocated for 10 bytes received"


def test_answer_caps_refuse_what_the_task_cannot_need():
    caps = wire.answer_caps(1 << 20)  # the task's answers hold at most 1 MiB of arrays
    two_mib = np.zeros(1 << 18)
    blobs = []
    frame = wire.pack({"result": wire.encode(two_mib, blobs)}, blobs)
    with pytest.raises(wire.WireError, match="size caps"):
        wire.unpack(frame, caps)
    blobs = []
    small = wire.pack({"result": wire.encode(np.zeros(1000), blobs)}, blobs)
    header, got = wire.unpack(small, caps)
    assert wire.decode(header["result"], got, caps).shape == (1000,)


@pytest.mark.parametrize("descr", ["<f99", "<i3", "|b7", ">c99"])
def test_plain_looking_but_impossible_dtype_is_a_wire_error(descr):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }" % descr
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    blob = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(16)
    with pytest.raises(wire.WireError, match="malformed array payload"):
        wire.npy_to_array(blob)
