"""numpy index expressions in task specs (``select: "[:, 0:2]"``), parsed without eval."""

from __future__ import annotations

import re

_ITEM = re.compile(r"^\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?)?$")


def parse_select(text: str) -> tuple:
    """Parse a numpy index like ``[:, 0:2]`` or ``[..., -1]`` (no code is evaluated)."""
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")) or not text[1:-1].strip():
        raise ValueError(f"'{text}' is not an index in brackets")
    items: list[object] = []  # ints, slices and Ellipsis
    for part in text[1:-1].split(","):
        part = part.strip()
        if part == "...":
            items.append(Ellipsis)
            continue
        match = _ITEM.match(part)
        if not part or not match:
            raise ValueError(f"'{part}' is not an integer, a slice or ...")
        if ":" not in part:
            items.append(int(match.group(1)))
        else:
            start, stop, step = (int(g) if g is not None else None for g in match.groups())
            if step == 0:
                raise ValueError("a slice step cannot be 0")
            items.append(slice(start, stop, step))
    return tuple(items)
