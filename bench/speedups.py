"""What each speed-up gains (grader/grading/speedups.py): every measure run with the speed-up
and without it ($GRADER_NO_SPEEDUPS naming it), interleaved, medians and ratios.

    .venv/bin/python bench/speedups.py [--runs 5] [--students 20]

On positional-encoding, as `python -m grader` of this checkout, with a warm case cache:

- head-start: `grader check` of a right file (nothing to shrink: the start is the time).
- shrink-lanes: `grader check` of a wrong file that fails 14 checks (14 shrinks), with the
  shrink cache off in both (no earlier shrink to walk: every shrink is Hypothesis's).
- shrink-cache, a file checked again: the same wrong file, its shrink paths on disk from
  an earlier check (a student checking again) against none walked.
- shrink-cache, a class: `grader batch --jobs 2` of a mixed class, the shrink paths on disk
  removed before every run (what the batch gains inside itself: its pool processes and
  later submissions walk the shrinks of earlier ones).
- all three: the wrong file's check, the speed-ups on against `--no-speedups`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from classes import ROOT, SAMPLES, TASK, make_class

RIGHT = os.path.join(SAMPLES, "correct_vectorized.py")
WRONG = os.path.join(SAMPLES, "mistake_sin_cos_swapped.py")


def timed(args: list[str], cache: str, off: str, fresh_paths: bool = False) -> float:
    if fresh_paths:
        shutil.rmtree(os.path.join(cache, "shrink-paths"), ignore_errors=True)
    env = dict(os.environ, GRADER_CACHE_DIR=cache, PYTHONPATH=ROOT, GRADER_NO_SPEEDUPS=off)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"grader {' '.join(args)} exited {done.returncode}: {done.stderr[-500:]!r}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--students", type=int, default=20)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="grader-speedups-")
    cache = os.path.join(work, "cache")
    klass = os.path.join(work, "class")
    make_class(klass, args.students)
    check_right, check_wrong = ["check", TASK, RIGHT], ["check", TASK, WRONG]

    def batch() -> list[str]:
        out = os.path.join(work, f"out-{time.monotonic_ns()}")
        return ["batch", TASK, klass, "--jobs", "2", "--trusted-submissions", "--out", out]

    # measure -> (on, off): how each run is made
    measures = {
        "head-start (check right)": (
            lambda: timed(check_right, cache, ""),
            lambda: timed(check_right, cache, "head-start"),
        ),
        "shrink-lanes (check wrong)": (
            lambda: timed(check_wrong, cache, "shrink-cache"),
            lambda: timed(check_wrong, cache, "shrink-cache,shrink-lanes"),
        ),
        "shrink-cache (check again)": (
            lambda: timed(check_wrong, cache, ""),  # (the paths of the warm-up's check)
            lambda: timed(check_wrong, cache, "shrink-cache"),
        ),
        f"shrink-cache (batch of {args.students})": (
            lambda: timed(batch(), cache, "", fresh_paths=True),
            lambda: timed(batch(), cache, "shrink-cache"),
        ),
        "all three (check wrong)": (
            lambda: timed(check_wrong, cache, ""),
            lambda: timed(check_wrong, cache, "1"),
        ),
    }
    timed(check_wrong, cache, "")  # warm: the case cache, the wrong file's shrink paths
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.runs):
        for name, (on, off) in measures.items():
            times.setdefault((name, "on"), []).append(on())
            times.setdefault((name, "off"), []).append(off())
    print(f"{args.runs} interleaved runs, medians (seconds of the whole command), {ROOT}")
    for name in measures:
        on, off = (statistics.median(times[(name, s)]) for s in ("on", "off"))
        runs = (
            " ".join(f"{t:.2f}" for t in times[(name, "on")])
            + " / "
            + " ".join(f"{t:.2f}" for t in times[(name, "off")])
        )
        print(f"  {name:28s} on {on:6.2f} s   off {off:6.2f} s   off/on {off / on:4.2f}   ({runs})")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
