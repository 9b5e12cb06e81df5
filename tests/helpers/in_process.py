"""`grader serve`'s app in this process, for the tests of the service whose point is a route's
answer: the same Starlette app (grader.service.app.create_app) over the same Service the CLI
builds (grader/cli/serve.py's cmd_serve: its parser, database, roster, limits, deadline,
sandbox tier and grading options), with a fresh SQLite database, the roster (alice, bob) and a
member of staff (prof) that tests/helpers/live_server.py gives, and their tokens; requests go
through Starlette's TestClient, no socket, no uvicorn.

What it has no part of: uvicorn and its HTTP parser, the walls around connections
(grader/service/connections.py), the process (its signals, its log, its stopping) and where
it listens. Tests of those start a live server (helpers/live_server.py).

``grading=True``: the dispatcher runs as the CLI runs it (grader.service.dispatcher.Dispatcher,
its pool of spawned processes, the tier the CLI would choose), for routes that show grades;
else uploads stay queued (no pool is started). The object ``start`` returns stands where a
LiveServer does for live_server's request helpers (client, sign_in, upload, graded, rows,
healthy; not raw, which needs a socket).
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import httpx

from helpers.live_server import ROSTER_ROWS, STAFF, STUDENTS

URL = "http://127.0.0.1:8000"  # what the app sees as its own origin (no socket listens on it)


class _SharedTransport(httpx.BaseTransport):
    """The app's TestClient transport, for every client of one app: their requests run in
    its one event loop (as a server's do in uvicorn's), and closing a client leaves it open."""

    def __init__(self, inner: httpx.BaseTransport):
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(request)

    def close(self) -> None:
        pass  # (closed with the app's TestClient)


@dataclass
class InProcessServer:
    url: str
    tokens: dict[str, str]  # person -> a sign-in token
    db: str  # the database's URL
    db_path: str
    folder: str
    store: Any  # grader.service.store.Store
    service: Any  # grader.service.app.Service
    transport: httpx.BaseTransport  # live_server.client sends through it
    _test_client: Any = field(repr=False, default=None)
    _grading: bool = False
    stopped: bool = False

    def token(self, person: str, staff: bool = False) -> str:
        """A new token, as grader serve-token makes one."""
        if staff:
            known = self.store.person(person)
            self.store.enrol(person, known.name if known else person, staff=True)
        return self.store.issue_token(person)

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        try:
            self._test_client.__exit__(None, None, None)
        finally:
            try:
                if self._grading:
                    self.service.dispatcher.stop()
            finally:
                self.store.close()


def start(
    folder: str,
    tasks: list[str],
    *options: str,
    students: tuple[str, ...] = STUDENTS,
    grading: bool = False,
) -> InProcessServer:
    """The app of ``grader serve TASKS --roster --db sqlite:///FOLDER/service.sqlite --jobs 1
    OPTIONS`` (the options parsed by the CLI's own parser), with a token for each student
    (of ``students``, the roster) and for staff."""
    with warnings.catch_warnings():  # (it would rather have httpx2; httpx is what the tests use)
        warnings.simplefilter("ignore", UserWarning)
        from starlette.testclient import TestClient

    from grader.authoring import load_task
    from grader.cli.common import options_from
    from grader.cli.parser import build_parser
    from grader.cli.serve import _deadline, _roster, open_store
    from grader.grading import tier_for
    from grader.grading.prepared import PreparedTask
    from grader.sandbox import tier as sandbox_tier
    from grader.service.app import Service, create_app
    from grader.service.dispatcher import Dispatcher
    from grader.service.limits import ClientLimits

    os.makedirs(folder, exist_ok=True)
    roster_path = os.path.join(folder, "roster.csv")
    with open(roster_path, "w", encoding="utf-8") as f:
        f.write("submission_id,lms_id,name\n" + "".join(ROSTER_ROWS[s] + "\n" for s in students))
    db_path = os.path.join(folder, "service.sqlite")
    db = f"sqlite:///{db_path}"
    args = build_parser().parse_args(
        ["serve", *tasks, "--roster", roster_path, "--db", db, "--jobs", "1", *options]
    )
    # As cmd_serve builds its Service (without the listener, uvicorn and the rlimit it raises
    # for connections).
    deadline = _deadline(args.deadline)
    limits = ClientLimits().changed(args.limit or [])
    loaded = {}
    for task_folder in args.tasks:
        task = load_task(task_folder)
        PreparedTask.of(task)
        loaded[task.id] = task
    roster = _roster(args.roster)
    grading_options = dataclasses.replace(options_from(args, warm_workers=True), others_work=True)
    tier = tier_for(grading_options)  # (as cmd_serve chooses it: a class, no kit rule)
    store = open_store(args.db, sandbox_tier(tier).file_permissions_are_walls)
    tokens = {}
    try:
        # grader serve-token --staff prof, before the server (as live_server.start does)
        store.enrol(STAFF, STAFF, staff=True)
        tokens[STAFF] = store.issue_token(STAFF)
        for student in roster.students:
            known = store.person(student.submission_id)
            store.enrol(student.submission_id, student.name, staff=bool(known and known.staff))
        dispatcher = Dispatcher(store, loaded, grading_options, args.jobs, args.dask)
        if grading:
            dispatcher.start()
        service = Service(
            store, loaded, dispatcher, roster, args.attempts, deadline, args.secure_cookies, limits
        )
        # A server answers a failure of its own with a 500 (walls.internal_error), never raises it.
        test_client = TestClient(
            create_app(service), base_url=URL, raise_server_exceptions=False, client=("127.0.0.1", 50000)
        )
        test_client.__enter__()  # (one event loop for every request, until stop)
    except BaseException:
        if grading and dispatcher.thread.is_alive():
            dispatcher.stop()
        store.close()
        raise
    for student in students:
        tokens[student] = store.issue_token(student)
    return InProcessServer(
        URL,
        tokens,
        db,
        db_path,
        folder,
        store,
        service,
        _SharedTransport(test_client._transport),
        test_client,
        grading,
    )
