"""The domain expert's criteria pages (issue 24 §3, docs/workspace.md "Domain expert"): each criterion of a run with
where it stands, and one criterion's evidence with the attestation form and, once it is attested, the form that
supersedes the attestation with a reason. The forms call :func:`service.judgments.attestations.attest` as the REST
route ``POST /evaluations/{id}/runs/{n}/attestations`` does, with the deployment's separation rule and supersede role.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, Response

from ...core.config import Settings
from ...core.errors import NotFound
from ...core.namespaces import EARL
from ...core.people import Person
from ...core.roles import DOMAIN_EXPERT
from ...judgments.attestations import APPROPRIATENESS, SUFFICIENCY, AttestationView, attest
from ...judgments.records import run_criterion
from ...judgments.separation import Separation
from ...scenarios.model import Page
from ...workspace import criterion_evidence
from ...workspace.criteria import criteria_states
from ..deps import GraphsDep, ReaderDep, SettingsDep, signer
from ..models_judgments import AttestationBody
from ..sessions import FormWriter, PagePerson
from .workspace_frame import Build, Frame, PageNumber, Refusal, act, may, word

router = APIRouter(prefix="/evaluations/{evaluation_id}/workspace", include_in_schema=False)

RunQuery = Annotated[int | None, Query(ge=1, le=1_000_000, description="The run; the latest by default")]
CONVERSATIONS_PER_PAGE = 10
CHOICES = {
    "outcome": [(o, word(o)) for o in ("passed", "failed", "cantTell", "inapplicable")],
    "sufficiency": [(s, s) for s in SUFFICIENCY],
    "appropriateness": [(a, a) for a in APPROPRIATENESS],
}
"""What the attestation form offers: the values the REST route's body takes, each with what the page calls it."""
FIELDS = {"outcome": "outcome", "rationale": "rationale", "sufficiency": "evidence", "appropriateness": "the test"}


@router.get("/criteria", response_class=HTMLResponse)
async def get_criteria(
    evaluation_id: str, request: Request, graphs: GraphsDep, reader: ReaderDep, person: PagePerson, run: RunQuery = None
) -> HTMLResponse:
    def read() -> dict[str, object]:
        try:
            found, states = criteria_states(graphs, evaluation_id, run)
        except NotFound:
            if run is not None:
                raise
            return {"run": None, "states": ()}  # no run yet: nothing to attest
        return {"run": found, "states": states}

    at = Frame(request, graphs, evaluation_id, reader, person)
    return await at.render("criteria", "workspace/expert_criteria.html", "Criteria", read)


def may_supersede(person: Person | None, current: AttestationView | None, settings: Settings, agent_iri: str) -> bool:
    """Whether ``person`` may supersede ``current`` (``attestations._check_superseder``'s rule): the expert who
    attested it, or a holder of the deployment's supersede role."""
    if current is None or not may(person, DOMAIN_EXPERT):
        return False
    return current.expert == agent_iri or (settings.supersede_role is not None and may(person, settings.supersede_role))


def evidence_page(
    at: Frame, settings: Settings, identifier: str, run: int | None, number: int, done: str | None = None
) -> Build:
    def read() -> dict[str, object]:
        offset = (number - 1) * CONVERSATIONS_PER_PAGE
        evidence = criterion_evidence(at.graphs, at.evaluation_id, identifier, run, CONVERSATIONS_PER_PAGE, offset)
        mine = at.graphs.agent_iri(at.person.agent) if at.person else ""
        return {
            "evidence": evidence,
            "choices": CHOICES,
            "supersede_role": settings.supersede_role,
            "may_supersede": may_supersede(at.person, evidence.current, settings, mine),
            "listing": Page(evidence.conversations, evidence.total, CONVERSATIONS_PER_PAGE, offset),
            "page_href": lambda _, n: "?" + urlencode({"run": evidence.run, "page": n}),
        }

    async def build(refusal: Refusal | None, status: int) -> HTMLResponse:
        return await at.render(
            "criteria", "workspace/expert_criterion.html", f"Criterion {identifier}", read, refusal, status, done
        )

    return build


@router.get("/criteria/{identifier}", response_class=HTMLResponse)
async def get_criterion(
    evaluation_id: str,
    identifier: str,
    request: Request,
    graphs: GraphsDep,
    reader: ReaderDep,
    settings: SettingsDep,
    person: PagePerson,
    run: RunQuery = None,
    page: PageNumber = 1,
    done: str | None = None,
) -> HTMLResponse:
    at = Frame(request, graphs, evaluation_id, reader, person)
    return await evidence_page(at, settings, identifier, run, page, done)(None, 200)


async def _attest(
    evaluation_id: str,
    identifier: str,
    run: int,
    request: Request,
    graphs: GraphsDep,
    settings: Settings,
    person: Person,
    form: str,
    labels: dict[str, str],
) -> Response:
    """Attest (or supersede) as the REST route does: the criterion the path names, by its identifier among the run's
    plan's (:func:`service.judgments.records.run_criterion`)."""
    at = Frame(request, graphs, evaluation_id, person.credential, person)

    def record(body: AttestationBody) -> AttestationView:
        criterion = run_criterion(graphs, evaluation_id, run, body.criterion)
        return attest(
            graphs,
            evaluation_id,
            run,
            criterion,
            EARL + body.outcome,
            body.rationale,
            body.sufficiency,
            body.appropriateness,
            person.credential,
            supersedes=body.supersedes,
            reason=body.reason,
            separation=Separation.of(settings, graphs),
            supersede_role=settings.supersede_role,
            signer=signer(request),
        )

    return await act(
        request,
        form,
        AttestationBody,
        labels,
        record,
        evidence_page(at, settings, identifier, run, 1),
        f"{at.path}/criteria/{identifier}?run={run}",
        given={"criterion": identifier},
        anchor="attestations",
    )


RunField = Annotated[int, Form(ge=1, le=1_000_000)]


@router.post("/criteria/{identifier}/attestation")
async def post_attestation(
    evaluation_id: str,
    identifier: str,
    request: Request,
    graphs: GraphsDep,
    settings: SettingsDep,
    person: FormWriter,
    run: RunField,
) -> Response:
    return await _attest(evaluation_id, identifier, run, request, graphs, settings, person, "attest", FIELDS)


@router.post("/criteria/{identifier}/supersession")
async def post_supersession(
    evaluation_id: str,
    identifier: str,
    request: Request,
    graphs: GraphsDep,
    settings: SettingsDep,
    person: FormWriter,
    run: RunField,
) -> Response:
    return await _attest(
        evaluation_id,
        identifier,
        run,
        request,
        graphs,
        settings,
        person,
        "supersede",
        {**FIELDS, "supersedes": "the attestation superseded", "reason": "reason for the correction"},
    )
