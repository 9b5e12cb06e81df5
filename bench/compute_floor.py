"""Issue 26's four ratios in one run against the naive pytest + Hypothesis grader, on a class
that looks like a real one (hidden_class.py), and the class rate against the compute floor.

    .venv/bin/python bench/compute_floor.py [--runs 3] [--students 60]

In one invocation, interleaved run by run, medians:

1. correct file: `grader check` / naive, whole process, over the mix's right files;
2. buggy file: the same over its wrong ones (NaN, shape, float16/32, in place, ...);
3. the class of ``--students`` files, `grader batch --jobs 2` against the naive grader two
   files at a time: throughput, grader / naive;
4. stragglers: the same class with one file that loops forever and one that crashes added,
   the extra time over the class's own time;

and the compute floor: one process per file (two at a time) that does only the reference's
work (imports numpy and the reference, calls it on every frozen case of the task), the least
any grader that runs each file in a process of its own could take; the class rate against it.
Goals (issue 26): correct <= 0.30x, buggy <= 0.10x, class >= 10x, stragglers <= 0.25x.
This checkout is measured as a course installs it (normal_install.py: a wheel in a
virtualenv of its own, which borrows the development venv's packages), and the naive grader
and the compute floor run on that virtualenv's Python too; ``--editable`` measures the
development venv's `grader` instead. Results also go to bench/results/.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from classes import ROOT, TASK  # (bench/ is on sys.path when run)
from hidden_class import make_hidden_class
from limits_speed import LOOPS, SEGFAULTS
from normal_install import normal_install

NAIVE = os.path.join(ROOT, "bench", "naive", "test_naive_pe.py")
CHECK_FILES = 3  # right files and wrong files timed per run, one check each
GOALS = {"correct": 0.30, "buggy": 0.10, "class": 10.0, "stragglers": 0.25}

# One process per file, doing the reference's work only: the floor under any grader that
# gives each file a process of its own.
FLOOR_CHILD = """
import importlib.util, pickle, sys
import numpy as np
spec = importlib.util.spec_from_file_location("reference", sys.argv[1])
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)
with open(sys.argv[2], "rb") as f:
    calls = pickle.load(f)
for function, args in calls:
    getattr(reference, function)(**args)
"""


# The `grader` script and the Python measured (main() sets them: normal_install.py).
GRADER, PYTHON = "", sys.executable


def grader_script() -> str:
    return GRADER


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - start


def check_seconds(path: str, env: dict) -> float:
    forget_shrinks(env)
    return timed([grader_script(), "check", TASK, path], env)


def forget_shrinks(env: dict) -> None:
    """Every measured run shrinks as a first run does: the shrink paths an earlier run kept
    in the cache (shrinking/tree_store.py) would let the same file's second check skip Hypothesis."""
    shutil.rmtree(os.path.join(env["GRADER_CACHE_DIR"], "shrink-paths"), ignore_errors=True)


