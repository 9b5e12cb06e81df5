"""What runs inside the sandbox is imported there by path, in a ``python -I`` whose sys.path
holds its own folder and the runtime only: it must import nothing of the rest of the grader
and nothing beyond the standard library, numpy and pyseccomp (which syscalls.py loads)."""

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig

import grader.sandbox.inside as inside
from grader.sandbox.tiers.base import WORKER_DIR

INSIDE = os.path.dirname(os.path.abspath(inside.__file__))

# Imports each module named after the folder the way worker.py and forkserver.py find one
# another, plus pyseccomp (syscalls.py imports it when it is used), and prints the file of
# every module that came with them.
PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
for name in sys.argv[2:]:
    __import__(name)
import syscalls
syscalls.available()
print(json.dumps({name: getattr(module, "__file__", None)
                  for name, module in list(sys.modules.items()) if name not in before}))
"""


def _package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin, name
    return os.path.dirname(os.path.realpath(spec.origin))


def _allowed(path: str, folder: str) -> bool:
    """In the standard library (not a site-packages folder within it), numpy, pyseccomp or
    ``folder``."""
    path = os.path.realpath(path)
    base = {
        "base": sys.base_prefix,
        "platbase": sys.base_prefix,
        "installed_base": sys.base_prefix,
        "installed_platbase": sys.base_prefix,
    }
    stdlib = {os.path.realpath(sysconfig.get_paths(vars=base)[key]) for key in ("stdlib", "platstdlib")}
    extra = [_package_dir("numpy"), os.path.realpath(folder)]
    seccomp = importlib.util.find_spec("pyseccomp")
    if seccomp is not None and seccomp.origin:
        extra.append(
            _package_dir("pyseccomp")
            if seccomp.submodule_search_locations
            else os.path.realpath(seccomp.origin)
        )

    def under(root: str) -> bool:
        return path == root or path.startswith(root + os.sep)

    parts = path.split(os.sep)
    in_stdlib = (
        any(under(r) for r in stdlib) and "site-packages" not in parts and "dist-packages" not in parts
    )
    return in_stdlib or any(under(r) for r in extra)


def foreign_modules(folder: str) -> dict[str, str]:
    """The modules that importing every module of ``folder`` by path loads from anywhere
    but the standard library, numpy, pyseccomp and ``folder`` itself."""
    modules = sorted(n[:-3] for n in os.listdir(folder) if n.endswith(".py") and n != "__init__.py")
    done = subprocess.run(
        [sys.executable, "-I", "-B", "-c", PROBE, folder, *modules],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout)
    return {name: path for name, path in loaded.items() if path is not None and not _allowed(path, folder)}


def test_the_inside_modules_import_only_the_standard_library_numpy_and_pyseccomp():
    assert foreign_modules(INSIDE) == {}


def test_the_check_sees_a_module_that_reaches_outside(tmp_path):
    """The control: the same check does report an inside module that imports the grader or
    a package besides numpy, so the test above can fail."""
    for name in os.listdir(INSIDE):
        if name.endswith(".py"):
            (tmp_path / name).write_bytes(open(os.path.join(INSIDE, name), "rb").read())
    (tmp_path / "leaky.py").write_text("import yaml\n")
    found = foreign_modules(str(tmp_path))
    assert "yaml" in found, found


def test_what_bubblewrap_shows_the_worker_is_the_inside_folder():
    assert os.path.realpath(WORKER_DIR) == os.path.realpath(INSIDE)
    for script in ("worker.py", "forkserver.py", "namespaces.py"):
        assert os.path.isfile(os.path.join(WORKER_DIR, script))
