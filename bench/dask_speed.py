"""`grader batch --dask` on a local two-worker cluster against `grader batch --jobs 2`, in
the same invocation (issue 13).

    .venv/bin/python bench/dask_speed.py [--students 60] [--runs 3]

A mixed class (the bundled correct and buggy positional-encoding samples, half and half) is
graded by this checkout's grader (`python -m grader`), runs interleaved: with `--jobs 2`,
and with `--dask` against a `distributed.LocalCluster` of 2 worker processes of 1 thread each
(started once, before timing, as a course would keep its cluster running; each Dask job
carries the task's files and the submission's bytes). Reports medians of submissions per
second and the ratio Dask / --jobs 2. Needs the dask extra (`pip install '.[dask]'`).
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

from classes import ROOT, TASK, make_class  # (bench/ is on sys.path when run)


def rate(folder: str, out: str, env: dict, *how: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "grader", "batch", TASK, folder, "--out", out, *how],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
        check=True,
    )
    return len(os.listdir(folder)) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from distributed import LocalCluster

    work = tempfile.mkdtemp(prefix="bench-dask-")
    env = dict(os.environ, GRADER_CACHE_DIR=os.path.join(work, "cache"), PYTHONPATH=ROOT)
    os.environ.update(GRADER_CACHE_DIR=env["GRADER_CACHE_DIR"], PYTHONPATH=ROOT)  # the Dask workers'
    folder = os.path.join(work, "class")
    make_class(folder, args.students)
    rates: dict[str, list[float]] = {"--jobs 2": [], "--dask, 2 workers": []}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        rate(folder, os.path.join(work, "warm-jobs"), env, "--jobs", "2")  # fills the case cache
        rate(folder, os.path.join(work, "warm-dask"), env, "--dask", address)  # and the workers'
        for run in range(args.runs):
            rates["--jobs 2"].append(rate(folder, os.path.join(work, f"jobs-{run}"), env, "--jobs", "2"))
            rates["--dask, 2 workers"].append(
                rate(folder, os.path.join(work, f"dask-{run}"), env, "--dask", address)
            )
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(
        f"grader batch, positional-encoding, {args.students} students (correct and buggy half "
        f"and half), {args.runs} runs, medians (all runs), submissions/s"
    )
    for key, value in med.items():
        print(f"  {key:18s} {value:6.2f}/s   ({' '.join(f'{r:.2f}' for r in rates[key])})")
    print(f"  --dask vs --jobs 2: {med['--dask, 2 workers'] / med['--jobs 2']:.2f}x")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
