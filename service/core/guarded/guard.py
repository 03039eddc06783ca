"""The guard every client query goes through: allow-listed ``SERVICE`` only, a per-client cap, and the limits.

On the embedded store the query runs in a forked worker (:mod:`.workers`) that is killed at a limit; on a
remote store the request carries the limits (:mod:`.remote`). The service's own queries (``queries/*.rq``
via ``GraphService``) are trusted and do not come here.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..config import Settings
from ..errors import TooManyQueries
from ..sparql_depth import refuse_deep_nesting
from ..store import EmbeddedStore, QueryAnswer, RemoteStore, Store
from .federation import refuse_unlisted_services
from .limits import MB, QueryLimits
from .workers import WorkerPool


class QueryGuard:
    """Runs clients' queries under the deployment's limits; one per application."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._pool: WorkerPool | None = None
        self._running: Counter[str] = Counter()
        self._lock = threading.Lock()

    def limits(self) -> QueryLimits:
        """A fresh budget, its clock started now (its ``cancelled`` flag is for whoever watches the client)."""
        settings = self._settings
        return QueryLimits(
            settings.query_time_limit_s, settings.query_max_result_bytes, settings.query_memory_limit_mb * MB
        )

    def answer(
        self, store: Store, client: str, limits: QueryLimits, query: str, media_type: str, **options: Any
    ) -> QueryAnswer:
        """``store.answer(query, media_type, **options)`` for ``client``, under ``limits``."""
        refuse_deep_nesting(query, self._settings.query_max_nesting)  # before any parser: a worker's stack is finite
        refuse_unlisted_services(query, self._settings.service_allowlist)
        with self.admitted(client):
            if isinstance(store, EmbeddedStore):
                return self._workers().answer(store, (query, media_type), options, limits)
            if isinstance(store, RemoteStore):
                answer = store.answer(query, media_type, limits=limits, **options)
                if len(answer.body) > limits.max_bytes:  # written here in a larger format than the engine sent
                    raise limits.too_large()
                return answer
            raise TypeError(
                f"no guard for a {type(store).__name__}: client queries need a process or a request to stop"
            )

    def bound(self, store: Store, client: str, limits: QueryLimits) -> GuardedStore:
        """``store`` as one client's query sees it: :meth:`GuardedStore.answer` runs under the guard."""
        return GuardedStore(self, store, client, limits)

    @contextmanager
    def admitted(self, client: str) -> Iterator[None]:
        """Count the query against its client, or 429 when the client already runs its most."""
        most = self._settings.query_max_per_client
        with self._lock:
            if self._running[client] >= most:
                raise TooManyQueries(
                    f"this client already runs {most} queries at once (CAIE_QUERY_MAX_PER_CLIENT); "
                    "wait for one to finish",
                    retry_after=max(1, round(self._settings.query_time_limit_s)),
                )
            self._running[client] += 1
        try:
            yield
        finally:
            with self._lock:
                self._running[client] -= 1
                if not self._running[client]:
                    del self._running[client]

    def _workers(self) -> WorkerPool:
        with self._lock:
            if self._pool is None:
                settings = self._settings
                self._pool = WorkerPool(idle=settings.query_workers, memory_bytes=settings.query_memory_limit_mb * MB)
            return self._pool


class GuardedStore:
    """One client query's view of the store: only :meth:`answer`, the call that runs a client's query.

    Handed to code that runs a client query (``service.core.sparql.execute``) in place of the store, so the
    protocol handling stays where it is and only the execution is guarded.
    """

    def __init__(self, guard: QueryGuard, store: Store, client: str, limits: QueryLimits) -> None:
        self._guard = guard
        self._store = store
        self._client = client
        self._limits = limits

    def answer(self, query: str, media_type: str, **options: Any) -> QueryAnswer:
        return self._guard.answer(self._store, self._client, self._limits, query, media_type, **options)
