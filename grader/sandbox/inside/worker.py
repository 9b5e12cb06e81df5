"""Child side of the sandbox: imports one submission by path and answers calls.

Runs as ``python -I worker.py CHANNEL_FD`` inside the sandbox. It receives inputs and sends
back outputs as plain data (see wire.py); it never receives expected values, and nothing
it says is trusted: the grader validates every answer and computes every verdict itself.
"""
from __future__ import annotations

import importlib.util
import inspect
import json
import os
import socket
import sys
import traceback
from types import FrameType, ModuleType

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import computed  # noqa: E402
import numpy as np  # noqa: E402  (imported before any submission, so it is warm)
import shared  # noqa: E402
import wire  # noqa: E402

# What the harness uses of numpy, bound before any submission runs: a submission that
# rebinds numpy.copyto or numpy.may_share_memory changes nothing here (and is seen
# doing so: _numpy_replaced).
_ndarray, _array_copy, _copyto, _may_share_memory = np.ndarray, np.array, np.copyto, np.may_share_memory
_map_array = shared.map_array
_NUMPY_NAMES = dict(vars(np))

TEXT_CAP = 4000           # characters of an exception message or repr sent back
OUTPUT_BYTES_CAP = 256 << 20   # an output array larger than this is refused here already


def _flush_std_streams() -> None:
    for stream in (sys.__stdout__, sys.__stderr__, sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass


def _error_record(exc: BaseException, submission: str | None) -> dict:
    """Describe an exception raised by student code, keeping only the student's frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == submission]
    where = [{"line": f.lineno, "function": f.name, "code": (f.line or "")[:200]} for f in frames]
    try:
        message = str(exc)[:TEXT_CAP]
    except Exception:
        message = "<the exception's message could not be shown>"
    record: dict[str, object] = {"type": type(exc).__name__[:100], "message": message, "frames": where[-5:]}
    missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
    if isinstance(missing, str):
        record["missing_module"] = missing[:100]  # lets the grader tell a missing package
    return record


# Audit events that lead out of numpy's world (processes, C libraries, sockets): recorded
# when the submission's code is on the stack and no module is being imported (a framework
# such as torch loads its C libraries with ctypes while it is imported).
ROUTES_OUT = frozenset({"ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata", "subprocess.Popen",
                        "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                        "os.forkpty", "pty.spawn", "socket.__new__"})
DYNAMIC_CODE = frozenset({"exec", "compile"})   # exec/eval/compile called by the submission
# Introspection that reaches other code's frames, functions and objects (the worker's own
# harness included): recorded when the submission is on the stack (inspect, functools or a
# thread start on its behalf included), as for routes out.
INTROSPECTION = frozenset({"sys._getframe", "sys._current_frames", "sys._current_exceptions",
                           "gc.get_objects", "gc.get_referrers", "gc.get_referents",
                           "sys.settrace", "sys.setprofile", "sys.addaudithook",
                           "function.__new__", "code.__new__", "object.__getattr__",
                           "_thread.start_new_thread"})
EVIDENCE_CAP = 100
OVERFLOW = "evidence-overflow()"   # more records than the cap: itself evidence
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep   # the worker's own modules
# The recorder's frames that do the submission's arithmetic (computed.py): what happens in
# there is the submission's doing, as it was before its code was rewritten.
_PASS_THROUGH = computed.OPERATOR_CODES


class RuntimeEvidence:
    """Audit hook that records what the submission itself imports, the dynamic code it
    runs, the routes out of numpy it takes and the introspection it does (evidence only:
    it can cost points, never earn them; the verdict rests on the grader's scan of the
    source). Entries are module names, ``event()`` for a call, ``.name`` for an attribute.

    Each new entry is sent to the grader at once, as its own frame, before the event's
    call returns: a submission that goes on to find this hook (with gc or a frame walk,
    both recorded) can stop later records, never take back one already sent."""

    def __init__(self, submission: str, sock: socket.socket):
        self.submission = submission
        self.sock = sock
        self.entries: list[str] = []
        self.busy = False   # the hook's own frame walk raises the events it listens to

    def __call__(self, event, args):
        if self.busy or (event != "import" and event not in DYNAMIC_CODE
                         and event not in ROUTES_OUT and event not in INTROSPECTION):
            return
        self.busy = True
        try:
            self._record(event, args)
        finally:
            self.busy = False

    def _record(self, event, args) -> None:
        frame: FrameType | None = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
            frame = frame.f_back
        direct = frame is not None and frame.f_code.co_filename == self.submission
        if event == "import" and direct:
            self._add(str(args[0]))
        elif event in DYNAMIC_CODE and direct:
            self._add("exec()" if event == "exec" else "compile()")
        elif event in ROUTES_OUT and self._caused_by_submission(frame):
            self._add(f"{event}()")
        elif event in INTROSPECTION and self._caused_by_submission(frame):
            self._add(f".{args[1]}" if event == "object.__getattr__" else f"{event}()")

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
            if name.startswith(_HERE):
                return False  # the worker's own doing (say, mapping shared arguments)
            frame = frame.f_back
        return False

    def _add(self, entry: str) -> None:
        if entry in self.entries:
            return
        if len(self.entries) >= EVIDENCE_CAP:   # a flood could hide what follows: say so
            entry = OVERFLOW
            if entry in self.entries:
                return
        self.entries.append(entry)
        try:
            wire.send(self.sock, {"op": "evidence", "entry": entry[:100]})
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
            return {"$obj": "oversized array",
                    "repr": f"an array of shape {value.shape} ({value.dtype}) is too large to return"}
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
        if arr is not None and arr.dtype.kind in wire.ALLOWED_DTYPE_KINDS \
                and arr.nbytes <= OUTPUT_BYTES_CAP:
            blobs.append(wire.array_to_npy(arr))
            return {"$nd": len(blobs) - 1, "subclass": type(value).__name__}
        if len(value) <= 1000:
            items = [_describe(v, blobs, depth + 1) for v in value]
            return {"$tuple": items} if type(value) is tuple else items
    return {"$obj": type(value).__qualname__[:100], "repr": _safe_repr(value)}


GLOBALS_CAP = 64                # arrays a script left in its globals that are sent back
COMPUTED_CAP = 128              # arrays it computed elsewhere (computed.py) that are sent back
ARRAYS_BYTES_CAP = 128 << 20    # the bytes of all of them together


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


def _numbers_left(namespace: dict) -> list[tuple]:
    """The numbers in the script's globals: (name, value, numpy view) each."""
    left = []
    for name, value in list(namespace.items()):
        if type(name) is not str or name.startswith("__"):
            continue
        arr = _plain_numbers(value, ARRAYS_BYTES_CAP)
        if arr is not None:
            left.append((name, value, arr))
    return left


def _numbers_sent(namespace: dict, recorder: computed.Recorder, wanted: frozenset,
                  out: list[bytes]) -> tuple[dict, list[dict]]:
    """The arrays the script left in its globals ({name: wire record}) and those it computed
    elsewhere ([wire record naming it], most telling first: computed.candidates), within
    the caps. Arrays of the shapes the checks want are chosen first, then the others, smallest
    first: big arrays never crowd the wanted ones out. A value is sent once."""
    left = _numbers_left(namespace)
    made = []
    for candidate in computed.candidates(recorder):
        arr = _plain_numbers(candidate.value, ARRAYS_BYTES_CAP)
        if arr is not None and arr.ndim > 0:
            made.append((candidate, arr))
    entries = [(0, i, arr) for i, (_, _, arr) in enumerate(left)] + \
              [(1, i, arr) for i, (_, arr) in enumerate(made)]
    order = sorted(range(len(entries)), key=lambda k: (
        tuple(entries[k][2].shape) not in wanted, entries[k][2].nbytes, k))
    chosen: set[int] = set()
    seen: set[int] = set()
    counts, total = [0, 0], 0
    for k in order:
        group, i, arr = entries[k]
        value = left[i][1] if group == 0 else made[i][0].value
        if counts[group] >= (GLOBALS_CAP, COMPUTED_CAP)[group] or total + arr.nbytes > ARRAYS_BYTES_CAP \
                or (group == 1 and id(value) in seen):
            continue
        seen.add(id(value))
        counts[group] += 1
        total += arr.nbytes
        chosen.add(k)
    sent_left: dict[str, dict] = {}
    sent_made: list[dict] = []
    for k, (group, i, arr) in enumerate(entries):   # in the script's order
        if k not in chosen:
            continue
        out.append(wire.array_to_npy(np.array(arr, copy=True)))
        if group == 0:
            name, value, _ = left[i]
            sent_left[name[:100]] = {"$nd": len(out) - 1, "type": type(value).__name__[:100]}
        else:
            candidate = made[i][0]
            sent_made.append(dict(computed.describe(candidate), **{
                "$nd": len(out) - 1, "type": type(candidate.value).__name__[:100]}))
    return sent_left, sent_made


def _shapes(value) -> frozenset:
    """The shapes the grader's checks want (a list of lists of ints), else none."""
    if not isinstance(value, list) or len(value) > 100:
        return frozenset()
    return frozenset(tuple(shape) for shape in value if isinstance(shape, list) and len(shape) <= 32
                     and all(type(n) is int and n >= 0 for n in shape))


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


class Worker:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.module: ModuleType | None = None
        self.submission: str | None = None
        self.evidence: RuntimeEvidence | None = None

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
        if op in ("load", "run"):
            _write_source(header["path"], blobs[header["source"]])
        if op in ("load", "run") and type(header.get("answer_bytes")) is int:
            _limit_outputs(header["answer_bytes"])
        if op == "load":
            reply, out = self.load(header["path"], header.get("functions", []))
            self._answer(reply, out, header.get("id"))
        elif op == "calls":  # one answer per call, each sent as soon as it is ready
            for item in header.get("items", []):
                reply, out = self.call(header["function"], item, blobs, fds)
                self._answer(reply, out, item.get("id"))
        elif op == "run":
            reply, out = self.run(header["path"], _shapes(header.get("shapes")))
            self._answer(reply, out, header.get("id"))
        else:
            self._answer({"ok": False, "error": {"type": "Protocol", "message": f"bad op {op!r}"}}, [],
                         header.get("id"))

    def _answer(self, reply: dict, out: list[bytes], request_id=None) -> None:
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

    def load(self, path: str, functions: list[str]) -> tuple[dict, list[bytes]]:
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
            return {"ok": False, "error": error}, []
        self._check_numpy()
        self.module = module
        found = {}
        for name in functions:
            obj = getattr(module, name, None)
            entry: dict[str, object] = {"defined": obj is not None, "callable": callable(obj)}
            if callable(obj):
                try:
                    entry["params"] = list(inspect.signature(obj).parameters)[:50]
                except (TypeError, ValueError):
                    entry["params"] = None
            found[name] = entry
        return {"ok": True, "functions": found}, []

    def run(self, path: str, wanted: frozenset = frozenset()) -> tuple[dict, list[bytes]]:
        """Run a script as __main__ in a namespace kept afterwards, compiled so that what it
        computes is recorded (computed.py), then send back the numbers it left in its
        globals and the arrays it computed (frameworks' tensors converted here); arrays of
        the ``wanted`` shapes (the grader's checks') first."""
        namespace = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
        recorder = computed.Recorder([], ARRAYS_BYTES_CAP, tuple(wanted))
        error = None
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
        except BaseException:   # a recorder the script tampered with: it loses these arrays
            del out[:]
            left, made = _numbers_sent(namespace, computed.Recorder([], 0), wanted, out)
        reply = {"ok": error is None, "globals": left, "computed": made}
        if error is not None:
            reply["error"] = error
        return reply, out

    def call(self, name: str, item: dict, blobs: list[bytes], fds: list[int]) -> tuple[dict, list[bytes]]:
        """Call the function on one item's arguments. Arrays the grader shared (a mutation
        check's) are mapped from its memory, so what the call does to them is seen there;
        nothing about the arguments after the call is sent back."""
        shared_back: list = []   # (the grader's memory, the array the function got)
        try:
            args = [_argument(v, blobs, fds, shared_back) for v in item.get("args", [])]
            kwargs = {str(k): _argument(v, blobs, fds, shared_back)
                      for k, v in item.get("kwargs", {"$dict": {}})["$dict"].items()}
        except (OSError, ValueError, IndexError) as exc:
            return {"ok": False, "error": {"type": "Sandbox", "message":
                                           f"an argument could not be handed over: {exc}"}}, []
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
            reply = {"ok": True, "result": _describe(result, out)}
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


def _copy_back(shared_back: list) -> None:
    """What the call did to the arrays it got, into the grader's memory."""
    for memory, given in shared_back:
        try:
            _copyto(memory, given, casting="unsafe")
        except Exception:
            pass  # (a shape the function changed in place: the grader sees the memory as it was)


def _argument(value, blobs: list[bytes], fds: list[int], shared_back: list):
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
    return wire.decode(value, blobs)


def become_worker(sock: socket.socket, confinement: dict) -> None:
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
        denied = {group: confinement.get(f"deny_{group}") is True
                  for group in ("sockets", "keys", "ipc", "processes")}
        if denied["keys"]:
            import keyring
            keyring.join_new_session()  # best effort: the filter below is what holds
        if any(denied.values()):
            import syscalls
            syscalls.deny(**denied)
        if confinement.get("landlock"):
            import landlock
            landlock.restrict(confinement["landlock"]["read"], confinement["landlock"]["write"])
    except (OSError, RuntimeError) as exc:
        wire.send(sock, {"op": "not-ready", "error": f"the sandbox could not be applied: {exc}"})
        os._exit(1)
    wire.send(sock, {"op": "ready"})  # before any student code: proves the sandbox works
    Worker(sock).serve()
    _flush_std_streams()
    os._exit(0)


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    become_worker(sock, json.loads(sys.argv[2]) if len(sys.argv) > 2 else {})


if __name__ == "__main__":
    main()
