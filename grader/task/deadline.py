"""A time limit on trusted instructor code that runs in this process (a task's
``mistakes.py``): an endless loop there must cost a few seconds, never a hung class.

SIGALRM interrupts Python code and sleeps (a long numpy operation finishes first). Only the
main thread receives signals, so elsewhere (a Dask worker's thread) no limit applies; nor
when a timer is already armed (it is someone else's)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class TooSlow(BaseException):
    """The code did not finish within its deadline. Not an Exception, so instructor code's
    own ``except Exception`` (a retry loop) does not swallow it. (The alarm fires once: one
    that fired again could land in the grader's code after the block.)"""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def expired(_signum: int, _frame: FrameType | None) -> None:
        raise TooSlow(f"did not finish within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
