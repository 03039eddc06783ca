"""The FastAPI application around one store: its middlewares and every router (imported through
:func:`service.api.create_app`)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from .. import __version__
from ..composition import build_services
from ..core.config import Settings
from ..core.store import Store
from . import (
    body_limits,
    html,
    idempotency,
    in_progress,
    lean_sparql,
    openapi,
    problems,
    routing_errors,
    security,
    sessions,
)
from .routers import (
    agreement,
    comparisons,
    evaluations,
    graph_store,
    graphs,
    health,
    imports,
    interop,
    judgments,
    metrics,
    model_judgments,
    oidc,
    pages,
    plans,
    records,
    report_pages,
    reports,
    resources,
    run_imports,
    runs,
    sign_in,
    sparql,
    workspace_annotator,
    workspace_expert,
    workspace_expert_criteria,
    workspace_home,
    workspace_operator,
    workspace_reports,
)


def create_app(settings: Settings | None = None, store: Store | None = None) -> FastAPI:
    """The application; ``store`` defaults to the one ``settings`` name (opened now, closed on shutdown)."""
    services = build_services(settings or Settings(), store)
    stopping = threading.Event()  # set on shutdown: long work in worker threads ends at its next checkpoint

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        stopping.set()
        services.close()

    app = FastAPI(
        title="OB-CAIE",
        version=__version__,
        summary="Ontology-Based Contextual AI Evaluations as a linked-data service",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI comes from openapi.install, on packaged assets (no CDN)
        redoc_url=None,
    )
    app.state.services = services
    app.state.settings = services.settings
    app.state.store = services.store
    app.state.catalog = services.catalog
    app.state.graphs = services.graphs
    app.state.publisher = services.publisher
    app.state.stopping = stopping
    problems.install(app)
    routing_errors.install(app)
    idempotency.install(app, services)  # the first middleware added: it runs inside every other one
    body_limits.install(app, services.settings)  # inside the security middlewares: 413s carry their headers
    security.install(app, services.settings)
    sessions.install(app, services.settings, oidc.client(services.settings))  # outside security: it reads the session
    in_progress.install(app)  # the last middleware added: it runs outside every other one
    openapi.install(app, services.settings)  # before the routers: /docs must come before the catch-all
    app.include_router(health.router)
    app.include_router(graphs.router)
    app.include_router(sparql.router)
    lean_sparql.install(app)  # GET /sparql ahead of every route, without dependency solving (docs/performance.md)
    app.include_router(graph_store.router)
    app.include_router(imports.router)
    app.include_router(evaluations.router)
    app.include_router(plans.router)
    app.include_router(run_imports.router)
    app.include_router(runs.router)
    app.include_router(judgments.router)
    app.include_router(model_judgments.router)
    app.include_router(agreement.router)
    app.include_router(reports.router)
    app.include_router(records.router)
    app.include_router(interop.router)
    app.include_router(pages.router)
    app.include_router(sign_in.router)
    app.include_router(oidc.router)
    app.mount("/static", StaticFiles(directory=html.STATIC), name="static")  # the pages' CSS, JS, icon
    app.include_router(report_pages.router)
    app.include_router(comparisons.router)
    app.include_router(metrics.router)
    app.include_router(workspace_home.router)
    app.include_router(workspace_reports.router)
    app.include_router(workspace_operator.router)
    app.include_router(workspace_annotator.router)
    app.include_router(workspace_expert.router)
    app.include_router(workspace_expert_criteria.router)
    app.include_router(resources.router)  # last: its catch-all dereferences every other path
    return app
