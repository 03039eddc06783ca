"""Dereferencing every published IRI: ``/``, ``/epo``, ``/epo/{Term}`` and anything minted under the base.

Content negotiation gives HTML to browsers and Turtle, JSON-LD, N-Triples or RDF/XML to RDF
clients, with ``Vary: Accept``; anything else is 406.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from .. import html
from ...core.formats import HTML, negotiate
from ...publishing import Publisher
from ..deps import GraphsDep, ReaderDep
from ..rdf_response import rdf_response

router = APIRouter(tags=["linked data"])

OFFERED = [HTML, "text/turtle", "application/ld+json", "application/n-triples", "application/rdf+xml"]


@router.get("/", summary="Home page", response_class=HTMLResponse)
async def home(request: Request, graphs: GraphsDep, _: ReaderDep) -> HTMLResponse:
    entries = await run_in_threadpool(graphs.catalog)
    return HTMLResponse(html.home_page(request.app.state.settings.base_url, entries))


@router.get("/{path:path}", summary="The description of a published IRI, by content negotiation")
async def dereference(path: str, request: Request, _: ReaderDep) -> Response:
    wanted = negotiate(request.headers.get("accept"), OFFERED)
    publisher: Publisher = request.app.state.publisher
    description = await run_in_threadpool(publisher.describe, path)
    if wanted == HTML:
        page = html.resource_page(
            description.iri, description.label(), description.triples, description.incoming,
            publisher.local_href, "/" + path,
        )
        return HTMLResponse(page, headers={"Vary": "Accept"})
    return rdf_response(description.triples, wanted)
