"""The numbers a source holds, as written or encoded: a pure function of its text.

A "did the work" check must tell a table the script computed from one it typed in, and it
may decide that only from what it trusts: the source text and the arrays the worker sent
back (checks/typed_in.py). This module gives the first half, the numbers the text holds,
each with the line it is on, wherever and however they are written:

- **written** in digits, anywhere in the text (code, strings, comments and docstrings: a
  script can read its own file): decimals (``0.841_470_98``, ``84147098e-8``), hex floats
  (``0x1.aed548f090ceep-1``, also without ``0x`` as ``float.fromhex`` reads them),
  ``0x``/``0o``/``0b`` integers; the same in the decoded content of string literals with
  escapes (``"\\x30.84"``), in adjacent string literals joined (``"0.8414" "7098"``), in
  strings and comments reversed (``"89074148.0"[::-1]``), and every 6 to 17 digit window
  of a long run of digits (fixed-width numbers glued together);
- **decoded** from bytes: bytes literals, string literals holding escapes or bytes-like
  characters, runs of base64 (also URL-safe), base32 and hex digits (hex also in pairs
  with separators), base85 and Ascii85 strings, lists of small integers (``bytes([24,
  45, ...])``), and large integers (bit patterns, ``0x3FEAED548F090CEE``), each read as
  float64 and float32 in both byte orders at every offset.

Only magnitudes are kept (signs are one character away), finite and non-zero, each value
once (its first line), at most ``CAP`` of them; the work done is counted too (tokens,
literals, list items, bytes read). A text that holds or costs more is ``capped``, and the
checks then cannot clear it (an honest solution holds a few dozen numbers). The work is
linear in the text (C-level regular expressions with possessive repeats, numpy for the
bytes): a 1 MiB source of the worst kinds tried takes 0.2-0.4 s on a busy 2-core machine.
Nothing here runs, imports or evaluates the submission, and nothing but the text is read.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import codecs
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

CAP = 1 << 15  # distinct numbers kept; more: capped
WORK = 1 << 17  # tokens, literals and list items read, in all; more: capped
BLOB_BYTES = 1 << 20  # bytes read as floats, in all; more: capped
DIGIT_RUN = 16384  # a run of digits longer than this: capped
LONG_DIGITS = 12  # runs at least this long are also read in windows
WINDOWS = range(6, 18)  # the window lengths
DECODED_RANGE = (1e-12, 1e12)  # magnitudes kept of values read from bytes (the rest: noise)


@dataclass(frozen=True)
class SourceNumbers:
    """Plain data: (magnitude, line) pairs, distinct magnitudes, in the order found."""

    written: tuple[tuple[float, int], ...]  # written out in digits (as they are or in a string)
    decoded: tuple[tuple[float, int], ...]  # read from bytes (literal, encoded or bit patterns)
    capped: bool = False  # the text holds more than this keeps
    # distinct numbers written as a token of four or more significant digits (not windows of
    # a run of digits): how much of a table's information the text types (checks/typed_in.py)
    precise_tokens: int = 0


# --------------------------------------------------------------------------- patterns
# Possessive quantifiers and bounded repeats keep every pattern linear on any input: a
# possessive repeat is never followed by something it could have eaten.

_NUMBER = re.compile(
    r"""(?=[0-9.])   # (a first character to look for: 4x faster)
  (?:
    (?P<radix>0(?:[xX][0-9a-fA-F_]++|[oO][0-7_]++|[bB][01_]++))
  | (?P<decimal>(?:[0-9][0-9_]*+(?:\.[0-9_]*+)?|\.[0-9][0-9_]*+)(?:[eE][-+]?[0-9]{1,5}+)?)
  )""",
    re.VERBOSE,
)
# A hex float read backwards (``1-peec090f845dea.1x0``): found from its exponent, so a long
# run of hex digits costs no search at each of its characters.
_HEXFLOAT_REVERSED = re.compile(
    r"""(?=[0-9])[0-9]{1,5}+[-+]?[pP]
    (?:[0-9a-fA-F]{1,40}+(?:\.[0-9a-fA-F]{0,40}+)?|\.[0-9a-fA-F]{1,40}+)(?:[xX]0)?""",
    re.VERBOSE,
)
_DIGITS = re.compile(r"[0-9]{%d,}+" % LONG_DIGITS)
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{6,}+=*+(?:[ \t]*+\r?\n[ \t]*+[A-Za-z0-9+/_-]{4,}+=*+)*+")
_HEX = re.compile(r"[0-9a-fA-F]{8,}+|[0-9a-fA-F]{2}(?:[ ,:;_-][0-9a-fA-F]{2}){3,}+")
_BYTE = r"(?<![0-9a-zA-Z_.])(?:0[xX][0-9a-fA-F]{1,2}|[0-9]{1,3})(?![0-9a-zA-Z_.])"
_BYTES = re.compile(r"%s(?:[\s\[\]()]*+,[\s\[\]()]*+%s){3,}+" % (_BYTE, _BYTE))
_BYTE_ITEM = re.compile(_BYTE)
# A comment, or a string literal (Python's syntax, as the tokenizer reads it; its prefix
# is read before it).
_LITERAL = re.compile(
    r"""(?=[\#'"])
    (?P<comment>\#[^\r\n]*+)
  | (?P<body>'''(?:[^'\\]|\\.|'(?!''))*+'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*+\"\"\"
             |'(?:[^'\\\r\n]|\\.)*+'|"(?:[^"\\\r\n]|\\.)*+")
""",
    re.VERBOSE | re.DOTALL,
)
_BASE32 = re.compile(r"[A-Z2-7]{8,}")
_GAP = re.compile(r"[\s+(),\[\]\\]*+")  # what may stand between joined literals
_PREFIX = re.compile(r"(?<![\w])[rRbBuUfF]{1,2}\Z")
_BYTES_LIKE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\xff]")
_WIDE = re.compile(r"[^\x00-\xff]")

PRECISE_TOKEN_DIGITS = 4  # significant digits of a token that count it as typed information


class _Full(Exception):
    pass


class _Found:
    """Distinct magnitudes with their first line, up to CAP in all."""

    def __init__(self) -> None:
        self.written: dict[float, int] = {}
        self.decoded: dict[float, int] = {}
        self.capped = False
        self.work = 0
        self.precise: set[float] = set()

    def spend(self, units: int = 1) -> None:
        """Count what is read, so that no text costs more than WORK (a text that would:
        capped, as one that holds too many numbers)."""
        self.work += units
        if self.work > WORK:
            self.capped = True
            raise _Full

    def add(self, kind: dict, value: float, line: int) -> None:
        if not (0.0 < value < float("inf")):
            return
        if value not in self.written and value not in self.decoded:
            if len(self.written) + len(self.decoded) >= CAP:
                self.capped = True
                raise _Full
            kind[value] = line

    def result(self) -> SourceNumbers:
        return SourceNumbers(
            tuple(self.written.items()), tuple(self.decoded.items()), self.capped, len(self.precise)
        )

    def token(self, value: float, digits: str) -> None:
        """A number written as one token: counted when it carries four significant digits."""
        if len(digits.lstrip("0").rstrip("0")) >= PRECISE_TOKEN_DIGITS and len(self.precise) < CAP:
            self.precise.add(value)


class _Lines:
    """The line (1-based, counting line ends as Python does) of an offset in a text."""

    def __init__(self, text: str):
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        lone_cr = (codes == 13) & np.append(codes[1:] != 10, True)
        self.ends = np.flatnonzero((codes == 10) | lone_cr).tolist()

    def __call__(self, offset: int) -> int:
        return bisect.bisect_left(self.ends, offset) + 1


@dataclass(frozen=True)
class _Piece:
    """A text to read numbers from, and the source line of each of its offsets."""

    text: str
    line: Callable[[int], int]


def _joined(parts: list[tuple[str, int]]) -> _Piece:
    """Strings (with their lines) as one text, a line break between them."""
    starts, lines, at = [], [], 0
    for content, line in parts:
        starts.append(at)
        lines.append(line)
        at += len(content) + 1
    return _Piece(
        "\n".join(c for c, _ in parts), lambda offset: lines[max(0, bisect.bisect_right(starts, offset) - 1)]
    )


def _on_line(line: int) -> Callable[[int], int]:
    return lambda offset: line


def _reversed(piece: _Piece) -> _Piece:
    size = len(piece.text)
    return _Piece(piece.text[::-1], lambda offset: piece.line(size - 1 - offset))


# --------------------------------------------------------------------------- reading


def scan_numbers(text: str) -> SourceNumbers:
    """Every number ``text`` holds, written or encoded (see the module's docstring)."""
    found = _Found()
    try:
        _scan(text, found)
    except _Full:
        pass
    return found.result()


class _Blobs(list):
    """Bytes to read floats from, with their lines, up to BLOB_BYTES in all."""

    def __init__(self, found: _Found):
        super().__init__()
        self.found, self.size = found, 0

    def append(self, item: tuple[bytes, int]) -> None:
        if len(item[0]) < 4:  # (holds no float)
            return
        self.size += len(item[0]) + 8
        if self.size > BLOB_BYTES:
            self.found.capped = True
            raise _Full
        super().append(item)


# Every decimal digit Unicode has (Arabic-Indic, fullwidth, ...) is a digit to ``float()``
# and ``int()``: read as the ASCII digit it is, one character for one (lines keep their place).
_OTHER_DIGITS = re.compile(r"(?![0-9])\d")


def _ascii_digits(text: str) -> str:
    return _OTHER_DIGITS.sub(lambda m: str(unicodedata.decimal(m.group(), 0)), text)


def _scan(text: str, found: _Found) -> None:
    text = _ascii_digits(text)
    source = _Piece(text, _Lines(text))
    blobs = _Blobs(found)
    literals = _literals(text, source.line, blobs)
    inner = _joined(literals.changed)
    for piece in (source, inner):
        _numbers(piece, found, blobs)
        _encoded(piece, found, blobs)
    for content, line in literals.strings:
        _base85(content, line, blobs)
    # reversed ("89074148.0"[::-1]): what strings and comments hold (code reversed is no number)
    _numbers(_reversed(_joined(literals.strings + literals.comments)), found, blobs, hex_floats=False)
    _floats(blobs, found)


@dataclass
class _Literals:
    strings: list[tuple[str, int]]  # the content of every string literal, decoded
    comments: list[tuple[str, int]]
    changed: list[tuple[str, int]]  # contents that differ from the source text: escapes
    # decoded, adjacent literals joined


def _literals(text: str, line_of: Callable[[int], int], blobs: _Blobs) -> _Literals:
    """Every string literal's content and every comment; bytes literals and strings holding
    bytes-like characters go to ``blobs``."""
    found = _Literals([], [], [])
    run: list[str] = []
    run_line, run_end = 0, -1
    for match in _LITERAL.finditer(text):
        blobs.found.spend(2)
        if match.group("comment") is not None:
            found.comments.append((match.group("comment"), line_of(match.start())))
            continue
        before = _PREFIX.search(text, max(0, match.start() - 3), match.start())
        prefix = before.group().lower() if before else ""
        body = match.group("body")
        quote = 3 if body[:3] in ("'''", '"""') and len(body) >= 6 else 1
        inside = body[quote:-quote]
        line = line_of(match.start())
        raw, is_bytes = "r" in prefix, "b" in prefix
        value: str | bytes = _unescaped(inside, is_bytes) if "\\" in inside and not raw else inside
        if is_bytes:
            data = value if isinstance(value, bytes) else value.encode("latin-1", "replace")
            blobs.append((data, line))
            content = data.decode("latin-1")
        else:
            content = value if isinstance(value, str) else value.decode("latin-1")
            if _BYTES_LIKE.search(content):
                blobs.append((content.encode("latin-1", "replace"), line))
                blobs.append((content.encode("utf-8", "surrogatepass"), line))
            if _WIDE.search(content):  # code points as 16- or 32-bit units of data (ord())
                blobs.append((content.encode("utf-16-le", "surrogatepass"), line))
                blobs.append((content.encode("utf-32-le", "surrogatepass"), line))
            content = _ascii_digits(content)
        found.strings.append((content, line))
        if content != inside:
            found.changed.append((content, line))
        if run and _GAP.fullmatch(text, run_end, before.start() if before else match.start()) is None:
            _close(run, run_line, found.changed)
            run = []
        if not run:
            run_line = line
        run.append(content)
        run_end = match.end()
    _close(run, run_line, found.changed)
    return found


def _close(run: list[str], line: int, changed: list[tuple[str, int]]) -> None:
    if len(run) > 1:
        changed.append(("".join(run), line))


def _unescaped(inside: str, is_bytes: bool) -> str | bytes:
    try:
        data = codecs.escape_decode(inside.encode("utf-8", "surrogatepass"))[0]
    except (ValueError, UnicodeError):
        return inside
    if is_bytes:
        return data
    text = data.decode("utf-8", "surrogatepass")
    if "\\u" in inside or "\\U" in inside or "\\N" in inside:
        # \u, \U and \N{...} as Python reads them in a str literal (digits and data both)
        text = _UNICODE_ESCAPE.sub(_code_point, text)
    return text


_UNICODE_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|N\{([^}\n]{1,100})\})")


def _code_point(match: re.Match) -> str:
    hex4, hex8, name = match.groups()
    try:
        if name is not None:
            return unicodedata.lookup(name)
        value = int(hex4 or hex8, 16)
        return chr(value) if value <= 0x10FFFF else match.group()
    except (KeyError, ValueError):
        return match.group()


def _numbers(piece: _Piece, found: _Found, blobs: _Blobs, hex_floats: bool = True) -> None:
    if hex_floats:
        size = len(piece.text)
        for match in _HEXFLOAT_REVERSED.finditer(piece.text[::-1]):
            found.spend()
            try:
                value = abs(float.fromhex(match.group()[::-1]))
            except (ValueError, OverflowError):
                continue
            found.add(found.written, value, piece.line(size - match.end()))
            found.token(value, re.sub(r"(?i)p.*|0x|[^0-9a-f]", "", match.group()[::-1]))
    seen: set[str] = set()
    for match in _NUMBER.finditer(piece.text):
        found.spend()
        token = match.group()
        if token in seen:  # (the same token again: its first line is kept)
            continue
        seen.add(token)
        kind = match.lastgroup
        token = token.replace("_", "")
        where = piece.line(match.start())
        if kind == "radix":
            if not 2 < len(token) <= 70:
                continue
            number = int(token, 0)
            _bit_patterns(number, where, blobs)
            value = float(number)
        else:
            mantissa, _, exponent = token.lower().partition("e")
            if mantissa == ".":
                continue
            if "." not in mantissa and not exponent and len(mantissa) <= 20:
                _bit_patterns(int(mantissa), where, blobs)
            try:  # (a long run of digits: its first 40 give the value, its windows below)
                value = float(f"{mantissa[:40]}e{exponent or 0}")
            except (ValueError, OverflowError):
                continue
        found.add(found.written, value, where)
        if not _in_a_word(piece.text, match.start(), match.end()):  # (not digits of a hash)
            found.token(value, token if kind == "radix" else mantissa.replace(".", ""))
    for match in _DIGITS.finditer(piece.text):
        digits = match.group()
        if len(digits) > DIGIT_RUN:
            found.capped = True
            raise _Full
        where = piece.line(match.start())
        found.spend(len(digits) * len(WINDOWS))
        for width in WINDOWS:
            for start in range(0, len(digits) - width + 1):
                found.add(found.written, float(digits[start : start + width]), where)


def _in_a_word(text: str, start: int, end: int) -> bool:
    """Whether the digits at text[start:end] are part of a word (a hex digest, an
    identifier): a letter or underscore right before or after them."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return before.isalpha() or before == "_" or after.isalpha() or after == "_"


def _bit_patterns(number: int, line: int, blobs: _Blobs) -> None:
    """A large integer may be the bits of a float (``np.array([...]).view(np.float64)``)."""
    if 1 << 16 <= number < 1 << 64:
        blobs.append((number.to_bytes(8, "little"), line))
        if number < 1 << 63:  # (its minus sign is one character away: two's complement)
            blobs.append((((1 << 64) - number).to_bytes(8, "little"), line))
        if number < 1 << 32:
            blobs.append((number.to_bytes(4, "little"), line))
            if number < 1 << 31:
                blobs.append((((1 << 32) - number).to_bytes(4, "little"), line))


def _encoded(piece: _Piece, found: _Found, blobs: _Blobs) -> None:
    """Runs of base64, base32 and hex digits, and lists of small integers, as bytes."""
    text = piece.text
    for match in _BASE64.finditer(text):
        found.spend(4)
        run = re.sub(r"\s+", "", match.group()).rstrip("=")
        where = piece.line(match.start())
        for skip in range(4 if len(run) >= 16 else 1):  # (a run glued to what comes before it)
            for data in _base64(run[skip:]):
                blobs.append((data, where))
        if len(run) <= 8192 and _BASE32.fullmatch(run):  # (b32decode is Python: bounded)
            try:
                blobs.append((base64.b32decode(run + "=" * (-len(run) % 8)), where))
            except (binascii.Error, ValueError):
                pass
    for match in _HEX.finditer(text):
        found.spend(2)
        digits = re.sub(r"[^0-9a-fA-F]", "", match.group())
        where = piece.line(match.start())
        for skip in (0, 1):
            part = digits[skip:]
            blobs.append((bytes.fromhex(part[: len(part) - len(part) % 2]), where))
    for match in _BYTES.finditer(text):
        found.spend(match.group().count(","))
        items = [
            int(item, 0) if item[:2].lower() == "0x" else int(item)
            for item in _BYTE_ITEM.findall(match.group())
        ]
        if all(i < 256 for i in items):
            where = piece.line(match.start())
            data = bytes(items)
            blobs.append((data, where))  # as bytes, and as the characters of a text
            _numbers(_Piece(data.decode("latin-1"), _on_line(where)), found, blobs, hex_floats=False)


def _base64(run: str) -> list[bytes]:
    out = []
    usable = run[: len(run) - (len(run) % 4 == 1)]
    padded = usable + "=" * (-len(usable) % 4)
    for altchars in (None, b"-_") if ("-" in run or "_" in run) else (None,):
        try:
            out.append(base64.b64decode(padded, altchars=altchars))
        except (binascii.Error, ValueError):
            pass
    return out


def _base85(content: str, line: int, blobs: _Blobs) -> None:
    """A string literal's whole content read as base85 or Ascii85 (their alphabets take in
    almost any text, so only a content on its own is tried, not runs of the source)."""
    content = re.sub(r"\s+", "", content)
    if len(content) < 10:
        return
    for decode in (base64.b85decode, base64.a85decode):
        try:
            blobs.append((decode(content), line))
        except (ValueError, binascii.Error):
            pass


def _floats(blobs: _Blobs, found: _Found) -> None:
    """Every float64 and float32, both byte orders, at every offset of every blob."""
    if not blobs:
        return
    parts, starts, lines, at = [], [], [], 0
    for data, line in blobs:  # one buffer, zeros between: every window of each is in it
        parts += [data, bytes(8)]
        starts.append(at)
        lines.append(line)
        at += len(data) + 8
    buffer = b"".join(parts)
    low, high = DECODED_RANGE
    values, offsets = [], []
    for dtype in ("<f8", ">f8", "<f4", ">f4"):
        size = int(dtype[-1])
        for offset in range(size):
            count = (len(buffer) - offset) // size
            if count <= 0:
                continue
            with np.errstate(all="ignore"):
                read = np.abs(
                    np.frombuffer(buffer, dtype=dtype, count=count, offset=offset).astype(np.float64)
                )
                keep = np.flatnonzero((read >= low) & (read <= high))
            values.append(read[keep])
            offsets.append(offset + size * keep)
    every = np.concatenate(values)
    where = np.concatenate(offsets)
    if every.size > 4 * CAP:
        found.capped = True
        raise _Full
    distinct, first = np.unique(every, return_index=True)
    order = np.argsort(where[first], kind="stable")
    blob_of = np.searchsorted(np.asarray(starts), where[first][order], side="right") - 1
    for value, blob in zip(distinct[order].tolist(), blob_of.tolist()):
        found.add(found.decoded, value, lines[blob])
