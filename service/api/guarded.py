"""Clients' queries under the query guard (:mod:`service.core.guarded`), stopped when their client goes away."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar, cast

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from ..core.config import Credential
from ..core.guarded.guard import QueryGuard
from ..core.store import Store
from .deps import DISCONNECT_POLL_S

T = TypeVar("T")
_CREATING = threading.Lock()


def query_guard(request: Request) -> QueryGuard:
    """The application's guard, made on first use (its worker processes go with it)."""
    state = request.app.state
    with _CREATING:
        if getattr(state, "query_guard", None) is None:
            state.query_guard = QueryGuard(state.settings)
    return cast(QueryGuard, state.query_guard)


def client_of(request: Request, credential: Credential | None) -> str:
    """Whom a query counts against: the token's agent, else the caller's address."""
    if credential is not None:
        return f"agent:{credential.agent}"
    return f"address:{request.client.host if request.client else 'unknown'}"


async def guarded(request: Request, credential: Credential | None, work: Callable[[Store], T]) -> T:
    """``work(store)`` in a worker thread, where ``store.answer`` runs the client's query under the guard.

    Call it once the request body is read: watching for the disconnect consumes the request's messages.
    """
    guard = query_guard(request)
    limits = guard.limits()

    async def watch() -> None:
        while not await request.is_disconnected():
            await asyncio.sleep(DISCONNECT_POLL_S)
        limits.cancelled.set()

    watcher = asyncio.create_task(watch())
    try:
        # Only answer() is called on it (see GuardedStore): the cast hands it to code written against Store.
        store = cast(Store, guard.bound(request.app.state.store, client_of(request, credential), limits))
        return await run_in_threadpool(work, store)
    finally:
        watcher.cancel()
