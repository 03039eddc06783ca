"""An authenticating reverse proxy for the tests (:func:`authenticating_proxy`): a store that needs credentials,
and that can cut its answers as a store's row limit does."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

from .servers import free_port, wait_until_up


@dataclass
class ProxyControl:
    """Knobs of a running :func:`authenticating_proxy`, changeable while it runs."""

    row_cap: int | None = None
    """Cut SPARQL JSON results to this many rows and N-Triples answers to this many lines, silently (a store limit)."""
    anytime: int | None = None
    """Answer a cut answer as Virtuoso's anytime query does (README.ANYTIME.md): with this status (206, or 200 as
    its HTTPAnytimeStatus allows) and the headers X-SQL-State: S1TAT and X-SQL-Message."""
    requests: int = 0
    refused: int = 0


@contextmanager
def authenticating_proxy(
    upstream: str, *, user: str | None = None, password: str | None = None, token: str | None = None
) -> Iterator[tuple[str, ProxyControl]]:
    """A reverse proxy to ``upstream`` that answers 401 unless the request carries HTTP Basic ``user``:``password``
    or the bearer ``token``; yields its URL (paths are kept: ``{url}/query`` reaches ``{upstream}/query``) and
    its :class:`ProxyControl`. Stands in for a store that needs credentials (Virtuoso's /sparql-auth, a proxy
    in front of GraphDB or Neptune)."""
    import base64
    import json

    control = ProxyControl()
    allowed = set()
    if user is not None and password is not None:
        allowed.add("Basic " + base64.b64encode(f"{user}:{password}".encode()).decode())
    if token is not None:
        allowed.add(f"Bearer {token}")
    hop = {"host", "authorization", "content-length", "connection", "transfer-encoding", "accept-encoding"}

    def cut(body: bytes, media: str) -> bytes:
        if control.row_cap is None:
            return body
        if media.startswith("application/sparql-results+json"):
            document = json.loads(body)
            if "results" in document:
                document["results"]["bindings"] = document["results"]["bindings"][: control.row_cap]
            return json.dumps(document).encode()
        if media.startswith("application/n-triples"):
            lines = [line for line in body.split(b"\n") if line.strip()]
            return b"\n".join(lines[: control.row_cap]) + b"\n"
        return body

    async def app(
        scope: dict[str, Any], receive: Callable[..., Awaitable[Any]], send: Callable[..., Awaitable[Any]]
    ) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        control.requests += 1
        if headers.get("authorization") not in allowed:
            control.refused += 1
            challenge = b'Basic realm="store"' if user is not None else b'Bearer realm="store"'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", challenge)],
                }
            )
            await send({"type": "http.response.body", "body": b"401 Unauthorized: credentials required"})
            return
        url = upstream + scope["path"] + ("?" + scope["query_string"].decode() if scope["query_string"] else "")
        forwarded = {k: v for k, v in headers.items() if k not in hop}
        async with httpx.AsyncClient(timeout=60.0) as client:
            answer = await client.request(scope["method"], url, content=body, headers=forwarded)
        media = answer.headers.get("content-type", "")
        content = cut(answer.content, media) if answer.status_code == 200 else answer.content
        status, sent = answer.status_code, [(b"content-type", media.encode())] if media else []
        if control.anytime is not None and content != answer.content:
            status = control.anytime
            sent += [
                (b"x-sql-state", b"S1TAT"),
                (b"x-sql-message", b"RC...: Returning incomplete results, query interrupted by result timeout."),
            ]
        await send({"type": "http.response.start", "status": status, "headers": sent})
        await send({"type": "http.response.body", "body": content})

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/")
        control.requests = control.refused = 0  # not counting the probe that saw it up
        yield url, control
    finally:
        server.should_exit = True
        thread.join(timeout=10)
