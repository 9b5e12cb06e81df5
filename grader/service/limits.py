"""What one client may hold of the service, bounded by default (plain data). Every bound has a
name the operator changes it by (``grader serve --limit NAME=VALUE``, docs/service.md: Limits)
and a default that an honest class never meets: 300 students uploading in the last five
minutes before a deadline, several times each, from one campus address, stay far below each.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


def _limit(default: int, what: str) -> int:
    return field(default=default, metadata={"what": what})


@dataclass(frozen=True)
class ClientLimits:
    # uploads (answered 429, with when to try again, or 507)
    uploads_per_minute: int = _limit(10, "uploads a person may make in any 60 s, all tasks together")
    uploads_per_task: int = _limit(
        300, "uploads a person may make of one task, ever (a wall, not --attempts)"
    )
    upload_mib_per_task: int = _limit(
        64, "MiB of distinct files a person may store for one task (the same bytes again cost nothing)"
    )
    uploads_in_flight: int = _limit(
        2, "uploads a person may be sending at once (each is held in memory until it is whole)"
    )
    free_disk_mib: int = _limit(512, "MiB kept free on the SQLite database's disk: below it, uploads get 507")
    # rows a person creates by signing in
    sessions_per_person: int = _limit(20, "signed-in browsers a person may have; the oldest is signed out")
    # connections (answered 503, or closed)
    connections: int = _limit(4096, "connections open at once, from everyone; more are answered 503")
    connections_per_peer: int = _limit(
        512, "connections open at once from one address (a trusted proxy's are not counted)"
    )
    head_seconds: int = _limit(
        10, "seconds a request's head may take to arrive, from the connection's opening or the last answer"
    )
    body_idle_seconds: int = _limit(20, "seconds a request's body may go without a byte while it is read")
    body_seconds: int = _limit(120, "seconds a whole request body may take")

    @staticmethod
    def names() -> dict[str, str]:
        """Each bound's name on the command line, and what it bounds."""
        return {f.name.replace("_", "-"): f.metadata["what"] for f in dataclasses.fields(ClientLimits)}

    def changed(self, settings: list[str]) -> ClientLimits:
        """These limits with ``NAME=VALUE`` settings applied; ValueError says which is wrong."""
        values = {}
        known = self.names()
        for setting in settings:
            name, equals, value = setting.partition("=")
            name = name.strip()
            if name not in known or not equals:
                raise ValueError(f"--limit {setting!r}: give NAME=VALUE, NAME one of {', '.join(known)}")
            if not value.strip().isdigit() or int(value) < 1:
                raise ValueError(f"--limit {name}: {value!r} is not a whole number of at least 1")
            values[name.replace("-", "_")] = int(value)
        return dataclasses.replace(self, **values)

    def described(self) -> str:
        return ", ".join(f"{name}={getattr(self, name.replace('-', '_'))}" for name in self.names())
