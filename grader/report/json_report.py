"""The JSON report: a stable contract other tools read (names in result.py)."""
from __future__ import annotations

import json

from ..result import Result


def render(result: Result, **_options) -> str:
    return json.dumps(result.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
