"""``/rdf-graph-store``: the read part of the SPARQL 1.1 Graph Store HTTP Protocol (indirect graph identification).

``GET`` and ``HEAD`` with ``?graph=IRI`` (a catalogued graph, or the catalog graph itself; 404 otherwise) or
``?default`` (the default graph ``/sparql`` reads when a request gives no dataset: the union of the catalogued
graphs), https://www.w3.org/TR/sparql11-http-rdf-update/#http-get. Writes are 405: graphs are written through
``/graphs``, where roles and checks apply. Reads need what ``/sparql`` needs.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pyoxigraph import NamedNode
from starlette.concurrency import run_in_threadpool

from ...core.catalog import Catalog
from ...core.errors import BadRequest, NotFound
from ...core.formats import GRAPH_FORMATS, RDF_ALIASES, RDF_FORMATS, negotiate
from ...core.plugins import prefixes
from ...core.store import Store
from ..deps import CatalogDep, ReaderDep, StoreDep
from ..guarded import guarded
from ..methods import allow_only

PATH = "/rdf-graph-store"
DEFAULT_GRAPH = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
"""The default graph as ``/sparql`` reads it with no dataset (the union, as its service description says)."""

router = APIRouter(tags=["sparql"])


def _graph(request: Request) -> NamedNode | None:
    """The graph the request names, ``None`` for the default graph; 400 for both, neither, or two graphs."""
    graphs, default = request.query_params.getlist("graph"), "default" in request.query_params
    if default == bool(graphs) or len(graphs) > 1:
        raise BadRequest("name exactly one graph: ?graph=IRI or ?default (SPARQL 1.1 Graph Store Protocol §4.2)")
    if default:
        return None
    try:
        return NamedNode(graphs[0])
    except ValueError as error:
        raise BadRequest(f"graph {graphs[0]!r} is not an absolute IRI: {error}") from None


def _read(store: Store, catalog: Catalog, graph: NamedNode, media: str) -> bytes:
    if graph != catalog.graph and catalog.entry(graph) is None:
        raise NotFound(f"no graph <{graph.value}>: GET /graphs lists the graphs")
    return store.export_graph(graph, RDF_FORMATS[media], prefixes())


_PARAMETERS = {
    "parameters": [  # read by _graph itself; stated here for the OpenAPI document (docs/api.md)
        {
            "name": "graph",
            "in": "query",
            "schema": {"type": "string", "format": "iri"},
            "description": "The graph's IRI.",
        },
        {
            "name": "default",
            "in": "query",
            "allowEmptyValue": True,
            "schema": {"type": "string"},
            "description": "Present for the default graph (its value, if any, is not read).",
        },
    ]
}


@router.api_route(
    PATH,
    methods=["GET", "HEAD"],
    openapi_extra=_PARAMETERS,
    summary="A graph (?graph=IRI) or the default graph (?default), as RDF",
)
async def get_graph(request: Request, store: StoreDep, catalog: CatalogDep, credential: ReaderDep) -> Response:
    graph = _graph(request)
    media = negotiate(request.headers.get("accept"), GRAPH_FORMATS, aliases=RDF_ALIASES)
    if graph is None:  # the union of every graph: a client's query like /sparql's, under the same limits
        answer = await guarded(
            request, credential, lambda guarded_store: guarded_store.answer(DEFAULT_GRAPH, media, union=True)
        )
        body = answer.body
    else:
        body = await run_in_threadpool(_read, store, catalog, graph, media)
    return Response(body, media_type=media, headers={"Vary": "Accept"})


allow_only(router, PATH, ("GET", "HEAD"))
