"""What the submission's own code does that the grader should know of, seen from an audit
hook in the worker (``RuntimeEvidence``): the modules it imports, the code it runs from
strings, the routes out of numpy it takes, the introspection it does. Evidence only: it can
cost points, never earn them (the verdict rests on the grader's scan of the source).
"""

from __future__ import annotations

import ast
import os
import re
import socket
import sys
from types import CodeType, FrameType
from typing import Any

import computed
import display
import protocol
import wire

# Audit events that lead out of numpy's world (processes, C libraries, sockets), and
# introspection that reaches other code's frames, functions and objects (the worker's own
# harness included): recorded when the submission's own code raised them, directly or
# through code compiled from a string at run time. What a library does in its own frames is
# the library's (matplotlib's font cache starts a process while it is imported, a framework
# loads its C libraries with ctypes, typing looks at frames): never evidence against the
# student. A display library (display.py) called by the submission's code is looked
# through, as a route tool is, for all but its own look at frames and code (finding where a
# warning came from, reading a setter's parameters): what it does for the submission's call
# (a process its animation writer starts, a callback it runs that is exec, a figure hook)
# is the submission's.
ROUTES_OUT = frozenset(
    {
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.cdata",
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
        "socket.__new__",
    }
)
DYNAMIC_CODE = frozenset({"exec", "compile"})  # exec/eval/compile called by the submission
INTROSPECTION = frozenset(
    {
        "sys._getframe",
        "sys._current_frames",
        "sys._current_exceptions",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "sys.settrace",
        "sys.setprofile",
        "sys.addaudithook",
        "function.__new__",
        "code.__new__",
        "object.__getattr__",
        "object.__setattr__",
        "object.__delattr__",
        "_thread.start_new_thread",
    }
)
# Data turned into code, whichever frame does it, while the submission is on the stack and
# nothing is being imported: unpickling (np.load(allow_pickle=True) of bytes it made),
# code objects from bytes, and the process's own memory opened as a file (/proc/self/mem:
# any object rewritten in place, with no import at all).
DATA_AS_CODE = frozenset({"pickle.find_class", "marshal.loads", "marshal.load"})
_PROCESS_MEMORY = re.compile(r"^/proc/[^/]+(/task/[^/]+)?/(mem|pagemap)$")
EVIDENCE_CAP = protocol.EVIDENCE_CAP
OVERFLOW = protocol.OVERFLOW
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep  # the worker's own modules
_STDLIB = os.path.dirname(os.__file__) + os.sep  # the standard library's
# The recorder's frames that do the submission's arithmetic (computed.py): what happens in
# there is the submission's doing, as it was before its code was rewritten.
_PASS_THROUGH = computed.OPERATOR_CODES
_WATCHED = frozenset({"import", "open"}) | DYNAMIC_CODE | ROUTES_OUT | INTROSPECTION | DATA_AS_CODE
# What a display library does of its own accord in its frames, whoever called it: looking
# at frames (sys._getframe) and reading restricted attributes (a function's __code__).
DISPLAY_OWN = frozenset({"sys._getframe", "object.__getattr__"})


# Standard-library modules that are themselves routes out or into other code: an event one
# of them raises is raised for whoever called it (ctypes.CDLL's dlopen is its caller's). Any
# other module's frames (a framework's, matplotlib's, typing's own frame lookups) act on
# their own account.
_ROUTE_TOOLS = frozenset(
    {
        "ctypes",
        "_ctypes",
        "subprocess",
        "os",
        "posix",
        "posixpath",
        "socket",
        "multiprocessing",
        "pty",
        "inspect",
        "traceback",
        "threading",
        "_thread",
        "signal",
        "shutil",
        "pickle",
        "copyreg",
        "code",
        "codeop",
        "pdb",
        "bdb",
        "trace",
        "runpy",
        "gc",
        "sys",
        "builtins",
        "marshal",
    }
)


def _is_route_tool(frame: FrameType) -> bool:
    if not frame.f_code.co_filename.startswith(_STDLIB):
        return False
    name = frame.f_globals.get("__name__")
    return isinstance(name, str) and name.split(".")[0] in _ROUTE_TOOLS


def _compiled_from_string(code: CodeType) -> bool:
    """Code made at run time from a string (exec, eval, a library's eval of one): its
    'file' is a name in angle brackets, never a frozen module of the import system."""
    name = code.co_filename
    return name.startswith("<") and not name.startswith("<frozen")


_NAMES_ONLY = (
    ast.Expression,
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Tuple,
    ast.List,
    ast.Load,
    ast.BinOp,
    ast.BitOr,
    ast.Constant,
)


def _names_only(source: str) -> bool:
    """An annotation as typing evaluates it (``"np.ndarray"``, ``"list[float] | None"``):
    names, attributes and subscripts of them, nothing that runs anything."""
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return all(isinstance(node, _NAMES_ONLY) for node in ast.walk(tree)) and all(
        not isinstance(node, ast.Constant) or node.value is None or isinstance(node.value, str)
        for node in ast.walk(tree)
    )


# What a code object is made of: two compiled from the same text are the same.
Signature = tuple[bytes, tuple[str, ...], tuple[object, ...]]


def _signature(code: CodeType) -> Signature:
    return (code.co_code, code.co_names, code.co_consts)


