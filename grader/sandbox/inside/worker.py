"""Child side of the sandbox: imports one submission by path and answers calls.

Runs as ``python -I worker.py CHANNEL_FD`` inside the sandbox. It receives inputs and sends
back outputs as plain data (see wire.py); it never receives expected values, and nothing
it says is trusted: the grader validates every answer and computes every verdict itself.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import re
import socket
import sys
import traceback
from types import FrameType, ModuleType

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import computed  # noqa: E402
import display  # noqa: E402
import numpy as np  # noqa: E402  (imported before any submission, so it is warm)
import protocol  # noqa: E402
import shared  # noqa: E402
import wire  # noqa: E402

# What the harness uses of numpy, bound before any submission runs: a submission that
# rebinds numpy.may_share_memory changes nothing here (and is seen doing so: _check_numpy).
_ndarray, _may_share_memory = np.ndarray, np.may_share_memory
_NUMPY_NAMES = dict(vars(np))

TEXT_CAP = protocol.TEXT_CAP
OUTPUT_BYTES_CAP = protocol.OUTPUT_BYTES_CAP  # lowered for a task by _limit_outputs


def _flush_std_streams() -> None:
    for stream in (sys.__stdout__, sys.__stderr__, sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass


def _error_record(exc: BaseException, submission: str | None) -> protocol.ErrorRecord:
    """Describe an exception raised by student code, keeping only the student's frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == submission]
    where: list[protocol.ErrorFrame] = [
        {"line": f.lineno, "function": f.name, "code": (f.line or "")[: protocol.CODE_CHARS]} for f in frames
    ]
    try:
        message = str(exc)[:TEXT_CAP]
    except Exception:
        message = "<the exception's message could not be shown>"
    record: protocol.ErrorRecord = {
        "type": type(exc).__name__[: protocol.TYPE_CHARS],
        "message": message,
        "frames": where[-protocol.ERROR_FRAMES :],
    }
    missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
    if isinstance(missing, str):
        record["missing_module"] = missing[: protocol.TYPE_CHARS]  # lets the grader tell a missing package
    return record


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


def _is_route_tool(frame) -> bool:
    if not frame.f_code.co_filename.startswith(_STDLIB):
        return False
    name = frame.f_globals.get("__name__")
    return isinstance(name, str) and name.split(".")[0] in _ROUTE_TOOLS


def _compiled_from_string(code) -> bool:
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


def _signature(code) -> tuple:
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

    def __init__(self, submission: str, sock: socket.socket):
        self.submission = submission
        self.sock = sock
        self.entries: list[str] = []
        self.busy = False  # the hook's own frame walk raises the events it listens to
        try:
            with open(submission, "rb") as f:
                self.text = f.read().decode("utf-8", "replace")
        except OSError:
            self.text = ""
        self.file_strings: set[tuple] = set()  # code compiled by a library from the file's text

    def __call__(self, event, args):
        if self.busy or event not in _WATCHED:
            return
        self.busy = True
        try:
            self._record(event, args)
        finally:
            self.busy = False

    def _record(self, event, args) -> None:
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

    def _submissions(self, frame, through_display: bool = False) -> bool:
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

    def _library_runs_a_string(self, event, args, raiser) -> None:
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
    def _opens_process_memory(args) -> bool:
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

    def _caused_by_submission(self, frame) -> bool:
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