def naive_seconds(path: str, env: dict) -> float:
    return timed([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", NAIVE], dict(env, SUBMISSION=path))


def two_at_a_time(paths: list[str], one) -> float:
    """Seconds for ``one(path)`` over every path, two at a time (the machine's two cores)."""
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(one, paths))
    return time.perf_counter() - start


def batch_seconds(folder: str, env: dict) -> float:
    forget_shrinks(env)  # (the class shares its shrinks within the run, not from the last)
    out = tempfile.mkdtemp(prefix="bench-out-")
    seconds = timed([grader_script(), "batch", TASK, folder, "--out", out, "--jobs", "2"], env)
    shutil.rmtree(out)
    return seconds


def frozen_calls(path: str) -> None:
    """Every call the task's checks make, as (function, keyword arguments), pickled to ``path``."""
    sys.path.insert(0, ROOT)
    from grader.authoring import load_task
    from grader.grading.prepared import PreparedTask

    task = load_task(TASK)
    prepared = PreparedTask.of(task)
    calls = []
    for check in task.checks:
        if check.call is None:
            continue
        for args in prepared.case_set(check).cases:
            calls.append((check.call, args))
    with open(path, "wb") as f:
        pickle.dump(calls, f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--editable", action="store_true", help="the development venv's grader")
    parser.add_argument("--files-only", action="store_true", help="only the one-file ratios (1 and 2)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-floor-")
    global GRADER, PYTHON
    if args.editable:
        GRADER = os.path.join(os.path.dirname(sys.executable), "grader")
        if not os.path.exists(GRADER):
            sys.exit(f"{GRADER} not found: install the project first (pip install -e .)")
    else:
        GRADER = normal_install(work)
        PYTHON = os.path.join(os.path.dirname(GRADER), "python")
    print(f"  measuring {GRADER}", flush=True)
    env = dict(os.environ, GRADER_CACHE_DIR=os.path.join(work, "cache"))
    honest = os.path.join(work, "class")
    right = make_hidden_class(honest, args.students)
    files = sorted(os.path.join(honest, n) for n in os.listdir(honest))
    correct = [p for p, ok in zip(files, right) if ok][:CHECK_FILES]
    buggy = [p for p, ok in zip(files, right) if not ok][:CHECK_FILES]
    stragglers = os.path.join(work, "with-stragglers")
    shutil.copytree(honest, stragglers)
    for name, source in (("loops", LOOPS), ("crashes", SEGFAULTS)):
        with open(os.path.join(stragglers, f"{name}.py"), "w") as f:
            f.write(source)
    calls = os.path.join(work, "calls.pickle")
    frozen_calls(calls)
    floor_child = [PYTHON, "-c", FLOOR_CHILD, os.path.join(TASK, "reference.py"), calls]

    check_seconds(correct[0], env)  # the reference's times measured, cache warm
    seconds: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        seconds.setdefault(name, []).append(value)
        print(f"    {name:24s} {value:8.2f} s", flush=True)

    for run in range(args.runs):
        print(f"  run {run + 1} of {args.runs}", flush=True)
        for kind, paths in (("correct", correct), ("buggy", buggy)):
            add(f"check {kind}", statistics.mean(check_seconds(p, env) for p in paths))
            add(f"naive {kind}", statistics.mean(naive_seconds(p, env) for p in paths))
        if args.files_only:
            continue
        add("batch class", batch_seconds(honest, env))
        add("batch class+stragglers", batch_seconds(stragglers, env))
        add("naive class", two_at_a_time(files, lambda p: naive_seconds(p, env)))
        add("floor class", two_at_a_time(files, lambda p: timed(floor_child, env)))

    med = {name: statistics.median(values) for name, values in seconds.items()}
    ratios = {
        "correct": med["check correct"] / med["naive correct"],
        "buggy": med["check buggy"] / med["naive buggy"],
    }
    n = len(files)
    print(f"\n{args.runs} interleaved runs, medians; a class of {n} (hidden_class.py mix)")
    print(f"  correct file   grader {med['check correct']:.2f} s  naive {med['naive correct']:.2f} s", end="")
    print(f"   {ratios['correct']:.3f}x  (goal <= {GOALS['correct']}x)")
    print(f"  buggy file     grader {med['check buggy']:.2f} s  naive {med['naive buggy']:.2f} s", end="")
    print(f"   {ratios['buggy']:.3f}x  (goal <= {GOALS['buggy']}x)")
    if args.files_only:
        shutil.rmtree(work)
        return
    ratios["class"] = med["naive class"] / med["batch class"]
    ratios["stragglers"] = (med["batch class+stragglers"] - med["batch class"]) / med["batch class"]
    print(
        f"  class          grader {n / med['batch class']:.2f}/s  naive {n / med['naive class']:.2f}/s"
        f"   {ratios['class']:.1f}x  (goal >= {GOALS['class']}x)"
    )
    print(
        f"  stragglers     +{med['batch class+stragglers'] - med['batch class']:.2f} s on "
        f"{med['batch class']:.2f} s   {ratios['stragglers']:.3f}x  (goal <= {GOALS['stragglers']}x)"
    )
    print(
        f"  compute floor  {n / med['floor class']:.2f}/s (one process per file, the reference's work);"
        f" the grader's class rate is {med['floor class'] / med['batch class']:.2f}x of it"
    )
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "compute_floor.json"), "w") as f:
        json.dump({"runs": seconds, "medians": med, "ratios": ratios, "students": n}, f, indent=2)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
