"""HTTP/1.1 answers written outside uvicorn's protocol, byte for byte as uvicorn writes them.

A fast-lane front (:mod:`.fastlane`) and the bounded request head (:mod:`.head_limit`) answer requests that
uvicorn's protocol never sees. Their bytes must be the ones uvicorn would have sent, so this module writes
what uvicorn's httptools protocol writes (read from uvicorn 0.55): the status line, the ``date`` and ``server``
headers first, then the application's headers as it sent them (names lower-cased), ``connection: close`` when
the connection closes, and ``content-length`` framing, or chunks when the application sent no length. Only
public interfaces are used: the ASGI messages the application sends, and :class:`uvicorn.Config`'s own
settings (``date_header``, ``server_header``, ``headers``).
"""

from __future__ import annotations

import http
import re
import time
from collections.abc import MutableMapping
from email.utils import formatdate
from typing import Any

import uvicorn

_NAME = re.compile(b'[\x00-\x1f\x7f()<>@,;:\\[\\]={} \t\\\\"]')
_VALUE = re.compile(b"[\x00-\x08\x0a-\x1f\x7f]")
"""What uvicorn refuses in a header's name and value (it raises; so does :class:`Framed`)."""
_NO_BODY = (204, 304)


def status_line(status: int) -> bytes:
    """``HTTP/1.1 200 OK\\r\\n``, the reason phrase empty for a status Python does not name (as uvicorn)."""
    try:
        phrase = http.HTTPStatus(status).phrase.encode()
    except ValueError:
        phrase = b""
    return b"HTTP/1.1 %d %s\r\n" % (status, phrase)


class DefaultHeaders:
    """The headers uvicorn's server puts before an application's: ``date`` (renewed every second) and ``server``
    with the configuration's extra headers, from the :class:`uvicorn.Config` settings that turn them on."""

    def __init__(self, config: uvicorn.Config) -> None:
        extra = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in config.headers]
        server = config.server_header and b"server" not in dict(extra)
        self._fixed = [(b"server", b"uvicorn"), *extra] if server else extra
        self._dated = config.date_header
        self._second = -1
        self._headers = self._fixed

    def __call__(self) -> list[tuple[bytes, bytes]]:
        second = int(time.time())
        if self._dated and second != self._second:
            self._second = second
            self._headers = [(b"date", formatdate(second, usegmt=True).encode()), *self._fixed]
        return self._headers


class Waits(Exception):
    """The application asked for more of the request than a bodiless request has: not an answer made at once."""


class Framed:
    """An ASGI ``receive`` and ``send`` pair for one bodiless request, collecting the response's bytes as uvicorn
    frames them. ``keep_alive``: the request's (httptools' ``should_keep_alive``); false once the response says
    ``connection: close``."""

    def __init__(self, defaults: list[tuple[bytes, bytes]], keep_alive: bool) -> None:
        self.parts: list[bytes] = []
        self.keep_alive = keep_alive
        self.complete = False
        self._defaults = defaults
        self._started = False
        self._received = False
        self._chunked: bool | None = None
        self._length = 0

    async def receive(self) -> dict[str, Any]:
        if self._received:
            raise Waits  # uvicorn would wait for the disconnect: the main process answers such an application
        self._received = True
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if not self._started:
            if message["type"] != "http.response.start":
                raise RuntimeError(f"expected http.response.start, got {message['type']}")
            self._start(message["status"], [*self._defaults, *message.get("headers", [])])
        elif not self.complete and message["type"] == "http.response.body":
            self._body(message.get("body", b""), message.get("more_body", False))
        else:
            raise RuntimeError(f"unexpected ASGI message {message['type']}")

    def _start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self._started = True
        content = [status_line(status)]
        closes = False
        for name, value in headers:
            if _NAME.search(name) or _VALUE.search(value):
                raise RuntimeError("invalid HTTP header")
            name = name.lower()
            if name == b"content-length" and self._chunked is None:
                self._length, self._chunked = int(value.decode()), False
            elif name == b"transfer-encoding" and value.lower() == b"chunked":
                self._length, self._chunked = 0, True
            elif name == b"connection" and b"close" in [token.lower().strip() for token in value.split(b",")]:
                self.keep_alive, closes = False, True
            content += (name, b": ", value, b"\r\n")
        if not self.keep_alive and not closes:
            content.append(b"connection: close\r\n")
        if self._chunked is None and status not in _NO_BODY:  # the request is a GET, never a HEAD
            self._chunked = True
            content.append(b"transfer-encoding: chunked\r\n")
        content.append(b"\r\n")
        self.parts.append(b"".join(content))

    def _body(self, body: bytes, more: bool) -> None:
        if self._chunked:
            if body:
                self.parts += (b"%x\r\n" % len(body), body, b"\r\n")
            if not more:
                self.parts.append(b"0\r\n\r\n")
        else:
            self._length -= len(body)
            if self._length < 0:
                raise RuntimeError("response longer than its content-length")
            self.parts.append(body)
        if not more:
            if self._length:
                raise RuntimeError("response shorter than its content-length")
            self.complete = True
