"""The HTTP layer: :func:`create_app` builds the FastAPI application around one store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from .. import __version__
from ..catalog import Catalog
from ..config import Settings
from ..graphs import GraphService
from ..publishing import Publisher
from ..store import Store, open_store
from . import problems
from .routers import evaluations, graphs, health, plans, resources, sparql


def create_app(settings: Settings | None = None, store: Store | None = None) -> FastAPI:
    """The application; ``store`` defaults to the one ``settings`` name (opened now, closed on shutdown)."""
    settings = settings or Settings()
    owned = store is None
    store = store or open_store(settings)
    catalog = Catalog(store, settings.base_url)
    catalog.recover()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        if owned:
            store.close()

    app = FastAPI(
        title="OB-CAIE",
        version=__version__,
        summary="Ontology-Based Contextual AI Evaluations as a linked-data service",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.store = store
    app.state.catalog = catalog
    app.state.graphs = GraphService(store, catalog, bulk_threshold=settings.bulk_threshold)
    app.state.publisher = Publisher(store, catalog)
    problems.install(app)
    app.include_router(health.router)
    app.include_router(graphs.router)
    app.include_router(sparql.router)
    app.include_router(evaluations.router)
    app.include_router(plans.router)
    app.include_router(resources.router)
    return app
