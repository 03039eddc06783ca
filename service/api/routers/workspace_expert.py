"""The domain expert's workspace pages (issue 24 §3, docs/workspace.md "Domain expert"): the envelope with its
assessments and sign-off, the derived scenarios with their exclusions, and the plans with their approval. The
criteria and the evidence for attesting them are :mod:`.workspace_expert_criteria`.

Every form posts to a route here that checks the session's CSRF token (``FormWriter``), reads its fields with the
REST route's own request body, and calls the REST route's domain function with the person's credential, so every
rule and role check applies as it does over REST. Success redirects back (303) with a confirmation; a refusal
re-renders the page with the message at the form, under the refusal's status. A form is shown only to a person
whose roles the domain would let act (:func:`may`); it never decides alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from ...core.config import Credential
from ...core.errors import ServiceError, Unauthenticated
from ...core.graphs import GraphService
from ...core.people import Person
from ...core.rdf import local_name
from ...core.roles import ADMIN
from ...envelope import approvals, get_evaluation
from ...envelope.inputs import recorded_pins
from ...plan import approval as plan_approval
from ...plan.openings import normal_tag
from ...plan.records import exclude_scenario, list_plans, plan_size, plan_view, probes_numbered
from ...scenarios.model import Page, ScenarioStatus
from ...scenarios.records import blocking_summary, list_scenarios
from ...workspace.envelope_review import envelope_review
from ...workspace.plans import recorded_approval
from ..deps import GraphsDep, ReaderDep
from ..form_refusals import field_errors
from ..guarded import computed
from ..html import distinct_names, render
from ..models import AppropriatenessBody, RelevanceBody, SignOffBody
from ..models_runs import ExclusionBody, PlanApprovalBody
from ..problems import status_of
from ..sessions import FormWriter, PagePerson

router = APIRouter(prefix="/evaluations/{evaluation_id}/workspace", include_in_schema=False)

PageNumber = Annotated[int, Query(ge=1, le=1_000_000)]
SCENARIOS_PER_PAGE = 25
PROBES_PER_PAGE = 20
WORDS = {
    "passed": "pass",
    "failed": "fail",
    "cantTell": "cannot tell",
    "inapplicable": "not applicable",
    "untested": "untested",
}
NOTE = {"rationale": "note"}


def may(person: Person | None, *roles: str) -> bool:
    """Whether the domain would let ``person`` act as one of ``roles`` (an admin may act as any)."""
    return person is not None and bool(person.roles & {*roles, ADMIN})


def word(outcome: str | None) -> str:
    """An outcome (an EARL IRI or its name) as the pages say it."""
    name = (outcome or "").rsplit("#", 1)[-1]
    return WORDS.get(name, name or "—")


def when(at: str | datetime) -> str:
    """A recorded time, to the minute, in UTC."""
    moment = at if isinstance(at, datetime) else datetime.fromisoformat(at)
    return (moment.astimezone(UTC) if moment.tzinfo else moment).strftime("%Y-%m-%d %H:%M UTC")


def lang(language: str) -> str:
    """A language (a lexvo IRI, an ISO 639 code or a BCP 47 tag) as the BCP 47 tag a ``lang`` attribute takes."""
    return normal_tag(local_name(language))


@dataclass(frozen=True)
class Refusal:
    """What a form sent and why it was refused: shown at the form it came from, its fields kept."""

    form: str
    message: str
    values: Mapping[str, str] = field(default_factory=dict)


Build = Callable[[Refusal | None, int], Awaitable[HTMLResponse]]
"""A page: as it is (``None``, 200), or with a refused form's message under the refusal's status."""


@dataclass(frozen=True)
class Frame:
    """One evaluation's workspace page being answered: who reads it, and who is signed in (``None``: no one)."""

    request: Request
    graphs: GraphService
    evaluation_id: str
    reader: Credential | None
    person: Person | None

    @property
    def path(self) -> str:
        return f"/evaluations/{self.evaluation_id}/workspace"

    async def render(
        self,
        current: str,
        template: str,
        title: str,
        read: Callable[[], Mapping[str, object]],
        refusal: Refusal | None = None,
        status: int = 200,
        done: str | None = None,
    ) -> HTMLResponse:
        """The page: ``read()`` (run as one of the reader's queries) gives the template's context."""

        def work() -> dict[str, object]:
            return {"evaluation_title": get_evaluation(self.graphs, self.evaluation_id).scope.title, **read()}

        context = await computed(self.request, self.reader, work)
        html = render(
            template,
            title=f"{title}: {context['evaluation_title']}",
            link=self.request.app.state.publisher.local_href,
            path=None,
            scripts=(),
            evaluation_id=self.evaluation_id,
            workspace=self.path,
            current=current,
            may=lambda *roles: may(self.person, *roles),
            refusal=refusal,
            done=done,
            word=word,
            when=when,
            tail=local_name,
            lang=lang,
            **context,
        )
        return HTMLResponse(html, status_code=status)


