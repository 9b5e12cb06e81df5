"""A second lane for one file's shrinks (`grader check`): a forked process of the grader,
with a worker of its own, shrinks some of the failures while this process shrinks the rest.

A shrink is mostly Hypothesis's own work on this side, one call at a time, so one file's
shrinks keep one core busy and leave the other idle. Both lanes take the next failure from
one queue (a pipe holding a byte per failure), so neither waits while the other has work.
The lane is trusted code, a fork of this process: it holds what this process holds, and
its worker is sandboxed as any. What it found comes back as plain data (wire frames, no
pickle): the smaller input and the failure seen there, and what its worker saw the
submission do (evidence). A failure it did not report, whatever happened to it, is shrunk
here afterwards: the lane only ever saves time.

Only for one file graded in one process: a class (`grader batch`) keeps both cores busy
with two files at a time already.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import time
from typing import TYPE_CHECKING, Any

from grader.grading.checks.calls import Failure
from grader.grading.shrinking.search import SHRINK_SECONDS, FirstFailure, hypothesis_imported, smaller_failure
from grader.records.statuses import MISMATCH, RAISED
from grader.sandbox import die_with_parent, startup_seconds, wire
from grader.task.strategies import Drawn

if TYPE_CHECKING:
    from grader.grading.context import Context

NOT_SHRUNK = object()  # a failure neither lane shrank: shrunk here, as without lanes
MOST_FAILURES = 255  # one byte per failure in the queue (more: the rest are shrunk here)
MIN_FAILURES = 2  # fewer: a second worker's start costs more than it saves

Smaller = tuple[Drawn, Failure] | None


def shrink_both_ways(ctx: Context, waiting: list[FirstFailure]) -> list[Any]:
    """For each failure waiting, in order: what its shrink found (a (Drawn, Failure) or
    None), or NOT_SHRUNK. Shrinks in two lanes where it pays, else none here."""
    if not MIN_FAILURES <= len(waiting) <= MOST_FAILURES:
        return [NOT_SHRUNK] * len(waiting)
    hypothesis_imported()  # (no thread may be half-way through an import when this process forks)
    queue_out, queue_in = os.pipe()
    os.write(queue_in, bytes(range(len(waiting))))
    os.close(queue_in)  # (both lanes read to the end of the queue)
    here, there = socket.socketpair()
    grader = os.getpid()
    pid = os.fork()
    if pid == 0:  # the lane: never returns
        die_with_parent()  # (killed with the grade: its worker then goes with it)
        if os.getppid() != grader:
            os._exit(1)
        here.close()
        _lane(ctx, waiting, queue_out, there)
    there.close()
    results: list[Any] = [NOT_SHRUNK] * len(waiting)
    try:
        for i in _claims(queue_out):
            try:
                results[i] = smaller_failure(ctx, waiting[i])
            except Exception:
                results[i] = NOT_SHRUNK  # (shrunk again afterwards, where its error is said)
        _take_lanes_results(ctx, here, results, len(waiting))
    finally:
        os.close(queue_out)
        here.close()
        _reap(pid)
    return results


def _claims(queue: int) -> Any:
    """The failures a lane takes from the queue, one at a time, until it is empty."""
    while True:
        claimed = os.read(queue, 1)
        if not claimed:
            return
        yield claimed[0]


def _take_lanes_results(ctx: Context, channel: socket.socket, results: list[Any], count: int) -> None:
    """What the lane reports, until it says it is done (or stops answering in time)."""
    deadline = time.monotonic() + startup_seconds(ctx.sandbox.limits) + SHRINK_SECONDS * count + 10
    caps = wire.answer_caps(4 * ctx.prepared.answer_bytes())
    while True:
        try:
            header, blobs = wire.recv(channel, deadline, caps)
        except wire.WireError:
            return  # (gone or too late: what it did not report is shrunk here)
        if header.get("done") is True:
            ctx.sandbox.take_evidence([e for e in header.get("evidence", []) if isinstance(e, str)])
            return
        index = header.get("index")
        if type(index) is not int or not 0 <= index < count or results[index] is not NOT_SHRUNK:
            return  # (not what a lane says: the rest is shrunk here)
        try:
            results[index] = _decoded(header, blobs, caps)
        except (KeyError, TypeError, ValueError, wire.WireError):
            return


def _reap(pid: int) -> None:
    """Wait for the lane to end (it ends its worker first); a lane that does not is killed."""
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _lane(ctx: Context, waiting: list[FirstFailure], queue: int, channel: socket.socket) -> None:
    """The forked lane: shrink what it takes from the queue with a worker of its own, say
    what each found, then end that worker and exit (never returning to the grade)."""
    status = 1
    try:
        sandbox = ctx.sandbox.twin()
        lane = dataclasses.replace(
            ctx, sandbox=sandbox, shown={}, near=set(), answered={}, shrinks_later=None
        )
        with sandbox:
            for i in _claims(queue):
                try:
                    smaller = smaller_failure(lane, waiting[i])
                except Exception:
                    continue  # (not reported: shrunk again in the grade, where its error is said)
                header, blobs = _encoded(i, smaller)
                wire.send(channel, header, blobs)
            wire.send(channel, {"done": True, "evidence": list(sandbox.evidence)})
        status = 0
    finally:
        os._exit(status)


def _encoded(index: int, smaller: Smaller) -> tuple[dict, list[bytes]]:
    blobs: list[bytes] = []
    if smaller is None:
        return {"index": index, "found": None}, blobs
    drawn, failure = smaller
    outputs = failure.outputs
    found = {
        "args": wire.encode(drawn.args, blobs),
        "recipes": drawn.recipes,
        "reason": failure.reason,
        "message": failure.message,
        "output": failure.output,
        "line": failure.line,
        "cell": failure.cell,
        "outputs": None
        if outputs is None
        else [wire.encode(outputs[0], blobs), wire.encode(outputs[1], blobs), outputs[2]],
    }
    return {"index": index, "found": found}, blobs


def _decoded(header: dict, blobs: list[bytearray], caps: wire.Caps) -> Smaller:
    found = header["found"]
    if found is None:
        return None
    args = wire.decode(found["args"], blobs, caps)
    if not isinstance(args, dict) or not isinstance(found["recipes"], dict):
        raise TypeError("not an argument set")
    outputs, reason = found["outputs"], found["reason"]
    if reason not in (MISMATCH, RAISED):  # (what a shrink keeps: checks/case_runs.py)
        raise ValueError("not a failure a shrink keeps")
    failure = Failure(
        reason,
        str(found["message"]),
        str(found["output"]),
        found["line"] if type(found["line"]) is int else None,
        found["cell"] if type(found["cell"]) is int else None,
        None
        if outputs is None
        else (
            wire.decode(outputs[0], blobs, caps),
            wire.decode(outputs[1], blobs, caps),
            outputs[2] if isinstance(outputs[2], str) else None,
        ),
    )
    return Drawn(args, found["recipes"]), failure
