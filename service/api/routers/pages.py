"""Documentation pages: the index of each ontology, DSO and knowledge graph (``/doc/{kind}/{id}``), the
deployment's VoID description (``/.well-known/void``) and DCAT catalog (``/dcat``), and the query page
(``/query``). VoID and DCAT negotiate HTML and every RDF syntax, with ``Vary: Accept``.

Term pages are the published IRIs' own pages (:mod:`.resources`), filled by :func:`term_doc`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import HTMLResponse
from pyoxigraph import Triple
from starlette.concurrency import run_in_threadpool

from ...core.formats import HTML, negotiate
from ...publishing.ontology_docs import OntologyDocs, TermDoc, page_number
from .. import html
from ..deps import ReaderDep
from ..rdf_response import context_iri, rdf_response

router = APIRouter(tags=["documentation"])

OFFERED = [HTML, *(media for media, _ in html.FORMATS)]
PageParameter = Annotated[str | None, Query(description="The page of the listing named (1 is the first)")]


def docs(request: Request) -> OntologyDocs:
    """The documentation reads over the app's graphs and catalog."""
    return OntologyDocs(request.app.state.graphs, request.app.state.catalog)


DocsDep = Annotated[OntologyDocs, Depends(docs)]


async def term_doc(request: Request, iri: str) -> TermDoc:
    """What a term page shows beyond the term's statements; ``?via={predicate}&page={n}`` pages its incoming links."""
    page = page_number(request.query_params.get("page"))
    return await run_in_threadpool(docs(request).term, iri, request.query_params.get("via"), page)


@router.get(
    "/doc/{kind}/{identifier}",
    response_class=HTMLResponse,
    summary="The documentation index of an ontology, DSO or knowledge graph",
)
async def index(
    kind: str,
    identifier: str,
    request: Request,
    reader: DocsDep,
    _: ReaderDep,
    listing: Annotated[str | None, Query(alias="list", description="classes, properties or individuals")] = None,
    page: PageParameter = None,
) -> HTMLResponse:
    negotiate(
        request.headers.get("accept"), [HTML]
    )  # a page only (406 otherwise): its RDF is the graph, linked from it
    found = await run_in_threadpool(reader.index, kind, identifier, listing, page_number(page))
    publisher = request.app.state.publisher
    return HTMLResponse(html.index_page(found, publisher.local_href, f"/graphs/{kind}/{identifier}"))


async def _negotiated(request: Request, triples_of: Callable[[], list[Triple]], page_of: Callable[[], str]) -> Response:
    """The page ``page_of`` makes for a browser, else the triples ``triples_of`` reads in the negotiated RDF syntax."""
    wanted = negotiate(request.headers.get("accept"), OFFERED)
    if wanted == HTML:
        return HTMLResponse(await run_in_threadpool(page_of), headers={"Vary": "Accept"})
    triples = await run_in_threadpool(triples_of)
    return rdf_response(triples, wanted, context=context_iri(request.app.state.settings.base_url))


@router.get("/.well-known/void", summary="The VoID description: the dataset, its SPARQL endpoint, a subset per graph")
async def void(request: Request, reader: DocsDep, _: ReaderDep, page: PageParameter = None) -> Response:
    number = page_number(page)
    base = request.app.state.settings.base_url

    def described() -> str:
        entries = request.app.state.graphs.catalog()
        summary = {
            "dataset": reader.dataset_iri(),
            "endpoint": base + "sparql",
            "triples": sum(e.triples for e in entries),
        }
        return html.catalog_page(
            entries,
            base,
            page=number,
            path="/.well-known/void",
            heading="VoID description",
            void=summary,
            intro="The deployment as one void:Dataset whose subsets are its named graphs.",
        )

    return await _negotiated(request, reader.void, described)


@router.get("/dcat", summary="The DCAT catalog of every named graph")
async def dcat(request: Request, reader: DocsDep, _: ReaderDep, page: PageParameter = None) -> Response:
    number = page_number(page)
    base = request.app.state.settings.base_url

    def listed() -> str:
        return html.catalog_page(
            request.app.state.graphs.catalog(),
            base,
            page=number,
            path="/dcat",
            heading="DCAT catalog",
            intro="Every graph as a dcat:Dataset of the deployment's dcat:Catalog, with its provenance.",
        )

    return await _negotiated(request, reader.dcat, listed)


@router.get("/query", response_class=HTMLResponse, summary="The query page: an editor, examples and a results table")
async def query_page(_: ReaderDep) -> HTMLResponse:
    return HTMLResponse(html.query_page())
