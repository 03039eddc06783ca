"""Dereferencing every published IRI: the published JSON-LD contexts, and any other path (the catch-all); the home
page ``/`` is the workspace's (:mod:`.workspace_home`).

Content negotiation gives HTML to browsers and Turtle, JSON-LD (compacted with the published context),
N-Triples or RDF/XML to RDF clients, with ``Vary: Accept``; anything else is 406. Which IRI a path names is
:func:`service.core.iris.iri_for_path`. A JSON route whose path is also a minted IRI (an evaluation, a plan, the
scenarios graph, a graph) keeps its JSON for ``Accept: application/json`` and hands every other answer here
with :func:`wants_json` and :func:`linked_data`, so that IRI negotiates like any other.
"""

from __future__ import annotations

import json

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from ...core.errors import NotFound
from ...core.formats import HTML, JSON, negotiate
from ...credentials.contexts import SHIPPED, shipped_file
from ...publishing import Publisher
from .. import html
from ..deps import ReaderDep
from ..rdf_response import CONTEXTS, JSON_LD, context_iri, published_context, rdf_response
from .pages import term_doc

router = APIRouter(tags=["linked data"])

OFFERED = [HTML, "text/turtle", JSON_LD, "application/n-triples", "application/rdf+xml"]
"""What every published IRI answers in, the server's preference first (a browser's ``*/*`` gets the page)."""


def wants_json(request: Request) -> bool:
    """Whether a JSON route that is also a published IRI answers with its JSON (406 when nothing fits)."""
    return negotiate(request.headers.get("accept"), [JSON, *OFFERED]) == JSON


async def linked_data(request: Request, path: str | None = None) -> Response:
    """The published IRI's answer for ``path`` (the request's own by default), by content negotiation."""
    path = (path if path is not None else request.url.path).lstrip("/")
    wanted = negotiate(request.headers.get("accept"), OFFERED)
    publisher: Publisher = request.app.state.publisher
    description = await run_in_threadpool(publisher.describe, path)
    if wanted == HTML:
        term = await term_doc(request, description.iri)  # the documentation of a term (pages.py)
        page = html.resource_page(
            description.iri,
            description.label(),
            description.triples,
            description.incoming,
            publisher.local_href,
            "/" + path,
            term,
        )
        return HTMLResponse(page, headers={"Vary": "Accept"})
    triples = await run_in_threadpool(publisher.document, description)
    # pyld's compaction takes a while on a large graph: off the event loop, like the reads.
    return await run_in_threadpool(
        rdf_response, triples, wanted, None, context_iri(request.app.state.settings.base_url)
    )


@router.get(
    "/contexts/{name}",
    summary="A published JSON-LD context (ob-caie.jsonld for RDF answers, evaluation.jsonld for the evaluation JSON, "
    "credentials-v2.jsonld: the W3C VC 2.0 context the signed records use, as shipped)",
)
async def json_ld_context(name: str) -> Response:
    shipped = shipped_file(name)  # a context credentials use: the W3C's bytes, unchanged (docs/trust.md)
    if shipped is not None:
        return Response(shipped, media_type=JSON_LD)
    context = published_context(name)  # the file, with each installed domain's prefixes
    if context is None:
        published = sorted([*(path.name for path in CONTEXTS.glob("*.jsonld")), *SHIPPED.values()])
        raise NotFound(f"no JSON-LD context {name!r}: the contexts are {', '.join(published)}")
    return Response(json.dumps(context, ensure_ascii=False, indent=2).encode(), media_type=JSON_LD)


@router.api_route(
    "/{path:path}", methods=["GET", "HEAD"], summary="The description of a published IRI, by content negotiation"
)
async def dereference(path: str, request: Request, _: ReaderDep) -> Response:
    return await linked_data(request, path)
