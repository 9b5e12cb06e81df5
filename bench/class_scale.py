"""A class of 1,000: the batch's memory and time as the class grows, resume after kill -9 of
the whole batch, and `grader export` of the result (issue 13), in one invocation.

    .venv/bin/python bench/class_scale.py [--small 100] [--large 1000] [--runs 2] [--export-runs 5]

Classes are copies of the bundled positional-encoding samples under distinct names (correct
and buggy, half and half, as bench/batch_speed.py). Each `grader batch --jobs 2` runs this
checkout's grader (`python -m grader`, a fresh case cache filled once before timing) inside a
wrapper that reports, when the batch process exits, its own peak RSS (getrusage RUSAGE_SELF)
and the largest peak RSS among the processes it reaped (RUSAGE_CHILDREN: the pool processes).
Runs of the small and large class are interleaved; medians.

Then: the large class again, its process group killed with SIGKILL once half the class is
stored, the same command run again; every student must be in grades-<task>.csv exactly once,
with the score and status of a clean run. Last, `grader export` of the large class's
gradebook, plain and with a roster and the Canvas and Moodle files; medians.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from classes import ROOT, TASK, make_class  # (bench/ is on sys.path when run)

GRADES = "grades-positional-encoding.csv"

# Runs the grader's command line (main(), not the console entry, which leaves by os._exit);
# then the batch process writes its peak RSS and its reaped children's largest one, in KiB,
# to the file named by argv[1].
WRAPPER = """
import json, resource, sys
report = sys.argv[1]
sys.argv = ["grader"] + sys.argv[2:]
from grader.cli import main
code = main()
with open(report, "w") as f:
    json.dump({"self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}, f)
sys.exit(code)
"""


def batch(folder: str, out: str, env: dict) -> tuple[float, dict]:
    """Seconds of one whole `grader batch --jobs 2`, and the peak RSS (KiB) of the batch
    process and of the largest process it reaped."""
    report = out + ".rss.json"
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", WRAPPER, report, "batch", TASK, folder, "--out", out, "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
        check=True,
    )
    seconds = time.perf_counter() - start
    with open(report) as f:
        return seconds, json.load(f)


def stored_rows(book: str) -> int:
    if not os.path.exists(book):
        return 0
    try:
        db = sqlite3.connect(f"file:{book}?mode=ro", uri=True, timeout=1)
        try:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        finally:
            db.close()
    except sqlite3.OperationalError:  # not created yet, or busy
        return 0


def grade_rows(out: str) -> list[dict]:
    with open(os.path.join(out, GRADES), newline="") as f:
        return list(csv.DictReader(f))


def kill_and_resume(folder: str, out: str, students: int, env: dict) -> dict:
    """Kills the batch's whole process group with SIGKILL once half the class is stored, runs
    the same command again; returns what was stored at the kill, the rerun's seconds, and the
    rerun's grades file rows."""
    command = [sys.executable, "-m", "grader", "batch", TASK, folder, "--out", out, "--jobs", "2"]
    book = os.path.join(out, "gradebook.sqlite")
    first = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    at_kill = 0
    while first.poll() is None:
        at_kill = stored_rows(book)
        if at_kill >= students // 2:
            os.killpg(first.pid, signal.SIGKILL)
            break
        time.sleep(0.2)
    first.wait()
    time.sleep(1)  # let the pool processes (PR_SET_PDEATHSIG) and sandboxes go
    at_kill = stored_rows(book)
    start = time.perf_counter()
    rerun = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    return {
        "stored_at_kill": at_kill,
        "rerun_seconds": time.perf_counter() - start,
        "rerun_exit": rerun.returncode,
        "rerun_said": [x for x in rerun.stderr.splitlines() if "to grade" in x] or ["?"],
        "rows": grade_rows(out),
    }


def export_seconds(out: str, *extra: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "grader", "export", out, *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
        check=True,
    )
    return time.perf_counter() - start


def mib(kib: float) -> str:
    return f"{kib / 1024:.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=1000)
    parser.add_argument(
        "--runs",
        type=int,
        default=2,
        help="clean runs of each class (the large class is graded once more for the kill -9 check)",
    )
    parser.add_argument("--export-runs", type=int, default=5)
    parser.add_argument("--no-resume", action="store_true", help="memory and time only")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-scale-")
    env = dict(os.environ, GRADER_CACHE_DIR=os.path.join(work, "cache"), PYTHONPATH=ROOT)
    classes = {n: os.path.join(work, f"class-{n}") for n in (args.small, args.large)}
    for n, folder in classes.items():
        make_class(folder, n, name="student{:04d}.py")
    batch(classes[args.small], os.path.join(work, "warm-up"), env)  # fills the case cache

    runs: dict[int, list[tuple[float, dict]]] = {n: [] for n in classes}
    for run in range(args.runs):
        for n, folder in classes.items():
            runs[n].append(batch(folder, os.path.join(work, f"out-{n}-{run}"), env))
    print(
        f"grader batch --jobs 2, positional-encoding, correct and buggy half and half, "
        f"{args.runs} runs each, medians (all runs)"
    )
    med = {}
    for n, results in runs.items():
        seconds = [s for s, _ in results]
        parent = [p["self"] for _, p in results]
        child = [p["children"] for _, p in results]
        med[n] = (statistics.median(seconds), statistics.median(parent), statistics.median(child))
        print(
            f"  {n:5d} students  {med[n][0]:7.1f} s  {n / med[n][0]:5.2f}/s   "
            f"batch process peak RSS {mib(med[n][1])} ({' '.join(mib(p) for p in parent)})   "
            f"largest pool process {mib(med[n][2])} ({' '.join(mib(c) for c in child)})   "
            f"[{' '.join(f'{s:.1f}' for s in seconds)} s]"
        )
    small, large = med[args.small], med[args.large]
    print(
        f"  peak RSS {args.large}/{args.small}: batch process {large[1] / small[1]:.2f}x, "
        f"largest pool process {large[2] / small[2]:.2f}x"
    )
    print(
        f"  rate {args.large} vs {args.small}: {(args.large / large[0]) / (args.small / small[0]):.2f}x "
        f"(seconds per student {small[0] / args.small:.3f} -> {large[0] / args.large:.3f})"
    )

    out = os.path.join(work, f"out-{args.large}-0")
    roster = os.path.join(work, "roster.csv")
    with open(roster, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["submission_id", "lms_id", "name"])
        for i, student in enumerate(sorted(r["student"] for r in grade_rows(out))):
            writer.writerow([student, f"{100000 + i}", f"Student {i}"])
    plain, lms = [], []
    for _ in range(args.export_runs):
        plain.append(export_seconds(out, env=env))
        lms.append(
            export_seconds(out, "--roster", roster, "--format", "canvas", "--format", "moodle", env=env)
        )
    print(f"grader export of {args.large} students, {args.export_runs} runs, medians (all runs)")
    print(
        f"  plain                         {statistics.median(plain):.2f} s ({' '.join(f'{s:.2f}' for s in plain)})"
    )
    print(
        f"  --roster, canvas and moodle   {statistics.median(lms):.2f} s ({' '.join(f'{s:.2f}' for s in lms)})"
    )
    if args.no_resume:
        shutil.rmtree(work, ignore_errors=True)
        return
    clean = {
        r["student"]: (r["score"], r["status"]) for r in grade_rows(os.path.join(work, f"out-{args.large}-0"))
    }
    resumed_out = os.path.join(work, "out-killed")
    resumed = kill_and_resume(classes[args.large], resumed_out, args.large, env)
    students = [r["student"] for r in resumed["rows"]]
    got = {r["student"]: (r["score"], r["status"]) for r in resumed["rows"]}
    differ = sorted(s for s in clean if got.get(s) != clean[s])
    print(
        f"kill -9 of the batch's process group at {resumed['stored_at_kill']}/{args.large} stored, "
        f"then the same command: exit {resumed['rerun_exit']} in {resumed['rerun_seconds']:.1f} s, "
        f"said {resumed['rerun_said'][-1]!r}"
    )
    print(
        f"  grades rows {len(students)}, distinct students {len(set(students))}, "
        f"missing {len(set(clean) - set(students))}, scores/statuses differing from a clean run "
        f"{len(differ)}{' ' + ', '.join(differ[:5]) if differ else ''}"
    )

    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
