"""``GET /sparql`` without FastAPI's per-request routing and dependency solving (issue 8, "a lean read path").

Through its FastAPI route a point lookup spent about half of the service's CPU outside the query: matching the
request against the routes before ``/sparql`` and solving the handler's dependencies (docs/performance.md,
"SPARQL queries under load"). :func:`install` puts a plain Starlette route for ``GET`` and ``HEAD /sparql``
ahead of every other route. It reads the settings and the credential with the same functions the dependencies
are made of and calls the same handler, :func:`.routers.sparql.sparql_get`, so answers, errors (the app's
exception handlers apply to Starlette routes too) and the OpenAPI document (the FastAPI route stays in it)
are those of the FastAPI route. Other methods do not match this route and reach the routes they always did.
"""

from __future__ import annotations

from fastapi import FastAPI, Request, Response
from starlette.routing import Route

from . import deps
from .routers import sparql


async def sparql_get(request: Request) -> Response:
    """:func:`.routers.sparql.sparql_get` with its dependencies (:func:`.deps.reader`) resolved by hand."""
    settings = deps.settings(request)
    credential = deps.reader(settings, deps.credential(settings, request.headers.get("authorization")))
    return await sparql.sparql_get(request, settings, credential)


def install(app: FastAPI) -> None:
    """Route ``GET``/``HEAD /sparql`` here before any other route is tried (not in the OpenAPI document: the
    FastAPI route documents it)."""
    app.router.routes.insert(0, Route("/sparql", sparql_get, methods=["GET", "HEAD"], include_in_schema=False))
