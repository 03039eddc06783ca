"""``/evaluations/{id}/record``: the whole evaluation record as one dataset (TriG or N-Quads).

The published queries (``queries/*.rq``) run over this download with any SPARQL 1.1 engine, so anyone
can recompute what the service reports.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pyoxigraph import serialize
from starlette.concurrency import run_in_threadpool

from ...core.catalog import GraphKind
from ...core.formats import RDF_FORMATS, negotiate
from ...publishing.export import record_quads
from ..deps import CatalogDep, GraphsDep, ReaderDep, StoreDep

router = APIRouter(tags=["evaluations"])

DATASET_FORMATS = ["application/trig", "application/n-quads"]


@router.get(
    "/evaluations/{evaluation_id}/record",
    summary="The evaluation's whole record (head graph, every appended batch, their catalog entries) as TriG or N-Quads",
    responses={200: {"content": {media: {} for media in DATASET_FORMATS}}, 404: {}, 406: {}},
)
async def get_record(
    evaluation_id: str, request: Request, graphs: GraphsDep, store: StoreDep, catalog: CatalogDep, _: ReaderDep
) -> Response:
    wanted = negotiate(request.headers.get("accept"), DATASET_FORMATS)
    record = graphs.member(GraphKind.EVALUATION, evaluation_id).iri
    quads = await run_in_threadpool(record_quads, store, catalog, record)
    body = serialize(quads, format=RDF_FORMATS[wanted])
    return Response(body, media_type=wanted, headers={"Vary": "Accept"})
