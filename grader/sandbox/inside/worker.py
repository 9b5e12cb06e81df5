"""Child side of the sandbox: imports one submission by path and answers calls.

Runs as ``python -I worker.py CHANNEL_FD`` inside the sandbox (the unsandboxed tier's worker
runs connect_back.py, which opens its channel, then serves as this module does). It receives inputs and sends
back outputs as plain data (see wire.py); it never receives expected values, and nothing
it says is trusted: the grader validates every answer and computes every verdict itself.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import operator
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable
from types import CodeType, ModuleType
from typing import Any

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # (a fork server's put it there)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import answers  # noqa: E402
import computed  # noqa: E402
import display  # noqa: E402
import evidence  # noqa: E402
import numpy as np  # noqa: E402  (imported before any submission, so it is warm)
import protocol  # noqa: E402
import rewriting  # noqa: E402
import shared  # noqa: E402
import wire  # noqa: E402

# What the harness uses of numpy, bound before any submission runs: a submission that
# rebinds numpy.may_share_memory changes nothing here (and is seen doing so: _check_numpy).
_ndarray, _may_share_memory = np.ndarray, np.may_share_memory
_NUMPY_NAMES = dict(vars(np))
_NUMPY_KEYS, _NUMPY_VALUES = tuple(_NUMPY_NAMES), tuple(_NUMPY_NAMES.values())

TEXT_CAP = protocol.TEXT_CAP


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


def _safe_error_record(exc: BaseException, submission: str | None) -> protocol.ErrorRecord:
    """``_error_record``, whatever the exception does while it is described (a ``__str__``
    or a ``__name__`` that raises, SystemExit included): the failure is still recorded."""
    try:
        return _error_record(exc, submission)
    except BaseException:
        return {"type": "an exception", "message": "<the exception could not be described>", "frames": []}


def _cell_starts(value: object, lines: int) -> list[int] | None:
    """The cells of a notebook's module, as the grader sent them: increasing line numbers
    of the module; None when there are none (or they make no sense: run it whole)."""
    if not isinstance(value, list) or not value or len(value) > protocol.CELLS_CAP:
        return None
    if not all(type(n) is int for n in value) or value[0] < 1:
        return None
    if any(b <= a for a, b in zip(value, value[1:])) or value[-1] > lines:
        return None
    return value


def _compiled_cell(lines: list[str], start: int, end: int, path: str) -> CodeType:
    """Lines ``start`` to ``end - 1`` (1-based) of the module, compiled as one cell whose
    line numbers are the module's (so tracebacks name the module's lines, which the grader
    maps to the cell and the student's own line)."""
    import ast

    tree = ast.parse("\n".join(lines[start - 1 : end - 1]) + "\n", path, "exec")
    ast.increment_lineno(tree, start - 1)
    code: CodeType = compile(tree, path, "exec", dont_inherit=True)
    return code


def _compiled_cells(path: str, cells: object) -> list[tuple[int, CodeType | protocol.ErrorRecord]] | None:
    """A notebook's module compiled cell by cell (None: no cells, run it whole): first the
    lines before the first cell (the grader's header and display helper), then each cell,
    each with the line it begins on, and its code or why it did not compile (the grader
    leaves out what Python refuses: here only a limit hit, a tree too deep)."""
    with open(path, "rb") as f:
        lines = importlib.util.decode_source(f.read()).split("\n")
    starts = _cell_starts(cells, len(lines))
    if starts is None:
        return None
    compiled: list[tuple[int, CodeType | protocol.ErrorRecord]] = []
    for start, end in zip([1, *starts], [*starts, len(lines) + 1]):
        try:
            compiled.append((start, _compiled_cell(lines, start, end, path)))
        except BaseException as exc:  # (SyntaxError, RecursionError, MemoryError)
            record = _safe_error_record(exc, path)
            at = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
            record["line"] = at + start - 1 if type(at) is int and at > 0 else start
            compiled.append((start, record))
    return compiled


