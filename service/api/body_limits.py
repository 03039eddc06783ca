"""Each route's body limit, enforced before the route reads its body (issue 23 §2).

FastAPI reads a JSON body whole before a route runs, and an RDF upload may be large, so one limit for every
route let an anonymous ``POST /sparql`` hold 512 MB in the main process. Here each route is of a kind, with its
own limit: a SPARQL query (``CAIE_QUERY_MAX_BODY_BYTES``), a file (RDF, or responses or steps to import:
``CAIE_MAX_BODY_BYTES``), a form anyone may send (the sign-in form, ``CAIE_FORM_MAX_BODY_BYTES``) or, for every
other route, JSON (``CAIE_JSON_MAX_BODY_BYTES``). A route says its kind
with :func:`body`. :class:`BodyLimits` refuses a declared ``Content-Length`` over the limit before a byte of
the body is read, counts a chunked body as it arrives and stops it at the limit: 413 problem details naming
the limit, and the connection is closed so that nothing more of the body is read.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..core.config import Settings
from . import problems

F = TypeVar("F", bound=Callable[..., object])
_KIND = "__caie_body__"


class Body(Enum):
    """What a route's body is, and so which setting limits it."""

    QUERY = ("query_max_body_bytes", "a SPARQL query's body")
    FILE = ("max_body_bytes", "an uploaded file")
    JSON = ("json_max_body_bytes", "a JSON body")
    FORM = ("form_max_body_bytes", "a form anyone may send (sign-in)")

    @property
    def setting(self) -> str:
        """The environment variable that sets the limit."""
        return f"CAIE_{self.value[0].upper()}"

    def limit(self, settings: Settings) -> int:
        return int(getattr(settings, self.value[0]))

    def too_large(self, settings: Settings, size: str) -> str:
        """The 413's message: the limit, its setting, and what was sent."""
        return f"{self.value[1]} is at most {self.limit(settings):,} bytes here ({self.setting}); this one {size}"


def body(kind: Body) -> Callable[[F], F]:
    """Mark a route's endpoint as taking a body of ``kind`` (unmarked routes take JSON)."""

    def mark(endpoint: F) -> F:
        setattr(endpoint, _KIND, kind)
        return endpoint

    return mark


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` when a streamed body passes its limit: an ``HTTPException``, so FastAPI lets it out
    of its JSON parsing (other errors there become a 400) and :func:`_too_large` answers it."""

    def __init__(self, message: str) -> None:
        super().__init__(413, message, headers={"Connection": "close"})


async def _too_large(request: Request, error: BodyTooLarge) -> Response:
    return problems.respond(request, 413, "PayloadTooLarge", str(error.detail), dict(error.headers or {}))


class BodyLimits:
    """The ASGI middleware: a request's body within its route's limit, else 413 (see the module).

    The route is known once the router has matched the request (``scope["endpoint"]``), which is before the
    route reads its body; what reads a body before routing (a replayed ``Idempotency-Key``, which digests it
    as it streams, keeping none of it) is held to the largest limit."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.largest = max(Body, key=lambda kind: kind.limit(settings))

    def kind(self, scope: Scope) -> Body:
        endpoint = scope.get("endpoint")
        return self.largest if endpoint is None else getattr(endpoint, _KIND, Body.JSON)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        declared_size = int(declared) if declared.isdigit() else None
        if declared_size is not None and declared_size > self.largest.limit(self.settings):  # no route takes it
            largest = self.largest.limit(self.settings)
            error = BodyTooLarge(
                f"no request here takes a body over {largest:,} bytes "
                f"({self.largest.setting}, the largest of the body limits); "
                f"this one is {declared_size:,} bytes"
            )
            await (await _too_large(Request(scope), error))(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            kind = self.kind(scope)
            limit = kind.limit(self.settings)
            if declared_size is not None and declared_size > limit:
                raise BodyTooLarge(kind.too_large(self.settings, f"is {declared_size:,} bytes"))
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooLarge(kind.too_large(self.settings, "is larger"))
            return message

        await self.app(scope, counted, send)


def install(app: FastAPI, settings: Settings) -> None:
    app.add_exception_handler(BodyTooLarge, _too_large)  # type: ignore[arg-type]  # Starlette types a handler as taking any Exception
    app.add_middleware(BodyLimits, settings=settings)
