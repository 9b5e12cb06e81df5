"""The answer a script printed, read as the student meant it (a pure function of the text).

The answer is the last non-empty printed line; lines before it (debugging) are ignored. The
line is data: tokenised here, never evaluated. Terminal escape sequences (colour codes such
as ``\x1b[32m``, raw or as the report shows them) are removed first. Only ASCII digits make
numbers (``５``, ``٥`` and ``𝟓`` do not). The rule, in order:

1. **Words carry no numbers.** A word starts with a letter or an underscore and goes on
   with letters, digits and underscores (``x2``, ``float32``, ``Dimension``). ``5x8``
   reads as ``5 8``.
2. **Labels are skipped.** The expression written right before a ``=`` or ``:`` outside
   brackets is a label, not the answer: ``x.shape=(5, 8)``, ``len(table[2])=4``,
   ``row 2: 4``, ``shape: (5, 8)`` (``==``, ``<=``, ``>=``, ``!=``, ``:=`` are no labels).
3. **Framework annotations are skipped.** Inside brackets, an item after a comma that is
   ``name=value`` is an annotation: ``tf.Tensor([5 8], shape=(2,), dtype=int32)`` reads as
   ``[5 8]``, ``tensor([5, 8], device='cuda:0')`` as ``[5, 8]``.
4. **Candidates.** Each outermost bracket group that holds a number is one candidate, made
   of all its numbers in order: ``(5, 8)``, ``[5, 8]``, ``torch.Size([5, 8])``,
   ``TensorShape([Dimension(5), Dimension(8)])`` are (5, 8); ``(8,)``, ``torch.Size([8])``
   and ``tf.Tensor(8, shape=(), dtype=int32)`` are (8,). The bare numbers outside brackets
   are candidates too: for a shape, all of them together are one (``5 8``); for a length,
   each is one of its own (``len(row) = 8``, ``row length: 8``).
5. **One answer.** Equal candidates are one answer; a line with different ones (``(5, 8)
   (8, 5)``, ``Length: 4 (row 2)``, or ``row 0 has length 8`` for a length) holds several
   possible answers, which is reported as such, never guessed between.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

LINE_CAP = 500  # characters of the last line that are read

Format = Literal["shape", "integer"]

_TIMES = re.compile(r"(?<=[0-9])[xX×](?=[0-9])")  # 5x8, 5×8 (ASCII digits only)
_TOKEN = re.compile(
    r"""
    (?P<word>[^\W\d]\w*)
  | (?P<number>-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<comma>,)
  | (?P<relation>==|!=|<=|>=|:=)
  | (?P<label>[=:])
  | (?P<other>\S)
""",
    re.VERBOSE,
)
_CLOSING = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class Token:
    kind: str  # word, number, open, close, comma, relation, label, other
    text: str
    start: int
    end: int


@dataclass
class Group:
    """Tokens between an opening bracket and its closing one (or the end of the line)."""

    items: list[Node]
    start: int
    end: int


Node = Token | Group


@dataclass(frozen=True)
class Answer:
    line: str  # the last non-empty line, capped
    candidates: tuple[tuple[float, ...], ...]  # the possible answers on it, distinct


# A terminal escape sequence (CSI ``ESC [ ... m``, OSC ``ESC ] ... BEL``, or ESC and one
# character), the ESC raw or as the report makes it visible (``\x1b``, also ``\033``, ``\u001b``).
_ESCAPE = re.compile(
    r"""(?:\x1b|\\x1b|\\033|\\u001b)
    (?:\[[0-?]*[ -/]*[@-~] | \][^\x07\x1b\n]*?(?:\x07|\x1b\\|\\x07|\\x1b\\) | [@-Z\\-_])?""",
    re.VERBOSE,
)


def last_line(stdout: str) -> str | None:
    lines = [line.strip() for line in _ESCAPE.sub("", stdout).splitlines() if line.strip()]
    return lines[-1][:LINE_CAP] if lines else None


def read_answer(stdout: str, format: Format) -> Answer | None:
    """The candidates on the last non-empty printed line (see the module's rule), or None
    when nothing was printed."""
    line = last_line(stdout)
    if line is None:
        return None
    nodes = _without_labels(_tree(_tokens(line)))
    groups = [_numbers(n) for n in nodes if isinstance(n, Group)]
    found = [g for g in groups if g]
    bare = [float(n.text) for n in nodes if isinstance(n, Token) and n.kind == "number"]
    found += [bare] if format == "shape" and bare else [[n] for n in bare]
    distinct: list[tuple[float, ...]] = []
    for candidate in map(tuple, found):
        if candidate not in distinct:
            distinct.append(candidate)
    return Answer(line, tuple(distinct))


def _tokens(line: str) -> list[Token]:
    line = _TIMES.sub(" ", line)
    return [Token(m.lastgroup or "other", m.group(), m.start(), m.end()) for m in _TOKEN.finditer(line)]


def _tree(tokens: list[Token]) -> list[Node]:
    """Tokens nested by brackets; a stray closing bracket is dropped, an unclosed group
    ends with the line, a mismatched closing bracket closes the innermost group."""
    top: list[Node] = []
    stack: list[tuple[Group, list[Node]]] = []
    items = top
    for token in tokens:
        if token.kind == "open":
            group = Group([], token.start, token.end)
            items.append(group)
            stack.append((group, items))
            items = group.items
        elif token.kind == "close":
            if stack:
                group, items = stack.pop()
                group.end = token.end
        else:
            items.append(token)
    for group, _ in stack:
        group.end = tokens[-1].end
    return top


def _without_labels(nodes: list[Node]) -> list[Node]:
    """Drop each ``=`` or ``:`` outside brackets with the expression written right before
    it: the node before it (spaces between allowed), and the nodes that touch that one
    (no space between) back to a space or a comma."""
    kept: list[Node] = []
    for node in nodes:
        if isinstance(node, Token) and node.kind == "label":
            if kept and not _is_comma(kept[-1]):
                start = kept.pop().start
                while kept and kept[-1].end == start and not _is_comma(kept[-1]):
                    start = kept.pop().start
            continue
        kept.append(node)
    return kept


def _is_comma(node: Node) -> bool:
    return isinstance(node, Token) and node.kind == "comma"


def _numbers(node: Node) -> list[float]:
    """Every number inside ``node``, in order, without the annotations of its groups."""
    if isinstance(node, Token):
        return [float(node.text)] if node.kind == "number" else []
    out: list[float] = []
    for index, item in enumerate(_split(node.items)):
        if index > 0 and _is_annotation(item):
            continue
        for inner in item:
            out.extend(_numbers(inner))
    return out


def _split(items: list[Node]) -> list[list[Node]]:
    parts: list[list[Node]] = [[]]
    for item in items:
        if isinstance(item, Token) and item.kind == "comma":
            parts.append([])
        else:
            parts[-1].append(item)
    return parts


def _is_annotation(item: list[Node]) -> bool:
    return (
        len(item) >= 2
        and isinstance(item[0], Token)
        and item[0].kind == "word"
        and isinstance(item[1], Token)
        and item[1].kind == "label"
        and item[1].text == "="
    )
