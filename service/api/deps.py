"""The dependencies handlers declare: settings, store, domain services, credentials."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request

from ..composition import Services
from ..core.auth import authenticate, require
from ..core.catalog import Catalog
from ..core.config import Credential, Settings
from ..core.errors import Cancelled
from ..core.graphs import GraphService
from ..core.store import Store
from ..credentials.signing import Signer
from ..runs.jobs import Jobs
from .app_state import app_state
from .sessions import current_session


def _services(request: Request) -> Services:
    return app_state(request, "services", Services)


def settings(request: Request) -> Settings:
    return _services(request).settings


def store(request: Request) -> Store:
    return _services(request).store


def catalog(request: Request) -> Catalog:
    return _services(request).catalog


def graphs(request: Request) -> GraphService:
    return _services(request).graphs


def signer(request: Request) -> Signer:
    return _services(request).signer


def jobs(request: Request) -> Jobs:
    return _services(request).jobs


def credential(
    config: Annotated[Settings, Depends(settings)],
    authorization: Annotated[str | None, Header()] = None,
) -> Credential | None:
    return authenticate(config, authorization)


def writer(found: Annotated[Credential | None, Depends(credential)]) -> Credential:
    """Any valid credential may write graphs; role-specific actions check roles themselves."""
    return require(found)


def reader(
    config: Annotated[Settings, Depends(settings)],
    found: Annotated[Credential | None, Depends(credential)],
) -> Credential | None:
    """Reads are public unless the deployment says otherwise; a signed-in person reads as their agent (a read
    needs no CSRF token, and no other site's page is allowed to read with the cookie: CORS without credentials)."""
    if found is None and (session := current_session()) is not None:
        found = session.person.credential
    return found if config.public_reads else require(found)


DISCONNECT_POLL_S = 0.2


@dataclass(frozen=True)
class Cancellation:
    """A progress callback that stops long work in a worker thread once nobody waits for its result.

    A thread cannot be interrupted; the work calls this between steps, and it raises
    :class:`Cancelled` when the client has gone away or the service is stopping.
    """

    client_gone: threading.Event
    stopping: threading.Event

    def __call__(self, stage: str, done: int, total: int) -> None:
        why = (
            "the service is stopping"
            if self.stopping.is_set()
            else "the client went away"
            if self.client_gone.is_set()
            else None
        )
        if why:
            raise Cancelled(f"stopped while {stage} ({done}/{total}): {why}")


async def cancellation(request: Request) -> AsyncIterator[Cancellation]:
    """The request's :class:`Cancellation`; meanwhile a task polls for the client's disconnect.

    Use it only on routes whose body FastAPI has already read: polling consumes ASGI messages.
    """
    gone = threading.Event()

    async def watch() -> None:
        while not await request.is_disconnected():
            await asyncio.sleep(DISCONNECT_POLL_S)
        gone.set()

    watcher = asyncio.create_task(watch())
    try:
        yield Cancellation(gone, request.app.state.stopping)
    finally:
        watcher.cancel()


SettingsDep = Annotated[Settings, Depends(settings)]
StoreDep = Annotated[Store, Depends(store)]
CatalogDep = Annotated[Catalog, Depends(catalog)]
GraphsDep = Annotated[GraphService, Depends(graphs)]
JobsDep = Annotated[Jobs, Depends(jobs)]
SignerDep = Annotated[Signer, Depends(signer)]
WriterDep = Annotated[Credential, Depends(writer)]
ReaderDep = Annotated[Credential | None, Depends(reader)]
CancellationDep = Annotated[Cancellation, Depends(cancellation)]
