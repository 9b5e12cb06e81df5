"""The service's HTML pages, rendered from plain records (renderers only render): sign-in,
a student's tasks and attempts, an attempt waiting for its grade, and the staff's class and
student pages. No script at all; every string that reaches a page (names, file names,
messages) is escaped with its control characters shown (student_text.for_html), and the headers
(app.py) forbid scripts, frames and every request off this server. A finished attempt's page
is the student's feedback page itself (report/html.py, hidden checks redacted)."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from grader.classroom.export_formats import EXPORT_FORMATS
from grader.records.wording import counted
from grader.service.store import Person, Submission
from grader.student_text import for_html
from grader.submission.formats import accepted_suffixes

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1000px;
padding:1.2em;color:#1c1c1c}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.35em .5em;
text-align:left;vertical-align:top}th{background:#f4f4f4}.note{background:#fff7d6;padding:.6em;
border-radius:4px}.bad{background:#fde8e8;padding:.6em;border-radius:4px}form.inline{display:inline}
.done{color:#176b2c}.waiting{color:#8a5a00}.late{color:#a11;font-weight:600}nav{margin-bottom:1em}
input[type=file],select,input[type=password],input[type=text]{margin:.2em 0}button{margin:.2em 0}
"""


def page(title: str, body: str, refresh: int | None = None) -> str:
    meta = f'<meta http-equiv="refresh" content="{int(refresh)}">' if refresh else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{meta}<title>{for_html(title)}</title><style>{STYLE}</style></head>\n"
        f"<body>{body}</body></html>\n"
    )


