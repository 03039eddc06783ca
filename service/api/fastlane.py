"""What a fast-lane front answers (:mod:`service.core.guarded.fastlane`): a plain ``GET /sparql?query=…`` that
the main process would answer 200, byte for byte as the main process would; for anything else, ``None``.

The answer is made by the functions the main process uses: the request head parsed by httptools (its public
parser) into the scope uvicorn builds, the credential checks of :mod:`.deps`, the parameters, the dataset and
the execution of :mod:`service.core.sparql`, the response of :func:`.routers.sparql.query_response`, and the
application's own middlewares (security headers, CORS) around it, run as ASGI with :class:`.http11.Framed`
writing the bytes as uvicorn frames them. Only what differs is left out: the query runs here, in the front,
under the front's budget rather than in a query worker (the main process runs whatever exceeds it, under the
full guard).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import httptools
import uvicorn
from fastapi import FastAPI
from starlette.datastructures import Headers, QueryParams
from starlette.responses import Response

from ..core.guarded import service_endpoints
from ..core.sparql import execute, protocol_query
from ..core.sparql_depth import refuse_deep_nesting
from ..core.store import Store
from . import deps
from .http11 import DefaultHeaders, Framed, Waits
from .routers.sparql import base_iri, query_response, request_parameters

_RESPONSE = "caie.fast_lane.response"
"""Where the scope carries the response for the innermost app of the middleware chain."""
_REFUSED = frozenset({b"content-length", b"transfer-encoding", b"expect", b"upgrade"})
"""Headers of a request that is not a plain GET (a body, a 100-continue, an upgrade): the main process's."""
ASGIApp = Callable[
    [dict[str, Any], Callable[..., Awaitable[Any]], Callable[..., Awaitable[Any]]], Coroutine[Any, Any, None]
]
"""An ASGI application as the middlewares are (``async def __call__``): a coroutine, driven here step by step."""


class _Head:
    """httptools' parser callbacks, taken as uvicorn takes them: the URL and the lower-cased headers."""

    def __init__(self) -> None:
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.begun = self.completed = 0
        self.keep_alive = False
        self.parser = httptools.HttpRequestParser(self)

    def on_message_begin(self) -> None:
        self.begun += 1

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        self.keep_alive = self.parser.should_keep_alive()  # as uvicorn asks it: once the message completes, it resets

    def on_message_complete(self) -> None:
        self.completed += 1


async def _respond(
    scope: dict[str, Any], receive: Callable[..., Awaitable[Any]], send: Callable[..., Awaitable[Any]]
) -> None:
    response: Response = scope[_RESPONSE]
    await response(scope, receive, send)


class FastAnswers:
    """The fronts' :data:`~service.core.guarded.fastlane.Answer`: the complete response to a request head, and
    whether its connection stays open; ``None`` (or an exception) unless the main process would answer it 200."""

    PROBE = b"GET /sparql?query=ASK%7B%7D HTTP/1.1\r\nHost: fast-lane.probe\r\nAccept: application/sparql-results+json\r\n\r\n"
    """A request each fresh front answers before it takes connections: the whole path, once (lazy imports)."""

    def __init__(self, app: FastAPI, config: uvicorn.Config) -> None:
        self._settings = app.state.settings
        self._store: Store = app.state.store
        self._base = base_iri(self._settings)
        self._defaults = DefaultHeaders(config)
        # The application's own middlewares, in their order, around the response: its headers, CORS included.
        chain: ASGIApp = _respond
        for cls, args, kwargs in reversed(app.user_middleware):
            chain = cls(chain, *args, **kwargs)
        self._chain = chain

    def __call__(self, raw: bytes) -> tuple[bytes, bool] | None:
        parsed = _parse(raw)
        if parsed is None:
            return None
        scope, keep_alive = parsed
        headers = Headers(raw=scope["headers"])
        settings = self._settings
        deps.reader(settings, deps.credential(settings, headers.get("authorization")))  # raises: main's 401/403
        protocol = protocol_query(request_parameters(QueryParams(scope["query_string"])))
        if protocol is None or service_endpoints(protocol.text):  # the service description; federated queries
            return None
        refuse_deep_nesting(
            protocol.text, settings.query_max_nesting
        )  # raises: the main process's 400, not a crash here
        answer = execute(self._store, protocol, headers.get("accept"), self._base)
        if len(answer.body) > settings.query_max_result_bytes:
            return None
        scope[_RESPONSE] = query_response(answer)
        return self._write(scope, keep_alive)

    def _write(self, scope: dict[str, Any], keep_alive: bool) -> tuple[bytes, bool] | None:
        """The response's bytes, as uvicorn frames what the middlewares send; ``None`` unless made at once."""
        framed = Framed(self._defaults(), keep_alive)
        running = self._chain(scope, framed.receive, framed.send)
        try:
            running.send(None)
        except StopIteration:
            pass
        except Waits:
            return None
        else:  # it waited for something: not the plain answer this expects
            running.close()
            return None
        if not framed.complete:
            return None
        return b"".join(framed.parts), framed.keep_alive


def _parse(raw: bytes) -> tuple[dict[str, Any], bool] | None:
    """The scope uvicorn would build for a bodiless ``GET /sparql`` over HTTP/1.1, and keep-alive; else ``None``."""
    head = _Head()
    parser = head.parser
    try:
        parser.feed_data(raw)
    except (httptools.HttpParserError, httptools.HttpParserUpgrade):
        return None
    if head.begun != 1 or head.completed != 1 or parser.get_method() != b"GET" or parser.get_http_version() != "1.1":
        return None
    if any(name in _REFUSED for name, _ in head.headers):
        return None
    url = httptools.parse_url(head.url)
    if url.path != b"/sparql":
        return None
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "server": None,
        "client": None,
        "scheme": "http",
        "root_path": "",
        "headers": head.headers,
        "state": {},
        "method": "GET",
        "path": "/sparql",
        "raw_path": b"/sparql",
        "query_string": url.query or b"",
    }
    return scope, head.keep_alive
