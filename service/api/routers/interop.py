"""``/evaluations/{id}/record/caie``: the evaluation record in caie-spec's layout, for caie-spec's own shapes.

What the record holds is mapped onto caie-spec's classes; what caie-spec's shapes require and the record lacks is
added as declarations, each marked (``service.publishing.caie_export``, docs/interop.md).
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pyoxigraph import serialize
from starlette.concurrency import run_in_threadpool

from ...core.catalog import GraphKind
from ...core.formats import RDF_FORMATS, negotiate
from ...publishing.caie_export import caie_record
from ...publishing.export import record_quads
from ..deps import CatalogDep, GraphsDep, ReaderDep, StoreDep

router = APIRouter(tags=["evaluations"])

GRAPH_FORMATS = ["text/turtle", "application/n-triples", "application/ld+json", "application/rdf+xml"]
PREFIXES = {
    "epo": "https://w3id.org/og-caie/epo#",
    "ogc": "https://w3id.org/og-caie/",
    "prov": "http://www.w3.org/ns/prov#",
    "earl": "http://www.w3.org/ns/earl#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}
"""caie-spec's own prefixes: its EPO is ``epo:`` in its files."""


@router.get(
    "/evaluations/{evaluation_id}/record/caie",
    summary="The evaluation record in caie-spec's layout (one graph), with the declarations the export adds marked",
    responses={200: {"content": {media: {} for media in GRAPH_FORMATS}}, 404: {}, 406: {}},
)
async def get_caie_record(
    evaluation_id: str, request: Request, graphs: GraphsDep, store: StoreDep, catalog: CatalogDep, _: ReaderDep
) -> Response:
    wanted = negotiate(request.headers.get("accept"), GRAPH_FORMATS)
    record = graphs.member(GraphKind.EVALUATION, evaluation_id).iri
    quads = await run_in_threadpool(record_quads, store, catalog, record)
    triples = await run_in_threadpool(caie_record, quads, record)
    prefixes = PREFIXES if wanted == "text/turtle" else None
    body = serialize(triples, format=RDF_FORMATS[wanted], prefixes=prefixes)
    return Response(body, media_type=wanted, headers={"Vary": "Accept"})
