"""Student text: sanitised once where it crosses the trust boundary, escaped again per medium.

Everything a submission makes is hostile text: exception messages, what it prints, the
names of its functions, parameters and variables, the reprs of what it returns, and its
own file name. Where that text enters the trusted side (``sandbox/replies.sanitised`` on a worker's answer,
``output`` on its captured stdout/stderr, ``name`` on a file name or student id,
``clean_report`` on every report stored or read back from a gradebook), it is made

- valid Unicode: a lone surrogate (from a broken ``str`` or a non-UTF-8 file name) becomes
  U+FFFD, so every encoder (UTF-8 files, terminals, JSON, XML) accepts it;
- visible: control characters (C0, DEL, C1), line and paragraph separators, bidirectional
  overrides and the two non-characters XML refuses become ``\\x1b``-style escapes;
  newline and tab stay only in multi-line text (printed output);
- bounded: capped in UTF-8 bytes *after* being made visible, with a mark saying how much
  was cut.

Each is idempotent: sanitising sanitised text changes nothing. Renderers still escape for
their medium (the ``for_*`` functions below and junit's XML escaping), since a report may
come from an old gradebook or a message built on the trusted side around student text.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Any

LINE_BYTES = 200  # a name: function, parameter, variable, type, module
MESSAGE_BYTES = 2000  # an exception message
CODE_BYTES = 300  # a source line quoted from a traceback
NAME_BYTES = 1024  # a file name or student id (the file system allows 255 bytes)
REPORT_TEXT_BYTES = 64 << 10  # any one string of a stored report (old rows included)

_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 and C1 controls and DEL; ALM, LRM, RLM; line/paragraph separators; bidi embeddings,
# overrides and isolates ("Trojan Source"); the BOM; U+FFFE and U+FFFF (not XML).
_OTHER_INVISIBLE = "\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff\ufffe\uffff"
_HIDDEN_LINE = re.compile(f"[\x00-\x1f{_OTHER_INVISIBLE}]")
_HIDDEN_BLOCK = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHER_INVISIBLE}]")  # tab and newline kept
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _show(match: re.Match) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: object, multiline: bool = False) -> str:
    """``text`` as valid Unicode with every control character shown, never sent."""
    if not isinstance(text, str):
        text = str(text)
    text = _SURROGATE.sub("\ufffd", text)
    if multiline:
        return _HIDDEN_BLOCK.sub(_show, text.replace("\r\n", "\n"))
    return _HIDDEN_LINE.sub(_show, text)


def clip(text: str, max_bytes: int, keep_tail: bool = False) -> str:
    """At most ``max_bytes`` of UTF-8 (``text`` must be valid Unicode), cut with a mark;
    ``keep_tail`` keeps the end too (a script's answer is its last line)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    mark = f" [... cut: {len(data)} bytes in all]"
    if keep_tail:
        mark = f"\n[... cut: {len(data)} bytes in all ...]\n"
    room = max(max_bytes - len(mark.encode()), 0)
    if not keep_tail:
        return data[:room].decode("utf-8", "ignore") + mark
    tail = room // 4
    head = data[: room - tail].decode("utf-8", "ignore")
    end = data[len(data) - tail :].decode("utf-8", "ignore") if tail else ""
    return head + mark + end


def line(text: object, max_bytes: int = LINE_BYTES) -> str:
    """One line of student text (a name, a message): visible and capped."""
    return clip(visible(text), max_bytes)


def output(text: str, max_bytes: int) -> str:
    """Captured stdout or stderr: multi-line, visible, its head and tail kept."""
    return clip(visible(text, multiline=True), max_bytes, keep_tail=True)


def name(text: object) -> str:
    """A submission's file name or path, shown in a report."""
    return line(text, NAME_BYTES)


def student_id(file_name: str) -> str:
    """The student id shown for a file name: visible, and one-to-one, so two different
    names never become one id (a gradebook row per id would lose one). A backslash is
    doubled, a byte that is not UTF-8 reads ``\\xff`` and a hidden character ``\\x1b``;
    none is cut (a name has at most 255 bytes)."""
    text = os.fsencode(file_name).decode("utf-8", "surrogateescape")  # bad byte: U+DC80..
    # A name that only looks like another (a zero-width or format character, a variation
    # selector, decomposed accents, a space at either end) shows what sets it apart.
    lookalike = not text.isascii() and unicodedata.normalize("NFC", text) != text
    shown = []
    for i, char in enumerate(text):
        code = ord(char)
        if char == "\\":
            shown.append("\\\\")
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (always >= 0x80)
            shown.append(f"\\x{code - 0xDC00:02x}")
        elif _HIDDEN_LINE.match(char):  # \u form from 0x80 on: never a bad byte's
            shown.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}")
        elif (
            code >= 0x80 and (lookalike or unicodedata.category(char) in ("Cf", "Mn", "Zs", "Co", "Cn"))
        ) or (char == " " and (i == 0 or i == len(text) - 1)):
            shown.append(
                f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
            )
        else:
            shown.append(char)
    return "".join(shown)


