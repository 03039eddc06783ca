"""``/graphs``: the catalog, and each named graph by kind and identifier (replace, append, read, delete).

Reads are public; a write needs a role that may write the graph's kind (:mod:`service.core.roles`), and
evaluation graphs are never written here: they change only through the lifecycle operations.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.concurrency import run_in_threadpool

from ...core.catalog import GraphKind
from ...core.config import Credential
from ...core.formats import GRAPH_FORMATS, HTML, JSON, RDF_FORMATS, negotiate, rdf_format_for
from ...core.graph_edits import GraphRef
from ...core.graphs import GraphService, WriteMode
from ...core.plugins import prefixes
from ...core.roles import require_graph_writer
from ...envelope.unread import unread_graphs
from .. import html
from ..body import read_body
from ..body_limits import Body, body
from ..deps import CatalogDep, GraphsDep, ReaderDep, SettingsDep, WriterDep
from ..rdf_response import JSON_LD, compacted, context_iri, rdf_response
from ..shapes import catalog_entry_json
from .resources import linked_data

router = APIRouter(prefix="/graphs", tags=["graphs"])

TitleQuery = Annotated[
    str | None, Query(max_length=500, description="Title for the catalog; defaults to the graph's own.")
]
READ_BY_RULE = (GraphKind.SHAPES, GraphKind.JUDGES)
"""The kinds a reader takes up only when named or declared as it expects (docs/new-domain.md "Graphs nothing reads")."""
DsoQuery = Annotated[str | None, Query(description="Identifier of the DSO graph a knowledge graph is checked against.")]


@router.get("", summary="The catalog of named graphs (DCAT + PROV)")
async def list_graphs(request: Request, catalog: CatalogDep, graphs: GraphsDep, _: ReaderDep) -> Response:
    wanted = negotiate(
        request.headers.get("accept"), [JSON, HTML, "application/ld+json", "text/turtle", *GRAPH_FORMATS[2:]]
    )
    if wanted == JSON:
        entries = await run_in_threadpool(graphs.catalog)
        return JSONResponse(
            {"catalog": catalog.graph.value, "graphs": [catalog_entry_json(e) for e in entries]},
            headers={"Vary": "Accept"},
        )
    if wanted == HTML:
        entries = await run_in_threadpool(graphs.catalog)
        return HTMLResponse(html.catalog_page(entries, request.app.state.settings.base_url), headers={"Vary": "Accept"})
    triples = await run_in_threadpool(catalog.triples)
    return await run_in_threadpool(
        rdf_response, triples, wanted, catalog.graph, context_iri(request.app.state.settings.base_url)
    )


@router.get("/{kind}/{identifier}", summary="One named graph, in the RDF syntax the client accepts")
async def get_graph(kind: str, identifier: str, request: Request, graphs: GraphsDep, _: ReaderDep) -> Response:
    ref = graphs.ref(kind, identifier)
    wanted = negotiate(request.headers.get("accept"), [*GRAPH_FORMATS, HTML])
    if wanted == HTML:  # this path is the graph's IRI: a page about it, as for every published IRI
        return await linked_data(request)
    body = await run_in_threadpool(graphs.read, ref, RDF_FORMATS[wanted], prefixes())
    if wanted == JSON_LD:
        body = await run_in_threadpool(compacted, body, context_iri(request.app.state.settings.base_url))
    return Response(body, media_type=wanted, headers={"Vary": "Accept"})


def _writable(graphs: GraphService, kind: str, identifier: str, agent: Credential) -> GraphRef:
    """The graph, once the caller's roles allow writing its kind (checked before the body is read)."""
    ref = graphs.ref(kind, identifier)
    require_graph_writer(agent, ref.kind, ref.identifier)
    return ref


async def _write(
    kind: str,
    identifier: str,
    request: Request,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: WriterDep,
    mode: WriteMode,
    title: str | None,
    dso: str | None,
) -> JSONResponse:
    ref = _writable(graphs, kind, identifier, agent)
    rdf_format = rdf_format_for(request.headers.get("content-type"))
    data = await read_body(request, settings, Body.FILE)
    result = await run_in_threadpool(graphs.write, ref, data, rdf_format, agent, mode=mode, title=title, dso=dso)
    # a shapes or judges graph no derivation, KG load or judging reads is said so now, not found out from a plan
    unread = await run_in_threadpool(unread_graphs, graphs, [result.entry.graph]) if ref.kind in READ_BY_RULE else []
    location = f"/graphs/{kind}/{identifier}"
    return JSONResponse(
        {**catalog_entry_json(result.entry), "warnings": [graph.describe() for graph in unread]},
        status_code=201 if result.created else 200,
        headers={"Location": location},
    )


@router.put(
    "/{kind}/{identifier}", summary="Replace a named graph (created if new); never an evaluation graph", status_code=201
)
@body(Body.FILE)
async def put_graph(
    kind: str,
    identifier: str,
    request: Request,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: WriterDep,
    title: TitleQuery = None,
    dso: DsoQuery = None,
) -> JSONResponse:
    return await _write(kind, identifier, request, graphs, settings, agent, WriteMode.REPLACE, title, dso)


@router.post(
    "/{kind}/{identifier}",
    summary="Append to a named graph (created if new); never an evaluation graph",
    status_code=201,
    responses={200: {"description": "Appended to the graph that was there", "content": {"application/json": {}}}},
)
@body(Body.FILE)
async def post_graph(
    kind: str,
    identifier: str,
    request: Request,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: WriterDep,
    title: TitleQuery = None,
    dso: DsoQuery = None,
) -> JSONResponse:
    return await _write(kind, identifier, request, graphs, settings, agent, WriteMode.APPEND, title, dso)


@router.delete(
    "/{kind}/{identifier}",
    summary="Delete a named graph and its catalog record; never an evaluation graph",
    status_code=204,
)
async def delete_graph(kind: str, identifier: str, graphs: GraphsDep, agent: WriterDep) -> Response:
    ref = _writable(graphs, kind, identifier, agent)
    await run_in_threadpool(graphs.delete, ref)
    return Response(status_code=204)
