"""The HTTP requests the main process is answering now, which ``/health`` reports: an operator sees whether a
stop would cut work short, and a client can tell that its long request is being worked on without waiting blind."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send


class RequestsInProgress:
    """A count of the requests between their start and their answer's end (or their failure). Only the event loop's
    thread changes it, so it needs no lock."""

    def __init__(self) -> None:
        self.count = 0


class _Counting:
    def __init__(self, app: ASGIApp, in_progress: RequestsInProgress) -> None:
        self.app = app
        self.in_progress = in_progress

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.in_progress.count += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_progress.count -= 1


def install(app: FastAPI) -> None:
    """Count every request, outermost (added last), so that a request refused by another middleware counts too."""
    app.state.in_progress = RequestsInProgress()
    app.add_middleware(_Counting, in_progress=app.state.in_progress)
