"""Comparing a report with a reference report over REST: a version comparison (the same target, another version)
or a baseline comparison (against the report designated as the baseline, in this or another evaluation).

``GET /evaluations/{id}/reports/{n}/comparisons/{kind}/{reference evaluation}/{reference number}`` is the
comparison's IRI: JSON for JSON clients, the comparison page for browsers, Turtle, JSON-LD, N-Triples or RDF/XML
by ``Accept``. It is computed from the two reports when asked, never stored; two reports that are not compatible
are a 409 whose ``errors`` name every difference (docs/comparison.md).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from pyoxigraph import NamedNode
from starlette.concurrency import run_in_threadpool

from ...core.formats import HTML, JSON, negotiate
from ...core.graphs import IDENTIFIER_PATTERN, GraphService
from ...reports.compare import CHANGES, Comparison, compare, comparison_triples, side, signed
from ..deps import GraphsDep, ReaderDep
from ..guarded import computed
from ..html import render
from ..rdf_response import context_iri, rdf_response
from ..report_shapes import comparison_json
from .report_pages import FORMAT
from .resources import OFFERED

router = APIRouter(prefix="/evaluations/{evaluation_id}/reports/{number}", tags=["reports"])


def _compare(
    graphs: GraphService, kind: str, evaluation_id: str, number: int, reference_evaluation: str, reference_number: int
) -> Comparison:
    return compare(kind, side(graphs, evaluation_id, number), side(graphs, reference_evaluation, reference_number))


@router.get(
    "/comparisons/{comparison}/{reference_evaluation}/{reference_number}",
    summary="Compare the report with a reference report: a version comparison (the same target, another "
    "version) or a baseline comparison; 409 naming every incompatibility",
)
async def get_comparison(
    evaluation_id: str,
    number: int,
    comparison: Literal["version", "baseline"],
    reference_evaluation: Annotated[str, Path(pattern=IDENTIFIER_PATTERN)],
    reference_number: Annotated[int, Path(ge=1)],
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
) -> Response:
    wanted = negotiate(request.headers.get("accept"), [JSON, *OFFERED])
    found = await computed(
        request,
        reader,
        lambda: _compare(graphs, comparison, evaluation_id, number, reference_evaluation, reference_number),
    )
    settings = request.app.state.settings
    iri = settings.base_url + request.url.path.lstrip("/")
    if wanted == JSON:
        return JSONResponse(comparison_json(iri, found), headers={"Vary": "Accept"})
    if wanted == HTML:
        page = render(
            "comparison.html",
            title=f"Comparison of report {number}",
            link=request.app.state.publisher.local_href,
            path=request.url.path,
            scripts=["alternates.js"],
            comparison=found,
            changes=CHANGES,
            signed=signed,
            **FORMAT,
        )
        return HTMLResponse(page, headers={"Vary": "Accept"})
    return await run_in_threadpool(
        rdf_response, comparison_triples(iri, found), wanted, NamedNode(iri), context_iri(settings.base_url)
    )
