"""The checks every request passes before routing, and the headers every response carries.

Three small ASGI middlewares, installed by :func:`install` (outermost first):

- :class:`SecurityHeaders`: a Content-Security-Policy (the pages' own, see :mod:`.html`) and
  ``X-Content-Type-Options: nosniff`` on every response.
- :class:`WritesNeedCredentials`: a write without a known bearer token is refused with 401 before
  anything reads its body. FastAPI parses and validates a JSON body before any dependency runs, so
  a dependency alone would answer 422 to an anonymous caller who sent a bad body. A signed-in person's
  form (a live session cookie, a form body) and ``POST /sign-in`` go on to the route, which checks the form's
  CSRF token (:mod:`.sessions`); a REST route still refuses it, taking its credential from the bearer token only.
- :class:`PathsAreIris`: every path here is an IRI under the deployment's base, so a path that cannot
  be part of an IRI (a space, ``<``, ``"``, a control character ...) names nothing: 400, naming the character.

They answer with the same problem details as the exception handlers (:mod:`.problems`).
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..core import errors
from ..core.auth import authenticate, require
from ..core.config import Settings
from ..core.iris import require_iri_text
from . import html, problems, sessions

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
QUERY_POSTS = frozenset({"/sparql"})
"""POSTs that only read: the SPARQL 1.1 Protocol sends queries by POST too (§2.1.2, §2.1.3)."""
READ_ONLY_PATHS = frozenset({"/rdf-graph-store"})
"""Paths that take no write at all: a write there is 405 with ``Allow`` from the router, whoever asks."""


async def _refuse(
    error: errors.ServiceError, scope: Scope, receive: Receive, send: Send, *, page: bool = False
) -> None:
    """The refusal as problem details; with ``page``, as a page for a browser (a workspace form)."""
    status, title = problems.STATUS[type(error)], type(error).__name__
    response = (
        problems.respond(Request(scope), status, title, error.message)
        if page
        else problems.problem(status, title, error.message)
    )
    await response(scope, receive, send)


class SecurityHeaders:
    """Adds the Content-Security-Policy and ``nosniff`` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # A response that brings its own policy keeps it (/docs: Swagger UI's inline script, by hash, see .openapi).
        added = [
            (b"content-security-policy", html.CONTENT_SECURITY_POLICY.encode()),
            (b"x-content-type-options", b"nosniff"),
        ]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra: Iterable[tuple[bytes, bytes]] = [(n, v) for n, v in added if n not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class WritesNeedCredentials:
    """Refuses, with 401, a write (any method but GET, HEAD, OPTIONS) without a known bearer token.

    Roles are still checked where the action is, by the domain; this only makes "who are you" come first.
    """

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] not in SAFE_METHODS
            and scope["path"] not in QUERY_POSTS | READ_ONLY_PATHS
        ):
            headers = dict(scope["headers"])
            authorization = headers.get(b"authorization")
            if authorization is None and sessions.is_form(headers):
                if sessions.current_session() is None and scope["path"] != sessions.SIGN_IN_PATH:
                    await _refuse(errors.Unauthenticated(sessions.SIGN_IN_FIRST), scope, receive, send, page=True)
                    return
                # A workspace form: its route checks the CSRF token (sessions.FormWriter, the sign-in form's check);
                # a REST route still asks for a bearer token (deps.credential), so the cookie authorizes no write.
                await self.app(scope, receive, send)
                return
            try:
                require(authenticate(self.settings, authorization.decode("latin-1") if authorization else None))
            except errors.Unauthenticated as error:
                await _refuse(error, scope, receive, send)
                return
        await self.app(scope, receive, send)


class PathsAreIris:
    """Refuses, with 400, a request path that cannot be part of an IRI."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                require_iri_text(scope["path"], "the request path")
            except errors.BadRequest as error:
                await _refuse(error, scope, receive, send)
                return
        await self.app(scope, receive, send)


def install(app: FastAPI, settings: Settings) -> None:
    """Adds the three middlewares and CORS; the last added runs first, so headers wrap every answer, even a refusal.

    CORS sits outside the credential check, so a preflight (``OPTIONS``, no token) is answered and a refusal
    carries the CORS headers a browser needs to show it. Cookies (the workspace's session) are never allowed
    cross-origin: other sites' pages call the API with bearer tokens.
    """
    app.add_middleware(PathsAreIris)
    app.add_middleware(WritesNeedCredentials, settings=settings)
    app.add_middleware(
        CORSMiddleware,
        allow_origins=settings.cors_origins,
        allow_credentials=False,
        allow_methods=["GET", "HEAD", "POST", "OPTIONS"],
        allow_headers=["Accept", "Authorization", "Content-Type", "Idempotency-Key"],
        expose_headers=["Idempotency-Replayed", "Location"],
    )
    app.add_middleware(SecurityHeaders)
