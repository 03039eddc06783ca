"""``Idempotency-Key`` on every POST that records something (issue 23 §8, docs/api.md "Idempotency-Key").

:class:`IdempotentPosts`, an ASGI middleware inside every other one, handles a recording POST (every POST route but
the query routes, :data:`.security.QUERY_POSTS`) that carries the header and a known bearer token:

- a key this agent has not used on this method and path (or whose record expired) is claimed in the store before
  the request runs (:mod:`service.core.idempotency`); the body is hashed as the route reads it. A success (2xx)
  is remembered with the digest of the query string and body before it is sent; anything else releases the key;
- the same key again with the same query string and body gets the first answer (status, header fields, body) and
  ``Idempotency-Replayed: true``; nothing runs, so nothing is recorded and no run is started;
- the same key with another query string or body gets 422 naming the key; nothing runs;
- the same key while the first request is still running gets 409 (it does not wait: the first may take minutes).

Without the header, or without a credential (the credential check refuses such writes before this runs), a
request passes untouched.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import AsyncIterator
from copy import deepcopy
from typing import Any

import anyio
from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..composition import Services
from ..core.auth import authenticate
from ..core.catalog import now
from ..core.config import Settings
from ..core.errors import ServiceError
from ..core.idempotency import Answer, Claim, Idempotency
from . import problems
from .security import QUERY_POSTS

HEADER = "Idempotency-Key"
REPLAYED = "Idempotency-Replayed"
KEY = re.compile(r"^[!-~]{1,255}$")
"""A key: 1 to 255 visible ASCII characters (a UUID, say); a client makes a new one for each new request."""

PARAMETER: dict[str, Any] = {
    "name": HEADER,
    "in": "header",
    "required": False,
    "description": "A key of the client's choosing (a UUID, say), new for each request it means to make once. Sent "
    "again with the same body by the same agent to the same path, it gets the first answer (with "
    f"'{REPLAYED}: true') and records nothing; with another body, 422. Kept for CAIE_IDEMPOTENCY_TTL_S.",
    "schema": {"type": "string", "pattern": KEY.pattern},
}
"""The header as the OpenAPI document states it on every recording POST."""
REPLAYED_HEADER: dict[str, Any] = {
    "description": "'true' on an answer replayed for a repeated Idempotency-Key",
    "schema": {"type": "string", "enum": ["true"]},
}
_LOG = logging.getLogger(__name__)


def recording(method: str, path: str) -> bool:
    """Whether an operation records something (every POST but a query): where the header applies."""
    return method.upper() == "POST" and path not in QUERY_POSTS


def document(operation: dict[str, Any]) -> None:
    """State the header on a recording POST of the OpenAPI document, and the replay header on its successes."""
    operation.setdefault("parameters", []).append(deepcopy(PARAMETER))
    for code, response in operation.get("responses", {}).items():
        if code.startswith("2"):
            response.setdefault("headers", {})[REPLAYED] = deepcopy(REPLAYED_HEADER)


class IdempotentPosts:
    """Replays, refuses or runs a recording POST that carries an ``Idempotency-Key`` (see the module docstring)."""

    def __init__(self, app: ASGIApp, settings: Settings, keys: Idempotency, routes: list[BaseRoute]) -> None:
        self.app = app
        self.settings = settings
        self.keys = keys
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = self._key(scope)
        if key is None:
            await self.app(scope, receive, send)
            return
        authorization = dict(scope["headers"]).get(b"authorization")
        try:
            credential = authenticate(self.settings, authorization.decode("latin-1") if authorization else None)
        except ServiceError:
            credential = None  # the route refuses it, as without a key
        if credential is None:
            await self.app(scope, receive, send)
            return
        if not KEY.match(key):
            await _refuse(
                400,
                "BadRequest",
                f"the {HEADER} header must be 1 to 255 visible ASCII characters (a UUID, say)",
                scope,
                receive,
                send,
            )
            return
        graph = self.keys.record_iri(credential.agent, scope["method"], scope["path"], key)
        claim: Claim | None = None
        for _ in range(2):  # a claim refused because another request just claimed the key: read what it left
            found = await run_in_threadpool(self.keys.find, graph)
            if found is not None and not found.expired(now()):
                if found.answer is None:
                    break
                sent = _digest(scope)
                async for chunk in _body(receive):
                    sent.update(chunk)
                if sent.hexdigest() != found.request_digest:
                    await _refuse(
                        422,
                        "Unprocessable",
                        f"the {HEADER} {key!r} was used on {scope['method']} "
                        f"{scope['path']} with another body or query string: use a new key for a new "
                        "request",
                        scope,
                        receive,
                        send,
                    )
                    return
                await _replay(found.answer, scope, receive, send)
                return
            claim = await run_in_threadpool(
                self.keys.claim, graph, credential.agent, scope["method"], scope["path"], found
            )
            if claim is not None:
                break
        if claim is None:
            await _refuse(
                409,
                "Conflict",
                f"a request with the {HEADER} {key!r} is in progress: wait for its answer, "
                "then send this again to get it (a request cut off by a restart keeps its key for "
                "CAIE_IDEMPOTENCY_TTL_S: use a new key once you have checked what it recorded)",
                scope,
                receive,
                send,
            )
            return
        await self._run(claim, scope, receive, send)

    def _key(self, scope: Scope) -> str | None:
        """The request's key, when it is a recording POST to a route that exists and carries one."""
        if scope["type"] != "http" or not recording(scope["method"], scope["path"]):
            return None
        headers: dict[bytes, bytes] = dict(scope["headers"])  # ASGI: a request's headers are pairs of bytes
        value = headers.get(HEADER.lower().encode())
        # a route that takes this POST (static files are mounted and answer no POST)
        if value is None or not any(
            not isinstance(route, Mount) and route.matches(scope)[0] is Match.FULL for route in self.routes
        ):
            return None
        return value.decode("latin-1")

    async def _run(self, claim: Claim, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the claimed request, hashing its body as it is read and holding its answer until it is remembered
        (a success) or the claim is released (anything else)."""
        sent = _digest(scope)
        ended = False
        start: Message = {}
        body: list[bytes] = []

        async def reading() -> Message:
            nonlocal ended
            message = await receive()
            if message["type"] == "http.request":
                sent.update(message.get("body", b""))
                ended = not message.get("more_body", False)
            return message

        async def holding(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                body.append(message.get("body", b""))

        try:
            await self.app(scope, reading, holding)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await run_in_threadpool(self.keys.release, claim)
            raise
        headers = tuple(
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in start.get("headers", [])
            if name.lower() != b"content-length"
        )
        answer = Answer(start["status"], headers, b"".join(body))
        if not ended:  # a route that answered without reading all of the body: the rest is part of the request
            async for _ in _body(reading):
                pass
        await run_in_threadpool(self._settle, claim, sent.hexdigest(), answer)
        await send(start)
        await send({"type": "http.response.body", "body": answer.body})

    def _settle(self, claim: Claim, digest: str, answer: Answer) -> None:
        """Remember a success (and its text, which all JSON answers are); release the key for anything else."""
        try:
            if 200 <= answer.status < 300:
                answer.body.decode("utf-8")
                self.keys.complete(claim, digest, answer)
            else:
                self.keys.release(claim)
        except (ServiceError, UnicodeDecodeError):
            # the answer stands (what it reports was recorded); the key stays claimed until its TTL, so a repeat
            # gets 409, never a second record
            _LOG.exception("the answer to a request with an %s was not remembered", HEADER)


def _digest(scope: Scope) -> hashlib._Hash:
    """The SHA-256 a record compares requests by, to be fed the body as it arrives: the query string, a NUL byte
    (which a query string cannot hold unencoded), then the body. Nothing of the body is kept."""
    return hashlib.sha256(scope["query_string"] + b"\0")


async def _body(receive: Receive) -> AsyncIterator[bytes]:
    """The request body's chunks, as they arrive, until its end or the client's disconnection."""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


async def _refuse(status: int, title: str, message: str, scope: Scope, receive: Receive, send: Send) -> None:
    await problems.problem(status, title, message)(scope, receive, send)


async def _replay(answer: Answer, scope: Scope, receive: Receive, send: Send) -> None:
    """The remembered answer, as first sent, marked as a replay."""
    response = Response(answer.body, status_code=answer.status, headers={REPLAYED: "true"})
    response.raw_headers = [
        *((n.encode("latin-1"), v.encode("latin-1")) for n, v in answer.headers),
        *response.raw_headers,
    ]
    await response(scope, receive, send)


def install(app: FastAPI, services: Services) -> None:
    """Add the middleware over the services' store; call it before any other middleware is added, so that it runs
    inside them all (after the credential check, the security headers added to a replay as to any answer)."""
    keys = Idempotency(services.store, services.catalog, services.settings.idempotency_ttl_s)
    app.add_middleware(IdempotentPosts, settings=services.settings, keys=keys, routes=app.router.routes)
