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

A zip of several tasks grades each with its own ``grader check`` and merges their results
here: one task's failure costs that task's points only.
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
        why = f"the grader ran out of time (run_autograder's limit: {timeout})"
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
    # (its own temporary and rename, not grader.disk.write_whole: this file runs alone)
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


def task_results(
    code: int,
    report: str | None,
    stderr_path: str | None,
    seconds: float,
    timeout: str = "? s",
    task: str = "",
) -> dict[str, Any]:
    """One task's results: grader check's report when it wrote a usable one, else the
    trusted failure results (the reason printed for the instructor)."""
    data, problem = (None, "not read") if code not in (0, 1, 2) else _read_report(report)
    if data is not None and problem is None:
        return dict(data)
    reason = reason_for(code, _tail(stderr_path), problem if code in (0, 1, 2) else None, timeout)
    print(f"run_autograder: could not grade{' ' + task if task else ''}: {reason}", flush=True)
    return failure_results(reason, code, seconds)


def _points(data: dict[str, Any]) -> float:
    return float(sum(t.get("max_score", 0) for t in data.get("tests", [])))


def merged(parts: list[tuple[str, dict[str, Any]]], seconds: float) -> dict[str, Any]:
    """Several tasks' results as one results.json: the scores summed, each test named and
    numbered after its task ("pe-table-shape: prints-the-shape", "1.2"), the output task
    by task, and each task's extra_data under its id."""
    tests: list[dict[str, Any]] = []
    sections: list[str] = []
    for number, (task, data) in enumerate(parts, 1):
        output = str(data.get("output", "")).strip()
        if not output.startswith(f"{task}: "):
            output = f"{task}: {data.get('score', 0):g}/{_points(data):g}\n{output}"
        sections.append(output)
        for index, test in enumerate(data.get("tests", []), 1):
            tests.append({**test, "name": f"{task}: {test.get('name', '')}", "number": f"{number}.{index}"})
    return {
        "score": round(sum(float(data["score"]) for _, data in parts), 6),
        "execution_time": round(seconds, 3),
        "output": "\n\n".join(sections),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"tasks": {task: data.get("extra_data", {}) for task, data in parts}},
        "tests": tests,
    }


def finish_tasks(runs: list[list[str]], results: str, seconds: float, timeout: str = "?") -> dict[str, Any]:
    """``runs``: [task id, exit code, report, stderr] per task graded, in order. One task's
    results are written as they are; several are merged."""
    limit = f"{timeout} s" if len(runs) == 1 else f"{timeout} s for the {len(runs)} tasks together"
    parts = []
    for task, code, report, stderr in runs:
        try:
            number = int(code)
        except ValueError:
            number = -1
        parts.append((task, task_results(number, report, stderr, seconds, limit, task)))
    data = parts[0][1] if len(parts) == 1 else merged(parts, seconds)
    write_atomically(results, data)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--task",
        nargs=4,
        action="append",
        required=True,
        metavar=("ID", "CODE", "REPORT", "STDERR"),
        help="a task graded: its id, grader check's exit code, where it was told to write its "
        "report, its stderr saved (once per task, in order)",
    )
    parser.add_argument("--results", required=True, help="the results folder")
    parser.add_argument("--seconds", type=float, default=0.0)
    parser.add_argument("--timeout", default="?")
    args = parser.parse_args(argv)
    finish_tasks(args.task, args.results, args.seconds, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
