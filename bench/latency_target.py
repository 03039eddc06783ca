"""An OpenAI-compatible chat endpoint that answers every request after a fixed latency: bench/runner.py's target.

``POST /v1/chat/completions`` answers ``BENCH_TARGET_LATENCY_S`` seconds (0.1 by default) after the request
arrived, with a short completion that echoes the last user turn, and usage counts. ``POST /stats/reset`` reports
how many requests it answered, how many of them opened a conversation (one user turn) and how many distinct
openings it saw, and the most requests it held at once, since the last reset, and starts counting again: the
bench checks that no probe was asked twice and how busy the runner kept its concurrency. ``GET /stats`` reports
the same without resetting.

A target with a fixed latency should add as little as it can to it, on a machine whose cores it shares with the
runner it measures: this is a bare HTTP/1.1 server (``asyncio.Protocol`` on uvloop, httptools' parser, the
server uvicorn uses underneath), with no framework, no task per request and no log. The latency is counted from
the moment the request's first bytes were read, so that a burst of requests queued behind each other is not
answered later than asked; a timer per connection answers its requests in the order they came (HTTP/1.1
keep-alive and pipelining), then the connection reads on.

Run: ``python -m bench.latency_target --port PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections import deque
from typing import Any

import httptools
import uvloop

LATENCY_S = float(os.environ.get("BENCH_TARGET_LATENCY_S", "0.1"))
_JSON = b"application/json"


class _Counts:
    """What the target saw, for ``GET /stats``."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.answered = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.opened = 0
        self.openings: set[str] = set()

    def report(self) -> dict[str, Any]:
        return {
            "answered": self.answered,
            "opened": self.opened,
            "distinct_openings": len(self.openings),
            "most_in_flight": self.most_in_flight,
            "latency_s": LATENCY_S,
        }


counts = _Counts()


def _response(status: bytes, body: bytes, keep_alive: bool) -> bytes:
    connection = b"" if keep_alive else b"connection: close\r\n"
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: application/json\r\ncontent-length: "
        + str(len(body)).encode()
        + b"\r\n"
        + connection
        + b"\r\n"
        + body
    )


def _completion(request: dict[str, Any]) -> bytes:
    """The reply to a chat-completions request (counted as an opening when it has one user turn)."""
    messages = request["messages"]
    last = messages[-1]["content"]
    if sum(message["role"] == "user" for message in messages) == 1:
        counts.opened += 1
        counts.openings.add(last)
    text = f"You asked: {last[:200]}. Please call your health facility before going."
    asked, said = len(last.split()), len(text.split())
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "model": request.get("model", "bench"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": asked, "completion_tokens": said, "total_tokens": asked + said},
        },
        separators=(",", ":"),
    ).encode()


class _Connection(asyncio.Protocol):
    """One client connection: parses requests as they come and answers each at its deadline, in order."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._url = b""
        self._body: list[bytes] = []
        self._arrived = 0.0
        self._held: deque[tuple[float, bytes, bytes, bool, bool]] = (
            deque()
        )  # deadline, status, body, keep-alive, a chat
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # asyncio passes the Transport it made for this protocol as a BaseTransport

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        counts.in_flight -= sum(chat for *_, chat in self._held)
        self._held.clear()

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self._send(_response(b"400 Bad Request", b'{"error":"malformed HTTP request"}', False), close=True)

    # httptools' callbacks
    def on_message_begin(self) -> None:
        self._arrived = self._loop.time()
        self._url, self._body = b"", []

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        method, path = self._parser.get_method(), self._url.split(b"?", 1)[0]
        keep_alive = self._parser.should_keep_alive()
        if path == b"/v1/chat/completions" and method == b"POST":
            try:
                request = json.loads(b"".join(self._body))
                status, body = b"200 OK", _completion(request)
            except (ValueError, KeyError, TypeError, IndexError) as error:
                status, body = b"400 Bad Request", json.dumps({"error": f"not a chat request: {error!r}"}).encode()
            self._hold(self._arrived + LATENCY_S, status, body, keep_alive, chat=True)
        elif path in (b"/stats", b"/stats/reset") and method == (b"POST" if path == b"/stats/reset" else b"GET"):
            report = json.dumps(counts.report()).encode()
            if path == b"/stats/reset":
                counts.reset()
            self._hold(self._arrived, b"200 OK", report, keep_alive, chat=False)
        else:
            self._hold(self._arrived, b"404 Not Found", b'{"error":"no such resource"}', keep_alive, chat=False)

    def _hold(self, deadline: float, status: bytes, body: bytes, keep_alive: bool, *, chat: bool) -> None:
        """Answer at ``deadline``, after the connection's earlier requests; ``chat``: a chat request, counted."""
        if chat:
            counts.in_flight += 1
            counts.most_in_flight = max(counts.most_in_flight, counts.in_flight)
        self._held.append((deadline, status, body, keep_alive, chat))
        if self._timer is None:
            self._timer = self._loop.call_at(deadline, self._answer)

    def _answer(self) -> None:
        """Send the oldest held request's answer, then wait for the next one's deadline."""
        self._timer = None
        _, status, body, keep_alive, chat = self._held.popleft()
        if chat:
            counts.in_flight -= 1
            counts.answered += 1
        self._send(_response(status, body, keep_alive), close=not keep_alive)
        if keep_alive and self._held:
            self._timer = self._loop.call_at(self._held[0][0], self._answer)

    def _send(self, data: bytes, *, close: bool) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)
            if close:
                self._transport.close()


async def serve(host: str, port: int) -> None:
    server = await asyncio.get_running_loop().create_server(_Connection, host, port, backlog=1024)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvloop.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