def _describe(value, blobs: list[bytes], depth: int = 0):
    """Encode a student's return value as plain data, saying what kind of object it was."""
    if depth > 16:
        return {"$obj": "nested value", "repr": "<nested too deeply>"}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in wire.ALLOWED_DTYPE_KINDS or value.dtype.fields:
            return {"$obj": f"ndarray of dtype {value.dtype}", "repr": _safe_repr(value)}
        if value.size * value.dtype.itemsize > OUTPUT_BYTES_CAP:
            return {
                "$obj": "oversized array",
                "repr": f"an array of shape {value.shape} ({value.dtype}) is too large to return",
            }
        plain = np.ndarray.view(value, np.ndarray) if type(value) is not np.ndarray else value
        blobs.append(wire.array_to_npy(np.array(plain, copy=True)))
        record: dict[str, object] = {"$nd": len(blobs) - 1}
        if type(value) is not np.ndarray:
            record["subclass"] = type(value).__qualname__
        return record
    if isinstance(value, np.generic):
        if value.dtype.kind not in wire.ALLOWED_DTYPE_KINDS:
            return {"$obj": type(value).__name__, "repr": _safe_repr(value)}
        blobs.append(wire.array_to_npy(np.asarray(value)))
        return {"$nd": len(blobs) - 1, "scalar": True}
    if value is None or type(value) in (bool, int, float, str):
        if isinstance(value, float):
            return wire.encode(value, blobs)
        if isinstance(value, str):
            return value[:TEXT_CAP]
        if isinstance(value, int) and abs(value) > 1 << 62:
            return {"$obj": "int", "repr": "<a very large integer>"}
        return value
    if type(value) in (list, tuple):
        # A list of numbers is sent as an array, marked with the container it came in.
        try:
            arr = np.array(value)
        except Exception:
            arr = None
        if arr is not None and arr.dtype.kind in wire.ALLOWED_DTYPE_KINDS and arr.nbytes <= OUTPUT_BYTES_CAP:
            blobs.append(wire.array_to_npy(arr))
            return {"$nd": len(blobs) - 1, "subclass": type(value).__name__}
        if len(value) <= 1000:
            items = [_describe(v, blobs, depth + 1) for v in value]
            return {"$tuple": items} if type(value) is tuple else items
    return {"$obj": type(value).__qualname__[:100], "repr": _safe_repr(value)}


GLOBALS_CAP = protocol.GLOBALS_CAP
COMPUTED_CAP = protocol.COMPUTED_CAP
ARRAYS_BYTES_CAP = protocol.ARRAYS_BYTES_CAP  # lowered for a task by _limit_outputs


def _as_numbers(value):
    """numpy's view of an array-like: ndarray, TF or PyTorch tensor, shape, list of numbers."""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    if hasattr(value, "as_list") and type(value).__name__ == "TensorShape":
        return np.asarray(value.as_list())
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # torch.Tensor
        return value.detach().cpu().numpy()
    if hasattr(value, "numpy") and callable(value.numpy):  # tf.Tensor / Variable
        return np.asarray(value.numpy())
    if type(value) in (list, tuple) or isinstance(value, tuple):  # torch.Size is a tuple
        arr = np.array(value)
        return arr if arr.dtype.kind in wire.ALLOWED_DTYPE_KINDS else None
    return None


def _plain_numbers(value, room: int):
    """The value as a numeric array of at most ``room`` bytes, or None. Converting runs
    the submission's code (a tensor's .numpy()): whatever it raises, the value is skipped."""
    try:
        arr = _as_numbers(value)
    except BaseException:
        return None
    if arr is None or arr.dtype.kind not in wire.ALLOWED_DTYPE_KINDS or arr.dtype.fields:
        return None
    return arr if arr.size * arr.dtype.itemsize <= room else None


def _numbers_left(namespace: dict, drawn: frozenset = frozenset()) -> list[tuple]:
    """The numbers in the script's globals: (name, value, numpy view) each; not those a
    display library's call gave (``drawn``: their ids, computed.Recorder.drawn_ids)."""
    left = []
    for name, value in list(namespace.items()):
        if type(name) is not str or name.startswith("__") or id(value) in drawn:
            continue
        arr = _plain_numbers(value, ARRAYS_BYTES_CAP)
        if arr is not None:
            left.append((name, value, arr))
    return left


