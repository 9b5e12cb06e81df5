"""The JSON report: a stable contract other tools read (names in result.py)."""

from __future__ import annotations

import json

from grader.records.result import Result
from grader.student_text import clean_report


def render(result: Result, **_options: object) -> str:
    # Always encodable (no lone surrogate), no raw control character, every string capped.
    return json.dumps(clean_report(result.to_dict()), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
