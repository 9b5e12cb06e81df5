"""The Sandbox: runs one submission's calls in a worker process, from the trusted side.

It starts a worker in the strongest isolation tier that works here (see tiers.py), talks to
it over a socketpair, enforces a per-call time limit and a per-submission budget by SIGKILL
from this side, and replaces a worker that crashed or timed out so grading can go on with
the next call. Workers are fresh processes (process.py) or forked from a warm one (warm.py).
"""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from . import wire
from ..student_text import sanitised
from .limits import Limits
from .process import FreshWorker, WorkerProcess
from .tiers import RLIMITS, SandboxUnavailable

__all__ = ["Sandbox", "CallOutcome", "Limits", "SandboxUnavailable"]

STARTUP_SECONDS = 60  # python + numpy start; generous for a loaded machine
FIRST_WINDOW, MAX_WINDOW = 2, 32   # calls per message: grows while they keep passing
WINDOW_BYTES = 1 << 20             # of arguments per message (one call may exceed it)
ABANDON_SECONDS = 0.25             # to take answers already under way after an early stop

# Makes a worker for (submission, limits, tier); FreshWorker unless a warm pool is used.
Spawner = Callable[[str, Limits, str], WorkerProcess]


@dataclass
class CallOutcome:
    """What one call in the worker came to. ``status`` is one of
    ok, raised, timeout, crashed, malformed, budget."""

    status: str
    value: object = None
    inputs_after: object = None
    aliases_input: bool = False
    error: dict = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""


class Sandbox:
    """Runs one submission's calls in a worker, replacing the worker when it dies."""

    def __init__(self, submission: str, functions: list[str], limits: Limits = Limits(),
                 tier: str = RLIMITS, spawn: Spawner = FreshWorker):
        self.submission = os.path.abspath(submission)
        self.spawn = spawn
        self.functions = list(functions)
        self.limits = limits
        self.tier = tier
        self.deadline = time.monotonic() + limits.submission_seconds
        self.process: WorkerProcess | None = None
        self.loaded = False
        self.restarts = 0

    # -- lifecycle
    def start(self) -> None:
        """Start a worker now (it warms up numpy while the grader does other work)."""
        if self.process is None:
            self.process = self.spawn(self.submission, self.limits, self.tier)
            self.loaded = False

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def budget_left(self) -> float:
        return self.deadline - time.monotonic()

    # -- requests
    def load(self) -> CallOutcome:
        """Import the submission in a fresh worker; ``value`` is the worker's description."""
        self.start()
        if not self.process.ready:
            self.process.await_ready(STARTUP_SECONDS)
        header, blobs = self._submission_request("load")
        outcome = self._request(dict(header, functions=self.functions), blobs)
        self.loaded = outcome.status == "ok"
        return outcome

    def run_script(self) -> CallOutcome:
        """Run the submission as a script in a fresh worker; ``value`` holds the numbers it
        left in its globals ({name: (array, type name)}) and what it imported."""
        self.start()
        if not self.process.ready:
            self.process.await_ready(STARTUP_SECONDS)
        return self._request(*self._submission_request("run"))

    def _submission_request(self, op: str) -> tuple[dict, list[bytes]]:
        """Where the worker finds the submission; a forked worker is sent its text, which
        it writes into its private folder (it cannot see the grader's files)."""
        header = {"op": op, "path": self.process.inner_path}
        if not self.process.sends_source:
            return header, []
        with open(self.submission, "rb") as f:
            return dict(header, source=0), [f.read()]

    def call(self, function: str, args: list, kwargs: dict | None = None,
             return_inputs: bool = False) -> CallOutcome:
        return next(self.calls(function, [(args, kwargs or {})], return_inputs))

    def calls(self, function: str, items: list[tuple[list, dict]],
              return_inputs: bool = False) -> Iterator[CallOutcome]:
        """The outcome of calling ``function`` on each (args, kwargs) in turn.

        Pipelined: a window of calls goes to the worker in one message and it answers each
        as soon as it is done, so neither side waits for the other between calls. Each
        answer still has the whole per-call limit, counted from the answer before it. A
        worker that crashed or timed out is replaced, and the calls after it are sent again.
        Stop iterating to stop early: answers already under way are drained briefly, or the
        worker is replaced."""
        window, i = FIRST_WINDOW, 0
        while i < len(items):
            if self.process is None or not self.loaded:
                reload = self.load()
                if reload.status != "ok":
                    i += 1
                    yield reload
                    continue
            if self.budget_left() <= 0:
                i += 1
                yield self._out_of_budget()
                continue
            process = self.process
            header, blobs = _calls_request(function, items[i:i + window], return_inputs)
            since = time.monotonic()
            with contextlib.suppress(OSError):  # a worker already gone shows as a crash below
                wire.send(process.sock, header, blobs)
            pending = len(header["items"])
            try:
                while pending:
                    outcome, since = self._answer(process, since)
                    pending -= 1
                    i += 1
                    yield outcome
                    if self.process is not process:
                        pending = 0  # it was replaced; the calls still under way are sent again
            finally:
                if pending:
                    self._abandon(process, pending)
            window = min(window * 2, MAX_WINDOW)

    def _request(self, header: dict, blobs: list[bytes]) -> CallOutcome:
        if self.budget_left() <= 0:
            return self._out_of_budget()
        since = time.monotonic()
        with contextlib.suppress(OSError):
            wire.send(self.process.sock, header, blobs)
        return self._answer(self.process, since)[0]

    def _answer(self, process: WorkerProcess, since: float) -> tuple[CallOutcome, float]:
        """The worker's next answer, due within the call limit from ``since`` (and within
        the budget); returns it with the time it came."""
        deadline = min(since + self.limits.call_seconds, self.deadline)
        reply: dict = {}
        try:
            reply, reply_blobs = wire.recv(process.sock, deadline)
            outcome = _outcome_from_reply(reply, reply_blobs)
        except wire.WireTimeout:
            outcome = CallOutcome("timeout", error={"message": f"did not finish within {deadline - since:.3g} s"})
        except wire.WireClosed:
            outcome = CallOutcome("crashed", error={"message": f"the worker process {process.exit_description()}"})
        except (wire.WireError, OSError) as exc:
            outcome = CallOutcome("malformed", error={"message": f"the worker's answer was unusable: {exc}"})
        outcome.stdout, outcome.stderr = process.take_output(_output_at(reply))
        outcome = sanitised(outcome)  # student text: valid, visible, bounded from here on
        if outcome.status in ("timeout", "crashed", "malformed"):
            # Whatever state the worker is in now is unknown: replace it for the next call.
            process.kill()
            self.process = None
            self.restarts += 1
        return outcome, time.monotonic()

    def _abandon(self, process: WorkerProcess, pending: int) -> None:
        """The caller stopped early: take the answers still under way, briefly; a worker
        that is not done by then is replaced rather than waited for."""
        if self.process is not process:
            return
        deadline = time.monotonic() + ABANDON_SECONDS
        try:
            for _ in range(pending):
                wire.recv(process.sock, deadline)
            process.take_output()
        except (wire.WireError, OSError):
            process.kill()
            self.process = None

    def _out_of_budget(self) -> CallOutcome:
        return CallOutcome("budget", error={"message": (
            f"the submission used up its {self.limits.submission_seconds:g} s time budget")})


