"""Two checkouts of the grader side by side: `grader check` of one file and `grader batch` of
a class, each command run with the other checkout's interleaved, medians and ratios.

    .venv/bin/python bench/versions.py OTHER_CHECKOUT [--runs 5] [--students 20]

For "no slower than before": OTHER_CHECKOUT is a `git worktree add` of the commit to compare
with. Both run with this interpreter (the same numpy, Hypothesis), each from its own tree
(`python -m grader` with the tree as working folder), on the same task and samples (this
tree's), each on its own copy of the task (a task may have changed with the grader: the
other tree's task.yaml and freeze), with a warm case cache of its own.
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

from classes import CORRECT, SAMPLES, make_class

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(tree: str, args: list[str], cache: str) -> float:
    args = [a.format(task=os.path.join(tree, "tasks", "positional-encoding")) for a in args]
    env = dict(os.environ, GRADER_CACHE_DIR=cache, PYTHONPATH=tree)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"{tree}: grader {' '.join(args)} exited {done.returncode}: {done.stderr[-500:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--students", type=int, default=20)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="grader-versions-")
    trees = {"this": HERE, "other": os.path.abspath(args.other)}
    caches = {name: os.path.join(work, f"cache-{name}") for name in trees}
    klass = os.path.join(work, "class")
    make_class(klass, args.students)
    correct = os.path.join(SAMPLES, CORRECT[0])
    buggy = os.path.join(SAMPLES, "mistake_sin_cos_swapped.py")
    jobs = {
        "check correct": ["check", "{task}", correct],
        "check buggy": ["check", "{task}", buggy],
        f"batch of {args.students}": ["batch", "{task}", klass, "--jobs", "2", "--trusted-submissions"],
    }
    times: dict[tuple[str, str], list[float]] = {}
    for name, tree in trees.items():  # warm each cache (and the first-run costs) once
        run(tree, jobs["check correct"], caches[name])
    for _ in range(args.runs):
        for job, command in jobs.items():
            for name, tree in trees.items():
                extra = (
                    ["--out", os.path.join(work, f"out-{name}-{time.monotonic_ns()}")]
                    if command[0] == "batch"
                    else []
                )
                times.setdefault((job, name), []).append(run(tree, command + extra, caches[name]))
    print(f"{args.runs} interleaved runs, medians (this: {HERE}; other: {trees['other']})")
    for job in jobs:
        this, other = (statistics.median(times[(job, n)]) for n in ("this", "other"))
        print(f"  {job:16s} this {this:6.2f} s   other {other:6.2f} s   this/other {this / other:4.2f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
