"""Class throughput of `grader batch` against a naive pytest + Hypothesis grader (one
process per submission, 2 at a time), in the same invocation.

    .venv/bin/python bench/batch_speed.py [--students 40] [--runs 3]

Classes: all correct, all buggy, and mixed (half and half), built from the bundled samples.
Reports medians of submissions per second, the ratio to the baseline, the buggy/correct
slowdown, how throughput grows from --jobs 1 to --jobs 2, and what warm workers gain over a
fresh worker per submission (--no-warm). `--compare DIR` (repeatable) grades the mixed
class with `--jobs 2` also with the grader of another checkout (e.g. an older commit's
`git archive` unpacked in DIR), interleaved, each with its own case cache.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from classes import ROOT, make_class  # (bench/ is on sys.path when run)

NAIVE = os.path.join(ROOT, "bench", "naive", "test_naive_pe.py")


def grader_rate(
    folder: str, jobs: int, env: dict, *extra: str, cores: set | None = None, root: str | None = None
) -> float:
    """Submissions per second of one whole `grader batch` run; ``cores`` pins it (and all it
    starts) to those CPUs; ``root``: the grader of that checkout (`python -m grader` there)."""
    script = os.path.join(os.path.dirname(sys.executable), "grader")
    command = [sys.executable, "-m", "grader"] if root else [script]
    out = tempfile.mkdtemp(prefix="bench-out-")
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
    start = time.perf_counter()
    task = os.path.join(root or ROOT, "tasks", "positional-encoding")
    subprocess.run(
        [*command, "batch", task, folder, "--out", out, "--jobs", str(jobs), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        check=True,
        preexec_fn=pin,
        cwd=root,
    )
    seconds = time.perf_counter() - start
    shutil.rmtree(out)
    return len(os.listdir(folder)) / seconds


def naive_rate(folder: str, jobs: int, env: dict) -> float:
    files = sorted(os.listdir(folder))

    def one(name):
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", NAIVE],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(env, SUBMISSION=os.path.join(folder, name)),
        )

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, files))
    return len(files) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--naive-students",
        type=int,
        default=10,
        help="the baseline is slow: it grades a smaller class of the same mix",
    )
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="DIR",
        help="also grade the mixed class with the grader checked out in DIR",
    )
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-classes-")
    env = dict(os.environ, GRADER_CACHE_DIR=os.path.join(work, "cache"))
    classes = {}
    for kind in ("correct", "buggy", "mixed"):
        classes[kind] = os.path.join(work, kind)
        make_class(classes[kind], args.students, kind)
    naive_mixed = os.path.join(work, "naive-mixed")
    make_class(naive_mixed, args.naive_students, "mixed")
    grader_rate(classes["correct"], 2, env)  # fills the case cache once, as a real run would
    others = {
        root: dict(env, PYTHONPATH=root, GRADER_CACHE_DIR=os.path.join(work, f"cache-{i}"))
        for i, root in enumerate(args.compare)
    }
    for root, other_env in others.items():
        grader_rate(classes["correct"], 2, other_env, root=root)
    rates: dict[str, list[float]] = {}
    for _ in range(args.runs):
        for kind, folder in classes.items():
            rates.setdefault(f"grader {kind} j2", []).append(grader_rate(folder, 2, env))
        rates.setdefault("grader mixed j1", []).append(grader_rate(classes["mixed"], 1, env))
        rates.setdefault("grader mixed j1 1 core", []).append(
            grader_rate(classes["mixed"], 1, env, cores={min(os.sched_getaffinity(0))})
        )
        rates.setdefault("grader mixed j2 fresh", []).append(
            grader_rate(classes["mixed"], 2, env, "--no-warm")
        )
        rates.setdefault("naive mixed j2", []).append(naive_rate(naive_mixed, 2, env))
        for root, other_env in others.items():
            rates.setdefault(f"{root} mixed j2", []).append(
                grader_rate(classes["mixed"], 2, other_env, root=root)
            )
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(
        f"grader batch, positional-encoding (370 generated cases + examples per submission), "
        f"{args.students} students, {args.runs} runs, medians, submissions/s"
    )
    for key, value in med.items():
        print(f"  {key:22s} {value:6.2f}/s   ({' '.join(f'{r:.2f}' for r in rates[key])})")
    print(f"  mixed class vs naive (2 jobs each): {med['grader mixed j2'] / med['naive mixed j2']:.1f}x")
    print(f"  buggy class is {med['grader correct j2'] / med['grader buggy j2']:.2f}x slower than correct")
    print(
        f"  --jobs 2 vs --jobs 1 on the mixed class: {med['grader mixed j2'] / med['grader mixed j1']:.2f}x "
        "(one job already keeps more than one core busy: its calls are pipelined)"
    )
    print(
        f"  --jobs 2 on 2 cores vs --jobs 1 pinned to 1 core: "
        f"{med['grader mixed j2'] / med['grader mixed j1 1 core']:.2f}x"
    )
    print(
        f"  warm workers vs a fresh worker per submission (--no-warm), mixed class: "
        f"{med['grader mixed j2'] / med['grader mixed j2 fresh']:.2f}x"
    )
    for root in others:
        print(f"  this checkout vs {root}, mixed j2: {med['grader mixed j2'] / med[f'{root} mixed j2']:.2f}x")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