def _calls_request(function: str, items: list[tuple[list, dict]],
                   return_inputs: bool) -> tuple[dict, list[bytes]]:
    """One message with as many of ``items`` as fit in WINDOW_BYTES (at least one)."""
    blobs: list[bytes] = []
    encoded, size = [], 0
    for args, kwargs in items:
        if encoded and size > WINDOW_BYTES:
            break
        before = len(blobs)
        encoded.append({"args": wire.encode(list(args), blobs),
                        "kwargs": wire.encode(dict(kwargs or {}), blobs)})
        size += sum(len(b) for b in blobs[before:])
    return {"op": "calls", "function": function, "items": encoded,
            "return_inputs": return_inputs}, blobs


def _output_at(reply: dict) -> tuple[int, int] | None:
    """How far the worker's stdout and stderr had got at this answer (the worker's word:
    it only decides which of its own output is shown with which call)."""
    at = reply.get("output_at")
    if isinstance(at, list) and len(at) == 2 and all(type(n) is int and n >= 0 for n in at):
        return at[0], at[1]
    return None


def _outcome_from_reply(reply: dict, blobs: list[bytes]) -> CallOutcome:
    if "globals" in reply:
        value = _script_info(reply, blobs)
        if reply.get("ok") is True:
            return CallOutcome("ok", value=value)
        return CallOutcome("raised", value=value, error=_clean_error(reply.get("error") or {}))
    if reply.get("ok") is True:
        return CallOutcome(
            "ok",
            value=wire.decode(reply.get("result"), blobs) if "result" in reply else _load_info(reply),
            inputs_after=wire.decode(reply["inputs_after"], blobs) if "inputs_after" in reply else None,
            aliases_input=reply.get("aliases_input") is True)
    if reply.get("ok") is False and isinstance(reply.get("error"), dict):
        return CallOutcome("raised", value=_load_info(reply), error=_clean_error(reply["error"]))
    raise wire.WireError("answer has neither a result nor an error")


def _load_info(reply: dict) -> dict:
    """The load answer: which functions exist and what the submission imported (evidence)."""
    functions = reply.get("functions", {})
    imports = reply.get("imports", [])
    if not isinstance(functions, dict) or not isinstance(imports, list):
        raise wire.WireError("malformed load answer")
    return {"functions": {str(k)[:100]: v for k, v in functions.items() if isinstance(v, dict)},
            "imports": [str(m)[:100] for m in imports[:100]]}


def _script_info(reply: dict, blobs: list[bytes]) -> dict:
    left = reply.get("globals")
    if not isinstance(left, dict) or not isinstance(reply.get("imports", []), list):
        raise wire.WireError("malformed script answer")
    arrays = {}
    for name, entry in list(left.items())[:64]:
        if not isinstance(entry, dict) or type(entry.get("$nd")) is not int:
            raise wire.WireError("malformed script answer")
        arrays[str(name)[:100]] = (wire.decode({"$nd": entry["$nd"]}, blobs),
                                   str(entry.get("type", "?"))[:100])
    return {"globals": arrays, "imports": [str(m)[:100] for m in reply.get("imports", [])[:100]]}


def _clean_error(error: dict) -> dict:
    frames = error.get("frames", [])
    if not isinstance(frames, list):
        frames = []
    return {"type": str(error.get("type", "Error"))[:100],
            "missing_module": str(error["missing_module"])[:100] if error.get("missing_module") else None,
            "message": str(error.get("message", ""))[:4000],
            "line": error.get("line") if type(error.get("line")) is int else None,
            "frames": [{"line": f.get("line") if type(f.get("line")) is int else None,
                        "function": str(f.get("function", ""))[:100],
                        "code": str(f.get("code", ""))[:200]}
                       for f in frames[:5] if isinstance(f, dict)]}
