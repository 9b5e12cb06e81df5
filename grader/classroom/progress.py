"""Batch progress: a live line on a terminal; plain lines in CI logs (every 10% or 10 s)."""

from __future__ import annotations

import time
from typing import TextIO

from grader.records.result import Result
from grader.records.statuses import ERROR, PASSED
from grader.records.wording import counted


class Progress:
    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream = total, stream
        self.done = self.below = self.errors = 0
        self.start = self.last_line = time.monotonic()
        self.last_tenth = 0
        self.live = hasattr(stream, "isatty") and stream.isatty()

    def _text(self) -> str:
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        return (
            f"graded {self.done}/{self.total}, {self.below} below full marks, "
            f"{counted(self.errors, 'error')}, {elapsed:.0f} s so far, ETA {eta:.0f} s"
        )

    def update(self, report: Result) -> None:
        self.done += 1
        self.below += report.status != PASSED
        self.errors += report.status == ERROR
        if self.live:
            width = 30
            filled = width * self.done // max(self.total, 1)
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self._text()}  ")
            self.stream.flush()
            return
        tenth = 10 * self.done // max(self.total, 1)
        now = time.monotonic()
        if tenth > self.last_tenth or now - self.last_line >= 10:
            self.last_tenth, self.last_line = tenth, now
            print(self._text(), file=self.stream, flush=True)

    def finish(self) -> None:
        if self.live and self.total:
            self.stream.write("\n")
        rate = self.done / max(time.monotonic() - self.start, 1e-9)
        print(
            f"done: {self.done} graded ({rate:.1f}/s), {self.below} below full marks, {counted(self.errors, 'error')}",
            file=self.stream,
            flush=True,
        )
