"""The request head (request line and headers) bounded in size before the application sees it (issue 23 §2).

uvicorn's httptools protocol gathers a request's URL and headers with no bound, by concatenation: a 100 MB
``GET /sparql?query=…`` held the event loop for seconds (/health took 4.5 s) and the main process held the
URL. A fast-lane front hands any head longer than it peeks at to the main process, so the bound must be here:
:func:`bounded_httptools` is the protocol ``caie serve`` runs, which answers a head longer than a query's body
may be (``CAIE_QUERY_MAX_BODY_BYTES``: a query in the URL is held to the same limit) with 414, or 431 when the
headers are what is long, as problem details, and closes the connection.
"""

from __future__ import annotations

import asyncio
import json

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from ..core.config import Settings
from .problems import PROBLEM


class _BoundedHttpTools(HttpToolsProtocol):
    """uvicorn's protocol, counting the bytes that arrive while a request's head is incomplete."""

    most = 0
    setting = ""
    _head = 0
    _in_head = True

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head += len(data)
            if self._head > self.most:
                self._refuse()
                return
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._in_head, self._head = True, 0
        super().on_message_complete()

    def _refuse(self) -> None:
        status, title, what = (414, "URITooLong", "URL") if not self.headers else (431, "HeadersTooLarge", "headers")
        body = json.dumps({"type": "about:blank", "status": status, "title": title, "detail":
                           f"the request's {what} make its head longer than {self.most:,} bytes ({self.setting}): "
                           "send a long query by POST, in the body"}).encode()
        head = [STATUS_LINE[status], *(name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers),
                f"content-type: {PROBLEM}\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()]
        self.transport.write(b"".join(head) + body)
        self.transport.close()


def bounded_httptools(settings: Settings) -> type[asyncio.Protocol]:
    """The protocol class for uvicorn's ``http`` setting, with this deployment's bound on a request's head."""
    return type("BoundedHttpTools", (_BoundedHttpTools,), {"most": settings.query_max_body_bytes,
                                                           "setting": "CAIE_QUERY_MAX_BODY_BYTES"})