def _numbers_sent(
    namespace: dict, recorder: computed.Recorder, wanted: frozenset, out: list[bytes]
) -> tuple[dict, list[dict]]:
    """The arrays the script left in its globals ({name: wire record}) and those it computed
    elsewhere ([wire record naming it], most telling first: computed.candidates), within
    the caps. Arrays of the shapes the checks want are chosen first, then the others, smallest
    first: big arrays never crowd the wanted ones out. A value is sent once."""
    left = _numbers_left(namespace, recorder.drawn_ids())
    made = []
    for candidate in computed.candidates(recorder):
        arr = _plain_numbers(candidate.value, ARRAYS_BYTES_CAP)
        if arr is not None and arr.ndim > 0:
            made.append((candidate, arr))
    entries = [(0, i, arr) for i, (_, _, arr) in enumerate(left)] + [
        (1, i, arr) for i, (_, arr) in enumerate(made)
    ]
    order = sorted(
        range(len(entries)), key=lambda k: (tuple(entries[k][2].shape) not in wanted, entries[k][2].nbytes, k)
    )
    chosen: set[int] = set()
    seen: set[int] = set()
    counts, total = [0, 0], 0
    for k in order:
        group, i, arr = entries[k]
        value = left[i][1] if group == 0 else made[i][0].value
        if (
            counts[group] >= (GLOBALS_CAP, COMPUTED_CAP)[group]
            or total + arr.nbytes > ARRAYS_BYTES_CAP
            or (group == 1 and id(value) in seen)
        ):
            continue
        seen.add(id(value))
        counts[group] += 1
        total += arr.nbytes
        chosen.add(k)
    sent_left: dict[str, dict] = {}
    sent_made: list[dict] = []
    for k, (group, i, arr) in enumerate(entries):  # in the script's order
        if k not in chosen:
            continue
        out.append(wire.array_to_npy(np.array(arr, copy=True)))
        if group == 0:
            name, value, _ = left[i]
            sent_left[name[:100]] = {"$nd": len(out) - 1, "type": type(value).__name__[:100]}
        else:
            candidate = made[i][0]
            sent_made.append(
                dict(
                    computed.describe(candidate),
                    **{"$nd": len(out) - 1, "type": type(candidate.value).__name__[:100]},
                )
            )
    return sent_left, sent_made


def _with_stand_ins(reply: dict) -> dict:
    """A load or run answer, with the display libraries whose stand-in the submission
    imported (display.py), for the report's note."""
    served = display.stand_ins()
    if served:
        reply["stand_ins"] = served
    return reply


def _shapes(value) -> frozenset:
    """The shapes the grader's checks want (a list of lists of ints), else none."""
    if not isinstance(value, list) or len(value) > 100:
        return frozenset()
    return frozenset(
        tuple(shape)
        for shape in value
        if isinstance(shape, list) and len(shape) <= 32 and all(type(n) is int and n >= 0 for n in shape)
    )


def _safe_repr(value) -> str:
    try:
        return repr(value)[:TEXT_CAP]
    except Exception:
        return f"<a {type(value).__name__} whose repr failed>"


def _limit_outputs(answer_bytes: int) -> None:
    """The grader's cap on the arrays of one answer (derived from the task): larger outputs
    are refused here with a clear description. A courtesy only: the grader enforces it."""
    global OUTPUT_BYTES_CAP, ARRAYS_BYTES_CAP
    OUTPUT_BYTES_CAP = min(OUTPUT_BYTES_CAP, max(0, answer_bytes))
    ARRAYS_BYTES_CAP = min(ARRAYS_BYTES_CAP, max(0, answer_bytes))


def _compiled(source: bytes, path: str):
    """The script's code, rewritten to record what it computes, and the sites it records.
    A file Python refuses raises SyntaxError as it would unrewritten; one the rewriting
    cannot handle (a tree too deep for it) runs as it is, unrecorded."""
    text = importlib.util.decode_source(source)
    try:
        return computed.instrument(text, path)
    except SyntaxError:
        raise
    except Exception:
        return compile(source, path, "exec", dont_inherit=True), []


