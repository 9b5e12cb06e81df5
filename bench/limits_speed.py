"""What a looping student costs with the default, reference-derived call limits (issue 13),
in the same invocation as its baseline.

    .venv/bin/python bench/limits_speed.py [--runs 5] [--students 60]

1. `grader check` wall time of a submission whose `sinusoidal_pe` loops forever, against a
   correct submission (correct_vectorized.py), runs interleaved; medians.
2. `grader batch --jobs 2` of a class of N honest students (the bundled correct and buggy
   samples, half and half) plus one that loops and one that segfaults, against the N honest
   ones alone; ratio of the medians.
Runs this checkout's grader (`python -m grader` with it on PYTHONPATH), a fresh case cache
filled once before timing.
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

from classes import CORRECT, ROOT, SAMPLES, TASK, make_class  # (bench/ is on sys.path when run)

HONEST = CORRECT + ["correct_loops.py"]

LOOPS = """import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    while True:
        pass


def add_positional_encoding(x, base=10000.0):
    x = np.asarray(x, dtype=float)
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""
SEGFAULTS = LOOPS.replace(
    "    while True:\n        pass", "    import ctypes\n    return ctypes.string_at(0)"
)


def grader(*args: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "grader", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    return time.perf_counter() - start


def make_attack_class(folder: str, students: int, attackers: bool) -> None:
    """An honest class (correct_loops among the correct: slow but right), plus one that
    loops and one that segfaults with ``attackers``."""
    make_class(folder, students, correct=HONEST)
    if attackers:
        for name, source in (("loops", LOOPS), ("segfaults", SEGFAULTS)):
            with open(os.path.join(folder, f"{name}.py"), "w") as f:
                f.write(source)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--students", type=int, default=60)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-limits-")
    env = dict(os.environ, GRADER_CACHE_DIR=os.path.join(work, "cache"), PYTHONPATH=ROOT)
    loops = os.path.join(work, "loops.py")
    with open(loops, "w") as f:
        f.write(LOOPS)
    correct = os.path.join(SAMPLES, "correct_vectorized.py")
    honest, mixed = os.path.join(work, "honest"), os.path.join(work, "with-attackers")
    make_attack_class(honest, args.students, False)
    make_attack_class(mixed, args.students, True)
    grader("check", TASK, correct, env=env)  # fills the case cache and the reference's times
    times: dict[str, list[float]] = {}
    for run in range(args.runs):
        times.setdefault("check loops", []).append(grader("check", TASK, loops, env=env))
        times.setdefault("check correct", []).append(grader("check", TASK, correct, env=env))
        for name, folder in (("batch honest", honest), ("batch +loop +segfault", mixed)):
            out = os.path.join(work, f"out-{name.split()[1]}-{run}")
            times.setdefault(name, []).append(
                grader("batch", TASK, folder, "--out", out, "--jobs", "2", env=env)
            )
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"positional-encoding, default limits, {args.runs} runs, medians (all runs: seconds)")
    for key, value in med.items():
        print(f"  {key:24s} {value:6.2f} s   {' '.join(f'{v:.2f}' for v in times[key])}")
    print(
        f"  a looping check vs a correct one: {med['check loops'] / med['check correct']:.2f}x "
        f"(+{med['check loops'] - med['check correct']:.2f} s)"
    )
    print(
        f"  {args.students} honest + loop + segfault vs {args.students} honest, --jobs 2: "
        f"{med['batch +loop +segfault'] / med['batch honest']:.2f}x "
        f"(+{med['batch +loop +segfault'] - med['batch honest']:.2f} s)"
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
