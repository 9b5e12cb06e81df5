"""The walls around connections, below the HTTP app: what one client may hold of the server
itself. uvicorn has no deadline for a request whose head or body never completes (its
keep-alive timer runs only between requests, and every byte resets it), and no cap per
client address; so one client could open a thousand connections that each send a byte every
few seconds and lock every student out. Here each connection is uvicorn's own h11 protocol
with these walls:

- at most ``connections_per_peer`` open at once from one address (a trusted proxy's are
  counted only by uvicorn's ``limit_concurrency``, which answers 503 past ``connections``);
- a request head must be whole within ``head_seconds`` of the connection opening or of the
  previous answer;
- while a body is read, it must not go ``body_idle_seconds`` without a byte, and must be whole
  within ``body_seconds`` (time the server itself stops reading, while the app is busy, is
  not the client's);
- an answer the client does not read for ``body_idle_seconds`` ends the connection;
- past ``connections`` in all, a new connection is answered 503 at the door too (uvicorn's
  ``limit_concurrency`` answers only once a head has come).

A connection past a wall is answered (503 at the door, 408 for a late request) and closed; a
close that does not complete because the client reads nothing for ``body_idle_seconds`` is
aborted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from grader.service.limits import ClientLimits

CHECK_EVERY = 1.0  # seconds between a connection's looks at its clock

_BUSY_TEXT = b"too many connections from your address; try again shortly\n"
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 10\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT)
)
_LATE_TEXT = b"the request took too long to arrive; send it again\n"
_LATE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_LATE_TEXT), _LATE_TEXT)
)


def guarded_protocol(limits: ClientLimits, trusted: Collection[str] = ()) -> type[H11Protocol]:
    """uvicorn's h11 protocol class with these walls, for ``uvicorn.Config(http=...)``; its
    per-address counts are its own (one class per server)."""
    open_from: dict[str, int] = {}
    trusted_peers = frozenset(trusted)

    class Guarded(H11Protocol):
        _peer: str | None = None
        _since = 0.0  # when the part now awaited began: the head (opened, last answer) or the body
        _last_byte = 0.0
        _stalled_since: float | None = None  # writing paused since: the client reads nothing
        _timer: asyncio.TimerHandle | None = None
        _closing_left = -1  # bytes of the answer not yet sent when closing, and when that last moved
        _closing_moved = 0.0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            peer = self.client[0] if self.client else None
            # Past either cap the connection is answered and closed at once: its file is
            # freed before the process could run out of them (at that point asyncio's accept
            # loop would spin on EMFILE and starve everyone).
            over_all = len(self.connections) > limits.connections
            mine = peer if peer is not None and peer not in trusted_peers else None  # (counted)
            if over_all or (mine is not None and open_from.get(mine, 0) >= limits.connections_per_peer):
                transport.write(_BUSY)
                if transport.get_write_buffer_size():
                    transport.abort()  # (it does not even take 200 bytes)
                else:
                    transport.close()
                return
            if mine is not None:
                open_from[mine] = open_from.get(mine, 0) + 1
                self._peer = mine
            self._since = self._last_byte = time.monotonic()
            self._timer = self.loop.call_later(CHECK_EVERY, self._look)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._peer is not None:
                left = open_from.get(self._peer, 1) - 1
                if left > 0:
                    open_from[self._peer] = left
                else:
                    open_from.pop(self._peer, None)
                self._peer = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            self._last_byte = now = time.monotonic()
            reading_body = self._reading_body()
            super().data_received(data)
            if not reading_body and self._reading_body():
                self._since = now  # the head is whole: the body's clock starts

        def on_response_complete(self) -> None:
            self._since = time.monotonic()  # (the next request's head is awaited from here)
            super().on_response_complete()

        def pause_writing(self) -> None:
            # (the answer waits on the client: its clock runs until the client reads some)
            self._stalled_since = time.monotonic()
            super().pause_writing()

        def resume_writing(self) -> None:
            self._stalled_since = None
            super().resume_writing()

        def _reading_body(self) -> bool:
            cycle = self.cycle
            return cycle is not None and not cycle.response_complete and cycle.more_body

        def _look(self) -> None:
            self._timer = None
            now = time.monotonic()
            if self.transport.is_closing():
                # A close waits for the answer to be sent: a client that never reads would hold
                # the connection, and its count, for ever. One that reads, however slowly, is
                # let finish.
                left = self.transport.get_write_buffer_size()
                if left != self._closing_left:
                    self._closing_left, self._closing_moved = left, now
                if now - self._closing_moved > limits.body_idle_seconds:
                    self.transport.abort()
                    return
                self._timer = self.loop.call_later(CHECK_EVERY, self._look)
                return
            late = False
            if self.cycle is None or self.cycle.response_complete:
                late = now - self._since > limits.head_seconds
            elif self._reading_body():
                if self.flow.read_paused:  # (the app has not taken what came: not the client's time)
                    self._last_byte = now
                    self._since += CHECK_EVERY
                late = (
                    now - self._last_byte > limits.body_idle_seconds
                    or now - self._since > limits.body_seconds
                )
            if self.flow.write_paused and self._stalled_since is not None:
                if now - self._stalled_since > limits.body_idle_seconds:
                    self.transport.abort()  # (it reads nothing: an answer would never reach it)
                    return
            if late:
                self._close_late()
            self._timer = self.loop.call_later(CHECK_EVERY, self._look)  # (and a close that hangs is aborted)

        def _close_late(self) -> None:
            cycle = self.cycle
            if cycle is None or not cycle.response_started:
                self.transport.write(_LATE)
            if cycle is not None and not cycle.response_complete:
                cycle.disconnected = True  # (the app's receive() says the client went)
                cycle.message_event.set()
            self.transport.close()

    return Guarded


# What uvicorn logs for each malformed or unsupported request: every client can make as many
# of these as it likes, so they would fill the server's log (its disk: the database's too).
CLIENT_NOISE = (
    "Invalid HTTP request received",
    "Unsupported upgrade request",
    "No supported WebSocket library",
)


class _ClientNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(CLIENT_NOISE)


def quiet_client_noise() -> None:
    """uvicorn's warnings about what a client sent are not logged (a client's doing, not the
    server's); failures of the server's own still are."""
    logging.getLogger("uvicorn.error").addFilter(_ClientNoise())