def _write_source(path: str, source: bytes) -> None:
    """The worker is sent the submission's bytes and keeps them in its private folder."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(source)


def _copy_back(shared_back: list, _copyto=np.copyto, _uint8=np.uint8) -> None:
    """What the call did to the arrays it got, into the grader's memory. An array whose
    shape or dtype the call changed in place (``x.resize(...)``, ``x.dtype = ...``: the
    caller's array changed too) cannot be written back value for value: every byte of the
    grader's memory is flipped instead, so the grader sees a change, never the memory as
    it was."""
    for memory, given in shared_back:
        try:
            if given.shape == memory.shape and given.dtype == memory.dtype:
                _copyto(memory, given, casting="unsafe")
                continue
        except Exception:
            pass
        try:
            raw = memory.view(_uint8).reshape(-1)
            raw ^= 0xFF
        except Exception:
            pass


def _argument(
    value,
    blobs: list[bytes],
    fds: list[int],
    shared_back: list,
    _map_array=shared.map_array,
    _array_copy=np.array,
    _decode=wire.decode,
):
    """One argument: for an array the grader shared, an ordinary array of its own (it owns
    its data, like any caller's array, so a function cannot tell the grader's from another
    and mutate only the latter), copied back into the shared memory after the call; else
    plain data decoded."""
    if isinstance(value, dict) and "$shared" in value:
        index = value["$shared"]
        if fds[index] < 0:
            raise ValueError("a shared argument was named twice")
        try:
            memory = _map_array(fds[index], value["descr"], value["shape"])
            given = _array_copy(memory, copy=True)
            shared_back.append((memory, given))
            return given
        finally:
            os.close(fds[index])  # the mapping needs no descriptor
            fds[index] = -1
    return _decode(value, blobs)


class Worker:
    """The harness around a submission, in the submission's own process. What it does for
    a call is bound before any student code runs: its methods into the instance (a class
    attribute the submission rebinds changes nothing here) and the functions that hand over
    and give back shared arguments as default values (rebinding a module's name changes
    nothing; replacing ``__defaults__`` or ``__code__`` is an audit event, recorded)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.module: ModuleType | None = None
        self.submission: str | None = None
        self.evidence: RuntimeEvidence | None = None
        for name in ("serve", "_serve_one", "_answer", "_watch", "load", "run", "call", "_check_numpy"):
            setattr(self, name, getattr(self, name))

    def serve(self) -> None:
        while True:
            try:
                header, blobs = wire.recv(self.sock)
            except wire.WireClosed:
                return
            count = header.get("fds")
            fds = shared.receive_fds(self.sock, count) if type(count) is int and count > 0 else []
            try:
                self._serve_one(header, blobs, fds)
            finally:
                for fd in fds:
                    if fd >= 0:
                        os.close(fd)

    def _serve_one(self, header: dict, blobs: list, fds: list[int]) -> None:
        op = header.get("op")
        if op in (protocol.LOAD, protocol.RUN):
            _write_source(header["path"], blobs[header["source"]])
            display.prepare(header.get("display") or ())
        if op in (protocol.LOAD, protocol.RUN) and type(header.get("answer_bytes")) is int:
            _limit_outputs(header["answer_bytes"])
        if op == protocol.LOAD:
            reply, out = self.load(header["path"], header.get("functions", []))
            self._answer(reply, out, header.get("id"))
        elif op == protocol.CALLS:  # one answer per call, each sent as soon as it is ready
            for item in header.get("items", []):
                reply, out = self.call(header["function"], item, blobs, fds)
                self._answer(reply, out, item.get("id"))
        elif op == protocol.RUN:
            reply, out = self.run(header["path"], _shapes(header.get("shapes")))
            self._answer(reply, out, header.get("id"))
        else:
            self._answer(
                {"ok": False, "error": {"type": "Protocol", "message": f"bad op {op!r}"}},
                [],
                header.get("id"),
            )

    def _answer(self, reply: protocol.Answer, out: list[bytes], request_id: int | None = None) -> None:
        """Send an answer to request ``request_id`` (the grader checks that answers come
        in turn) with how far stdout and stderr had got when it was ready, so the grader
        gives each call the output it printed even when calls are pipelined."""
        reply["id"] = request_id
        _flush_std_streams()
        try:
            reply["output_at"] = [os.lseek(1, 0, os.SEEK_CUR), os.lseek(2, 0, os.SEEK_CUR)]
        except OSError:
            pass
        wire.send(self.sock, reply, out)

    def _watch(self, path: str) -> None:
        """From here on, record evidence of what the submission's code does (see
        RuntimeEvidence), sent to the grader as it happens."""
        self.submission = path
        self.evidence = RuntimeEvidence(path, self.sock)
        sys.addaudithook(self.evidence)

    def load(self, path: str, functions: list[str]) -> tuple[protocol.Answer, list[bytes]]:
        self._watch(path)
        try:
            spec = importlib.util.spec_from_file_location("submission", path)
            assert spec is not None and spec.loader is not None  # (a .py path always has both)
            module = importlib.util.module_from_spec(spec)
            sys.modules["submission"] = module
            spec.loader.exec_module(module)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt and all: the student's fault
            self._check_numpy()
            error = _error_record(exc, path)
            if isinstance(exc, SyntaxError):
                error.update(line=exc.lineno, message=exc.msg)
            return _with_stand_ins({"ok": False, "error": error}), []
        self._check_numpy()
        self.module = module
        found: dict[str, protocol.FunctionEntry] = {}
        for name in functions:
            obj = getattr(module, name, None)
            entry: protocol.FunctionEntry = {"defined": obj is not None, "callable": callable(obj)}
            if callable(obj):
                try:
                    entry["params"] = list(inspect.signature(obj).parameters)[:50]
                except (TypeError, ValueError):
                    entry["params"] = None
            found[name] = entry
        return _with_stand_ins({"ok": True, "functions": found}), []

    def run(self, path: str, wanted: frozenset = frozenset()) -> tuple[protocol.Answer, list[bytes]]:
        """Run a script as __main__ in a namespace kept afterwards, compiled so that what it
        computes is recorded (computed.py), then send back the numbers it left in its
        globals and the arrays it computed (frameworks' tensors converted here); arrays of
        the ``wanted`` shapes (the grader's checks') first."""
        namespace = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
        recorder = computed.Recorder([], ARRAYS_BYTES_CAP, tuple(wanted), display.made_by_display)
        error: protocol.ErrorRecord | None = None
        try:
            with open(path, "rb") as f:  # bytes: decoded as Python decodes a file (BOM, coding cookie)
                source = f.read()
            code, recorder.sites = _compiled(source, path)
            namespace.update(recorder.names())
            self._watch(path)
            exec(code, namespace)
        except BaseException as exc:  # the script's own failure, reported, not fatal here
            error = _error_record(exc, path)
            if isinstance(exc, SyntaxError):
                error.update(line=exc.lineno, message=exc.msg)
        out: list[bytes] = []
        try:
            left, made = _numbers_sent(namespace, recorder, wanted, out)
        except BaseException:  # a recorder the script tampered with: it loses these arrays
            del out[:]
            left, made = _numbers_sent(namespace, computed.Recorder([], 0), wanted, out)
        reply = _with_stand_ins({"ok": error is None, "globals": left, "computed": made})
        if error is not None:
            reply["error"] = error
        return reply, out

    def call(
        self,
        name: str,
        item: dict,
        blobs: list[bytes],
        fds: list[int],
        _argument=_argument,
        _copy_back=_copy_back,
    ) -> tuple[protocol.Answer, list[bytes]]:
        """Call the function on one item's arguments. Arrays the grader shared (a mutation
        check's) are mapped from its memory, so what the call does to them is seen there;
        nothing about the arguments after the call is sent back."""
        shared_back: list = []  # (the grader's memory, the array the function got)
        try:
            args = [_argument(v, blobs, fds, shared_back) for v in item.get("args", [])]
            kwargs = {
                str(k): _argument(v, blobs, fds, shared_back)
                for k, v in item.get("kwargs", {"$dict": {}})["$dict"].items()
            }
        except (OSError, ValueError, IndexError) as exc:
            return {
                "ok": False,
                "error": {"type": "Sandbox", "message": f"an argument could not be handed over: {exc}"},
            }, []
        function = getattr(self.module, name, None)
        if not callable(function):
            return {"ok": False, "error": {"type": "Missing", "message": f"{name} is not defined"}}, []
        try:
            result = function(*args, **kwargs)
        except BaseException as exc:
            _copy_back(shared_back)
            return {"ok": False, "error": _error_record(exc, self.submission)}, []
        finally:
            self._check_numpy()
        _copy_back(shared_back)
        out: list[bytes] = []
        try:
            reply: protocol.Answer = {"ok": True, "result": _describe(result, out)}
            arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, _ndarray)]
            if isinstance(result, _ndarray):  # seen only in here: the grader lets it cost, never earn
                reply["aliases_input"] = any(_may_share_memory(result, a) for a in arrays)
        except BaseException as exc:
            return {"ok": False, "error": _error_record(exc, self.submission)}, []
        return reply, out

    def _check_numpy(self) -> None:
        """Record any numpy name the submission rebound (numpy.frombuffer, ...): evidence
        that it reaches into what the harness uses."""
        if self.evidence is None:
            return
        for name, value in _NUMPY_NAMES.items():
            if vars(np).get(name, value) is not value:
                self.evidence._add(f"numpy.{name} replaced()")


