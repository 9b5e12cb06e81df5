"""The numbers a source holds (grader/submission/source_numbers.py) and the typed-in rule
(grader/grading/checks/typed_in.py): pure functions of the text and the values, no sandbox."""

import base64
import struct

import numpy as np
import pytest

from grader.grading.checks.typed_in import Numbers, non_trivial, typed_in
from grader.submission.source_numbers import CAP, scan_numbers
from grader.task.tolerance import Tolerance

TOLERANCE = Tolerance(rtol=1e-5, atol=1e-5)
VALUE = 0.8414709848078965  # sin(1): a value of the table


def lines_of(value, numbers, relative=1e-9):
    """The lines of the numbers equal to ``value`` up to a power of ten."""
    place = np.mod(np.log10(abs(value)), 1.0)
    return [
        line
        for v, line in numbers.written + numbers.decoded
        if min(abs(np.mod(np.log10(v), 1.0) - place), 1 - abs(np.mod(np.log10(v), 1.0) - place)) <= relative
    ]


@pytest.mark.parametrize(
    "source, line",
    [
        ("x = 1\ny = 0.84147098480\n", 2),
        ("x = [\n  -0.841_470_984_807_896_5]\n", 2),
        ("\n\n# the table: 0.84147098480 0.5403\n", 3),
        ('s = """\nrows\n0.84147098480\n"""\n', 3),
        ("s = '\\x30.84147098480'\n", 1),  # an escape makes a digit
        ('s = ("0.8414" \n     "7098480")\n', 1),  # adjacent literals, joined
        ('s = "08489074148.0"[::-1]\n', 1),  # reversed
        (f"h = float.fromhex('{VALUE.hex()}')\n", 1),
        (f"h = float.fromhex('{VALUE.hex()[2:]}')\n", 1),  # without its 0x
        (f"b = {b'x' + struct.pack('<d', VALUE)!r}\n", 1),  # raw bytes, as Python writes them
        (f"e = '{base64.b64encode(struct.pack('<d', VALUE)).decode()}'\n", 1),
        (f"e = '{base64.urlsafe_b64encode(struct.pack('>d', VALUE)).decode()}'\n", 1),
        (f"e = '{base64.b32encode(struct.pack('<d', VALUE)).decode()}'\n", 1),
        (f"e = '{base64.b85encode(struct.pack('<d', VALUE)).decode()}'\n", 1),
        (f"e = '{struct.pack('<d', VALUE).hex()}'\n", 1),
        (f"e = '{struct.pack('<d', VALUE).hex(' ')}'\n", 1),
        (f"i = bytes([{', '.join(str(b) for b in struct.pack('<d', VALUE))}])\n", 1),
        (f"i = {struct.unpack('<q', struct.pack('<d', VALUE))[0]}\n", 1),  # a bit pattern
        (f"i = {hex(struct.unpack('<Q', struct.pack('<d', VALUE))[0])}\n", 1),
        ("g = '841470984807896554030230586813972'\n", 1),  # fixed-width numbers glued
    ],
)
def test_numbers_are_found_with_their_lines_however_written(source, line):
    found = scan_numbers(source)
    assert not found.capped
    assert line in lines_of(VALUE, found), (found.written, found.decoded)


def test_a_float32_in_bytes_is_found():
    source = f"e = '{base64.b64encode(np.float32(VALUE).tobytes()).decode()}'\n"
    assert lines_of(np.float32(VALUE), scan_numbers(source), relative=1e-7)


def test_the_result_is_plain_data():
    found = scan_numbers("x = 0.5\n")
    assert found.written == ((0.5, 1),) and found.capped is False
    assert all(type(v) is float and type(line) is int for v, line in found.written + found.decoded)


@pytest.mark.parametrize(
    "text",
    [
        ",".join(str(i) for i in range(300000)),  # distinct numbers
        "1," * (1 << 19),  # one number, over and over
        '"a",' * (1 << 18),  # strings
        "'''" + "a" * (1 << 20),  # an unterminated string of hex digits
        "QUJD" * (1 << 18),  # base64
        "[" + ", ".join(str(i % 256) for i in range(200000)) + "]",
    ],
)
def test_a_mebibyte_source_gives_a_bounded_answer(text):
    text = text[: 1 << 20]
    found = scan_numbers(text)
    assert len(found.written) + len(found.decoded) <= CAP
    assert found.capped  # more than the grader reads: the checks cannot clear it


@pytest.mark.parametrize("text", ["\n" * (1 << 20), "\\" * (1 << 20), "." * (1 << 20)])
def test_a_mebibyte_without_numbers_is_read_whole(text):
    found = scan_numbers(text)
    assert not found.capped and found.written == () and found.decoded == ()


def _typed(values, source):
    return typed_in(np.asarray(values), Numbers(scan_numbers(source)), TOLERANCE)


TABLE = np.sin(np.arange(1, 21) * 0.7).reshape(4, 5)


def test_values_typed_as_they_are_scaled_or_shifted_are_typed_in():
    listed = ", ".join("%.9f" % v for v in TABLE.ravel())
    assert _typed(TABLE, f"x = [{listed}]\n").line == 1
    assert _typed(TABLE, "\n" + ", ".join("%d" % round(v * 1e9) for v in TABLE.ravel())).line == 2
    assert _typed(TABLE, ", ".join("%.10f" % (v * 3.7) for v in TABLE.ravel())) is not None
    assert _typed(TABLE, ", ".join("%.10f" % (v + 2.5) for v in TABLE.ravel())) is not None
    assert _typed(TABLE, ", ".join("%.12f" % (v * v) for v in TABLE.ravel())) is not None


def test_computed_values_and_round_numbers_are_not():
    source = "import numpy as np\nt = np.sin(np.arange(1, 21) * 0.7).reshape(4, 5)\nbase = 10000.0\n"
    assert _typed(TABLE, source) is None
    rows = np.array([[0, 1, 0, 1], [0.5, 1, 0.25, 2]])  # nothing telling
    assert non_trivial(rows, TOLERANCE).size == 0
    assert _typed(rows, "x = [[0, 1, 0, 1], [0.5, 1, 0.25, 2]]") is None


def test_a_few_typed_values_beside_computed_ones_are_not_enough():
    some = ", ".join("%.9f" % v for v in TABLE.ravel()[:5])
    assert _typed(TABLE, f"x = [{some}]\n") is None


def test_a_capped_source_cannot_be_cleared():
    found = _typed(TABLE, ",".join(str(i) for i in range(300000)))
    assert found is not None and found.line is None
