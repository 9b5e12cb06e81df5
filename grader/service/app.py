"""The service's HTTP side (Starlette, served by uvicorn): the API a course's scripts and the
tests use, the pages, sign-in, and the walls around them.

- API: ``POST /api/submissions`` (a bearer token; multipart ``task`` and ``file``) answers
  202 ``{"id": ...}`` once the upload is stored; ``GET /api/submissions/{id}`` answers its
  status (queued with the number ahead, grading, done) and, when done, the report as
  `grader check --format json` gives a student; ``GET /healthz``. Another person's id is 404.
- Pages: sign-in with a token (or a personal link holding one, which names the account it
  opens and asks to confirm: a link signs no one in by itself), a student's tasks with an
  upload form each and their attempts, an attempt's page (it refreshes itself until the
  feedback page, the same as `--format html`, replaces it); staff: the class live, a
  student's attempts, regrading, the gradebook's export (the files `grader export` writes).
- Walls: a session cookie (HttpOnly, SameSite=Strict; Secure behind TLS) stored hashed; a
  CSRF secret in every form, and a request from another origin refused; staff pages and
  everyone's attempts refused to students; a person's uploads within their budgets
  (limits.py: a rate, uploads and distinct bytes per task, two in flight, a disk reserve).
  The headers and the body cap around every response are walls.py's; the walls around
  connections (per address, in all, deadlines) are connections.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from grader.classroom.export import ExportError
from grader.classroom.export import export as export_grades
from grader.classroom.export_formats import DETAILED, EXPORT_FORMATS, ExportFormat
from grader.classroom.grade_files import task_file
from grader.classroom.gradebook import Gradebook
from grader.classroom.roster import Roster
from grader.grading import for_students
from grader.records.result import Result
from grader.records.wording import counted
from grader.report import html as report_html
from grader.report.json_report import render as render_json
from grader.service import pages, tokens
from grader.service.dispatcher import Dispatcher
from grader.service.limits import ClientLimits
from grader.service.store import OverBudget, Person, Session, Store, Submission
from grader.service.uploads import UploadRefused, read_upload
from grader.service.walls import BodyTooLarge, Walls, internal_error
from grader.student_text import line
from grader.submission.file import MAX_SOURCE_BYTES
from grader.task.spec import Task

COOKIE = "grader_session"
# Over HTTPS the cookie's name says it was set by this host itself, over a secure connection,
# for the whole site: a sibling subdomain cannot plant one (a session of its own choosing).
SECURE_COOKIE = "__Host-grader_session"


@dataclass(frozen=True)
class Service:
    """What the routes serve: the database, the tasks, the grading, and the course's rules."""

    store: Store
    tasks: dict[str, Task]
    dispatcher: Dispatcher
    roster: Roster | None = None
    attempts: int | None = None  # per person and task (--attempts); None: no limit
    deadline: float | None = None  # uploads after it are marked late
    secure_cookies: bool = False  # behind a TLS proxy: the cookie only over HTTPS
    limits: ClientLimits = ClientLimits()  # what one client may hold

    def attempts_at(self, task_id: str) -> int | None:
        """Uploads a student may make of this task: its task.yaml attempts:, else --attempts."""
        own = self.tasks[task_id].attempts
        return own if own is not None else self.attempts


def create_app(service: Service) -> Starlette:
    routes = _Routes(service)
    app = Starlette(
        routes=[
            Route("/healthz", routes.healthz),
            Route("/api/submissions", routes.api_upload, methods=["POST"]),
            Route("/api/submissions/{id}", routes.api_status),
            Route("/", routes.home),
            Route("/signin", routes.signin_form),
            Route("/signin", routes.signin, methods=["POST"]),
            Route("/signout", routes.signout, methods=["POST"]),
            Route("/upload", routes.upload, methods=["POST"]),
            Route("/attempts/{id}", routes.attempt),
            Route("/staff", routes.staff_class),
            Route("/staff/people/{id}", routes.staff_person),
            Route("/staff/attempts/{id}", routes.staff_attempt),
            Route("/staff/regrade", routes.staff_regrade, methods=["POST"]),
            Route("/staff/export", routes.staff_export),
        ],
        exception_handlers={Exception: internal_error},
    )
    app.add_middleware(Walls)
    return app


