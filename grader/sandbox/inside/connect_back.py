"""The unsandboxed tier's worker (a student's own machine: macOS, Windows): a plain
subprocess with no descriptor handed to it, so it opens its channel itself.

Runs as ``python -B connect_back.py PORT CONFIG``. The grader listens on 127.0.0.1:PORT and
writes a one-time token on this process's stdin (never on its command line, which other
users of the machine may read); this process connects, sends the token first (the grader
takes no other connection for this worker), sets on itself the rlimits the system offers
(none on Windows; the grader's per-call limit and budget hold everywhere: it kills this
process), then is an ordinary worker on that socket (worker.become_worker): the same frames
(wire.py) as in every tier.
"""

from __future__ import annotations

import json
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import limits  # noqa: E402
import protocol  # noqa: E402
import worker  # noqa: E402  (numpy with it, before any submission)


def connect(port: int, token: str) -> socket.socket:
    sock = socket.create_connection((protocol.LOOPBACK, port), timeout=30)
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # (a frame is not held back)
    sock.sendall(token.encode("ascii"))
    return sock


def main() -> None:
    token = sys.stdin.readline().strip()
    null = os.open(os.devnull, os.O_RDONLY)  # a submission that reads stdin reads nothing,
    os.dup2(null, 0)  # as in every tier
    os.close(null)
    if len(token) != protocol.TOKEN_CHARS:
        sys.exit("connect_back: no token on stdin")
    sock = connect(int(sys.argv[1]), token)
    config = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    if config.get("limits") and limits.available():
        # Best effort: a limit the system refuses (macOS and the address space) is left out.
        limits.apply(limits.rlimits(**config["limits"]), best_effort=True)
    worker.become_worker(sock, {"preload": list(config.get("preload") or [])})


if __name__ == "__main__":
    main()