def _shapes(value: object) -> frozenset[tuple[int, ...]]:
    """The shapes the grader's checks want (a list of lists of ints), else none."""
    if not isinstance(value, list) or len(value) > 100:
        return frozenset()
    return frozenset(
        tuple(shape)
        for shape in value
        if isinstance(shape, list) and len(shape) <= 32 and all(type(n) is int and n >= 0 for n in shape)
    )


def _compiled(source: bytes, path: str) -> tuple[CodeType, list[rewriting.Site]]:
    """The script's code, rewritten to record what it computes, and the sites it records.
    A file Python refuses raises SyntaxError as it would unrewritten; one the rewriting
    cannot handle (a tree too deep for it) runs as it is, unrecorded."""
    text = importlib.util.decode_source(source)
    try:
        return rewriting.instrument(text, path)
    except SyntaxError:
        raise
    except Exception:
        return compile(source, path, "exec", dont_inherit=True), []


def _write_source(path: str, source: bytes) -> None:
    """The worker is sent the submission's bytes and keeps them in its private folder."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(source)


# What a call's shared arguments were: (the grader's memory, the array the function got).
SharedBack = list[tuple[np.ndarray, np.ndarray]]


def _copy_back(
    shared_back: SharedBack, _copyto: Callable[..., None] = np.copyto, _uint8: type = np.uint8
) -> None:
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
            raw: np.ndarray = memory.view(_uint8).reshape(-1)
            raw ^= 0xFF
        except Exception:
            pass


def _argument(
    value: object,
    blobs: list[bytes],
    fds: list[int],
    shared_back: SharedBack,
    _map_array: Callable[[int, str, list[int]], np.ndarray] = shared.map_array,
    _array_copy: Callable[..., np.ndarray] = np.array,
    _decode: Callable[[object, list[bytes]], Any] = wire.decode,
) -> Any:
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


def _sent_back(values: list, position: object, out: list[bytes]) -> Any:
    """An argument as it is after the call, as a wire record (None: it cannot be sent)."""
    if type(position) is not int or not 0 <= position < len(values):
        return None
    try:
        return wire.encode(values[position], out)
    except Exception:
        return None


def _modules_held(
    namespace: dict, _module: type = ModuleType, _get: Callable = object.__getattribute__
) -> list[str]:
    """The names of the modules ``namespace`` (the submission's globals) holds, by the names
    they call themselves (``__builtins__`` aside: the runtime's own; any other dunder name is
    the file's, and may hide a module)."""
    found: list[str] = []
    for key, value in list(namespace.items())[:10_000]:
        if type(key) is not str or key == "__builtins__" or not issubclass(type(value), _module):
            continue
        try:
            name = _get(value, "__dict__").get("__name__")
        except Exception:
            continue
        if type(name) is str and name not in found:
            found.append(name[:200])
    return found


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
        self.evidence: evidence.RuntimeEvidence | None = None
        for name in (
            "serve",
            "_serve_one",
            "_answer",
            "_watch",
            "load",
            "_run_cells",
            "run",
            "call",
            "_inputs_sent_back",
            "_note_modules_held",
            "_check_numpy",
        ):
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
            answers.limit_outputs(header["answer_bytes"])
        if op == protocol.LOAD:
            reply, out = self.load(header["path"], header.get("functions", []), header.get("cells"))
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
        evidence.RuntimeEvidence), sent to the grader as it happens."""
        self.submission = path
        self.evidence = evidence.RuntimeEvidence(path, self.sock)
        sys.addaudithook(self.evidence)

    def load(
        self, path: str, functions: list[str], cells: object = None
    ) -> tuple[protocol.Answer, list[bytes]]:
        """Import the submission; a notebook's (``cells``: where each code cell begins) cell
        by cell, as a kernel runs it: a cell that raises is recorded and the next one runs
        (``_run_cells``). The cells are compiled first, before the audit hook watches: the
        harness's own compiling is no evidence, and is not weighed as any (once a cell)."""
        try:
            compiled = _compiled_cells(path, cells)
        except Exception:  # (the grader's own module it cannot split: run it whole, as a file)
            compiled = None
        self._watch(path)
        failed: list[protocol.ErrorRecord] = []
        count = 0
        try:
            spec = importlib.util.spec_from_file_location("submission", path)
            assert spec is not None and spec.loader is not None  # (a .py path always has both)
            module = importlib.util.module_from_spec(spec)
            sys.modules["submission"] = module
            if compiled is None:
                spec.loader.exec_module(module)
            else:
                count = self._run_cells(module, compiled, failed)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt and all: the student's fault
            self._check_numpy()
            error = _error_record(exc, path)
            if isinstance(exc, SyntaxError):
                error.update(line=exc.lineno, message=exc.msg)
            return answers.with_stand_ins({"ok": False, "error": error}), []
        self._check_numpy()
        self._note_modules_held(vars(module))
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
        reply: protocol.Answer = {"ok": True, "functions": found}
        if count:
            reply.update(cell_errors=failed, cells_failed=count)
        return answers.with_stand_ins(reply), []

    def _run_cells(
        self,
        module: ModuleType,
        compiled: list[tuple[int, CodeType | protocol.ErrorRecord]],
        failed: list[protocol.ErrorRecord],
    ) -> int:
        """Run a notebook's module cell by cell in the module's namespace, as a kernel does
        with ``allow_errors``: what came before the first cell (the grader's own header and
        display helper) first, then each cell; a cell that raises anything (SystemExit and
        KeyboardInterrupt too, as IPython's run_cell catches every exception a cell raises
        and the kernel goes on) is recorded, the first CELL_ERRORS of them in ``failed``,
        and the next cell runs. Returns how many cells failed. Whatever state a failed cell
        left (a rebound function, a patched numpy) is the state the checks meet, as in the
        kernel. (os._exit ends the process: the load crashed, as the kernel died.)"""
        namespace = module.__dict__
        count = 0
        for number, (start, code) in enumerate(compiled):
            if not isinstance(code, CodeType):  # (it did not compile)
                if number == 0:
                    raise RuntimeError("the grader's own lines of the notebook did not compile")
                count += 1
                if len(failed) < protocol.CELL_ERRORS:
                    failed.append(code)
                continue
            if number == 0:  # (the grader's own lines: what fails there is the load's failure)
                exec(code, namespace)
                continue
            try:
                exec(code, namespace)
            except BaseException as exc:
                count += 1
                if len(failed) < protocol.CELL_ERRORS:
                    record = _safe_error_record(exc, self.submission)
                    record["line"] = start  # the cell's (its frames say where in it)
                    failed.append(record)
        return count

    def run(self, path: str, wanted: frozenset = frozenset()) -> tuple[protocol.Answer, list[bytes]]:
        """Run a script as __main__ in a namespace kept afterwards, compiled so that what it
        computes is recorded (computed.py), then send back the numbers it left in its
        globals and the arrays it computed (frameworks' tensors converted here); arrays of
        the ``wanted`` shapes (the grader's checks') first."""
        namespace = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
        recorder = computed.Recorder([], answers.ARRAYS_BYTES_CAP, tuple(wanted), display.made_by_display)
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
        self._note_modules_held(namespace)
        out: list[bytes] = []
        try:
            left, made = answers.numbers_sent(namespace, recorder, wanted, out)
        except BaseException:  # a recorder the script tampered with: it loses these arrays
            del out[:]
            left, made = answers.numbers_sent(namespace, computed.Recorder([], 0), wanted, out)
        reply = answers.with_stand_ins({"ok": error is None, "globals": left, "computed": made})
        if error is not None:
            reply["error"] = error
        return reply, out

    def call(
        self,
        name: str,
        item: dict,
        blobs: list[bytes],
        fds: list[int],
        _argument: Callable[[object, list[bytes], list[int], SharedBack], Any] = _argument,
        _copy_back: Callable[[SharedBack], None] = _copy_back,
    ) -> tuple[protocol.Answer, list[bytes]]:
        """Call the function on one item's arguments. Arrays the grader shared (a mutation
        check's) are mapped from its memory, so what the call does to them is seen there,
        whether it returned or raised; nothing about the arguments after the call is sent
        back, but where the grader asks for them (``send_back``: the unsandboxed tier, a
        student's own machine, where no memory is shared and this worker's word is taken),
        after a return or a raise alike."""
        shared_back: SharedBack = []
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
            raised: protocol.Answer = {"ok": False, "error": _error_record(exc, self.submission)}
            return self._inputs_sent_back(raised, item, args, kwargs)
        finally:
            self._check_numpy()
        _copy_back(shared_back)
        out: list[bytes] = []
        try:
            reply: protocol.Answer = {"ok": True, "result": answers.describe(result, out)}
            arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, _ndarray)]
            if isinstance(result, _ndarray):  # seen only in here: the grader lets it cost, never earn
                reply["aliases_input"] = any(_may_share_memory(result, a) for a in arrays)
        except BaseException as exc:
            failed: protocol.Answer = {"ok": False, "error": _error_record(exc, self.submission)}
            return self._inputs_sent_back(failed, item, args, kwargs)
        return self._inputs_sent_back(reply, item, args, kwargs, out)

    def _inputs_sent_back(
        self, reply: protocol.Answer, item: dict, args: list, kwargs: dict, out: list[bytes] | None = None
    ) -> tuple[protocol.Answer, list[bytes]]:
        """``reply`` with the arguments named in ``send_back`` as they are after the call
        (the unsandboxed tier only), whether the call returned or raised."""
        out = [] if out is None else out
        back = item.get("send_back")
        if not isinstance(back, list):
            return reply, out
        size = len(out)
        try:
            values = list(args) + list(kwargs.values())
            reply["inputs_after"] = [_sent_back(values, p, out) for p in back]
        except BaseException:  # (none sent: the grader then sees them changed)
            del out[size:]
            reply.pop("inputs_after", None)
        return reply, out

    def _note_modules_held(self, namespace: dict) -> None:
        """Record the modules the submission's globals hold once its code ran: a library
        reached through another's names (a display library's) is one it uses."""
        if self.evidence is None:
            return
        try:
            for name in _modules_held(namespace):
                self.evidence._add(protocol.HELD + name)
        except Exception:
            pass

    def _check_numpy(
        self,
        _module: dict = vars(np),
        _all: Callable = all,
        _map: Callable = map,
        _is: Callable = operator.is_,
        _keys: tuple = _NUMPY_KEYS,
        _values: tuple = _NUMPY_VALUES,
    ) -> None:
        """Record any numpy name the submission rebound (numpy.frombuffer, ...): evidence
        that it reaches into what the harness uses. (What it uses is bound here when the
        worker starts: rebinding a builtin or the operator module later changes nothing.)"""
        if self.evidence is None:
            return
        # After every call: compared in C, name by name by identity (a Python loop over
        # numpy's ~500 names was most of a small call's cost); named only when one differs.
        if _all(_map(_is, _map(_module.get, _keys), _values)):
            return
        for name, value in zip(_keys, _values):
            if _module.get(name, value) is not value:
                self.evidence._add(f"numpy.{name} replaced()")


def become_worker(sock: socket.socket, confinement: protocol.Confinement) -> None:
    """Confine this process as asked, say hello, then answer requests until the channel
    closes; never returns. ``confinement``, in this order: "private_namespaces"
    (namespaces.py; with "scratch" [path, bytes], also a capped tmpfs over that folder), else
    "drop_capabilities" (capabilities.py); "deny_sockets", "deny_keys", "deny_ipc" and
    "deny_processes" (syscalls.py, one filter; with the keys, a new empty session keyring
    first); "landlock" (a policy for landlock.py)."""
    # The student's code meets SIGINT as Python's default (KeyboardInterrupt), whoever
    # started the grader: grader serve's pool ignores it, Ctrl-C being the server's to handle.
    signal.signal(signal.SIGINT, signal.default_int_handler)
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