class RuntimeEvidence:
    """Audit hook that records what the submission itself imports, the dynamic code it
    runs, the routes out of numpy it takes and the introspection it does, and what it has
    a library run for it: a string of its own file evaluated as code (typing.get_type_hints
    of a string annotation), a pickle (evidence only: it can cost points, never earn them;
    the verdict rests on the grader's scan of the source). Entries are module names,
    ``event()`` for a call, ``.name`` for an attribute read, ``.name=`` for one replaced.

    Each new entry is sent to the grader at once, as its own frame, before the event's
    call returns: a submission that goes on to find this hook (with gc or a frame walk,
    both recorded) can stop later records, never take back one already sent."""

    def __init__(self, submission: str, sock: socket.socket) -> None:
        self.submission = submission
        self.sock = sock
        self.entries: list[str] = []
        self.busy = False  # the hook's own frame walk raises the events it listens to
        try:
            with open(submission, "rb") as f:
                self.text = f.read().decode("utf-8", "replace")
        except OSError:
            self.text = ""
        self.file_strings: set[Signature] = set()  # code compiled by a library from the file's text

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if self.busy or event not in _WATCHED:
            return
        self.busy = True
        try:
            self._record(event, args)
        finally:
            self.busy = False

    def _record(self, event: str, args: tuple[Any, ...]) -> None:
        raiser = sys._getframe(2)  # the frame whose call raised the event
        if event == "import":
            frame: FrameType | None = raiser
            while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
                frame = frame.f_back
            if frame is not None and frame.f_code.co_filename == self.submission:
                self._add(str(args[0]))
            return
        own = self._submissions(raiser, through_display=event not in DISPLAY_OWN)
        if event in DYNAMIC_CODE and own:
            self._add("exec()" if event == "exec" else "compile()")
        elif event in DYNAMIC_CODE:
            self._library_runs_a_string(event, args, raiser)
        elif event in ROUTES_OUT and own:
            self._add(f"{event}()")
        elif event in INTROSPECTION and own:
            if event in ("object.__getattr__", "object.__setattr__", "object.__delattr__"):
                self._add(f".{args[1]}" + ("" if event == "object.__getattr__" else "="))
            else:
                self._add(f"{event}()")
        elif event in DATA_AS_CODE and self._caused_by_submission(raiser):
            self._add("unpickling()" if event == "pickle.find_class" else f"{event}()")
        elif event == "open" and self._opens_process_memory(args) and self._caused_by_submission(raiser):
            self._add("open() of /proc/.../mem")

    def _submissions(self, frame: FrameType | None, through_display: bool = False) -> bool:
        """Whether the event was raised by the submission's own code (its file, or code it
        compiled from a string), or by a tool of the standard library that leads out or in
        (ctypes, subprocess, inspect, ...) that the submission called: the recorder's
        pass-through frames and those tools' frames are looked through; with
        ``through_display``, a display library's frames too, and above the first of them the
        standard library's that it calls through (contextlib's, around its ``with``)."""
        seen_display = False
        while frame is not None:
            if frame.f_code in _PASS_THROUGH or _is_route_tool(frame):
                pass
            elif through_display and display.library_frame(frame):
                seen_display = True
            elif not (seen_display and frame.f_code.co_filename.startswith(_STDLIB)):
                break
            frame = frame.f_back
        if frame is None:
            return False
        if frame.f_code.co_filename == self.submission:
            return True
        return _compiled_from_string(frame.f_code) and self._caused_by_submission(frame.f_back)

    def _library_runs_a_string(self, event: str, args: tuple[Any, ...], raiser: FrameType) -> None:
        """A library compiling, then running, text of the submission's own file (an annotation
        typing evaluates, a string handed to any API that evals): its code as much as an
        exec() would be. Compiled code is remembered by its signature, and recorded when run."""
        if event == "compile":
            source = args[0]
            if isinstance(source, bytes):
                source = source.decode("utf-8", "replace")
            if (
                isinstance(source, str)
                and source.strip()
                and source.strip() in self.text
                and not _names_only(source)
                and self._caused_by_submission(raiser)
            ):
                for mode in ("eval", "exec"):
                    try:
                        self.file_strings.add(_signature(compile(source, "<string>", mode)))
                        break
                    except (SyntaxError, ValueError, MemoryError, RecursionError):
                        continue
        elif hasattr(args[0], "co_code") and _signature(args[0]) in self.file_strings:
            caller = raiser.f_globals.get("__name__", "?")
            self._add(f"{str(caller)[:60]}.{raiser.f_code.co_name[:60]} evaluating a string of the file()")

    @staticmethod
    def _opens_process_memory(args: tuple[Any, ...]) -> bool:
        path = args[0] if args else None
        if isinstance(path, bytes):
            path = path.decode("utf-8", "replace")
        if not isinstance(path, str):
            return False
        try:
            full = os.path.normpath(os.path.join(os.getcwd(), path))
        except (OSError, ValueError):
            return True  # no working directory to resolve it against: count it
        return bool(_PROCESS_MEMORY.match(full)) or (
            not os.path.isabs(path) and os.path.basename(full) in ("mem", "pagemap")
        )

    def _caused_by_submission(self, frame: FrameType | None) -> bool:
        while frame is not None:
            name = frame.f_code.co_filename
            if name == self.submission:
                return True
            if frame.f_code in _PASS_THROUGH:
                frame = frame.f_back
                continue
            if name.startswith("<frozen importlib"):
                return False  # happens while a module is imported
            if name.startswith(_HERE) and not display.library_frame(frame):
                return False  # the worker's own doing (say, mapping shared arguments)
            frame = frame.f_back
        return False

    def _add(self, entry: str) -> None:
        if entry in self.entries:
            return
        if len(self.entries) >= EVIDENCE_CAP:  # a flood could hide what follows: say so
            entry = OVERFLOW
            if entry in self.entries:
                return
        self.entries.append(entry)
        try:
            notice: protocol.Notice = {
                "op": protocol.EVIDENCE,
                "entry": entry[: protocol.EVIDENCE_ENTRY_CHARS],
            }
            wire.send(self.sock, notice)
        except Exception:
            pass
