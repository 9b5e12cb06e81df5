"""The Sandbox: runs one submission's calls in a worker process, from the trusted side.

It starts a worker in the strongest isolation tier that works here (see tiers.py), talks to
it over a socketpair (a loopback connection in the unsandboxed tier), enforces a per-call time limit and a per-submission budget by SIGKILL
from this side, and replaces a worker that crashed or timed out so grading can go on with
the next call. Workers are fresh processes (process.py) or forked from a warm one (warm.py).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence

from grader.records.limits import CallLimit, Limits, absolute_limit
from grader.records.statuses import BUDGET, CRASHED, MALFORMED, OK, RAISED, TIMEOUT
from grader.records.worker_error import WorkerError
from grader.sandbox.call_request import (
    WINDOW_BYTES,
    calls_request,
    close,
    read_back,
    sent_back,
    sent_back_bytes,
)
from grader.sandbox.inside import protocol, shared, wire
from grader.sandbox.process import fresh_worker
from grader.sandbox.replies import CallOutcome, outcome_from_reply, sanitised, shown_id
from grader.sandbox.tiers import NAMES, SandboxUnavailable
from grader.sandbox.waiting import GRACE_SECONDS, Waiter
from grader.sandbox.worker_process import Spawner, WorkerProcess
from grader.student_text import line
from grader.submission.file import read_submission
from grader.submission.source_map import SourceMap

__all__ = ["Sandbox", "CallOutcome", "CallLimit", "Limits", "SandboxUnavailable", "WINDOW_BYTES"]

STARTUP_SECONDS = 60  # python + numpy start; generous for a loaded machine
FRAMEWORK_STARTUP_SECONDS = 60  # ... and more for each framework it preloads (TensorFlow: ~10 s)
FIRST_WINDOW, MAX_WINDOW = 2, 32  # calls per message: grows while they keep passing
EVIDENCE_CAP = protocol.EVIDENCE_CAP  # entries of runtime evidence kept per submission
OVERFLOW = protocol.OVERFLOW
EVIDENCE_FRAMES_CAP = 1000  # evidence frames before an answer: more is malformed
ABANDON_SECONDS = 0.25  # to take answers already under way after an early stop


class Sandbox:
    """Runs one submission's calls in a worker, replacing the worker when it dies."""

    def __init__(
        self,
        source: bytes | str,
        functions: list[str],
        limits: Limits = Limits(),
        tier: str = NAMES[-1],
        spawn: Spawner = fresh_worker,
        answer_bytes: int | None = None,
        source_map: SourceMap | None = None,
    ):
        if isinstance(source, str):  # a path: read it as any submission is read
            source = read_submission(source).data
        self.source = source  # the worker is sent these bytes; it never sees the original file
        self.spawn = spawn
        self.functions = list(functions)
        self.limits = limits
        self.tier = tier
        self.deadline = time.monotonic() + limits.submission_seconds
        self.process: WorkerProcess | None = None
        self.loaded = False
        self.restarts = 0
        self.given_back = 0.0  # seconds the current worker ran outside the budget
        self.evidence: list[str] = []  # what workers saw the submission import or call (evidence only)
        # The bytes of arrays one answer may carry (from the task, see grading/prepared.py: answer_bytes);
        # None: only the wire's own caps. Set it before the first request.
        self.answer_bytes = answer_bytes
        # The shapes of the arrays a script's checks look for (only shapes, never values):
        # the worker sends arrays of these shapes first (grading/checks/script_work.py: wanted_shapes).
        self.wanted_shapes: list[list[int]] = []
        # The task's display libraries (task.yaml imports: display): the worker makes them
        # headless, or stands in for them when they are not installed (inside/display.py).
        self.display: list[str] = []
        self._last_id = 0  # every request (and every call in one) has an id its answer echoes
        # Where the lines of the code that runs came from (a notebook's cells): every error
        # a worker reports speaks of the submission's own lines from here on.
        self.source_map = source_map
        # Per function: the limit of its first call that timed out, and whether it ever
        # finished a call (returned or raised) in time: see stalled().
        self.timed_out: dict[str, CallLimit] = {}
        self.finished: set[str] = set()
        self.grace_left = GRACE_SECONDS  # see GRACE_SECONDS

    def stalled(self, function: str) -> CallLimit | None:
        """The limit of ``function``'s first timeout if it has timed out and never finished
        a call: running it again would only cost another timeout."""
        if function in self.finished:
            return None
        return self.timed_out.get(function)

    def _new_id(self) -> int:
        self._last_id += 1
        return self._last_id

    def _caps(self, extra: int = 0) -> wire.Caps:
        """An answer's caps (``extra``: the bytes of arguments it sends back, unsandboxed)."""
        return wire.DEFAULT_CAPS if self.answer_bytes is None else wire.answer_caps(self.answer_bytes + extra)

    # -- lifecycle
    def start(self) -> WorkerProcess:
        """Start a worker now (it warms up numpy while the grader does other work)."""
        if self.process is None:
            self.process = self.spawn(self.limits, self.tier)
            self.loaded = False
            self.given_back = 0.0
        return self.process

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start_budget(self) -> None:
        """The submission's time budget runs from now (the grader's own preparation,
        made while the worker started, is not the student's time)."""
        self.deadline = time.monotonic() + self.limits.submission_seconds

    def budget_left(self) -> float:
        return self.deadline - time.monotonic()

    @contextlib.contextmanager
    def own_budget(self, seconds: float) -> Iterator[None]:
        """Calls for the grader's own ends once every check has run (diagnosis): a budget of
        their own, ``seconds`` from now (a worker's load included), and no grace, whatever
        the checks left of either: how long the checks took, hidden ones included, cannot
        change what these calls get."""
        saved = self.deadline, self.grace_left
        self.deadline, self.grace_left = time.monotonic() + seconds, 0.0
        try:
            yield
        finally:
            self.deadline, self.grace_left = saved

    @contextlib.contextmanager
    def outside_budget(self, fresh_after: float = 1.0) -> Iterator[None]:
        """The time spent inside is given back to the budget: calls made for the grader's
        own ends (shrinking a failure to show it) never cost the submission a verdict. The
        calls still have their own limit, and the budget still stops them. Time given back
        is no time to prepare in: once a worker has had more than ``fresh_after`` seconds
        of it, it is replaced (the new one loads the submission on the grader's time too),
        so nothing the submission did then serves the calls that follow."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.given_back += time.monotonic() - start
            if self.given_back > fresh_after and self.process is not None:
                self.close()
                self.load()
            self.deadline += time.monotonic() - start

    # -- requests
    def load(self) -> CallOutcome:
        """Import the submission in a fresh worker; ``value`` is the worker's description."""
        process = self.start()
        if not process.ready:
            self._await_ready(process)
        header, blobs = self._submission_request(protocol.LOAD, process)
        header["functions"] = self.functions
        cells = self.source_map.cells() if self.source_map is not None else ()
        if cells:  # a notebook: run cell by cell, a cell that raises reported (worker.py _run_cells)
            header["cells"] = list(cells)
        outcome = self._request(process, header, blobs, protocol.LOAD)
        self.loaded = outcome.status == "ok"
        return outcome

    def run_script(self, limit: CallLimit | None = None) -> CallOutcome:
        """Run the submission as a script in a fresh worker, within ``limit`` (CPU time
        from the moment it is sent, after the worker's start-up and preloaded frameworks;
        None: the fixed ``call_seconds``); ``value`` holds the numbers it left in its
        globals ({name: (array, type name)}) and what it imported."""
        process = self.start()
        if not process.ready:
            self._await_ready(process)
        return self._request(process, *self._submission_request(protocol.RUN, process), protocol.RUN, limit)

    def _await_ready(self, process: WorkerProcess) -> None:
        """Wait for the worker's hello; the wait is given back to the budget: a worker's
        start-up (Python, numpy, the frameworks it preloads) is never the student's time."""
        since = time.monotonic()
        process.await_ready(startup_seconds(self.limits))
        self.deadline += time.monotonic() - since

    def _submission_request(
        self, op: str, process: WorkerProcess
    ) -> tuple[protocol.SubmissionRequest, list[bytes]]:
        """The submission's bytes, which the worker writes into its private folder before
        any student code runs: no worker ever sees the file the submission came from."""
        header: protocol.SubmissionRequest = {"op": op, "path": process.inner_path, "source": 0}
        if self.answer_bytes is not None:  # the worker refuses larger outputs itself (courtesy)
            header["answer_bytes"] = self.answer_bytes
        if op == protocol.RUN and self.wanted_shapes:
            header["shapes"] = [list(shape) for shape in self.wanted_shapes]
        if self.display:
            header["display"] = list(self.display)
        return header, [self.source]

    def twin(self) -> Sandbox:
        """A sandbox for the same submission, set up as this one, with workers of its own."""
        twin = Sandbox(self.source, self.functions, self.limits, self.tier, self.spawn, self.answer_bytes)
        twin.source_map, twin.display = self.source_map, list(self.display)
        twin.wanted_shapes = [list(shape) for shape in self.wanted_shapes]
        return twin

    def take_evidence(self, entries: Sequence[object]) -> None:
        """What a twin's workers saw, noted as this sandbox's own workers' evidence."""
        for entry in entries:
            self._note_evidence(entry)

    def renew(self) -> None:
        """End the current worker; the next call loads the submission in a new one."""
        self.close()

    def call(
        self,
        function: str,
        args: list,
        kwargs: dict | None = None,
        return_inputs: bool = False,
        limit: CallLimit | None = None,
    ) -> CallOutcome:
        return next(
            self.calls(function, [(args, kwargs or {})], return_inputs, None if limit is None else [limit])
        )

    def calls(
        self,
        function: str,
        items: list[tuple[list, dict]],
        return_inputs: bool = False,
        limits: Sequence[CallLimit] | None = None,
    ) -> Iterator[CallOutcome]:
        """The outcome of calling ``function`` on each (args, kwargs) in turn.

        Pipelined: a window of calls goes to the worker in one message and it answers each
        as soon as it is done, so neither side waits for the other between calls. Each
        answer still has the whole per-call limit, counted from the answer before it. A
        worker that crashed or timed out is replaced, and the calls after it are sent again.
        Stop iterating to stop early: answers already under way are drained briefly, or the
        worker is replaced. ``limits`` gives each call its own limit (call_limits.py);
        without it, every call has the fixed ``call_seconds``."""
        window, i = FIRST_WINDOW, 0
        while i < len(items):
            if self.process is None or not self.loaded:
                reload = self.load()
                if reload.status != OK:
                    i += 1
                    yield reload
                    continue
            if self.budget_left() <= 0:
                i += 1
                yield self._out_of_budget()
                continue
            process = self.process
            assert process is not None  # (loaded above)
            window_items = items[i : i + window]
            # The arguments after the call: from memory shared with the worker, or where it
            # shares none (unsandboxed: a student's own machine) as it sends them back.
            arrays: list[list[shared.SharedArray]] | None = (
                [] if return_inputs and process.shares_memory else None
            )
            back: list[list[int]] | None = [] if return_inputs and not process.shares_memory else None
            extra = sent_back_bytes(window_items) if back is not None else 0
            try:
                header, blobs = calls_request(function, window_items, arrays, back)
                ids = [self._new_id() for _ in header["items"]]
                for item, request_id in zip(header["items"], ids):
                    item["id"] = request_id
                since, cpu_since = time.monotonic(), process.cpu_seconds()
                with contextlib.suppress(OSError):  # a worker already gone shows as a crash below
                    wire.send(process.sock, header, blobs)
                    if header.get("fds"):
                        shared.send_fds(process.sock, [a.fd for item in arrays or [] for a in item])
                sent = len(header["items"])
                pending = sent
                try:
                    while pending:
                        k = sent - pending
                        limit = limits[i] if limits is not None else None
                        outcome, since, cpu_since = self._answer(
                            process, since, protocol.CALL, ids[-pending], limit, cpu_since, extra
                        )
                        self._note_timing(function, outcome, limit)
                        # (after a return or a raise: the worker copies them back either
                        # way; after a timeout or a crash their state is unknown: none)
                        if arrays is not None:
                            if outcome.status in (OK, RAISED):
                                outcome.inputs_after = read_back(window_items[k], arrays[k])
                            close(arrays[k])
                        elif back is not None and outcome.status in (OK, RAISED):
                            outcome.inputs_after = sent_back(window_items[k], back[k], outcome.returned)
                        pending -= 1
                        i += 1
                        yield outcome
                        if self.process is not process:
                            pending = 0  # it was replaced; the calls still under way are sent again
                finally:
                    if pending:
                        self._abandon(process, ids[-pending:])
            finally:
                for handed in arrays or []:
                    close(handed)
            window = min(window * 2, MAX_WINDOW)

    def _request(
        self,
        process: WorkerProcess,
        header: protocol.SubmissionRequest,
        blobs: list[bytes],
        op: str,
        limit: CallLimit | None = None,
    ) -> CallOutcome:
        if self.budget_left() <= 0:
            return self._out_of_budget()
        request_id = self._new_id()
        since, cpu_since = time.monotonic(), process.cpu_seconds()
        with contextlib.suppress(OSError):
            wire.send(process.sock, dict(header, id=request_id), blobs)
        return self._answer(process, since, op, request_id, limit, cpu_since)[0]

    def _note_timing(self, function: str, outcome: CallOutcome, limit: CallLimit | None) -> None:
        if outcome.status in (OK, RAISED):
            self.finished.add(function)
        elif outcome.status == TIMEOUT and function not in self.timed_out:
            self.timed_out[function] = limit or absolute_limit(self.limits)

    def _answer(
        self,
        process: WorkerProcess,
        since: float,
        op: str,
        request_id: int,
        limit: CallLimit | None = None,
        cpu_since: float | None = None,
        extra_bytes: int = 0,
    ) -> tuple[CallOutcome, float, float | None]:
        """The worker's next answer to request ``request_id`` (a load, run or call), due
        within ``limit`` from ``since`` (and within the budget); returns it with the time it
        came and the worker's CPU time then. The limit counts the worker's CPU time since
        ``cpu_since`` (a loaded machine slows a call, it does not time it out) up to its
        wall-clock backstop. Whatever the answer is, reading it never raises: anything
        malformed (an answer to another request included) is this call's error.
        ``extra_bytes``: what it may carry beyond the task's cap (arguments sent back)."""
        limit = limit or absolute_limit(self.limits)
        # The backstop, but past the limit only as far as the submission's grace still goes.
        bounds = {
            "wall": since + limit.backstop,
            "grace": since + limit.seconds + max(self.grace_left, 0.0),
            "budget": self.deadline,
        }
        cut_by = min(bounds, key=bounds.__getitem__)
        waiter = Waiter(process, since, limit, cpu_since, bounds[cut_by], cut_by)
        reply: dict = {}
        try:
            reply, reply_blobs = self._next_reply(process, waiter.deadline, waiter, extra_bytes)
            if type(reply.get("id")) is not int or reply["id"] != request_id:  # (not True, 1.0)
                raise wire.WireError(
                    f"it answers request {shown_id(reply.get('id'))}, not request {request_id}"
                )
            outcome = outcome_from_reply(
                reply, reply_blobs, op, self.functions, (self.source_map or SourceMap()).where
            )
        except wire.WireTimeout:
            outcome = CallOutcome(TIMEOUT, error=WorkerError(waiter.why_stopped()))
        except wire.WireClosed:
            outcome = CallOutcome(
                CRASHED, error=WorkerError(f"the worker process {process.exit_description()}")
            )
        except wire.WireError as exc:
            outcome = CallOutcome(
                MALFORMED, error=WorkerError(f"the worker's answer was unusable: {str(exc)[:500]}")
            )
        except Exception as exc:  # the trusted side never crashes on what a worker sends
            outcome = CallOutcome(
                MALFORMED,
                error=WorkerError(
                    f"the worker's answer was unusable: {type(exc).__name__}: {str(exc)[:500]}"
                ),
            )
        self.grace_left -= max(0.0, time.monotonic() - since - limit.seconds)
        outcome.stdout, outcome.stderr = process.take_output(_output_at(reply))
        outcome = sanitised(outcome)  # student text: valid, visible, bounded from here on
        if self.source_map is not None and outcome.error is not None:
            outcome.error = self.source_map.located(outcome.error)
        if self.source_map is not None and outcome.cell_errors:
            outcome.cell_errors = tuple(self.source_map.located(e) for e in outcome.cell_errors)
        if outcome.status in (TIMEOUT, CRASHED, MALFORMED):
            # Whatever state the worker is in now is unknown: replace it for the next call.
            process.kill()
            self.process = None
            self.restarts += 1
            return outcome, time.monotonic(), None
        return outcome, time.monotonic(), process.cpu_seconds()

    def _next_reply(
        self, process: WorkerProcess, deadline: float, waiter: Waiter | None = None, extra_bytes: int = 0
    ) -> tuple[dict, list[bytearray]]:
        """The worker's next answer; the evidence frames it sends on the way (one per
        entry, as it happens: see worker.RuntimeEvidence) are noted, not answers.
        ``waiter`` decides how long to wait for each frame to begin."""
        for _ in range(EVIDENCE_FRAMES_CAP):
            if waiter is not None:
                waiter.wait()
            reply, blobs = wire.recv(process.sock, deadline, self._caps(extra_bytes))
            if reply.get("op") != protocol.EVIDENCE:
                return reply, blobs
            self._note_evidence(reply.get("entry"))
        raise wire.WireError("too many evidence frames")

    def _note_evidence(self, entry: object) -> None:
        if not isinstance(entry, str) or not entry:
            return
        text = line(
            entry, protocol.EVIDENCE_ENTRY_CHARS
        )  # the worker's word: shown as text, never as markup or lines
        if len(self.evidence) >= EVIDENCE_CAP:
            text = OVERFLOW  # a flood could push out what follows: itself evidence
        if text not in self.evidence:
            self.evidence.append(text)

    def _abandon(self, process: WorkerProcess, ids: list[int]) -> None:
        """The caller stopped early: take the answers still under way (to requests ``ids``),
        briefly; a worker that is not done by then, or answers out of turn, is replaced
        rather than waited for."""
        if self.process is not process:
            return
        deadline = time.monotonic() + ABANDON_SECONDS
        try:
            for request_id in ids:
                reply, _ = self._next_reply(process, deadline)
                if type(reply.get("id")) is not int or reply["id"] != request_id:
                    raise wire.WireError("an answer out of turn")
            process.take_output()
        except Exception:
            process.kill()
            self.process = None

    def _out_of_budget(self) -> CallOutcome:
        return CallOutcome(
            BUDGET,
            error=WorkerError(f"the submission used up its {self.limits.submission_seconds:g} s time budget"),
        )


def startup_seconds(limits: Limits) -> float:
    """How long a worker may take to say hello: Python and numpy, and its preloaded frameworks."""
    return STARTUP_SECONDS + FRAMEWORK_STARTUP_SECONDS * len(limits.preload)


def _output_at(reply: dict) -> tuple[int, int] | None:
    """How far the worker's stdout and stderr had got at this answer (the worker's word:
    it only decides which of its own output is shown with which call)."""
    at = reply.get("output_at")
    if isinstance(at, list) and len(at) == 2 and all(type(n) is int and n >= 0 for n in at):
        return at[0], at[1]
    return None
