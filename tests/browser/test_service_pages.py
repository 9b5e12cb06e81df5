"""The service's pages as students and staff use them: a real `grader serve` on loopback
(tests/helpers/live_server.py) in a real headless Chromium (tests/helpers/chromium.py). A student signs in
with their token on the sign-in page, uploads a file through the task's form, and watches the
attempt's page refresh itself into the feedback page with their score; staff sign in and open
the class page and a student's attempt. No page logs a console error or asks anything of a
host but the server, and a hostile file name shows as text and runs nothing.

Skipped with the reason when Chromium is missing; with GRADER_REQUIRE_BROWSER=1 (CI) a
missing browser fails instead."""

import os
import shutil
import time

import pytest
from helpers.chromium import NOTHING_RAN, BrowserError, chromium_or_skip
from helpers.live_server import STAFF, start
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tasks import score_without

HOSTILE_NAME = "<img src=x onerror=document.title='pwned'>.py"  # (a browser sends " as %22)


@pytest.fixture(scope="module")
def browser():
    yield from chromium_or_skip(timeout=60)


@pytest.fixture(scope="module")
def server(browser, tmp_path_factory):
    live = start(str(tmp_path_factory.mktemp("serve") / "server"), [PE_TASK])
    yield live
    assert live.stop() == []


def loaded(page, action) -> None:
    """Does ``action`` (a click that navigates) and returns once the next page has loaded."""
    chromium = page.browser
    chromium.events = [
        e
        for e in chromium.events
        if not (e.get("method") == "Page.loadEventFired" and e.get("sessionId") == page.session)
    ]
    action()
    chromium.wait_for("Page.loadEventFired", page.session)


def title(page) -> str:
    try:
        return page.evaluate("document.title")
    except BrowserError:  # (between two pages)
        return ""


def sign_in(browser, live, person):
    """The sign-in page, the person's token typed in, the button pressed: their home page."""
    page = browser.open(f"{live.url}/signin")
    assert title(page) == "Sign in"
    page.evaluate(f"document.querySelector('input[name=token]').value = {live.tokens[person]!r}")
    loaded(page, lambda: page.evaluate("document.querySelector('form[action=\"/signin\"] button').click()"))
    assert title(page) == "Your tasks"
    return page


def upload_through_the_form(page, path) -> None:
    root = page.call("DOM.getDocument")["root"]["nodeId"]
    node = page.call("DOM.querySelector", nodeId=root, selector='form[action="/upload"] input[type=file]')
    page.call("DOM.setFileInputFiles", files=[str(path)], nodeId=node["nodeId"])
    loaded(page, lambda: page.evaluate("document.querySelector('form[action=\"/upload\"] button').click()"))


def feedback(page, expected_title: str, timeout: float = 180.0) -> None:
    """Waits on the attempt's page, which refreshes itself, until it is the feedback page."""
    deadline = time.monotonic() + timeout
    while not title(page).startswith(expected_title):
        assert time.monotonic() < deadline, f"still {title(page)!r} after {timeout:g} s"
        time.sleep(0.5)
    time.sleep(0.3)  # (a late request would be recorded meanwhile)


def quiet_and_local(page, live) -> None:
    assert page.console == [] and page.errors == [], (page.console, page.errors)
    assert page.requests and all(url.startswith(live.url + "/") for url in page.requests), page.requests


def test_a_student_signs_in_uploads_and_reads_their_feedback(browser, server):
    page = sign_in(browser, server, "alice")
    upload_through_the_form(page, os.path.join(PE_SAMPLES, "correct_vectorized.py"))
    assert page.evaluate("location.pathname").startswith("/attempts/")
    total = score_without()
    feedback(page, f"positional-encoding · correct_vectorized.py: {total:g}/{total:g}")
    shown = page.evaluate("document.body.innerText")
    assert "Score:" in shown and "passed" in shown
    quiet_and_local(page, server)
    urls = [u.removeprefix(server.url) for u in page.requests]
    assert urls[:2] == ["/signin", "/signin"] and "/" in urls and "/upload" in urls  # (then the attempt)
    # the home page now lists the attempt with its score
    loaded(page, lambda: page.evaluate(f"location.href = {server.url + '/'!r}"))
    assert f"{total:g} / {total:g}" in page.evaluate("document.body.innerText")
    quiet_and_local(page, server)


def test_a_hostile_file_name_uploaded_through_the_form_runs_nothing(browser, server, tmp_path):
    hostile = tmp_path / HOSTILE_NAME
    shutil.copy(os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py"), hostile)
    page = sign_in(browser, server, "bob")
    upload_through_the_form(page, hostile)
    feedback(page, "positional-encoding · ")
    for _ in range(2):  # the feedback page, then the home page that lists the attempt
        shown_title, elements, handlers = page.evaluate(NOTHING_RAN)
        assert shown_title != "pwned" and elements == 0 and not handlers
        assert HOSTILE_NAME in page.evaluate("document.body.innerText")
        quiet_and_local(page, server)
        loaded(page, lambda: page.evaluate(f"location.href = {server.url + '/'!r}"))


def test_staff_read_the_class_page_and_a_students_attempt(browser, server):
    browser.call("Storage.clearCookies")  # (the students' sessions)
    page = sign_in(browser, server, STAFF)
    loaded(page, lambda: page.evaluate("document.querySelector('a[href=\"/staff\"]').click()"))
    assert title(page) == "Class"
    shown = page.evaluate("document.body.innerText")
    assert "alice" in shown and "bob" in shown and STAFF not in shown.split("Class", 1)[1].split("Regrade")[0]
    total = score_without()
    assert f"{total:g} / {total:g}" in shown  # alice's latest upload
    quiet_and_local(page, server)
    loaded(page, lambda: page.evaluate("document.querySelector('a[href^=\"/staff/attempts/\"]').click()"))
    assert title(page).startswith("positional-encoding · ")
    quiet_and_local(page, server)
