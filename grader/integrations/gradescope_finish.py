"""The last step of Gradescope's ``run_autograder``: put a results.json in place, always.

Copied into the autograder zip as ``finish_results.py`` and run with ``python -I``; it
imports nothing but the standard library, so it works even when the grader itself cannot
be imported. It is the only writer of results.json (temp file + rename, so Gradescope never
reads half a file, and whatever a submission wrote there before is replaced):

- ``grader check`` exited 0 or 1 (a grade) or 2 having written its report (a submission it
  refuses: no hand-in file, a link...): that report, if it parses as results.
- anything else (bad spec, refused tier, crash, timeout, killed): score 0, a message for the
  student, and the reason for the instructor in a hidden test and ``extra_data``; the
  reason is printed too (run_autograder's stdout is shown to instructors only).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import sys
import tempfile
from typing import Any

STUDENT_MESSAGE = "The autograder could not grade this submission; your instructor has been told."
REASON_BYTES = 4000  # the tail of the grader's stderr kept as the reason

# Keys of Gradescope's results.json specification (top level and per test); nothing else.
TOP_KEYS = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "test_name_format",
    "visibility",
    "stdout_visibility",
    "extra_data",
    "tests",
    "leaderboard",
}
TEST_KEYS = {
    "score",
    "max_score",
    "status",
    "name",
    "name_format",
    "number",
    "output",
    "output_format",
    "tags",
    "visibility",
    "extra_data",
}


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def valid_results(data: object) -> str | None:
    """None when ``data`` is a results.json Gradescope accepts as written; else what is wrong."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if set(data) - TOP_KEYS:
        return f"undocumented keys {sorted(set(data) - TOP_KEYS)}"
    if not _number(data.get("score")):
        return "no numeric score"
    tests = data.get("tests", [])
    if not isinstance(tests, list):
        return "tests is not a list"
    for test in tests:
        if not isinstance(test, dict) or set(test) - TEST_KEYS:
            return "a test with undocumented keys"
        if not all(_number(test.get(k, 0)) for k in ("score", "max_score")):
            return "a test without numeric scores"
    return None


def _tail(path: str | None) -> str:
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - REASON_BYTES))
            raw = f.read()
    except OSError:
        return ""
    text = raw.decode("utf-8", "replace")
    return "".join(c if c in "\n\t" or c.isprintable() else f"\\x{ord(c):02x}" for c in text).strip()


def reason_for(code: int, stderr: str, report_problem: str | None, timeout: str) -> str:
    if code == 124:
        why = f"the grader ran out of time (run_autograder's limit: {timeout} s)"
    elif code == 127:
        why = "the grader's Python was not found (did setup.sh run?)"
    elif code > 128 or code < 0:
        number = code - 128 if code > 128 else -code
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        why = (
            f"the grader was killed by {name} (out of memory, the platform's time limit, "
            "or a submission that reached it)"
        )
    elif code == 2:
        why = (
            "grader check could not run (exit 2: a bad task spec, a refused sandbox tier or "
            "bad options; its message is below)"
        )
    elif code in (0, 1):  # an uncaught error exits 1 too, but writes no report
        why = f"grader check exited {code} without a usable report ({report_problem}): a crash"
    else:
        why = f"grader check failed (exit {code}; its message is below)"
    return why + (f"\n\ngrader's stderr (last {REASON_BYTES} bytes):\n{stderr}" if stderr else "")


def failure_results(reason: str, code: int, seconds: float) -> dict[str, Any]:
    return {
        "score": 0.0,
        "execution_time": round(seconds, 3),
        "output": STUDENT_MESSAGE,
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "stdout_visibility": "hidden",
        "extra_data": {"grader_error": reason, "grader_exit_code": code},
        "tests": [
            {
                "name": "Autograder error (shown to instructors only)",
                "score": 0.0,
                "max_score": 0.0,
                "status": "failed",
                "output": reason,
                "visibility": "hidden",
            }
        ],
    }


def _results_folder(folder: str) -> None:
    """The results folder as a real folder: a link left there (by a submission, in a weak
    tier) is removed, never followed."""
    if os.path.islink(folder) or (os.path.exists(folder) and not os.path.isdir(folder)):
        os.unlink(folder)
    os.makedirs(folder, exist_ok=True)


def write_atomically(folder: str, data: dict[str, Any]) -> str:
    _results_folder(folder)
    target = os.path.join(folder, "results.json")
    if os.path.isdir(target) and not os.path.islink(target):
        shutil.rmtree(target)  # a folder in the way cannot be renamed over
    fd, temp = tempfile.mkstemp(prefix=".results-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, ensure_ascii=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o644)
        os.replace(temp, target)  # replaces a link or a forged file, never writes through it
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    return target


def _read_report(path: str | None) -> tuple[Any, str | None]:
    if not path or not os.path.isfile(path) or os.path.islink(path):
        return None, "no report written"
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        return None, f"the report does not parse: {exc}"
    return data, valid_results(data)


def finish(
    code: int, report: str | None, stderr_path: str | None, results: str, seconds: float, timeout: str = "?"
) -> dict[str, Any]:
    data, problem = (None, "not read") if code not in (0, 1, 2) else _read_report(report)
    if data is not None and problem is None:
        write_atomically(results, data)
        return data
    reason = reason_for(code, _tail(stderr_path), problem if code in (0, 1, 2) else None, timeout)
    print(f"run_autograder: could not grade: {reason}", flush=True)
    data = failure_results(reason, code, seconds)
    write_atomically(results, data)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--code", type=int, required=True, help="grader check's exit code")
    parser.add_argument("--report", help="where grader check was told to write its report")
    parser.add_argument("--stderr", help="grader check's stderr, saved")
    parser.add_argument("--results", required=True, help="the results folder")
    parser.add_argument("--seconds", type=float, default=0.0)
    parser.add_argument("--timeout", default="?")
    args = parser.parse_args(argv)
    finish(args.code, args.report, args.stderr, args.results, args.seconds, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