def _when(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _score(s: Submission) -> str:
    if s.status != "done" or s.score is None:
        return f'<span class="waiting">{for_html(s.status)}</span>'
    return f'<span class="done">{s.score:g} / {(s.max_score or 0):g}</span>'


def _csrf(csrf: str) -> str:
    return f'<input type="hidden" name="csrf" value="{for_html(csrf)}">'


def _nav(person: Person, csrf: str) -> str:
    staff = ' · <a href="/staff">class</a>' if person.staff else ""
    return (
        f'<nav><a href="/">my tasks</a>{staff} · signed in as {for_html(_who(person))} '
        f'<form class="inline" method="post" action="/signout">{_csrf(csrf)}'
        "<button>sign out</button></form></nav>"
    )


def signin_page(problem: str | None = None) -> str:
    bad = f'<p class="bad">{for_html(problem)}</p>' if problem else ""
    return page(
        "Sign in",
        "<h1>Sign in</h1>"
        f"{bad}<p>Paste the token your instructor gave you (or open your personal link).</p>"
        '<form method="post" action="/signin">'
        '<input type="password" name="token" size="50" autocomplete="off" required> '
        "<button>Sign in</button></form>",
    )


def _who(person: Person) -> str:
    """A person as every page that acts for them names them: their name and their id."""
    return f"{person.name} ({person.id})" if person.name and person.name != person.id else person.id


def link_signin_page(account: Person, token: str, current: Person | None) -> str:
    """What a personal link opens: whose account it is, and a button to confirm. A link is
    whoever sent it's choice (a classmate's link signs you in as them), so it never signs
    anyone in by itself; a browser already signed in as someone else is warned."""
    warning = ""
    if current is not None and current.id != account.id:
        warning = (
            f'<p class="bad">This browser is signed in as <strong>{for_html(_who(current))}</strong>. '
            f"Continuing signs {for_html(current.id)} out here, and what you upload afterwards is "
            f"filed as {for_html(account.id)}'s attempts.</p>"
        )
    same = current is not None and current.id == account.id
    return page(
        "Sign in",
        f"<h1>Sign in as {for_html(_who(account))}?</h1>{warning}"
        + (
            f'<p class="note">You are already signed in as {for_html(_who(account))}: '
            '<a href="/">your tasks</a>.</p>'
            if same
            else ""
        )
        + f"<p>This link opens the account of <strong>{for_html(_who(account))}</strong>. Everything "
        "uploaded while signed in is filed as that person's attempt. If that is not you, do not "
        "continue: the link is someone else's; ask your instructor for your own.</p>"
        '<form method="post" action="/signin">'
        f'<input type="hidden" name="token" value="{for_html(token)}">'
        f'<input type="hidden" name="account" value="{for_html(account.id)}">'
        f"<button>I am {for_html(_who(account))}: sign in</button></form>"
        '<p><a href="/signin">Sign in with my own token instead</a></p>',
    )


def home_page(
    person: Person,
    csrf: str,
    tasks: Sequence[tuple[str, str]],
    history: Sequence[Submission],
    attempts_left: dict[str, int | None],
    problem: str | None = None,
    deadline: float | None = None,
) -> str:
    bad = f'<p class="bad">{for_html(problem)}</p>' if problem else ""
    due = (
        f'<p class="note">Deadline: {_when(deadline)}; later uploads are marked late.</p>' if deadline else ""
    )
    forms = []
    for task_id, title in tasks:
        left = attempts_left.get(task_id)
        limit = "" if left is None else f" ({counted(left, 'attempt')} left)"
        form = (
            '<form method="post" action="/upload" enctype="multipart/form-data">'
            f'{_csrf(csrf)}<input type="hidden" name="task" value="{for_html(task_id)}">'
            f'<input type="file" name="file" accept="{for_html(",".join(accepted_suffixes()))}" required> '
            f"<button>Upload as {for_html(person.id)}</button>"
            f" <small>filed as an attempt of {for_html(_who(person))}</small></form>"
            if left != 0
            else "<p>You have used every attempt at this task: your latest upload is the one graded.</p>"
        )
        forms.append(
            f"<h2>{for_html(title)} <small>({for_html(task_id)})</small>{for_html(limit)}</h2>{form}"
        )
    rows = "".join(
        f'<tr><td><a href="/attempts/{for_html(s.public_id)}">{for_html(s.task)}</a></td><td>{for_html(s.filename)}</td>'
        f"<td>{_when(s.uploaded)}{' <span class=late>late</span>' if s.late else ''}</td><td>{_score(s)}</td></tr>"
        for s in history
    )
    table = (
        f"<h2>Your attempts</h2><table><tr><th>task</th><th>file</th><th>uploaded</th><th>score</th></tr>{rows}</table>"
        if history
        else "<p>No attempt yet.</p>"
    )
    return page("Your tasks", _nav(person, csrf) + "<h1>Your tasks</h1>" + bad + due + "".join(forms) + table)


def waiting_page(
    person: Person,
    csrf: str,
    s: Submission,
    position: int | None,
    graded_for: float | None = None,
    typical: float | None = None,
) -> str:
    """How far an upload is: its place in the queue, or how long it has been graded against
    how long this task's gradings take."""
    if s.status == "queued":
        where = "waiting to be graded" + (f" ({position} ahead)" if position else "")
    else:
        where = "being graded now"
        if graded_for is not None:
            where += f" (for {graded_for:.0f} s"
            where += f"; gradings of this task take about {typical:.0f} s)" if typical is not None else ")"
    return page(
        "Grading",
        _nav(person, csrf) + f"<h1>{for_html(s.task)}: {for_html(s.filename)}</h1>"
        f'<p class="note">Your upload is {for_html(where)}. This page refreshes itself; your feedback '
        "appears here in a few seconds.</p>",
        refresh=2,
    )


def message_page(title: str, message: str, status_note: str = "") -> str:
    return page(title, f"<h1>{for_html(title)}</h1><p>{for_html(message)}</p>{for_html(status_note)}")


def class_page(
    person: Person,
    csrf: str,
    tasks: Sequence[tuple[str, str]],
    everyone: Sequence[Person],
    latest: dict[tuple[str, str], Submission],
    counts: dict[str, int],
) -> str:
    head = "".join(f"<th>{for_html(t)}</th>" for t, _ in tasks)
    rows = []
    for p in everyone:
        if p.staff:
            continue
        cells = []
        for task_id, _ in tasks:
            s = latest.get((p.id, task_id))
            cells.append(
                "<td></td>"
                if s is None
                else f'<td><a href="/staff/attempts/{for_html(s.public_id)}">{_score(s)}</a>'
                f"{' <span class=late>late</span>' if s.late else ''}</td>"
            )
        rows.append(
            f'<tr><td><a href="/staff/people/{for_html(p.id)}">{for_html(p.id)}</a></td><td>{for_html(p.name)}</td>{"".join(cells)}</tr>'
        )
    queue = ", ".join(f"{n} {for_html(k)}" for k, n in sorted(counts.items())) or "nothing uploaded yet"
    exports = " · ".join(
        f'<a href="/staff/export?format={f}&amp;task={for_html(t)}">{for_html(t)} {f}</a>'
        for t, _ in tasks
        for f in EXPORT_FORMATS
    )
    regrade = (
        f'<form method="post" action="/staff/regrade">{_csrf(csrf)}'
        '<select name="task"><option value="">every task</option>'
        + "".join(f'<option value="{for_html(t)}">{for_html(t)}</option>' for t, _ in tasks)
        + "</select> <button>Regrade everyone's latest upload</button></form>"
    )
    return page(
        "Class",
        _nav(person, csrf) + "<h1>Class</h1>"
        f"<p>Uploads: {queue}. This page refreshes every 5 seconds.</p>"
        f"<table><tr><th>student</th><th>name</th>{head}</tr>{''.join(rows)}</table>"
        f"<h2>Regrade</h2>{regrade}<h2>Export</h2><p>{exports}</p>",
        refresh=5,
    )


def person_page(person: Person, csrf: str, student: Person, history: Sequence[Submission]) -> str:
    rows = "".join(
        f'<tr><td><a href="/staff/attempts/{for_html(s.public_id)}">{for_html(s.task)}</a></td><td>{for_html(s.filename)}</td>'
        f"<td>{_when(s.uploaded)}{' <span class=late>late</span>' if s.late else ''}</td><td>{_score(s)}</td>"
        f"<td><code>{for_html(s.sha256)}</code></td></tr>"
        for s in history
    )
    regrade = (
        f'<form method="post" action="/staff/regrade">{_csrf(csrf)}'
        f'<input type="hidden" name="person" value="{for_html(student.id)}"><button>Regrade their latest uploads</button></form>'
    )
    return page(
        student.id,
        _nav(person, csrf)
        + f"<h1>{for_html(student.id)} <small>{for_html(student.name)}</small></h1>{regrade}"
        f"<table><tr><th>task</th><th>file</th><th>uploaded</th><th>score</th><th>sha256</th></tr>{rows}</table>",
    )
