"""The numerical frameworks a task may allow (TensorFlow, PyTorch): which extra installs each,
which a task's workers import before the student's clock starts, and which of their log
lines are left out of what a student's file printed.

A framework is the environment, not the student: it is imported once per worker (per fork
server for a batch), outside the submission's budget and outside the recorder's view, so a
class of TensorFlow hand-ins costs the students' own work, not an import each.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Framework:
    module: str  # the top-level import name a task's `imports: allowed:` lists
    label: str  # how a report names it
    extra: str  # numgrader[EXTRA] installs it
    also: tuple[str, ...] = ()  # imported with it: what its tutorials reach at first use


FRAMEWORKS = (
    Framework("tensorflow", "TensorFlow", "tensorflow", also=("keras",)),
    Framework("torch", "PyTorch", "torch"),
)
BY_MODULE = {f.module: f for f in FRAMEWORKS}


def allowed_frameworks(allowed_imports: Iterable[str]) -> tuple[Framework, ...]:
    """The frameworks a task's allowed imports name (``tensorflow``, ``torch.nn``...)."""
    tops = {name.split(".")[0] for name in allowed_imports}
    return tuple(f for f in FRAMEWORKS if f.module in tops)


def installed(framework: Framework) -> bool:
    """Whether the grader's Python (the workers' Python) has it, found without importing it."""
    try:
        return importlib.util.find_spec(framework.module) is not None
    except (ImportError, ValueError):
        return False


def preload(allowed_imports: Iterable[str], imported: Iterable[str]) -> tuple[str, ...]:
    """The modules a worker imports before any student code: the frameworks the task allows
    that the submission imports (``imported``: module names its source's import statements
    name, read on the grader's side) and that are installed here (a missing one keeps the
    report's environment message). A numpy file of a task that allows TensorFlow pays no
    TensorFlow import."""
    tops = {str(name).split(".")[0] for name in imported}
    modules: list[str] = []
    for framework in allowed_frameworks(allowed_imports):
        if framework.module in tops and installed(framework):
            modules.append(framework.module)
            modules.extend(m for m in framework.also if importlib.util.find_spec(m) is not None)
    return tuple(modules)


# Lines the frameworks themselves write to stderr (never the student's print): glog/absl
# lines ("I0000 00:00:17... 2 cpu_feature_guard.cc:227] ..."), TensorFlow's older
# "2024-01-01 12:00:00.000: I tensorflow/..." lines and their continuation, absl's notice
# about logging before InitializeLog, oneDNN's notice, PyTorch's cpuinfo complaints.
_NOISE = re.compile(
    r"^(?:[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ [\w.+-]+:\d+\] .*"
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] (?:tensorflow|external|xla|tsl)/.*"
    r"|WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags\."
    r"|oneDNN custom operations are on\. .*"
    r"|Error in cpuinfo: .*"
    r"|\[W\d+ \d\d:\d\d:\d\d(?:\.\d+)? \w+\] .*)$"
)


def without_log_noise(text: str, frameworks: tuple[str, ...]) -> tuple[str, int]:
    """``text`` without the frameworks' own log lines, and how many were left out; only for
    a task that allows a framework (a numpy task's output is shown as printed)."""
    if not frameworks or not text:
        return text, 0
    kept, dropped = [], 0
    for line in text.splitlines(keepends=True):
        if _NOISE.match(line.rstrip("\r\n")):
            dropped += 1
        else:
            kept.append(line)
    return "".join(kept), dropped


def noise_note(dropped: int, frameworks: tuple[str, ...]) -> str:
    names = " and ".join(BY_MODULE[m].label for m in frameworks if m in BY_MODULE) or "the framework"
    return f"[{dropped} line{'s' if dropped != 1 else ''} of {names}'s own log left out]\n"


def shown_output(text: str, allowed_imports: Iterable[str]) -> str:
    """What a report shows of a file's output: a framework task's log lines left out, and
    said so on a line of its own at the end."""
    frameworks = tuple(f.module for f in allowed_frameworks(allowed_imports))
    kept, dropped = without_log_noise(text, frameworks)
    if not dropped:
        return text
    if kept and not kept.endswith("\n"):
        kept += "\n"
    return kept + noise_note(dropped, frameworks)
