"""Issue 10 §7 over REST: Krippendorff's alpha between the people who determined the same units, and automated
judges' agreement with the attested outcomes, stored as measurements and listed; issue 22: each automated judge's
agreement with people per criterion, and the cases that wait for a person (docs/judgments.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ...core.config import Credential
from ...judgments.agreement import agreement, cases_needing_people, judge_human_agreement
from ...judgments.reliability import record_judge_reliability, stored_judge_reliability
from ..deps import GraphsDep, ReaderDep, credential
from ..guarded import computed
from ..shapes import agreement_json, case_needing_person_json, human_agreement_json, reliability_json

router = APIRouter(prefix="/evaluations/{evaluation_id}", tags=["agreement and judge reliability"])

CredentialDep = Annotated[Credential | None, Depends(credential)]


@router.get(
    "/agreement",
    summary="Krippendorff's alpha (nominal) between the people who determined the same "
    "criterion on the same responses; optionally for one criterion (its IRI)",
)
async def get_agreement(
    evaluation_id: str, request: Request, graphs: GraphsDep, reader: ReaderDep, criterion: str | None = None
) -> JSONResponse:
    found = await computed(request, reader, lambda: agreement(graphs, evaluation_id, criterion))
    return JSONResponse(agreement_json(found))


@router.post(
    "/runs/{number}/judge-reliability",
    status_code=201,
    summary="Store each automated judge's agreement with the run's current attested outcomes, per criterion, "
    "as measurements with their confusion tables (evaluation operator or domain expert)",
)
async def post_judge_reliability(
    evaluation_id: str, number: int, graphs: GraphsDep, agent: CredentialDep
) -> JSONResponse:
    stored = await run_in_threadpool(record_judge_reliability, graphs, evaluation_id, number, agent)
    return JSONResponse({"measurements": [reliability_json(s) for s in stored]}, status_code=201)


@router.get(
    "/judge-reliability", summary="The stored judge reliability measurements; filter by run IRI or criterion IRI"
)
async def get_judge_reliability(
    evaluation_id: str, graphs: GraphsDep, _: ReaderDep, run: str | None = None, criterion: str | None = None
) -> JSONResponse:
    found = await run_in_threadpool(stored_judge_reliability, graphs, evaluation_id, run=run, criterion=criterion)
    return JSONResponse({"measurements": [reliability_json(s) for s in found]})


@router.get(
    "/judge-agreement",
    summary="Each automated judge version's agreement with people per criterion (the "
    "envelope's measure, with n), and whether it may decide the criterion alone",
)
async def get_judge_agreement(
    evaluation_id: str, request: Request, graphs: GraphsDep, reader: ReaderDep, criterion: str | None = None
) -> JSONResponse:
    found = await computed(request, reader, lambda: judge_human_agreement(graphs, evaluation_id, criterion=criterion))
    return JSONResponse({"judges": [human_agreement_json(a) for a in found]})


@router.get(
    "/runs/{number}/cases-needing-people",
    summary="The run's cases of each criterion that no person determined and no judge trusted alone did",
)
async def get_cases_needing_people(
    evaluation_id: str,
    number: int,
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
    criterion: str | None = None,
) -> JSONResponse:
    found = await computed(request, reader, lambda: cases_needing_people(graphs, evaluation_id, number, criterion))
    counts: dict[str, int] = {}
    for case in found:
        counts[case.criterion] = counts.get(case.criterion, 0) + 1
    return JSONResponse(
        {
            "criteria": [{"criterion": c, "cases": n} for c, n in sorted(counts.items())],
            "cases": [case_needing_person_json(case) for case in found],
        }
    )