# --------------------------------------------------------------------------- at the boundary


def clean_report(report: Any) -> Any:
    """Every string of a report (a dict from Result.to_dict or a gradebook row) valid and
    visible (newlines and tabs kept) and capped; numbers untouched. For reports stored by
    older versions too: an old row with a lone surrogate or an escape sequence still
    exports."""
    if isinstance(report, str):
        if report.isascii() and report.isprintable() and len(report) <= REPORT_TEXT_BYTES:
            return report  # nothing to show or cut (most of a report): 5x faster export
        return clip(visible(report, multiline=True), REPORT_TEXT_BYTES)
    if isinstance(report, dict):
        return {clean_report(k): clean_report(v) for k, v in report.items()}
    if isinstance(report, (list, tuple)):
        return [clean_report(v) for v in report]
    return report


# --------------------------------------------------------------------------- per medium

# Every ASCII punctuation character, but a dash inside a word (task and check names have
# them; only at the start of a line can a dash open a list, a rule or a heading).
_MARKDOWN_PUNCTUATION = re.compile(r"""([!"#$%&'()*+,./:;<=>?@\[\\\]^_`{|}~]|(?<!\w)-)""")


def for_markdown(text: object, max_bytes: int = 400) -> str:
    """Inline Markdown that renders as the text itself and opens nothing: whitespace runs
    (newlines too) become one space, controls are shown, and every ASCII punctuation
    character is backslash-escaped (CommonMark allows it for all of them; a dash only where
    no letter or digit precedes it), so no heading,
    list, emphasis, code span, link, autolink, table cell, HTML tag, comment or entity can
    start inside it."""
    text = clip(visible(" ".join(visible(text, multiline=True).split())), max_bytes)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def for_markdown_code(text: object, max_bytes: int = 400) -> str:
    """A code span holding ``text`` literally: one line, fenced by more backticks than it
    holds in a row, padded so a leading or trailing backtick cannot join the fence. Not for
    table cells (GFM splits cells at a pipe even inside a code span) nor the start of a
    line (three backticks there would open a fenced block)."""
    text = clip(visible(" ".join(visible(text, multiline=True).split())), max_bytes)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


# html.escape's five (quote=True), in one pass, without importing html here: this module is
# on `grader check`'s path, and only the pages need it.
_HTML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"})


def for_html(text: object) -> str:
    """HTML (or inline SVG) content or a quoted attribute value: controls shown,
    newlines and tabs kept, every markup character escaped, quotes included."""
    return visible(text, multiline=True).translate(_HTML_ESCAPES)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def for_csv(text: object) -> str:
    """A CSV cell a spreadsheet cannot run: text starting like a formula (after any
    spaces, which some spreadsheets skip) gets a leading '."""
    text = visible(text, multiline=True)
    return "'" + text if text.lstrip(" ").startswith(_FORMULA_START) else text


def for_workflow_data(text: object) -> str:
    """The message of a GitHub Actions workflow command (``::error ...::DATA``)."""
    text = visible(text, multiline=True)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def for_workflow_property(text: object) -> str:
    """A property of a workflow command (``file=``, ``title=``): ``:`` and ``,`` too."""
    return for_workflow_data(text).replace(":", "%3A").replace(",", "%2C")
