"""The bundled samples' reports, in every format, byte for byte: this checkout against another
(or against itself with the speed-ups off).

    .venv/bin/python bench/same_reports.py [OTHER_CHECKOUT] [--no-speedups this|other|both]
                                           [--tasks NAME,...] [--jobs 2]

For "no behaviour change": OTHER_CHECKOUT is a `git worktree add` of the commit to compare
with; without it, this checkout is compared with itself (with `--no-speedups this`: the
switch off against on). Each grader runs with this interpreter, as `python -m grader` with
its tree first on the path, in a copy of this checkout's tasks/ and submissions/ (the same
files for both, the same relative paths in every report), with an empty cache of its own.
Per task: `grader batch TASK submissions/TASK` (its reports, grades, summary, class page and
every student's page), then, after the batch (so a check walks the shrink paths the batch
left on disk, when the speed-ups are on), `grader check TASK FILE --format json` of every
sample and, for the first right and the first wrong sample, `grader check` in every other
format too (`RENDERERS`: text, junit, gradescope, html); every json report is then rendered
in every format by that tree's renderers (Result.from_dict), and where `grader check` wrote
the format as well, the two must be the same bytes. (A check per sample and format takes
four times as long: 440 grades, a third of them TensorFlow or PyTorch files.)

What must vary is replaced before comparing, and only that (VARYING): a grade's wall-clock
seconds (json's and the batch's reports' "seconds", junit's time=, Gradescope's
execution_time) and gradebook.sqlite (grading timestamps; its contents are what the grades
CSV and the reports hold). No absolute path appears in any report: every path given is
relative to the copy both run in. Exits 1 and lists the files that differ, with their first
differing line, if any do.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMATS = ("text", "json", "junit", "gradescope", "html")
# (file name pattern, what varies in it, what it is replaced by)
VARYING = [
    (r"\.(json|jsonl)$", re.compile(rb'"seconds": [-0-9.e+]+'), b'"seconds": 0'),
    (r"\.junit$", re.compile(rb' time="[-0-9.e+]+"'), b' time="0"'),
    (r"\.gradescope$", re.compile(rb'"execution_time": [-0-9.e+]+'), b'"execution_time": 0'),
]
LEFT_OUT = {"gradebook.sqlite"}


def samples(root: str, task: str) -> list[str]:
    folder = os.path.join(root, "submissions", task)
    return sorted(n for n in os.listdir(folder) if not n.startswith("."))


def every_format(names: list[str]) -> list[str]:
    """The samples checked in every format by `grader check` itself: the first right one
    and the first wrong one (the others in json, their other formats rendered from it)."""
    right = [n for n in names if n.startswith("correct")]
    wrong = [n for n in names if not n.startswith("correct")]
    return right[:1] + wrong[:1]


# Run in the tree's own Python: its reports of a result read back from its json report
RENDER = """
import json, sys
from grader.records.result import Result
from grader.report import RENDERERS
try:
    from grader.authoring import load_task
except ImportError:  # (before grading/ was reorganised: b293b30 and older)
    from grader.grading.task_yaml import load_task
tasks = {}
for folder, path in json.load(sys.stdin):
    task = tasks.get(folder) or tasks.setdefault(folder, load_task(folder))
    with open(path, encoding="utf-8") as f:
        result = Result.from_dict(json.load(f))
    for fmt, render in RENDERERS.items():
        with open(f"{path[:-len('.json')]}.from-json.{fmt}", "w", encoding="utf-8") as f:
            f.write(render(result, colour=False, hidden_visibility=task.hidden_visibility))
