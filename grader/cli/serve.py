"""``grader serve`` (the submission service) and ``grader serve-token`` (a sign-in token)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import os
import signal
import socket
import stat
import sys
import threading
from collections.abc import Iterator

import uvicorn

from grader.authoring import load_task
from grader.classroom.roster import Roster, RosterError, load_roster
from grader.cli.common import EXIT_FULL, UsageError, options_from
from grader.disk import cache_root, create_private
from grader.grading import PreparedTask, tier_for
from grader.records.wording import counted
from grader.sandbox import SandboxUnavailable, refuse_open_paths
from grader.sandbox import tier as sandbox_tier
from grader.service.app import Service, create_app
from grader.service.connections import guarded_protocol, quiet_client_noise
from grader.service.dispatcher import Dispatcher
from grader.service.limits import ClientLimits
from grader.service.store import Store, sqlite_file
from grader.student_text import line
from grader.task.spec import Task

DEFAULT_FOLDER = "grader-serve"  # (in the current folder: a folder of its own)
DEFAULT_DB = f"sqlite:///{os.path.join(DEFAULT_FOLDER, 'service.sqlite')}"
LOOPBACK = ("127.0.0.1", "::1", "localhost")
SPARE_FILES = 256  # open files beyond the connections: the database, the pool, its pipes
SIDECARS = ("-wal", "-shm", "-journal")  # the files SQLite makes beside a database, in its mode


def database_url(given: str | None) -> str:
    if given:
        _make_sqlite_folder(given)
        return given
    os.makedirs(DEFAULT_FOLDER, mode=0o700, exist_ok=True)
    return DEFAULT_DB


def _make_sqlite_folder(url: str) -> None:
    """A SQLite file's folder made (0700), as the default's is; other databases are servers."""
    path = sqlite_file(url)
    folder = os.path.dirname(path) if path else ""
    if folder:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError:
            pass  # (open_store says the database cannot be opened, and why)


def open_store(given: str | None, walls: bool = False) -> Store:
    """The service's database, its tables made or migrated; a URL that names no database
    this machine can reach is the operator's error, said with --db and how to fix it. A
    SQLite file is private whatever the umask (_make_private). ``walls``: the tier's walls
    are file permissions, so a database a worker could reach is refused (_refuse_open)."""
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    url = database_url(given)
    path = sqlite_file(url)
    folders: list[str] = []  # (a PostgreSQL server's socket folders, where walls)
    if path is not None:
        path = os.path.realpath(path)  # (SQLite's own files go beside the file a link leads to)
        if walls:  # (before anything is written in an open folder)
            _refuse_open(url, [os.path.dirname(path)], [path + s for s in ("", *SIDECARS)])
        _make_private(path)
    try:
        store = Store(url)
        store.upgrade()
        if walls and store.engine.dialect.name == "postgresql":
            folders = _socket_folders(store)
    except (ArgumentError, ModuleNotFoundError, SQLAlchemyError) as exc:
        why = (
            f"no driver for it here ({exc.name})"
            if isinstance(exc, ModuleNotFoundError)
            else _first_line(exc)
        )
        raise UsageError(
            f"--db {line(_without_password(url))}: {line(why)}. Give sqlite:///PATH or "
            "postgresql://USER@HOST/DATABASE (pip install 'numgrader[postgresql]'), a database this "
            "machine can reach"
        ) from None
    if walls and store.engine.dialect.name == "postgresql":
        try:
            _refuse_open(url, folders, [])
        except UsageError:
            store.close()
            raise
    return store


def _make_private(path: str) -> None:
    """A new SQLite database made 0600 before SQLite opens it (SQLite would make it by the
    umask, and gives its -wal, -shm and -journal the database's own mode); an existing one,
    and those files, closed to group and others (said): they hold every upload."""
    try:
        create_private(path).close()
    except OSError:
        pass  # (there already, or not to be made: then Store says why)
    if os.name != "posix":
        return
    tightened = []
    for name in (path, *(path + s for s in SIDECARS)):
        try:
            mode = os.stat(name).st_mode
            if stat.S_ISREG(mode) and mode & 0o077:
                os.chmod(name, stat.S_IMODE(mode) & 0o700)
                tightened.append(name)
        except OSError:
            pass  # (gone, or not ours: in a tier whose walls are permissions, refused before)
    if tightened:
        print(
            f"grader: note: {line(', '.join(tightened), 2000)} could be read by other users; made "
            "private (chmod go-rwx)",
            file=sys.stderr,
        )


def _refuse_open(url: str, folders: list[str], files: list[str]) -> None:
    """In a tier whose walls are file permissions, refused while a worker could pass into
    the database's folder (or a PostgreSQL server's socket folder) or read a file of it,
    with the chmod that closes them."""
    where = line(_without_password(url))
    for folder in folders:
        if folder.startswith("@"):
            raise UsageError(
                f"the database {where}: the server listens on the abstract socket {line(folder)}, which every "
                "process of this machine may reach, a submission's too: take it out of the server's "
                "unix_socket_directories"
            )
    try:
        refuse_open_paths(files, entered=folders)
    except SandboxUnavailable as exc:
        shared = [f for f in folders if _others_may_write(f)]
        if shared:  # (/tmp: a place every user needs, not one to close)
            raise UsageError(
                f"the database {where}: in the unprivileged tier a submission runs as a user of its own, "
                f"and every user may write in {line(', '.join(shared))}: give the database (or the "
                "server's sockets) a folder of its own that other users may not pass into (without "
                "--db, grader-serve/ is made 0700)"
            ) from None
        raise UsageError(f"the database {where}: {exc}") from None


def _others_may_write(folder: str) -> bool:
    try:
        return bool(os.stat(folder).st_mode & stat.S_IWOTH)
    except OSError:
        return False


def _socket_folders(store: Store) -> list[str]:
    """The folders of the Unix sockets by which a process of this machine could reach the
    PostgreSQL server: the one libpq connected through (the URL's host, PGHOST or libpq's
    own default, as libpq resolved them) and, the server being on this machine (reached by
    a socket or loopback), every one it listens on (where the role may read that setting)."""
    from sqlalchemy.exc import SQLAlchemyError

    with store.engine.connect() as connection:
        info = getattr(connection.connection.dbapi_connection, "info", None)
        host = str(getattr(info, "host", "") or "")
        if not host.startswith(("/", "@")) and host not in LOOPBACK:
            return []  # (a server elsewhere: its sockets are another machine's)
        folders = [host] if host.startswith(("/", "@")) else []
        try:
            listed = str(connection.exec_driver_sql("SHOW unix_socket_directories").scalar() or "")
        except SQLAlchemyError:
            listed = ""  # (a role without pg_read_all_settings: the one it connected through)
    for entry in (e.strip().strip('"') for e in listed.split(",")):
        if entry.startswith(("/", "@")) and entry not in folders:
            folders.append(entry)
    return folders


def _first_line(exc: Exception) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _without_password(url: str) -> str:
    """The URL as said back: its password (if any) never printed."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def cmd_serve(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.attempts is not None and args.attempts < 1:
        raise UsageError("--attempts must be at least 1")
    deadline = _deadline(args.deadline)  # (said before anything starts)
    limits = _limits(args.limit or [])
    tasks: dict[str, Task] = {}
    for folder in args.tasks:
        task = load_task(folder)
        if task.id in tasks:
            raise UsageError(f"two tasks have the id {task.id!r}: {tasks[task.id].folder} and {task.folder}")
        PreparedTask.of(task)  # (its reference loads and its freeze is current: said now, not per upload)
        tasks[task.id] = task
    roster = _roster(args.roster)
    # Students' work, graded as `grader batch` grades it: never in a tier that could reach
    # the task or the results, warm workers in each pool process.
    options = dataclasses.replace(options_from(args, warm_workers=True), others_work=True)
    tier = tier_for(options)  # (once for every task: others' work, never a kit)
    walls = sandbox_tier(tier).file_permissions_are_walls
    if walls:  # (as grade() refuses each upload: said once, before any)
        refuse_open_paths([t.folder for t in tasks.values()] + [cache_root()])
    store = open_store(args.db, walls)
    for student in roster.students if roster else ():
        known = store.person(student.submission_id)
        store.enrol(student.submission_id, student.name, staff=bool(known and known.staff))
    if roster is not None:
        # The roster says who may sign in: a student dropped from it keeps their uploads and
        # grades, but their tokens (and the sessions they opened) end.
        on_roster = {s.submission_id for s in roster.students}
        dropped = [p.id for p in store.everyone() if not p.staff and p.id not in on_roster]
        for person in dropped:
            store.revoke_tokens(person)
        if dropped:
            print(
                f"grader serve: {counted(len(dropped), 'student')} no longer on the roster can no longer sign "
                f"in (their uploads and grades are kept): {line(', '.join(dropped), 2000)}",
                file=sys.stderr,
            )
    elif not store.everyone():
        print(
            "grader serve: note: no --roster and no one in the database: no student can get a token "
            "(start it with --roster ROSTER.csv)",
            file=sys.stderr,
        )
    listener = _listen(args.host, args.port)
    host, port = listener.getsockname()[:2]
    dispatcher = Dispatcher(store, tasks, options, args.jobs, args.dask)
    requeued = dispatcher.start()
    service = Service(store, tasks, dispatcher, roster, args.attempts, deadline, args.secure_cookies, limits)
    again = f"; {counted(requeued, 'upload')} a stopped server was grading queued again" if requeued else ""
    print(
        f"grader serve: listening on http://{host}:{port} ({counted(len(tasks), 'task')}, "
        f"{counted(len(store.everyone()), 'person', 'people')}, grading {args.jobs} at a time in the {tier} tier"
        f"{again})",
        flush=True,
    )
    rules = [f"database {_without_password(store.url)}"]
    rules.append(f"limits {limits.described()} (--limit NAME=VALUE changes one)")
    if args.attempts is not None:
        rules.append(f"{counted(args.attempts, 'attempt')} per task (unless its task.yaml says)")
    if args.deadline is not None:
        rules.append(f"uploads after {line(args.deadline)} marked late")
    print(f"grader serve: {'; '.join(rules)}", flush=True)
    if args.host not in LOOPBACK:
        print(
            "grader serve: note: listening beyond this machine; put it behind a TLS proxy "
            "(docs/service.md: Behind a TLS proxy) and add --secure-cookies",
            file=sys.stderr,
            flush=True,
        )
    server = _Server(
        uvicorn.Config(
            create_app(service),
            log_level="warning",
            access_log=False,
            http=guarded_protocol(limits, args.trusted_proxy or ()),
            limit_concurrency=limits.connections,
            # No WebSocket: an upgrade would hand the socket to a protocol without these walls.
            ws="none",
            lifespan="off",
            # X-Forwarded-* only from the proxies named (by default uvicorn's: 127.0.0.1), so
            # that a proxy elsewhere passes the scheme its students used.
            forwarded_allow_ips=list(args.trusted_proxy) if args.trusted_proxy else None,
        )
    )
    quiet_client_noise()
    try:
        server.run(sockets=[listener])
    finally:
        dispatcher.stop()
        store.close()
    return EXIT_FULL