def become_worker(sock: socket.socket, confinement: protocol.Confinement) -> None:
    """Confine this process as asked, say hello, then answer requests until the channel
    closes; never returns. ``confinement``, in this order: "private_namespaces"
    (namespaces.py; with "scratch" [path, bytes], also a capped tmpfs over that folder), else
    "drop_capabilities" (capabilities.py); "deny_sockets", "deny_keys", "deny_ipc" and
    "deny_processes" (syscalls.py, one filter; with the keys, a new empty session keyring
    first); "landlock" (a policy for landlock.py)."""
    try:
        if confinement.get("private_namespaces") is True:
            import namespaces

            scratch = confinement.get("scratch")
            namespaces.enter_private((str(scratch[0]), int(scratch[1])) if scratch else None)
        elif confinement.get("drop_capabilities") is True:
            import capabilities

            capabilities.drop_all()
        denied = {
            group: confinement.get(f"deny_{group}") is True
            for group in ("sockets", "keys", "ipc", "processes")
        }
        if denied["keys"]:
            import keyring

            keyring.join_new_session()  # best effort: the filter below is what holds
        if any(denied.values()):
            import syscalls

            syscalls.deny(**denied)
        if confinement.get("landlock"):
            import landlock

            policy = confinement["landlock"]
            landlock.restrict(policy["read"], policy["write"], policy.get("own_process") is True)
    except (OSError, RuntimeError) as exc:
        wire.send(sock, {"op": protocol.NOT_READY, "error": f"the sandbox could not be applied: {exc}"})
        os._exit(1)
    if confinement.get("preload"):  # confined already: a framework imports under the same walls
        import preload

        preload.preload(confinement["preload"], warm_up=True)
    wire.send(sock, {"op": protocol.READY})  # before any student code: proves the sandbox works
    Worker(sock).serve()
    _flush_std_streams()
    os._exit(0)


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    become_worker(sock, json.loads(sys.argv[2]) if len(sys.argv) > 2 else {})


if __name__ == "__main__":
    main()
