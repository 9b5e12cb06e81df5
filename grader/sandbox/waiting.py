"""Waiting for a worker's answer within a call's limit, from the trusted side: the limit
counts the worker's CPU time (read by the grader, cpu_time.py), up to a wall-clock bound
(the call's backstop, the submission's remaining grace, or its budget)."""

from __future__ import annotations

import select
import time

from grader.records.limits import CallLimit
from grader.sandbox.inside import wire
from grader.sandbox.worker_process import WorkerProcess

# Wall-clock time one submission's calls may take beyond their CPU limits, all calls
# together: a loaded machine slows an honest call by a fraction of its limit (honest calls
# here take milliseconds), while a submission that sleeps or hides its computing in
# processes it does not wait for would otherwise be waited for up to each call's backstop.
GRACE_SECONDS = 5.0


class Waiter:
    """Waits for a worker's answer while its call is within its limit: until the limit has
    passed in wall-clock time, then for as long as the worker's CPU time since the call
    began (read from this side) stays under it, never past ``deadline`` (the backstop or
    the budget). Without a CPU reading, the wall-clock time alone counts."""

    def __init__(
        self,
        process: WorkerProcess,
        since: float,
        limit: CallLimit,
        cpu_since: float | None,
        deadline: float,
        cut_by: str = "wall",
    ):
        self.process, self.since, self.limit = process, since, limit
        self.cpu_since, self.deadline = cpu_since, deadline
        self.cut_by = cut_by  # which bound ``deadline`` is: wall (backstop), grace or budget
        self.cpu_used: float | None = None
        self.by = "wall"

    def wait(self) -> None:
        """Returns when a frame is arriving; raises WireTimeout when the call's time is up."""
        check_at = self.since + self.limit.seconds
        while True:
            now = time.monotonic()
            until = min(check_at, self.deadline)
            ready, _, _ = select.select([self.process.sock], [], [], max(0.0, until - now))
            if ready:
                return
            now = time.monotonic()
            if now >= self.deadline:
                self.by = self.cut_by
                raise wire.WireTimeout("no answer before the wall-clock limit")
            used = self._cpu_used()
            if used is None or used >= self.limit.seconds:
                self.by = "cpu" if used is not None else "wall"
                raise wire.WireTimeout("no answer before the CPU-time limit")
            # it cannot be done before it has used its limit: look again then
            check_at = now + max(self.limit.seconds - used, 0.01)

    def _cpu_used(self) -> float | None:
        now = self.process.cpu_seconds() if self.cpu_since is not None else None
        self.cpu_used = None if now is None or self.cpu_since is None else max(0.0, now - self.cpu_since)
        return self.cpu_used

    def why_stopped(self) -> str:
        limit = self.limit
        waited = time.monotonic() - self.since
        if self.by == "budget":
            return f"did not finish within {self.deadline - self.since:.3g} s (the rest of the time budget)"
        if self.by == "cpu" or limit.seconds >= limit.backstop:
            return f"did not finish within {limit.seconds:.3g} s: {limit.why}"
        used = self._cpu_used() if self.cpu_used is None else self.cpu_used
        computed = f"it computed for only {used:.2f} s of them" if used is not None else "it"
        in_all = (
            f"{limit.backstop:.3g} s in all"
            if self.by == "wall"
            else f"and this submission has used up the {GRACE_SECONDS:g} s of waiting its calls "
            "may take beyond their limits together"
        )
        return (
            f"did not finish within {waited:.3g} s of wall-clock time, and {computed}: "
            f"it was waiting (sleep, input, a lock), not computing. Its limit is "
            f"{limit.seconds:.3g} s of computing ({limit.why}), {in_all}"
        )