def writer_frame(request: Request, graphs: GraphService, evaluation_id: str, person: Person) -> Frame:
    """The frame a form's route re-renders its page in: read as the person who sent it."""
    return Frame(request, graphs, evaluation_id, person.credential, person)


async def act(
    request: Request,
    form: str,
    body: type[BaseModel],
    labels: Mapping[str, str],
    action: Callable[[Any], object],
    build: Build,
    back: str,
    given: Mapping[str, str] | None = None,
    anchor: str | None = None,
) -> Response:
    """Read the form's fields named in ``labels`` (field to the label the page gives it), with ``given`` (what the
    path names), as ``body``, the REST route's request body (an empty field counts as not sent); then run
    ``action(body)`` in a worker thread: 303 to ``back`` confirming ``form`` (at ``anchor``, else the form's own), or
    the page built again with the refusal (422 for the fields, else the domain's status; 401 and 5xx are answered as
    everywhere)."""
    sent = await request.form()
    values = {name: value for name in labels if isinstance(value := sent.get(name), str)}
    try:
        parsed = body.model_validate(
            {**(given or {}), **{name: value for name, value in values.items() if value.strip()}}
        )
        await run_in_threadpool(action, parsed)
    except ValidationError as error:
        return await build(Refusal(form, field_errors(error, labels), values), 422)
    except ServiceError as error:
        status = status_of(error)
        if isinstance(error, Unauthenticated) or status >= 500:
            raise
        return await build(Refusal(form, error.message, values), status)
    separator = "&" if "?" in back else "?"
    return RedirectResponse(f"{back}{separator}{urlencode({'done': form})}#{anchor or form}", status_code=303)


# ------------------------------------------------------------------------------------------------------ envelope


def envelope_page(at: Frame, done: str | None = None) -> Build:
    async def build(refusal: Refusal | None, status: int) -> HTMLResponse:
        return await at.render(
            "envelope",
            "workspace/expert_envelope.html",
            "Envelope",
            lambda: {"review": envelope_review(at.graphs, at.evaluation_id)},
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
) -> Response:
    at = writer_frame(request, graphs, evaluation_id, person)
    return await act(request, form, body, labels, action, envelope_page(at), f"{at.path}/envelope")


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
            graphs, evaluation_id, body.appropriate, body.rationale, person.credential
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
            graphs, evaluation_id, criterion_id, body.relevant, body.rationale, person.credential
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
            graphs, evaluation_id, body.appropriate, body.rationale, person.credential
        ),
    )


@router.post("/envelope/sign-off")
async def post_sign_off(evaluation_id: str, request: Request, graphs: GraphsDep, person: FormWriter) -> Response:
    return await _envelope_act(
        request,
        graphs,
        evaluation_id,
        person,
        "sign-off",
        SignOffBody,
        {"comment": "comment"},
        lambda body: approvals.sign_off_envelope(graphs, evaluation_id, person.credential, body.comment),
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
            graphs, evaluation_id, number, person.credential, body.comment, body.digest
        ),
        plan_page(at, number, 1),
        f"{at.path}/plans/{number}",
    )
