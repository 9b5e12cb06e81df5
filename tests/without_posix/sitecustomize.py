"""A Linux Python made to lack what macOS or Windows lack of what the grader's sandbox is
built from, for tests/integration/test_unsandboxed.py: put this folder first on PYTHONPATH
and `grader check` (and the worker it starts, which inherits the environment) runs without

- ``resource`` and ``fcntl`` (Windows), ``os.fork`` and ``os.forkpty`` (Windows),
- ``socket.send_fds``/``recv_fds``, ``AF_UNIX`` and ``SOCK_SEQPACKET`` (no descriptor
  passing; ``socket.socketpair`` refuses), ``socket.MSG_DONTWAIT`` (Windows),
- ``os.pread``, ``os.killpg``, ``os.getuid``/``os.geteuid``, ``os.O_NOFOLLOW``,
  ``os.O_NONBLOCK`` and ``os.O_CLOEXEC`` (Windows),
- ``preexec_fn`` and ``pass_fds`` in ``subprocess.Popen`` (refused, as on Windows),
- Landlock and bubblewrap (their probes say no).

``sys.platform`` stays ``linux``: the grader must decide from what is there, not from a name.
"""

import os
import socket
import subprocess
import sys

for _name in ("resource", "fcntl"):
    sys.modules[_name] = None  # type: ignore[assignment]  (import raises ImportError)

for _module, _names in (
    (
        os,
        ("fork", "forkpty", "register_at_fork", "pread", "killpg", "getuid", "geteuid")
        + ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC"),
    ),
    (socket, ("send_fds", "recv_fds", "AF_UNIX", "SOCK_SEQPACKET", "MSG_DONTWAIT")),
):
    for _name in _names:
        if hasattr(_module, _name):
            delattr(_module, _name)


def _no_socketpair(*args, **kwargs):
    raise OSError("no AF_UNIX socketpair here (a simulated macOS or Windows)")


socket.socketpair = _no_socketpair

_popen_init = subprocess.Popen.__init__


def _popen(self, *args, preexec_fn=None, pass_fds=(), **kwargs):
    if preexec_fn is not None:
        raise ValueError("preexec_fn is not supported on this platform (simulated)")
    if pass_fds:
        raise ValueError("pass_fds is not supported on this platform (simulated)")
    _popen_init(self, *args, **kwargs)


subprocess.Popen.__init__ = _popen


class _ProbesFail:
    """Patches the grader's Landlock and bubblewrap probes as their modules are imported."""

    PATCHES = {
        "grader.sandbox.inside.landlock": ("abi_version", lambda: 0),
        "grader.sandbox.tiers.bubblewrap": ("bubblewrap_works", lambda: False),
    }

    def find_spec(self, name, path=None, target=None):
        if name not in self.PATCHES:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        attribute, value = self.PATCHES[name]
        exec_module = spec.loader.exec_module

        def patched(module):
            exec_module(module)
            setattr(module, attribute, value)

        spec.loader.exec_module = patched
        return spec


sys.meta_path.insert(0, _ProbesFail())
