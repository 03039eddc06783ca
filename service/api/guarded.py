"""Clients' queries under the query guard (:mod:`service.core.guarded`), stopped when their client goes away; and
computed reads (metrics, verification, report pages) counted as queries, so heavy reads are bounded alike."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar, cast

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from ..core.config import Credential
from ..core.errors import TooManyQueries
from ..core.guarded import QueryLimits
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
            state.query_slots = asyncio.Semaphore(state.settings.query_max_concurrent)
    return cast(QueryGuard, state.query_guard)


@asynccontextmanager
async def query_slot(request: Request, limits: QueryLimits) -> AsyncIterator[None]:
    """One of the ``CAIE_QUERY_MAX_CONCURRENT`` slots; a query waits for it here, in the event loop, holding no
    server thread, until its time limit (then 429)."""
    slots: asyncio.Semaphore = request.app.state.query_slots
    try:
        if slots.locked():
            await asyncio.wait_for(slots.acquire(), timeout=max(limits.remaining(), 0))
        else:  # a free slot needs no timeout, and wait_for costs a task per query (docs/performance.md)
            await slots.acquire()
    except TimeoutError:
        most = request.app.state.settings.query_max_concurrent
        raise TooManyQueries(
            f"the service ran its most queries at once (CAIE_QUERY_MAX_CONCURRENT={most}) for as long "
            "as this query may take; try again later",
            retry_after=max(1, round(limits.time_s)),
        ) from None
    try:
        yield
    finally:
        slots.release()


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
        await asyncio.sleep(DISCONNECT_POLL_S)  # most queries are answered before a first look is due
        while not await request.is_disconnected():
            await asyncio.sleep(DISCONNECT_POLL_S)
        limits.cancelled.set()

    watcher = asyncio.create_task(watch())
    try:
        # Only answer() is called on it (see GuardedStore): the cast hands it to code written against Store.
        store = cast(Store, guard.bound(request.app.state.store, client_of(request, credential), limits))
        async with query_slot(request, limits):
            return await run_in_threadpool(work, store)
    finally:
        watcher.cancel()


async def computed(request: Request, credential: Credential | None, work: Callable[[], T]) -> T:
    """``work()`` (a computation over the record: metrics, a report's verification or page, a comparison) in a
    worker thread, counted as one of its client's queries (``CAIE_QUERY_MAX_PER_CLIENT``) and holding one of the
    ``CAIE_QUERY_MAX_CONCURRENT`` slots: no caller can tie up every server thread with heavy reads (429 past
    either limit). Such work runs the service's own queries, which are not stopped at the time limit."""
    guard = query_guard(request)
    limits = guard.limits()
    with guard.admitted(client_of(request, credential)):
        async with query_slot(request, limits):
            return await run_in_threadpool(work)
