"""How long `grader check` takes for one submission, whole process, against a naive
pytest + Hypothesis grader of the same checks run in the same invocation.

    .venv/bin/python bench/check_speed.py [--runs 9]

Runs are interleaved (grader, baseline, grader, ...) so machine noise hits both alike;
medians are reported, with the ratio baseline / grader. The installed console script is
measured (not `python -m`, not a shell shim). Results also go to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK = os.path.join(ROOT, "tasks", "positional-encoding")
SAMPLES = os.path.join(ROOT, "submissions", "positional-encoding")
CORRECT = ["correct_vectorized.py"]
BUGGY = [
    "mistake_exponent_missing_two.py",
    "mistake_sin_cos_swapped.py",
    "mistake_float32_table.py",
    "mistake_adds_in_place.py",
]
NAIVE = os.path.join(ROOT, "bench", "naive", "test_naive_pe.py")
TARGETS = {"correct": 0.5, "buggy": 1.0}


def grader_command(sample: str) -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "grader")
    if not os.path.exists(script):
        sys.exit(f"{script} not found: install the project first (pip install -e .)")
    return [script, "check", TASK, os.path.join(SAMPLES, sample)]


def naive_command(sample: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", NAIVE]


def timed(cmd: list[str], env: dict, sample: str) -> tuple[float, int]:
    env = dict(env, SUBMISSION=os.path.join(SAMPLES, sample))
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - start, done.returncode


def generated_cases(env: dict) -> int:
    sys.path.insert(0, ROOT)
    from grader.authoring import load_task

    task = load_task(TASK)
    return sum(c.options.cases for c in task.checks if c.kind.name in ("property", "mutation"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="grader-bench-cache-")
    env = dict(os.environ, GRADER_CACHE_DIR=cache)

    cold, _ = timed(grader_command(CORRECT[0]), env, CORRECT[0])  # fills the case cache
    times: dict[tuple[str, str], list[float]] = {}
    codes: dict[tuple[str, str], int] = {}
    for _ in range(args.runs):
        for kind, samples in (("correct", CORRECT), ("buggy", BUGGY)):
            for sample in samples:
                for tool, make in (("grader", grader_command), ("naive", naive_command)):
                    seconds, code = timed(make(sample), env, sample)
                    times.setdefault((tool, kind), []).append(seconds)
                    codes[(tool, sample)] = code

    report = {
        "runs": args.runs,
        "generated_cases": generated_cases(env),
        "cold_first_run_s": round(cold, 3),
        "medians_s": {},
        "ratios": {},
        "exit_codes": {f"{t}:{s}": c for (t, s), c in codes.items()},
    }
    print(
        f"grader check, positional-encoding, {report['generated_cases']} generated cases + examples, "
        f"{args.runs} interleaved runs (medians, whole process)"
    )
    print(f"  first run with an empty case cache: {cold:.3f} s")
    for kind in ("correct", "buggy"):
        g = statistics.median(times[("grader", kind)])
        n = statistics.median(times[("naive", kind)])
        report["medians_s"][kind] = {"grader": round(g, 3), "naive": round(n, 3)}
        report["ratios"][kind] = round(n / g, 2)
        verdict = "meets" if g <= TARGETS[kind] else "MISSES"
        print(
            f"  {kind:8s} grader {g:.3f} s   naive pytest+Hypothesis {n:.3f} s   "
            f"ratio {n / g:.1f}x   ({verdict} the {TARGETS[kind]} s target)"
        )
    bad = [k for k, c in codes.items() if k[0] == "grader" and (c == 0) != (k[1] in CORRECT)]
    if bad:
        print(f"  unexpected grader exit codes: {bad}")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "check_speed.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
