"""How long TensorFlow hand-ins take to grade, against running them.

    .venv/bin/python bench/framework_speed.py [--runs 3] [--students 12]

1. A class: ``--students`` TensorFlow scripts of pe-table-shape (copies of the correct and
   wrong TensorFlow samples, alternating) graded by the installed ``grader batch --jobs 2``
   (warm workers: TensorFlow imported once per fork server), against running each script
   once in a fresh ``python file.py`` of the same environment, two at a time (the same two
   cores). Goal (issue 24): the batch at least 1.5x faster.
2. One file: ``grader check`` of the correct TensorFlow sample against ``python file.py``.
   Goal: at most 2x slower.

Runs are interleaved (grader, baseline, grader, ...) so machine noise hits both alike;
medians of ``--runs`` are reported with their ratios, and written to
bench/results/framework_speed.json (not committed). The case cache is warmed first.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK = os.path.join(ROOT, "tasks", "pe-table-shape")
SAMPLES = os.path.join(ROOT, "submissions", "pe-table-shape")
CLASS_SAMPLES = ["correct_tensorflow_tutorial.py", "mistake_tensorflow_prints_the_table.py"]
ONE = os.path.join(SAMPLES, "correct_tensorflow_tutorial.py")
GOALS = {"class": 1.5, "one file": 2.0}


def grader_script() -> str:
    script = os.path.join(os.path.dirname(sys.executable), "grader")
    if not os.path.exists(script):
        sys.exit(f"{script} not found: install the project first (pip install -e '.[tensorflow]')")
    return script


def run(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - start


def scripts_two_at_a_time(files: list[str], env: dict) -> float:
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(
            pool.map(
                lambda f: subprocess.run(
                    [sys.executable, f],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=env,
                    cwd=ROOT,
                ),
                files,
            )
        )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--students", type=int, default=12)
    args = parser.parse_args()
    import importlib.util

    if importlib.util.find_spec("tensorflow") is None:
        sys.exit("TensorFlow is not installed: pip install -e '.[tensorflow]'")
    grader = grader_script()
    work = tempfile.mkdtemp(prefix="grader-bench-fw-")
    env = dict(os.environ, GRADER_CACHE_DIR=os.path.join(work, "cache"))
    klass = os.path.join(work, "class")
    os.makedirs(klass)
    files = []
    for i in range(args.students):
        path = os.path.join(klass, f"student{i:03d}.py")
        shutil.copy(os.path.join(SAMPLES, CLASS_SAMPLES[i % len(CLASS_SAMPLES)]), path)
        files.append(path)
    run([grader, "check", TASK, ONE], env)  # fills the case cache and the timings
    times: dict[str, list[float]] = {
        "batch --jobs 2": [],
        "python each, 2 at a time": [],
        "check": [],
        "python file.py": [],
    }
    for r in range(args.runs):
        out = os.path.join(work, f"out{r}")
        times["batch --jobs 2"].append(
            run([grader, "batch", TASK, klass, "--out", out, "--jobs", "2", "--trusted-submissions"], env)
        )
        times["python each, 2 at a time"].append(scripts_two_at_a_time(files, env))
        times["check"].append(run([grader, "check", TASK, ONE], env))
        times["python file.py"].append(run([sys.executable, ONE], env))
        print(f"run {r + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items()), flush=True)
    medians = {k: statistics.median(v) for k, v in times.items()}
    class_ratio = medians["python each, 2 at a time"] / medians["batch --jobs 2"]
    one_ratio = medians["check"] / medians["python file.py"]
    summary = {
        "students": args.students,
        "runs": args.runs,
        "medians_seconds": medians,
        "times": times,
        "class_speedup": class_ratio,
        "check_over_python": one_ratio,
        "goals": {"class_speedup_at_least": GOALS["class"], "check_over_python_at_most": GOALS["one file"]},
    }
    print(
        f"class of {args.students}: grader batch --jobs 2 {medians['batch --jobs 2']:.1f} s, "
        f"python each (2 at a time) {medians['python each, 2 at a time']:.1f} s: "
        f"{class_ratio:.2f}x faster (goal >= {GOALS['class']}x)"
    )
    print(
        f"one file: grader check {medians['check']:.1f} s, python file.py "
        f"{medians['python file.py']:.1f} s: {one_ratio:.2f}x (goal <= {GOALS['one file']}x)"
    )
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "framework_speed.json"), "w") as f:
        json.dump(summary, f, indent=2)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
