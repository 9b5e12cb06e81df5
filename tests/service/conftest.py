"""The service's fixtures, of two kinds.

In process (tests/helpers/in_process.py), for tests whose point is a route's answer (a
status, a page's words, a cookie's flags, what is stored or refused, the security headers):
``grader serve``'s own Starlette app, built as the CLI builds it, over a fresh SQLite
database, called through Starlette's TestClient, no socket. ``app``: one for the module,
serving positional-encoding and ``square``, its dispatcher grading as the CLI's does (a pool
of spawned processes), for routes that show grades; ``start_app``: more, with the CLI's
options a test needs (``--attempts``, ``--secure-cookies``, ``--limit``), uploads left queued
unless ``grading=True``. A second or so each, against several for a live server.

Live (tests/helpers/live_server.py), for what needs the real process: `grader serve` started
as a course starts it, on loopback. ``server``: one for the module (the same two tasks);
``start_server``: more, with options. Every one is stopped after its test (SIGTERM, then
SIGKILL), and none leaves a process behind. They are kept for what no TestClient has:
- uvicorn and its HTTP parser: bytes sent as they are on a socket (raw(): hostile paths and
  header bytes, which httpx would normalize or re-encode), bodies declared, chunked, crawling
  or never finished (test_upload_walls.py's first tests, test_client_bounds.py);
- the walls around connections (connections.py: per address, in all, deadlines, a trusted
  proxy's X-Forwarded-Proto) and where it listens (loopback only);
- the process: SIGTERM and no process left behind, a restart with another roster, kill -9
  and restarts (test_durability.py), the server's log, the soft open-file limit it raises;
- grading as the point of the test: reports equal to grader check's, regrade, progress while
  grading, a hostile notebook, Dask, a dispatcher that stops on a broken database;
- requests sent at once (--attempts under concurrent uploads): in process they interleave
  less than on sockets, and a missing lock went unnoticed there more often.
The browser tests (tests/browser) use live servers too.

(tests/service/ is a package, so that this conftest does not take the name ``conftest`` of
tests/conftest.py; ``helpers`` imports here as everywhere: tests/conftest.py says how.)
"""

import pytest
from helpers import in_process
from helpers.live_server import square_task, start
from helpers.paths import PE_TASK


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    live = start(str(folder / "server"), [PE_TASK, square_task(str(folder))])
    yield live
    left = live.stop()
    assert not left, f"processes outlived the server: {left}"


@pytest.fixture
def start_server(tmp_path):
    started = []

    def starting(*options: str, tasks=None, folder=None, students=None):
        where = folder or str(tmp_path / f"server-{len(started)}")
        live = start(where, tasks or [PE_TASK], *options, **({"students": students} if students else {}))
        started.append(live)
        return live

    yield starting
    for live in started:
        live.stop()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("app")
    served = in_process.start(str(folder / "app"), [PE_TASK, square_task(str(folder))], grading=True)
    yield served
    served.stop()


@pytest.fixture
def start_app(tmp_path):
    started = []

    def starting(*options: str, tasks=None, folder=None, students=None, grading=False):
        where = folder or str(tmp_path / f"app-{len(started)}")
        served = in_process.start(
            where,
            tasks or [PE_TASK],
            *options,
            grading=grading,
            **({"students": students} if students else {}),
        )
        started.append(served)
        return served

    yield starting
    for served in started:
        served.stop()
