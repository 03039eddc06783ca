"""The domain expert's workspace pages (issue 24 §3, docs/workspace.md "Domain expert"): the envelope with its
assessments and sign-off, the derived scenarios with their exclusions, and the plans with their approval. The
criteria and the evidence for attesting them are :mod:`.workspace_expert_criteria`.

Every form posts to a route here that checks the session's CSRF token (``FormWriter``), reads its fields with the
REST route's own request body, and calls the REST route's domain function with the person's credential, so every
rule and role check applies as it does over REST. Success redirects back (303) with a confirmation; a refusal
re-renders the page with the message at the form, under the refusal's status. A form is shown only to a person
whose roles the domain would let act (:func:`.workspace_frame.may`); it never decides alone. That frame (a page
rendered for its reader, a form read and acted on) is :mod:`.workspace_frame`, which the criteria pages share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel

from ...core.graphs import GraphService
from ...core.people import Person
from ...envelope import approvals
from ...envelope.inputs import recorded_pins
from ...envelope.model import ApprovalRecord
from ...envelope.unread import Unread, sign_off_reporting_unread
from ...plan import approval as plan_approval
from ...plan.records import exclude_scenario, list_plans, plan_size, plan_view, probes_numbered
from ...scenarios.model import Page, ScenarioStatus
from ...scenarios.records import blocking_summary, list_scenarios
from ...workspace.envelope_review import envelope_review
from ...workspace.plans import recorded_approval
from ..deps import GraphsDep, ReaderDep, signer
from ..html import distinct_names
from ..models import AppropriatenessBody, RelevanceBody, SignOffBody
from ..models_runs import ExclusionBody, PlanApprovalBody
from ..sessions import FormWriter, PagePerson
from .workspace_frame import Build, Frame, PageNumber, Refusal, act, writer_frame

router = APIRouter(prefix="/evaluations/{evaluation_id}/workspace", include_in_schema=False)

SCENARIOS_PER_PAGE = 25
PROBES_PER_PAGE = 20
NOTE = {"rationale": "note"}


# ------------------------------------------------------------------------------------------------------ envelope


def envelope_page(at: Frame, done: str | None = None, warnings: Sequence[str] = ()) -> Build:
    """The envelope page; ``warnings``: what the sign-off just made answered besides (the REST route's)."""

    async def build(refusal: Refusal | None, status: int) -> HTMLResponse:
        return await at.render(
            "envelope",
            "workspace/expert_envelope.html",
            "Envelope",
            lambda: {"review": envelope_review(at.graphs, at.evaluation_id), "warnings": warnings},
            refusal,
            status,
            done,
        )

    return build


@router.get("/envelope", response_class=HTMLResponse)
async def get_envelope(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
    person: PagePerson,
    done: str | None = None,
) -> HTMLResponse:
    return await envelope_page(Frame(request, graphs, evaluation_id, reader, person), done)(None, 200)


async def _envelope_act(
    request: Request,
    graphs: GraphService,
    evaluation_id: str,
    person: Person,
    form: str,
    body: type[BaseModel],
    labels: Mapping[str, str],
    action: Callable[[Any], object],
    told: Callable[[Any], Build | None] | None = None,
) -> Response:
    at = writer_frame(request, graphs, evaluation_id, person)
    return await act(request, form, body, labels, action, envelope_page(at), f"{at.path}/envelope", told=told)


@router.post("/envelope/dso-appropriateness")
async def post_dso_appropriateness(
    evaluation_id: str, request: Request, graphs: GraphsDep, person: FormWriter
) -> Response:
    return await _envelope_act(
        request,
        graphs,
        evaluation_id,
        person,
        "dso",
        AppropriatenessBody,
        {"appropriate": "appropriate", **NOTE},
        lambda body: approvals.assess_dso_appropriateness(
            graphs, evaluation_id, body.appropriate, body.rationale, person.credential, signer(request)
        ),
    )


@router.post("/envelope/relevance/{criterion_id}")
async def post_relevance(
    evaluation_id: str, criterion_id: str, request: Request, graphs: GraphsDep, person: FormWriter
) -> Response:
    return await _envelope_act(
        request,
        graphs,
        evaluation_id,
        person,
        f"relevance-{criterion_id}",
        RelevanceBody,
        {"relevant": "relevant", **NOTE},
        lambda body: approvals.assess_relevance(
            graphs, evaluation_id, criterion_id, body.relevant, body.rationale, person.credential, signer(request)
        ),
    )


@router.post("/envelope/appropriateness")
async def post_appropriateness(evaluation_id: str, request: Request, graphs: GraphsDep, person: FormWriter) -> Response:
    return await _envelope_act(
        request,
        graphs,
        evaluation_id,
        person,
        "appropriateness",
        AppropriatenessBody,
        {"appropriate": "appropriate", **NOTE},
        lambda body: approvals.assess_appropriateness(
            graphs, evaluation_id, body.appropriate, body.rationale, person.credential, signer(request)
        ),
    )


@router.post("/envelope/sign-off")
async def post_sign_off(evaluation_id: str, request: Request, graphs: GraphsDep, person: FormWriter) -> Response:
    """The sign-off as the REST route makes it, graphs nothing reads included: with any, the page answers at once
    with each warning (they are not recorded, so a redirected page could not show them); else the redirect."""

    def told(signed: tuple[ApprovalRecord, list[Unread]]) -> Build | None:
        _, unread = signed
        at = writer_frame(request, graphs, evaluation_id, person)
        return envelope_page(at, "sign-off", [graph.describe() for graph in unread]) if unread else None

    return await _envelope_act(
        request,
        graphs,
        evaluation_id,
        person,
        "sign-off",
        SignOffBody,
        {"comment": "comment"},
        lambda body: sign_off_reporting_unread(graphs, evaluation_id, person.credential, body.comment, signer(request)),
        told,
    )


# ----------------------------------------------------------------------------------------------------- scenarios


def _listing(status: str | None, rule: str | None, page: int = 1) -> dict[str, str | int]:
    """A scenarios listing's query: the filters given, and the page past the first."""
    return {k: v for k, v in (("status", status), ("rule", rule), ("page", page)) if v and v != 1}


def scenarios_page(at: Frame, status: str | None, rule: str | None, number: int, done: str | None = None) -> Build:
    def read() -> dict[str, object]:
        found = list_scenarios(
            at.graphs,
            at.evaluation_id,
            status=status,
            rule=rule,
            limit=SCENARIOS_PER_PAGE,
            offset=(number - 1) * SCENARIOS_PER_PAGE,
        )
        rules = blocking_summary(at.graphs, at.evaluation_id)
        # each rule by its label, told apart where two share it (a DSO's blocking class and the shape restating it)
        return {
            "scenarios": found,
            "rules": rules,
            "names": distinct_names({r.rule: r.label for r in rules}),
            "status": status,
            "rule": rule,
            "number": number,
            "statuses": [s.value for s in ScenarioStatus],
            "page_href": lambda _, n: "?" + urlencode(_listing(status, rule, n)),
            "filter_href": lambda **chosen: "?" + urlencode(_listing(**{"status": status, "rule": rule, **chosen})),
        }

    async def build(refusal: Refusal | None, code: int) -> HTMLResponse:
        return await at.render("scenarios", "workspace/expert_scenarios.html", "Scenarios", read, refusal, code, done)

    return build


@router.get("/scenarios", response_class=HTMLResponse)
async def get_scenarios(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
    person: PagePerson,
    status: str | None = None,
    rule: str | None = None,
    page: PageNumber = 1,
    done: str | None = None,
) -> HTMLResponse:
    return await scenarios_page(
        Frame(request, graphs, evaluation_id, reader, person), status or None, rule or None, page, done
    )(None, 200)


@router.post("/scenarios/{scenario}/exclusion")
async def post_exclusion(
    evaluation_id: str,
    scenario: str,
    request: Request,
    graphs: GraphsDep,
    person: FormWriter,
    status: Annotated[str | None, Form()] = None,
    rule: Annotated[str | None, Form()] = None,
    page: Annotated[int, Form(ge=1, le=1_000_000)] = 1,
) -> Response:
    """Back to the listing the form was on: its filters are sent with it (the domain checks them when listing)."""
    at = writer_frame(request, graphs, evaluation_id, person)
    back = f"{at.path}/scenarios?{urlencode(_listing(status or None, rule or None, page))}".rstrip("?")
    return await act(
        request,
        f"exclude-{scenario}",
        ExclusionBody,
        {"reason": "reason"},
        lambda body: exclude_scenario(graphs, evaluation_id, scenario, body.reason, person.credential),
        scenarios_page(at, status or None, rule or None, page),
        back,
    )


# --------------------------------------------------------------------------------------------------------- plans


@router.get("/plans", response_class=HTMLResponse)
async def get_plans(
    evaluation_id: str, request: Request, graphs: GraphsDep, reader: ReaderDep, person: PagePerson
) -> HTMLResponse:
    at = Frame(request, graphs, evaluation_id, reader, person)
    return await at.render(
        "plans",
        "workspace/expert_plans.html",
        "Plans",
        lambda: {"plans": list_plans(graphs, evaluation_id, recorded_approval(graphs, evaluation_id))},
    )


def plan_page(at: Frame, number: int, probe_page: int, done: str | None = None) -> Build:
    def read() -> dict[str, object]:
        view = plan_view(at.graphs, at.evaluation_id, number, recorded_approval(at.graphs, at.evaluation_id))
        size = plan_size(at.graphs, at.evaluation_id, number)
        offset = (probe_page - 1) * PROBES_PER_PAGE
        shown = probes_numbered(
            at.graphs, at.evaluation_id, number, range(offset + 1, min(offset + PROBES_PER_PAGE, size) + 1)
        )
        return {
            "plan": view,
            "probes": Page(shown, size, PROBES_PER_PAGE, offset),
            "pins": recorded_pins(at.graphs, view.iri),
            "page_href": lambda _, n: "?" + urlencode({"page": n}),
        }

    async def build(refusal: Refusal | None, status: int) -> HTMLResponse:
        return await at.render("plans", "workspace/expert_plan.html", f"Plan {number}", read, refusal, status, done)

    return build


@router.get("/plans/{number}", response_class=HTMLResponse)
async def get_plan(
    evaluation_id: str,
    number: int,
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
    person: PagePerson,
    page: PageNumber = 1,
    done: str | None = None,
) -> HTMLResponse:
    return await plan_page(Frame(request, graphs, evaluation_id, reader, person), number, page, done)(None, 200)


@router.post("/plans/{number}/approval")
async def post_plan_approval(
    evaluation_id: str, number: int, request: Request, graphs: GraphsDep, person: FormWriter
) -> Response:
    at = writer_frame(request, graphs, evaluation_id, person)
    return await act(
        request,
        "approval",
        PlanApprovalBody,
        {"comment": "comment", "digest": "the plan's digest"},
        lambda body: plan_approval.approve_plan(
            graphs, evaluation_id, number, person.credential, body.comment, body.digest, signer(request)
        ),
        plan_page(at, number, 1),
        f"{at.path}/plans/{number}",
    )
