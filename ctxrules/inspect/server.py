"""The inspector's web app (Starlette): the page, its script and style, and a small JSON API.

Everything is served from 127.0.0.1 with a strict Content-Security-Policy: the page runs
only its own script, loads nothing from elsewhere, and puts session text in the page as
text, never as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ctxrules.inspect.assets import static_text
from ctxrules.inspect.read import Reader, as_data

#: What the served page may do: its own script and style, requests to its own API, no more.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_TYPES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}


class _Headers:
    """Adds the security headers to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Any) -> None:  # noqa: ANN401 - an ASGI message
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] += [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cache-control", b"no-store"),
                ]
            await send(message)

        await self.app(scope, receive, sending)


def _history(reader: Reader) -> Callable[[Request], JSONResponse]:
    """The history view: rows before ``?end=``; an end that is no row number is a bad request."""

    def history(request: Request) -> JSONResponse:
        end = request.query_params.get("end", "")
        if not end.isdigit():
            # The request is malformed, not the session missing.
            return JSONResponse({"error": f"end={end!r:.40}: expected a row number"}, 400)
        status, body = as_data(reader.history(request.path_params["sid"], int(end)))
        return JSONResponse(body, status)

    return history


def build_app(reader: Reader) -> Starlette:
    """The app over ``reader``: ``/`` the page, ``/static/*``, ``/api/*`` the views as JSON."""
    pages = {name: static_text(name) for name in _TYPES}

    def page(request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in pages:
            return Response("not found", 404, media_type="text/plain")
        return Response(pages[name], media_type=_TYPES[name])

    def reply(found: tuple[int, Any]) -> JSONResponse:
        status, body = found
        return JSONResponse(body, status)

    def sessions(_: Request) -> JSONResponse:
        return reply(as_data(reader.sessions()))

    def session(request: Request) -> JSONResponse:
        found = reader.session(request.path_params["sid"])
        return reply(as_data(found.map(lambda data: data.overview)))

    def version(request: Request) -> JSONResponse:
        return reply(as_data(reader.version(request.path_params["sid"])))

    def one_request(request: Request) -> JSONResponse:
        sid, index = request.path_params["sid"], request.path_params["index"]
        return reply(as_data(reader.request(sid, index)))

    def bad_index(request: Request) -> JSONResponse:
        # The request is malformed, not the session missing (the id would take the rest).
        index = request.path_params["index"]
        return JSONResponse({"error": f"request {index!r:.40}: expected a request number"}, 400)

    def node(request: Request) -> JSONResponse:
        sid = request.path_params["sid"]
        return reply(as_data(reader.node(sid, request.query_params.get("id", ""))))

    routes = [
        Route("/", page),
        Route("/static/{name}", page),
        Route("/api/sessions", sessions),
        Route("/api/sessions/{sid:path}/version", version),
        Route("/api/sessions/{sid:path}/requests/{index:int}", one_request),
        Route("/api/sessions/{sid:path}/requests/{index}", bad_index),
        Route("/api/sessions/{sid:path}/node", node),
        Route("/api/sessions/{sid:path}/history", _history(reader)),
        Route("/api/sessions/{sid:path}", session),
    ]
    middleware = [
        Middleware(_Headers),
        # A page elsewhere must not read the store through a rebound DNS name.
        Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"]),
    ]
    return Starlette(routes=routes, middleware=middleware)
