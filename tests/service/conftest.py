"""The service's fixtures: `grader serve` started as a course starts it (tests/helpers/live_server.py),
on loopback with a fresh database, a roster (alice, bob) and a member of staff (prof).

``server``: one for the module, serving positional-encoding and a small second task
(``square``); ``start_server``: more, with the options a test needs (``--attempts``,
``--deadline``, ``--secure-cookies``). Every one is stopped after its test (SIGTERM, then
SIGKILL), and none leaves a process behind.

(tests/service/ is a package, so that this conftest does not take the name ``conftest`` the
other folders import tests/conftest.py by.)
"""

import pytest
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
