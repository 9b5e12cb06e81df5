"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
fd 3 in, fd 4 out, NUL-terminated JSON), with the standard library only: no driver package
whose bundled protocol must match the installed browser, no port, no websocket.

    with Chromium() as browser:
        page = browser.open("file:///tmp/page.html")
        page.requests, page.console, page.evaluate("document.title"), page.screenshot()

Every request the page makes and every console message or browser log entry is recorded
from before navigation starts.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

CHROMIUM = os.environ.get("GRADER_CHROMIUM", "/usr/bin/chromium")
REQUIRE_ENV = "GRADER_REQUIRE_BROWSER"


def available() -> str | None:
    """Why no browser can be driven here, or None when one can."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} is not installed (Debian: apt-get install chromium)"
    return None


class BrowserError(Exception):
    pass


@dataclass
class Page:
    session: str
    browser: Chromium
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    console: list[str] = field(default_factory=list)  # console messages and log entries
    errors: list[str] = field(default_factory=list)  # exceptions thrown in the page

    def call(self, method: str, **params):
        return self.browser.call(method, session=self.session, **params)

    def evaluate(self, expression: str):
        reply = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, clip: dict | None = None) -> bytes:
        params: dict = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        return base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])


class Chromium:
    def __init__(self, timeout: float = 30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="grader-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def wire_pipes():  # in the child: the protocol's fds are 3 (commands) and 4 (replies)
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        command = [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-pipe",
            f"--user-data-dir={self.profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--window-size=1200,900",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_pipes,
            pass_fds=(3, 4),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict] = []
        self.pages: list[Page] = []

    # ------------------------------------------------------------------ the protocol

    def _send(self, message: dict) -> None:
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")

    def _receive(self, deadline: float) -> dict:
        import select

        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the pipe (did it start?)")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def _dispatch(self, message: dict) -> None:
        session = message.get("sessionId")
        for page in self.pages:
            if page.session == session:
                _record(page, message)
        self.events.append(message)

    def call(self, method: str, session: str | None = None, **params):
        self.next_id += 1
        ident = self.next_id
        message: dict = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self._send(message)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._dispatch(reply)

    def wait_for(self, method: str, session: str, seconds: float | None = None) -> dict:
        deadline = time.monotonic() + (seconds or self.timeout)
        for i, event in enumerate(self.events):
            if event.get("method") == method and event.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            event = self._receive(deadline)
            self._dispatch(event)
            if event.get("method") == method and event.get("sessionId") == session:
                self.events.remove(event)
                return event

    # ------------------------------------------------------------------ pages

    def open(self, url: str) -> Page:
        """A new tab that loads ``url``, recording from before the first request; returns
        once the load event fired and the page is idle."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(session, self)
        self.pages.append(page)
        for domain in ("Page", "Network", "Runtime", "Log"):
            page.call(f"{domain}.enable")
        page.call(
            "Emulation.setDeviceMetricsOverride", width=1200, height=900, deviceScaleFactor=1, mobile=False
        )
        page.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired", session)
        time.sleep(0.3)  # a late request (a lazy image, a timer) would be recorded meanwhile
        page.evaluate("1")  # drains the events that came in
        return page

    def close(self) -> None:
        try:
            self._send({"id": 0, "method": "Browser.close", "params": {}})
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        for fd in (self.to_browser, self.from_browser):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


def _record(page: Page, message: dict) -> None:
    method, params = message.get("method"), message.get("params", {})
    if method == "Network.requestWillBeSent":
        page.requests.append(params["request"]["url"])
    elif method == "Runtime.consoleAPICalled":
        texts = [str(a.get("value", a.get("description", ""))) for a in params.get("args", [])]
        page.console.append(f"console.{params.get('type')}: {' '.join(texts)}")
    elif method == "Log.entryAdded":
        entry = params["entry"]
        page.console.append(f"{entry.get('level')}: {entry.get('text')}")
    elif method == "Runtime.exceptionThrown":
        page.errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])


def png_colours(data: bytes) -> int:
    """The number of distinct colours in a PNG screenshot (8-bit RGB or RGBA, as Chromium
    writes them), decoded with zlib: is a picture there or a blank area?"""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    assert header is not None
    width, height, depth, colour_type = header[0], header[1], header[2], header[3]
    assert depth == 8 and colour_type in (2, 6), header
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    offset = 0
    for _ in range(height):
        kind, line = raw[offset], bytearray(raw[offset + 1 : offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):  # undo the PNG filter of this row
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else up_left
                line[i] = (line[i] + predictor) & 0xFF
        colours.update(bytes(line[i : i + 3]) for i in range(0, stride, channels))
        previous = line
    return len(colours)


# What scripts could leave behind on a page, read after it settled: the title they would
# set, elements that run or load things, any on* attribute.
NOTHING_RAN = (
    "[document.title, document.querySelectorAll('script, img, iframe, object, embed').length,"
    " [...document.querySelectorAll('*')].some(e => [...e.attributes].some("
    "a => a.name.startsWith('on')))]"
)


def chromium_or_skip(**options):
    """A started headless Chromium for a module's fixture (``yield from``): the test skips
    without one, or fails when GRADER_REQUIRE_BROWSER=1."""
    import pytest

    why = available()
    if why:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but no browser: {why}")
        pytest.skip(f"no headless browser: {why}")
    with Chromium(**options) as chromium:
        yield chromium