class _Server(uvicorn.Server):
    """uvicorn's server, but SIGTERM or SIGINT ends ``run`` after its graceful shutdown
    rather than killing the process (uvicorn raises the signal again when it returns):
    the dispatcher and its pool are stopped after it, and leave no process behind."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.signal(s, self.handle_exit) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def cmd_serve_token(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    where = _without_password(store.url)
    person = store.person(args.person)
    if person is None and not args.staff:
        raise UsageError(
            f"{line(args.person)!r} is not among the students of {where} (grader serve --roster "
            "ROSTER.csv --db of that database enrols a roster's students; give --db if the server "
            "uses another database, or --staff for a member of staff)"
        )
    if args.staff:
        store.enrol(args.person, person.name if person else args.person, staff=True)
    token = store.issue_token(args.person)
    print(token)
    if args.url:
        print(f"{args.url.rstrip('/')}/signin?token={token}")  # (stdout too: > tokens.txt keeps it)
    print(f"grader serve-token: a sign-in token for {line(args.person)} in {where}", file=sys.stderr)
    return EXIT_FULL


def _limits(settings: list[str]) -> ClientLimits:
    """The limits asked for, with room for them in this process's open files: the soft
    limit is raised to the hard one (it is 1024 on most systems, fewer than the connections
    a class holds); where even the hard limit is short, the connection limit is lowered and
    said."""
    try:
        limits = ClientLimits().changed(settings)
    except ValueError as exc:
        raise UsageError(line(str(exc))) from None
    if limits.connections_per_peer > limits.connections:
        raise UsageError("--limit connections-per-peer must not be above --limit connections")
    try:
        import resource
    except ImportError:  # (Windows: no such limit to raise)
        return limits
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = limits.connections + SPARE_FILES
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        raised = wanted if hard == resource.RLIM_INFINITY else min(max(soft, wanted), hard)
        if raised > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
    if soft != resource.RLIM_INFINITY and soft < wanted:
        fits = max(soft - SPARE_FILES, 1)
        print(
            f"grader serve: note: this process may open only {soft} files, so it takes {fits} "
            f"connections at once, not {limits.connections} (raise the hard limit: ulimit -Hn)",
            file=sys.stderr,
        )
        limits = dataclasses.replace(
            limits, connections=fits, connections_per_peer=min(limits.connections_per_peer, fits)
        )
    return limits


def _roster(path: str | None) -> Roster | None:
    if path is None:
        return None
    try:
        return load_roster(path)
    except RosterError as exc:
        raise UsageError("the roster has problems: " + "; ".join(exc.problems)) from None


def _deadline(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"--deadline {line(text)!r}: not an ISO 8601 time (2026-12-01T23:59:00+01:00)"
        ) from None
    if when.tzinfo is None:
        raise UsageError("--deadline needs its UTC offset (2026-12-01T23:59:00+01:00)")
    return when.timestamp()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror})") from None
    listener.listen(128)
    return listener