"""


def reports(
    tree: str,
    work: str,
    tasks: list[str],
    jobs: int,
    speedups: bool,
    only: list[str] | None = None,
    batch: bool = True,
) -> dict[str, bytes]:
    """Every report of the samples of ``tasks`` (``only`` those, if given), by a name relative
    to the output folder, written by the grader in ``tree``; ``work`` holds the copy of tasks/
    and submissions/ that it grades."""
    out = tempfile.mkdtemp(prefix="reports-", dir=work)
    env = dict(os.environ, PYTHONPATH=tree, GRADER_CACHE_DIR=os.path.join(out, "cache"), NO_COLOR="1")
    env.pop("GRADER_NO_SPEEDUPS", None)
    if not speedups:
        env["GRADER_NO_SPEEDUPS"] = "1"

    def grader(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "grader", *args], cwd=work, env=env, capture_output=True, text=True
        )
        if done.returncode not in (0, 1):
            raise SystemExit(
                f"{tree}: grader {' '.join(args)} exited {done.returncode}: {done.stderr[-800:]}"
            )

    rendered = []
    for task in tasks:
        names = [n for n in samples(work, task) if only is None or n in only]
        if batch:  # (--trusted-submissions: the samples are ours; the rlimits tier is then allowed)
            grader(
                "batch", f"tasks/{task}", f"submissions/{task}", "--out", os.path.join(out, "batch", task),
                "--jobs", str(jobs), "--trusted-submissions",
            )  # fmt: skip
        commands = [
            ("check", f"tasks/{task}", f"submissions/{task}/{name}", "--format", fmt, "--color", "never",
             "-o", os.path.join(out, "check", task, f"{name}.{fmt}"))
            for name in names
            for fmt in (FORMATS if only is not None or name in every_format(names) else ("json",))
        ]  # fmt: skip
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            list(pool.map(lambda c: grader(*c), commands))
        rendered += [(f"tasks/{task}", os.path.join(out, "check", task, f"{name}.json")) for name in names]
    done = subprocess.run(
        [sys.executable, "-c", RENDER],
        input=json.dumps(rendered),
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"{tree}: rendering the json reports failed: {done.stderr[-800:]}")
    found = {}
    for folder in ("batch", "check"):
        for dirpath, _dirs, files in os.walk(os.path.join(out, folder)):
            for name in files:
                if name not in LEFT_OUT:
                    path = os.path.join(dirpath, name)
                    with open(path, "rb") as f:
                        found[os.path.relpath(path, out)] = normalised(name, f.read())
    return found


def round_trips(found: dict[str, bytes]) -> list[str]:
    """Where `grader check --format F` was run, the report rendered from its json must be
    the same bytes (else the renders from json would prove nothing)."""
    said = []
    for name, data in sorted(found.items()):
        base, _, fmt = name.rpartition(".")
        if ".from-json" not in base and (base + ".from-json." + fmt) in found:
            if found[base + ".from-json." + fmt] != data:
                said.append(f"rendered from json differs from grader check's: {name}")
    return said


def normalised(name: str, data: bytes) -> bytes:
    for pattern, varying, replacement in VARYING:
        if re.search(pattern, name):
            data = varying.sub(replacement, data)
    return data


def differences(these: dict[str, bytes], those: dict[str, bytes]) -> list[str]:
    """What differs, one line per file (with its first differing line)."""
    said = [f"only in this run: {n}" for n in sorted(these.keys() - those.keys())]
    said += [f"only in the other: {n}" for n in sorted(those.keys() - these.keys())]
    for name in sorted(these.keys() & those.keys()):
        if these[name] != those[name]:
            lines = difflib.unified_diff(
                those[name].decode(errors="replace").splitlines(),
                these[name].decode(errors="replace").splitlines(),
                lineterm="",
                n=0,
            )
            changed = [line for line in lines if line[:1] in "+-" and line[:3] not in ("+++", "---")]
            said.append(f"differs: {name}: {' | '.join(line[:200] for line in changed[:2])}")
    return said


def copy_samples(work: str) -> None:
    for folder in ("tasks", "submissions"):
        shutil.copytree(os.path.join(HERE, folder), os.path.join(work, folder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", nargs="?", default=HERE)
    parser.add_argument("--no-speedups", choices=["this", "other", "both"])
    parser.add_argument("--tasks", help="comma-separated (default: every task in tasks/)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    tasks = args.tasks.split(",") if args.tasks else sorted(os.listdir(os.path.join(HERE, "tasks")))
    work = tempfile.mkdtemp(prefix="grader-same-reports-")
    try:
        copy_samples(work)
        off = args.no_speedups or ""
        these = reports(HERE, work, tasks, args.jobs, speedups=off not in ("this", "both"))
        those = reports(
            os.path.abspath(args.other), work, tasks, args.jobs, speedups=off not in ("other", "both")
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    said = round_trips(these) + round_trips(those) + differences(these, those)
    print(
        f"{len(these)} reports of {', '.join(tasks)} (this: {HERE}; other: {os.path.abspath(args.other)}; "
        f"speed-ups off: {off or 'neither'}): {len(said) or 'none'} differ"
    )
    for line in said:
        print(f"  {line}")
    sys.exit(1 if said else 0)


if __name__ == "__main__":
    main()
