"""The syscall filter's library is loaded without starting a process (ctypes' find_library
runs `ldconfig -p` for each name: a process in the grader, and again in every new worker)."""

import subprocess
import sys

from helpers.paths import ROOT

PROBE = """
import subprocess, sys
sys.path.insert(0, sys.argv[1])
import ctypes.util
lookup = ctypes.util.find_library
def no_process(*args, **kwargs):
    raise AssertionError("a process was started to find a library")
subprocess.Popen = no_process
import syscalls
module = syscalls._pyseccomp()
assert module._libseccomp_path == "libseccomp.so.2", module._libseccomp_path
assert ctypes.util.find_library is lookup  # (put back: nothing else sees the shortcut)
print("ok")
"""


def test_the_filter_library_loads_with_no_process_started():
    inside = f"{ROOT}/grader/sandbox/inside"
    done = subprocess.run(
        [sys.executable, "-I", "-c", PROBE, inside], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
