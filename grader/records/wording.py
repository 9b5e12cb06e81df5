"""A count in words, as every message says one: "1 check", "2 checks", "1 repository"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, plural unless the count is one (``plural`` where adding an
    "s" does not make it: counted(2, "repository", "repositories"))."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
