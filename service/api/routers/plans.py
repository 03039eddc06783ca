"""Step 3 over REST: test plans (derive, allocate, sample), their approval, and the review of
scenarios and probes, paged and filtered, with an expert's exclusion of a scenario."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.concurrency import run_in_threadpool

from ...core.auth import require
from ...core.config import Credential
from ...core.errors import BadRequest
from ...core.formats import HTML, JSON, negotiate
from ...core.iris import named_node, require_iri_text
from ...plan import approval as plan_approval
from ...plan.allocation import Annotator, Strategy
from ...plan.model import PlanRequest
from ...plan.records import exclude_scenario, list_plans, list_probes, plan_view
from ...plan.testplan import create_plan
from ...scenarios.model import RuleBlocking
from ...scenarios.records import MAX_OFFSET, blocking_summary, frame_blocking, list_scenarios
from ..deps import CancellationDep, GraphsDep, ReaderDep, SettingsDep, SignerDep, credential
from ..html import render
from ..models_runs import ExclusionBody, PlanApprovalBody, PlanBody
from ..shapes import (
    approval_json,
    exclusion_json,
    page_json,
    plan_json,
    probe_json,
    rule_blocking_json,
    rule_count_json,
    scenario_json,
)
from .resources import linked_data, wants_json

router = APIRouter(prefix="/evaluations/{evaluation_id}", tags=["plans and scenarios"])

CredentialDep = Annotated[Credential | None, Depends(credential)]
Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
Facets = Annotated[list[str], Query(description="name=IRI, e.g. hasVaccinationStatus=https://…/Unvaccinated")]
VARY = {"Vary": "Accept"}  # a plan's and the scenarios graph's IRIs negotiate: JSON here, HTML and RDF from resources


@router.post(
    "/plans",
    status_code=201,
    summary="Derive scenarios and make a test plan (evaluation operator); stops if the client goes away",
)
async def make_plan(
    evaluation_id: str,
    body: PlanBody,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: CredentialDep,
    cancellation: CancellationDep,
) -> JSONResponse:
    request = PlanRequest(
        strategy=Strategy(body.strategy),
        budget=body.budget,
        seed=body.seed,
        review_sample=body.reviewSample,
        annotators=tuple(Annotator(a.agent, frozenset(a.expertise), a.capacity) for a in body.annotators),
    )
    summary = await run_in_threadpool(
        create_plan, graphs, evaluation_id, request, require(agent), cancellation, max_budget=settings.max_plan_budget
    )
    view = plan_json(await run_in_threadpool(plan_view, graphs, evaluation_id, summary.number))
    location = f"/evaluations/{evaluation_id}/plans/{summary.number}"
    return JSONResponse(view, status_code=201, headers={"Location": location})


@router.get("/plans", summary="Every plan of the evaluation, oldest first")
async def get_plans(evaluation_id: str, graphs: GraphsDep, _: ReaderDep) -> JSONResponse:
    plans = await run_in_threadpool(list_plans, graphs, evaluation_id)
    return JSONResponse({"plans": [plan_json(view) for view in plans]})


@router.get("/plans/{number}", summary="A plan: strategy, budget, seed, frame sizes, allocation, approval")
async def get_plan(evaluation_id: str, number: int, request: Request, graphs: GraphsDep, _: ReaderDep) -> Response:
    if not wants_json(request):
        return await linked_data(request)
    return JSONResponse(plan_json(await run_in_threadpool(plan_view, graphs, evaluation_id, number)), headers=VARY)


@router.get(
    "/plans/{number}/blocking",
    summary="How many candidates of the plan's frame each consistency rule blocks, "
    "exactly, and its share of the blocked ones",
)
async def get_plan_blocking(
    evaluation_id: str, number: int, request: Request, graphs: GraphsDep, _: ReaderDep
) -> Response:
    def read() -> list[RuleBlocking]:
        return frame_blocking(graphs, plan_view(graphs, evaluation_id, number).iri)

    found = await run_in_threadpool(read)
    if negotiate(request.headers.get("accept"), [JSON, HTML]) != HTML:  # JSON unless a browser asks for the page
        return JSONResponse({"rules": [rule_blocking_json(rule) for rule in found]}, headers=VARY)
    plan_path = f"/evaluations/{evaluation_id}/plans/{number}"
    return HTMLResponse(
        render(
            "blocking.html",
            title=f"Blocked scenarios of plan {number}",
            link=request.app.state.publisher.local_href,
            blocking=found,
            number=number,
            plan_path=plan_path,
            scenarios_path=f"/evaluations/{evaluation_id}/scenarios",
        ),
        headers=VARY,
    )


@router.post(
    "/plans/{number}/approval",
    status_code=201,
    summary="Approve a plan as stored now (domain expert; envelope signed off; 409 on a stale digest)",
)
async def approve_plan(
    evaluation_id: str, number: int, body: PlanApprovalBody, graphs: GraphsDep, agent: CredentialDep, signer: SignerDep
) -> JSONResponse:
    record = await run_in_threadpool(
        plan_approval.approve_plan, graphs, evaluation_id, number, require(agent), body.comment, body.digest, signer
    )
    return JSONResponse(approval_json(record), status_code=201)


@router.get("/plans/{number}/probes", summary="A plan's probes, paged; filter by criterion IRI or id")
async def get_probes(
    evaluation_id: str,
    number: int,
    graphs: GraphsDep,
    _: ReaderDep,
    criterion: str | None = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> JSONResponse:
    if criterion is not None:
        require_iri_text(criterion, "the criterion")
    page = await run_in_threadpool(
        lambda: list_probes(graphs, evaluation_id, number, criterion=criterion, limit=limit, offset=offset)
    )
    return JSONResponse(page_json(page, probe_json))


@router.get(
    "/scenarios",
    summary="Derived scenarios, eligible or blocked (with the rule and message), paged and filtered",
    description="Each item's `facets` maps a facet name (the property's local name) to the sorted list of "
    "all its values, a list even when there is one (`personState` has several).",
)
async def get_scenarios(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    _: ReaderDep,
    status: Annotated[str | None, Query(description="eligible or blocked")] = None,
    rule: Annotated[str | None, Query(description="IRI of the rule that blocked them")] = None,
    facet: Facets = [],  # noqa: B006  # only read, never changed
    limit: Limit = 50,
    offset: Offset = 0,
) -> Response:
    if not wants_json(request):
        return await linked_data(request)
    facets = {}
    for item in facet:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise BadRequest(f"a facet filter is name=IRI, not {item!r}")
        facets[name] = named_node(value, f"the value of facet {name!r}").value
    if rule is not None:
        named_node(rule, "the rule")
    page = await run_in_threadpool(
        lambda: list_scenarios(
            graphs, evaluation_id, status=status, rule=rule, facets=facets, limit=limit, offset=offset
        )
    )
    return JSONResponse(page_json(page, scenario_json), headers=VARY)


@router.get("/scenarios/summary", summary="How many reviewed scenarios each consistency rule blocked")
async def get_blocking_summary(evaluation_id: str, graphs: GraphsDep, _: ReaderDep) -> JSONResponse:
    counts = await run_in_threadpool(blocking_summary, graphs, evaluation_id)
    return JSONResponse({"rules": [rule_count_json(count) for count in counts]})


@router.post(
    "/scenarios/{scenario}/exclusion",
    status_code=201,
    summary="Exclude a scenario from probing, with a reason; the scenario by key, or by index under the pinned inputs",
)
async def post_exclusion(
    evaluation_id: str, scenario: str, body: ExclusionBody, graphs: GraphsDep, agent: CredentialDep
) -> JSONResponse:
    record = await run_in_threadpool(exclude_scenario, graphs, evaluation_id, scenario, body.reason, require(agent))
    return JSONResponse(exclusion_json(record), status_code=201)
