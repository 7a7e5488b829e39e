"""``build_app``: the harness's Starlette app for one started host and chat model.

The shell serves the chat and the static files; every plugin's ``register_web`` section
is mounted at its path, its navigation links and translations joined to the shell's.
Errors are pages (or one JSON line for ``/api`` paths), never a traceback.
"""

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...core.errors import (
    BlockNotReady,
    InvalidInput,
    NotFound,
    ReceiptConflict,
    StaleEdit,
    StrataGateError,
)
from ...core.foreground import serving
from ...harness.agent import Agent
from ...harness.chat import ChatModel
from ...harness.pm import call_hook
from ...harness.runtime import Host
from ...harness.types import NavLink, WebSection
from .assets import static_dir
from .chat import ROUTES as CHAT_ROUTES
from .chat import ChatRooms
from .handoff import Handoff
from .i18n import read_catalogs
from .security import BodyTooLarge, Guard, GuardPolicy, policy_for
from .templating import WebState, json_response, render

log = logging.getLogger(__name__)
# The multipart parser logs why a body is malformed (at WARNING, to stderr without a
# handler) and then raises; Starlette turns that into the 400 the client reads, so the
# server's log keeps only what the server did wrong.
logging.getLogger("python_multipart").setLevel(logging.ERROR)
CHAT_LINK = NavLink("/chat", {"en": "Chat", "zh": "对话"})


async def build_app(
    host: Host, model: ChatModel, policy: GuardPolicy | None = None, shared: Path | None = None
) -> Starlette:
    """The app over a started ``host``; ``policy`` defaults to loopback without a token.
    ``shared``: the private folder of the web processes of one ``serve`` (one-time tokens
    any of them may be asked to take, ``handoff.py``); None keeps them in this process."""
    state = WebState(host=host, nav=[CHAT_LINK], handoff=Handoff(shared))
    sections = await _sections(host)
    routes: list[BaseRoute] = [Route("/", _home), Route("/favicon.ico", _favicon), *CHAT_ROUTES]
    for section in sections:
        routes.append(Mount(section.path, routes=section.routes))
        state.nav.extend(section.nav)
        state.catalog.add(section.strings)
        if section.catalogs is not None:
            state.catalog.add(read_catalogs(section.catalogs))
        if section.templates is not None:
            state.template_dirs.append(section.templates)
    routes.append(Mount("/static", StaticFiles(directory=static_dir()), name="static"))
    policy = _with_body_limits(policy or policy_for("127.0.0.1", None), sections)
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(Guard, policy=policy),
            Middleware(ForegroundRequest),
            Middleware(InternalErrorPage),
        ],
        exception_handlers={
            HTTPException: _http_error,
            BodyTooLarge: _too_large,
            StrataGateError: _memory_error,
        },
    )
    app.state.web = state
    app.state.chat = ChatRooms(Agent(host, model))
    return app


def _with_body_limits(policy: GuardPolicy, sections: list[WebSection]) -> GuardPolicy:
    limits = {
        (section.path + path).rstrip("/"): size
        for section in sections
        for path, size in section.body_limits.items()
    }
    return replace(policy, body_limits={**policy.body_limits, **limits})


async def _sections(host: Host) -> list[WebSection]:
    found: list[WebSection] = []
    await call_hook(host.pm, "register_web", host=host, register=found.append)
    return sorted(found, key=lambda section: section.order)


async def _home(request: Request) -> Response:
    """To the chat, keeping the query (``/?lang=zh`` must stay Chinese)."""
    query = request.url.query
    return RedirectResponse("/chat" + (f"?{query}" if query else ""), status_code=307)


async def _favicon(request: Request) -> Response:
    """Browsers ask for it on every page whatever the HTML says; a 404 each time is noise."""
    headers = {"Cache-Control": "max-age=86400"}
    return FileResponse(static_dir() / "favicon.ico", media_type="image/x-icon", headers=headers)


def error_page(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/") or "json" in request.headers.get("accept", ""):
        return json_response({"error": message}, status_code=status)
    context = {"status": status, "message": message}
    return render(request, "shell/error.html", context, status_code=status)


async def _http_error(request: Request, error: Any) -> Response:
    if error.status_code in (204, 304):
        return Response(status_code=error.status_code, headers=error.headers)
    return error_page(request, error.status_code, str(error.detail))


async def _too_large(request: Request, error: Exception) -> Response:
    return PlainTextResponse(f"refused: {error}\n", status_code=413)


async def _memory_error(request: Request, error: Exception) -> Response:
    """An engine error is the user's to read: unknown id 404, bad input 400, else 503."""
    status = {
        NotFound: 404,
        InvalidInput: 400,
        BlockNotReady: 409,
        ReceiptConflict: 409,
        StaleEdit: 409,
    }
    code = next((code for kind, code in status.items() if isinstance(error, kind)), 503)
    return error_page(request, code, str(error))


class ForegroundRequest:
    """Counts each HTTP request in as foreground work while it runs, so the background
    worker yields to pages (``core/foreground.py``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with serving():
            await self.app(scope, receive, send)


class InternalErrorPage:
    """A bug in a view is one logged line and a 500 page (the traceback at DEBUG level),
    not Starlette's re-raise into the server's log."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched_send)
        except Exception as error:
            request = Request(scope)
            log.error("web: %s %s failed: %s", request.method, request.url.path, error)
            log.debug("web request failed", exc_info=True)
            if started:
                raise
            page = error_page(request, 500, "the server failed to answer this request; see its log")
            await page(scope, receive, send)
