"""How close a value must be to the expected one (part of a task spec; no numpy needed)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Tolerance:
    """Values match when |actual - expected| <= atol + rtol * |expected| (NaN matches NaN)."""

    rtol: float = 1e-7
    atol: float = 1e-9

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return f"rtol={self.rtol:g}, atol={self.atol:g}"
