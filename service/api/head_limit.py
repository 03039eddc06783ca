"""The request head (request line and headers) bounded in size before the application sees it (issue 23 §2).

uvicorn's httptools protocol gathers a request's URL and headers with no bound, by concatenation: a 100 MB
``GET /sparql?query=…`` held the event loop for seconds (/health took 4.5 s) and the main process held the
URL. A fast-lane front hands any head longer than it peeks at to the main process, so the bound must be here:
:func:`bounded_httptools` is the protocol ``caie serve`` runs, which answers a head longer than a query's body
may be (``CAIE_QUERY_MAX_BODY_BYTES``: a query in the URL is held to the same limit) with 414, or 431 when the
headers are what is long, as problem details, and closes the connection.

It stands in front of uvicorn's protocol rather than inside it: uvicorn builds it as the class given to
``uvicorn.Config(http=…)`` (a documented type of that setting) and it builds uvicorn's own protocol with the
same arguments, passing every event on through the :class:`asyncio.Protocol` interface. Its own httptools
parser (the public API) follows the same bytes to know where each head ends.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import httptools
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ..core.config import Settings
from .http11 import DefaultHeaders, status_line
from .problems import PROBLEM


class _BoundedHead(asyncio.Protocol):
    """uvicorn's httptools protocol behind a count of the bytes that arrive while a request's head is incomplete."""

    most = 0
    setting = ""

    def __init__(self, config: uvicorn.Config, **server: Any) -> None:
        # HttpToolsProtocol is what uvicorn's own ``http="httptools"`` setting names; it is only built and spoken
        # to as an asyncio.Protocol, with the arguments uvicorn gives any protocol class (its config, its state).
        self._inner: asyncio.Protocol = HttpToolsProtocol(config=config, **server)
        self._defaults = DefaultHeaders(config)
        self._parser: httptools.HttpRequestParser | None = httptools.HttpRequestParser(self)
        self._head = 0
        self._in_head = True
        self._headers = False
        self._transport: asyncio.Transport | None = None

    # ------------------------------------------------------------------ asyncio.Protocol, passed on

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # a TCP stream's (uvloop's does not subclass it)
        self._inner.connection_made(self._transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self._inner.connection_lost(exc)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def data_received(self, data: bytes) -> None:
        if self._parser is not None:
            if self._in_head:
                self._head += len(data)
                if self._head > self.most:
                    self._refuse(data)
                    return
            try:
                self._parser.feed_data(data)
            except httptools.HttpParserUpgrade:  # as uvicorn's parser, this one reads on (unless the protocol changes)
                pass
            except httptools.HttpParserError:  # uvicorn answers 400 and closes the connection
                self._parser = None
        self._inner.data_received(data)

    # ------------------------------------------------------------------ httptools' callbacks

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers = True

    def on_headers_complete(self) -> None:
        self._in_head = False

    def on_message_complete(self) -> None:
        self._in_head, self._head, self._headers = True, 0, False

    def _refuse(self, data: bytes) -> None:
        """414, or 431 when the request line ended within the bound (read so far, or in the bytes refused)."""
        assert self._transport is not None
        line_ended = self._headers or b"\n" in data[: self.most - (self._head - len(data))]
        status, title, what = (431, "HeadersTooLarge", "headers") if line_ended else (414, "URITooLong", "URL")
        body = json.dumps(
            {
                "type": "about:blank",
                "status": status,
                "title": title,
                "detail": f"the request's {what} make its head longer than {self.most:,} bytes ({self.setting}): "
                "send a long query by POST, in the body",
            }
        ).encode()
        head = [
            status_line(status),
            *(name + b": " + value + b"\r\n" for name, value in self._defaults()),
            f"content-type: {PROBLEM}\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n".encode(),
        ]
        self._transport.write(b"".join(head) + body)
        self._transport.close()


def bounded_httptools(settings: Settings) -> type[asyncio.Protocol]:
    """The protocol class for uvicorn's ``http`` setting, with this deployment's bound on a request's head."""
    return type(
        "BoundedHttpTools",
        (_BoundedHead,),
        {"most": settings.query_max_body_bytes, "setting": "CAIE_QUERY_MAX_BODY_BYTES"},
    )
