"""The walls around every response of the service: the security headers (a strict CSP: no
script, no request off this server, no frame; nosniff, no referrer off this site, no
caching), a request body over the upload cap refused before it is read whole, and a failure
of the service's own answered without detail, with those headers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from grader.service import pages
from grader.service.uploads import MAX_BODY_BYTES
from grader.submission.file import MAX_SOURCE_BYTES

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    # Not no-referrer: under it a browser sends "Origin: null" with every form post, even
    # from this site's own pages, and each one is refused as another site's (sign-in too).
    # same-origin sends the referrer and the origin to this server only.
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}


class Walls:
    """Every response gets the security headers; a request body over the cap is refused
    (at once by its length when it says one, else as soon as it has sent that much)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Callable[[], Awaitable[dict]], send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    (k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items() if k.encode() not in names
                ]
            await send(message)

        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
            await _too_large(scope, receive, with_headers)
            return
        seen = 0

        async def counted() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > MAX_BODY_BYTES:
                    raise BodyTooLarge()
            return message

        try:
            await self.app(scope, counted, with_headers)
        except BodyTooLarge:
            await _too_large(scope, receive, with_headers)


async def internal_error(request: Request, exc: Exception) -> Response:
    """The answer to a failure of the service's own (its database gone, say): no detail, and
    the security headers, which it would lack otherwise (Starlette answers a failure outside
    every middleware, Walls included). The failure itself goes on to the server's log."""
    message = "the service failed on this request; try again, and tell your instructor if it goes on"
    response: Response = (
        JSONResponse({"error": message}, status_code=500)
        if request.url.path.startswith("/api/")
        else HTMLResponse(pages.message_page("Error", message), status_code=500)
    )
    response.headers.update(SECURITY_HEADERS)
    # uvicorn closes the connection after a failure: said, so that no client reuses it
    response.headers["connection"] = "close"
    return response


class BodyTooLarge(Exception):
    """Raised into the app when a body passes the cap; the routes that read a form let it
    through to Walls, which answers 413."""


async def _too_large(scope: dict, receive: Any, send: Any) -> None:
    message = f"the upload is larger than {MAX_SOURCE_BYTES >> 10} KiB; a solution is far smaller"
    # The connection is closed after the answer: else the server goes on reading (and
    # throwing away) the rest of a body it has refused, as long as the sender keeps sending.
    close = {"connection": "close"}
    response = (
        JSONResponse({"error": message}, status_code=413, headers=close)
        if scope["path"].startswith("/api/")
        else HTMLResponse(pages.message_page("Too large", message), status_code=413, headers=close)
    )
    await response(scope, receive, send)
