"""Issue 11 §1 over REST: an evaluation's measures (coverage, outcome distribution, pass rates with intervals,
gaps, failures, execution errors, judge reliability), traceability both ways and the drill-down, each as of a
date (``asOf``, ISO 8601 with a time zone) and over one run (``run``, its number) or all (docs/metrics.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from ...core.graphs import GraphService
from ...metrics.records import Scope, evaluation_metrics, failures, gaps, parse_as_of, scope_for
from ...metrics.traces import criterion_iri, drill_down, requirement_iri, trace_failure, trace_requirement
from ..deps import GraphsDep, ReaderDep
from ..guarded import computed
from ..report_shapes import drill_json, failure_json, failure_trace_json, gap_json, metrics_json, trace_link_json
from ..shapes import JSON

router = APIRouter(prefix="/evaluations/{evaluation_id}", tags=["metrics"])

AsOf = Annotated[
    str | None,
    Query(
        alias="asOf", description="count only what is dated no later than this ISO 8601 date-time (with a time zone)"
    ),
]
Run = Annotated[int | None, Query(description="one run's number (default: every run)")]


def _scope(graphs: GraphService, evaluation_id: str, as_of: str | None, run: int | None) -> Scope:
    return scope_for(graphs, evaluation_id, as_of=parse_as_of(as_of), run=run)


@router.get(
    "/metrics",
    summary="Coverage, the outcome distribution (apart from it), per-criterion pass rates with "
    "Wilson intervals (finite-population corrected), gaps, failures, execution errors",
)
async def get_metrics(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
    as_of: AsOf = None,
    run: Run = None,
    level: Annotated[float, Query(gt=0, lt=1, description="the intervals' confidence level")] = 0.95,
) -> JSONResponse:
    found = await computed(
        request,
        reader,
        lambda: evaluation_metrics(graphs, evaluation_id, as_of=parse_as_of(as_of), run=run, level=level),
    )
    return JSONResponse(metrics_json(found))


@router.get("/gaps", summary="The applicable criteria with no current attested outcome")
async def get_gaps(
    evaluation_id: str, request: Request, graphs: GraphsDep, reader: ReaderDep, as_of: AsOf = None, run: Run = None
) -> JSONResponse:
    found = await computed(request, reader, lambda: gaps(graphs, _scope(graphs, evaluation_id, as_of, run)))
    return JSONResponse({"gaps": [gap_json(g) for g in found]})


@router.get("/failures", summary="The criteria whose outcome is failed, with their requirements")
async def get_failures(
    evaluation_id: str, request: Request, graphs: GraphsDep, reader: ReaderDep, as_of: AsOf = None, run: Run = None
) -> JSONResponse:
    found = await computed(request, reader, lambda: failures(graphs, _scope(graphs, evaluation_id, as_of, run)))
    return JSONResponse({"failures": [failure_json(f) for f in found]})


@router.get(
    "/failures/trace",
    summary="Each failed criterion traced back to its requirement, the expert who attested "
    "it and the judges of the failed determinations it aggregates",
)
async def get_failure_trace(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
    as_of: AsOf = None,
    run: Run = None,
    criterion: Annotated[str | None, Query(description="a criterion's identifier")] = None,
) -> JSONResponse:
    def read() -> list[JSON]:
        scope = _scope(graphs, evaluation_id, as_of, run)
        return [failure_trace_json(t) for t in trace_failure(graphs, scope, criterion=criterion_iri(scope, criterion))]

    return JSONResponse({"traces": await computed(request, reader, read)})


@router.get(
    "/trace",
    summary="Requirement -> criterion -> probe -> conversation -> response -> determination -> "
    "attestation, for one requirement or criterion (identifiers) or all",
)
async def get_trace(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
    as_of: AsOf = None,
    run: Run = None,
    requirement: Annotated[str | None, Query(description="a requirement's identifier")] = None,
    criterion: Annotated[str | None, Query(description="a criterion's identifier")] = None,
) -> JSONResponse:
    def read() -> list[JSON]:
        scope = _scope(graphs, evaluation_id, as_of, run)
        return [
            trace_link_json(t)
            for t in trace_requirement(
                graphs,
                scope,
                requirement=requirement_iri(scope, requirement),
                criterion=criterion_iri(scope, criterion),
            )
        ]

    return JSONResponse({"links": await computed(request, reader, read)})


@router.get(
    "/drill-down",
    summary="Summary -> dimension -> category -> criterion with counts at each level; with "
    "?criterion (an identifier), that criterion's cases and their judgments",
)
async def get_drill_down(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
    as_of: AsOf = None,
    run: Run = None,
    criterion: Annotated[str | None, Query(description="a criterion's identifier")] = None,
) -> JSONResponse:
    def read() -> JSON:
        scope = _scope(graphs, evaluation_id, as_of, run)
        iri = criterion_iri(scope, criterion)
        body: JSON = {"summary": drill_json(drill_down(graphs, scope))}
        if iri is not None:
            body["cases"] = [trace_link_json(t) for t in trace_requirement(graphs, scope, criterion=iri)]
        return body

    return JSONResponse(await computed(request, reader, read))