class _Routes:
    def __init__(self, service: Service):
        self.s = service
        # A person's uploads are counted and stored one at a time: else uploads sent at once
        # all find an attempt left, and --attempts is no limit. (One server per database.)
        self.uploading: dict[str, asyncio.Lock] = {}
        self.sending: dict[str, int] = {}  # uploads each person is sending now (bodies in memory)
        self.cookie = SECURE_COOKIE if service.secure_cookies else COOKIE

    # -- who is asking
    async def _bearer(self, request: Request) -> Person | None:
        header = request.headers.get("authorization", "")
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer":
            return None
        return await run_in_threadpool(self.s.store.person_by_token, presented.strip())

    async def _session(self, request: Request) -> Session | None:
        cookie = request.cookies.get(self.cookie)
        return await run_in_threadpool(self.s.store.session, cookie) if cookie else None

    @staticmethod
    def _same_origin(request: Request) -> bool:
        """A form may be posted only from this server's own pages (browsers send Origin)."""
        origin = request.headers.get("origin")
        if origin is None or origin == "null":
            return origin is None
        return origin == f"{request.url.scheme}://{request.url.netloc}"

    async def _form_session(self, request: Request, form: Any) -> Session | None:
        """The session behind a form post, when its CSRF secret matches and it came from here."""
        session = await self._session(request)
        presented = form.get("csrf")
        if session is None or not isinstance(presented, str) or not self._same_origin(request):
            return None
        return session if tokens.same(presented, session.csrf) else None

    @staticmethod
    async def _small_form(request: Request, fields: int) -> Any:
        """A form of a few small fields (sign-in, sign-out, regrade), or None when it cannot
        be read: malformed, or its sender gone mid-body. That is the sender's doing, answered
        400 in a few words, never a failure logged with its traceback (which anyone could
        make as often as they like)."""
        try:
            return await request.form(max_files=0, max_fields=fields, max_part_size=1024)
        except BodyTooLarge:
            raise
        except Exception:
            return None

    # -- API
    async def healthz(self, request: Request) -> Response:
        if self.s.dispatcher.error:
            return PlainTextResponse(f"grading stopped: {self.s.dispatcher.error}\n", status_code=503)
        return PlainTextResponse("ok\n")

    @contextlib.contextmanager
    def _sending(self, person: Person) -> Iterator[None]:
        """While a person's upload is read (before its body is): UploadRefused past their
        uploads in flight, whose bodies the server would hold in memory at once."""
        if self.sending.get(person.id, 0) >= self.s.limits.uploads_in_flight:
            raise UploadRefused(
                f"you are sending {counted(self.s.limits.uploads_in_flight, 'upload')} already: wait "
                "for them to arrive",
                429,
                retry_after=5,
            )
        self.sending[person.id] = self.sending.get(person.id, 0) + 1
        try:
            yield
        finally:
            self.sending[person.id] -= 1
            if not self.sending[person.id]:
                del self.sending[person.id]

    async def api_upload(self, request: Request) -> Response:
        person = await self._bearer(request)
        if person is None:
            return _needs_bearer()
        try:
            with self._sending(person):
                public_id = await self._accept(request, person)
        except UploadRefused as exc:
            return JSONResponse(
                {"error": line(str(exc), 1000)}, status_code=exc.status, headers=exc.headers()
            )
        return JSONResponse({"id": public_id, "status": "queued"}, status_code=202)

    async def api_status(self, request: Request) -> Response:
        person = await self._bearer(request)
        if person is None:
            return _needs_bearer()
        found = await self._visible(person, request.path_params["id"])
        if found is None:
            return JSONResponse({"error": "no such submission"}, status_code=404)
        ahead = None
        if found.status == "queued":
            ahead = await run_in_threadpool(self.s.store.position, found.public_id)
            if ahead is None:  # claimed since it was read: say where it is now
                found = await run_in_threadpool(self.s.store.submission, found.public_id) or found
        body: dict[str, Any] = {
            "id": found.public_id,
            "task": found.task,
            "status": found.status,
            "late": found.late,
            "uploaded": found.uploaded,
        }
        if found.status == "queued":
            body["ahead"] = ahead or 0
        elif found.status == "grading" and found.started is not None:
            body["grading_seconds"] = round(time.time() - found.started, 1)
            typical = await run_in_threadpool(self.s.store.typical_seconds, found.task)
            if typical is not None:
                body["typical_seconds"] = round(typical, 1)
        elif found.report is not None:
            body["report"] = json.loads(render_json(self._viewed(person, found)))
        return JSONResponse(body)

    async def _visible(self, person: Person, public_id: str) -> Submission | None:
        """The submission, if this person may see it (theirs, or anyone's for staff)."""
        if not tokens.plausible(public_id):
            return None
        found = await run_in_threadpool(self.s.store.submission, public_id)
        if found is None or (found.person != person.id and not person.staff):
            return None
        return found

    @staticmethod
    def _viewed(person: Person, found: Submission) -> Result:
        assert found.report is not None
        result = Result.from_dict(found.report)
        return result if person.staff else for_students(result)

    async def _accept(self, request: Request, person: Person) -> str:
        try:
            form = await request.form(max_files=1, max_fields=4, max_part_size=4096)
        except BodyTooLarge:
            raise
        except Exception:  # (malformed multipart, too many parts: the sender's error)
            raise UploadRefused(
                "not a form this service reads: multipart/form-data with one field task and one field file"
            ) from None
        return await self._accept_form(person, form)

    # -- pages: students
    async def home(self, request: Request, problem: str | None = None, status: int = 200) -> Response:
        session = await self._session(request)
        if session is None:
            return HTMLResponse(pages.signin_page())
        person = session.person
        history = await run_in_threadpool(self.s.store.submissions_of, person.id)
        left: dict[str, int | None] = {}
        for task_id in self.s.tasks:
            limit = self.s.attempts_at(task_id)
            if limit is None or person.staff:
                left[task_id] = None
            else:
                left[task_id] = max(0, limit - sum(1 for h in history if h.task == task_id))
        listed = [(t.id, t.title) for t in self.s.tasks.values()]
        return HTMLResponse(
            pages.home_page(person, session.csrf, listed, history, left, problem, self.s.deadline),
            status_code=status,
        )

    async def signin_form(self, request: Request) -> Response:
        # A personal link (?token=) is whoever sent it's choice: it never signs anyone in by
        # itself, nor fills in a form the visitor cannot read. It names the account it opens
        # and asks to confirm (warning a browser signed in as someone else).
        token = request.query_params.get("token")
        if token is None:
            return HTMLResponse(pages.signin_page())
        account = await run_in_threadpool(self.s.store.person_by_token, token)
        if account is None:
            return HTMLResponse(
                pages.signin_page(
                    "this link's token is not valid (it may have been replaced): paste your token"
                ),
                status_code=401,
            )
        session = await self._session(request)
        assert isinstance(token, str)
        return HTMLResponse(pages.link_signin_page(account, token, session.person if session else None))

    async def signin(self, request: Request) -> Response:
        # No session yet, so no CSRF secret: the sign-in form must say it comes from this
        # site (browsers send Origin with every form post), or another site could sign a
        # visitor in to an account of its choosing and collect what they upload.
        if request.headers.get("origin") is None or not self._same_origin(request):
            return HTMLResponse(pages.signin_page("sign in from this site's own page"), status_code=403)
        form = await self._small_form(request, 3)
        if form is None:
            return HTMLResponse(
                pages.signin_page("that sign-in could not be read; try again"), status_code=400
            )
        presented, account = form.get("token"), form.get("account")
        person = await run_in_threadpool(self.s.store.person_by_token, presented)
        # (a link's confirmation names the account the visitor agreed to: no other one)
        if person is None or not isinstance(presented, str) or (account is not None and account != person.id):
            return HTMLResponse(pages.signin_page("that token is not valid"), status_code=401)
        previous = request.cookies.get(self.cookie)
        if previous:  # (the browser's other account is signed out here, as the link page warned)
            await run_in_threadpool(self.s.store.close_session, previous)
        cookie, _ = await run_in_threadpool(
            self.s.store.open_session, person.id, presented, self.s.limits.sessions_per_person
        )
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            self.cookie, cookie, httponly=True, samesite="strict", secure=self.s.secure_cookies, path="/"
        )
        return response

    async def signout(self, request: Request) -> Response:
        form = await self._small_form(request, 2)
        session = None if form is None else await self._form_session(request, form)
        if session is not None:
            await run_in_threadpool(self.s.store.close_session, request.cookies.get(self.cookie, ""))
        response = RedirectResponse("/signin", status_code=303)
        response.delete_cookie(self.cookie, path="/", secure=self.s.secure_cookies)
        return response

    async def upload(self, request: Request) -> Response:
        session = await self._session(request)
        if session is None:
            return HTMLResponse(pages.signin_page("sign in first"), status_code=401)
        try:
            with self._sending(session.person):
                try:
                    form = await request.form(max_files=1, max_fields=4, max_part_size=4096)
                except BodyTooLarge:
                    raise
                except Exception:
                    return await self.home(request, "that upload could not be read; try again", 400)
                if await self._form_session(request, form) is None:
                    return HTMLResponse(
                        pages.message_page("Refused", "the form was not this site's"), status_code=403
                    )
                public_id = await self._accept_form(session.person, form)
        except UploadRefused as exc:
            answer = await self.home(request, line(str(exc), 1000), exc.status)
            answer.headers.update(exc.headers())
            return answer
        return RedirectResponse(f"/attempts/{public_id}", status_code=303)

    async def _accept_form(self, person: Person, form: Any) -> str:
        """Store the form's upload for this person (UploadRefused: why not); its public id."""
        upload = form.get("file")
        content, filename = None, None
        if isinstance(upload, UploadFile):
            content = await upload.read(MAX_SOURCE_BYTES + 1)
            filename = upload.filename
        accepted = read_upload(form.get("task"), self.s.tasks, filename, content)
        async with self.uploading.setdefault(person.id, asyncio.Lock()):
            limit = self.s.attempts_at(accepted.task)
            if limit is not None and not person.staff:
                used = await run_in_threadpool(self.s.store.attempts, person.id, accepted.task)
                if used >= limit:
                    raise UploadRefused(
                        f"you have used your {counted(limit, 'attempt')} at {accepted.task}", 429
                    )
            free = await run_in_threadpool(self.s.store.free_bytes)
            if free is not None and free - len(accepted.content) < self.s.limits.free_disk_mib << 20:
                # (refused before the disk fills: the uploads already taken are kept and graded)
                raise UploadRefused(
                    "the service's disk is nearly full, so it takes no upload now; tell your instructor", 507
                )
            late = self.s.deadline is not None and time.time() > self.s.deadline
            try:
                public_id = await run_in_threadpool(
                    self.s.store.accept,
                    person.id,
                    accepted.task,
                    accepted.filename,
                    accepted.content,
                    late,
                    self.s.limits,
                )
            except OverBudget as exc:
                raise UploadRefused(str(exc), 429, exc.retry_after) from None
        self.s.dispatcher.wake.set()
        return public_id

    async def attempt(self, request: Request) -> Response:
        session = await self._session(request)
        if session is None:
            return HTMLResponse(pages.signin_page("sign in first"), status_code=401)
        found = await self._visible(session.person, request.path_params["id"])
        if found is None or found.person != session.person.id:
            return HTMLResponse(pages.message_page("Not found", "no such attempt of yours"), status_code=404)
        return await self._attempt_page(session, found, staff_view=False)

    async def _attempt_page(self, session: Session, found: Submission, staff_view: bool) -> Response:
        if found.report is None:
            ahead = await run_in_threadpool(self.s.store.position, found.public_id)
            typical = await run_in_threadpool(self.s.store.typical_seconds, found.task)
            graded_for = None if found.started is None else max(0.0, time.time() - found.started)
            return HTMLResponse(
                pages.waiting_page(session.person, session.csrf, found, ahead, graded_for, typical)
            )
        result = Result.from_dict(found.report)
        return HTMLResponse(report_html.render(result if staff_view else for_students(result)))

    # -- pages: staff
    async def _staff(self, request: Request) -> Session | Response:
        session = await self._session(request)
        if session is None:
            return HTMLResponse(pages.signin_page("sign in first"), status_code=401)
        if not session.person.staff:
            return HTMLResponse(pages.message_page("Staff only", "this page is for staff"), status_code=403)
        return session

    async def staff_class(self, request: Request) -> Response:
        session = await self._staff(request)
        if isinstance(session, Response):
            return session
        everyone = await run_in_threadpool(self.s.store.everyone)
        latest = await run_in_threadpool(self.s.store.latest)
        counts = await run_in_threadpool(self.s.store.counts)
        listed = [(t.id, t.title) for t in self.s.tasks.values()]
        return HTMLResponse(pages.class_page(session.person, session.csrf, listed, everyone, latest, counts))

    async def staff_person(self, request: Request) -> Response:
        session = await self._staff(request)
        if isinstance(session, Response):
            return session
        student = await run_in_threadpool(self.s.store.person, request.path_params["id"])
        if student is None:
            return HTMLResponse(pages.message_page("Not found", "no such person"), status_code=404)
        history = await run_in_threadpool(self.s.store.submissions_of, student.id)
        return HTMLResponse(pages.person_page(session.person, session.csrf, student, history))

    async def staff_attempt(self, request: Request) -> Response:
        session = await self._staff(request)
        if isinstance(session, Response):
            return session
        found = await self._visible(session.person, request.path_params["id"])
        if found is None:
            return HTMLResponse(pages.message_page("Not found", "no such attempt"), status_code=404)
        return await self._attempt_page(session, found, staff_view=True)

    async def staff_regrade(self, request: Request) -> Response:
        form = await self._small_form(request, 4)
        session = None if form is None else await self._form_session(request, form)
        if session is None or not session.person.staff:
            return HTMLResponse(pages.message_page("Refused", "staff only, from this site"), status_code=403)
        person, task = form.get("person") or None, form.get("task") or None
        if not (person is None or isinstance(person, str)) or not (task is None or isinstance(task, str)):
            return HTMLResponse(pages.message_page("Refused", "not a form of this site"), status_code=400)
        if task is not None and task not in self.s.tasks:
            return HTMLResponse(pages.message_page("Not found", "no such task"), status_code=404)
        if person is not None and await run_in_threadpool(self.s.store.person, person) is None:
            return HTMLResponse(pages.message_page("Not found", "no such person"), status_code=404)
        await run_in_threadpool(self.s.store.regrade, person, task)
        self.s.dispatcher.wake.set()
        return RedirectResponse("/staff" if person is None else f"/staff/people/{person}", status_code=303)

    async def staff_export(self, request: Request) -> Response:
        session = await self._staff(request)
        if isinstance(session, Response):
            return session
        format = EXPORT_FORMATS.get(request.query_params.get("format", DETAILED.name))
        task = request.query_params.get("task") or (
            next(iter(self.s.tasks)) if len(self.s.tasks) == 1 else ""
        )
        if format is None or task not in self.s.tasks:
            return PlainTextResponse(
                f"give format ({', '.join(EXPORT_FORMATS)}) and task ({', '.join(self.s.tasks)})\n",
                status_code=400,
            )
        if format is not DETAILED and self.s.roster is None:
            return PlainTextResponse(
                f"{format.name} needs the roster: start grader serve with --roster\n", status_code=400
            )
        try:
            data = await run_in_threadpool(self._exported, task, format)
        except ExportError:
            return PlainTextResponse(f"nothing of {task} is graded yet\n", status_code=404)
        return Response(
            data,
            media_type="text/csv; charset=utf-8",
            headers={"content-disposition": f'attachment; filename="{format.prefix}-{task}.csv"'},
        )

    def _exported(self, task_id: str, format: ExportFormat) -> bytes:
        """The file `grader export` writes, from each person's latest graded upload."""
        task = self.s.tasks[task_id]
        latest = self.s.store.latest(reports=True)
        staff = {p.id for p in self.s.store.everyone() if p.staff}  # (their trial uploads are no grades)
        with tempfile.TemporaryDirectory(prefix="grader-export-") as out:
            book = Gradebook(os.path.join(out, "gradebook.sqlite"))
            try:
                for (person, t), found in sorted(latest.items()):
                    if t == task_id and found.report is not None and person not in staff:
                        report = Result.from_dict(found.report)
                        book.record(task_id, person, found.sha256, task.version, task.digest, report)
            finally:
                book.close()
            export_grades(out, () if format is DETAILED else (format.name,), self.s.roster, task=task_id)
            with open(task_file(out, format.prefix, task_id, "csv"), "rb") as f:
                return f.read()


def _needs_bearer() -> Response:
    return JSONResponse(
        {"error": "a valid bearer token is needed"}, status_code=401, headers={"www-authenticate": "Bearer"}
    )
