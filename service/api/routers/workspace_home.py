"""The workspace's home (``/``) and an evaluation's overview, the page its IRI gives a browser (issue 24 §2).

The home lists every evaluation a person may see with its stage in the lifecycle (:func:`service.workspace
.evaluations_for`) and, for a signed-in person, what waits for them (:func:`service.workspace.waiting_for`), each
item linking to the page that acts on it; below, the linked-data entry points the home always had. The overview
(:func:`evaluation_page`, which ``GET /evaluations/{id}`` answers a browser with; RDF and JSON negotiate as before)
shows the evaluation's record as its IRI's RDF states it, with its stage, envelope approvals, plans, runs, reports
and what waits for the signed-in person there (docs/workspace.md, "Home").
"""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from ...core.graphs import GraphService
from ...core.people import Person
from ...publishing.ontology_docs import DOCUMENTED
from ...workspace import Waiting, WaitingItem, evaluations_for, standings, waiting_for
from ...workspace.overview import evaluation_detail
from ...workspace.records import ROLES, Standing, waiting_here
from ..deps import GraphsDep, ReaderDep
from ..html import render
from ..sessions import PagePerson, page_person
from ..signing import STATES, may
from .report_pages import FORMAT

router = APIRouter(tags=["workspace"])  # the home stays in the API document, as it was

ASSESSED = {"passed": "appropriate", "failed": "not appropriate", None: "not assessed"}
"""An appropriateness assessment's outcome in words."""
OPEN = {
    Waiting.DSO_APPROPRIATENESS: "DSO to assess",
    Waiting.RELEVANCE: "criteria to assess for relevance",
    Waiting.ENVELOPE_APPROPRIATENESS: "envelope to assess",
    Waiting.ENVELOPE_SIGN_OFF: "envelope to sign off",
    Waiting.PLAN_APPROVAL: "plans to approve",
    Waiting.ATTESTATION: "criteria to attest",
    Waiting.REPORT_SIGN_OFF: "reports to sign off",
    Waiting.REPORT_ACCEPTANCE: "reports to accept",
    Waiting.ANNOTATION: "cases to determine",
    Waiting.RUN_START: "plans to run",
    Waiting.RUN_ERRORS: "execution errors",
    Waiting.RUN_IN_PROGRESS: "runs under way",
}
"""What waits in an evaluation, by kind, as the home counts it."""
STEPS = ("scope", "envelope", "derive", "run", "determine and attest", "report")
"""The lifecycle's six steps (DESIGN.md), which a stage belongs to (:attr:`service.workspace.Stage.step`)."""


def waiting_of(graphs: GraphService, person: Person | None, read: Sequence[Standing]) -> list[WaitingItem]:
    """What waits for ``person`` in every evaluation (nothing for nobody), from the :func:`standings` ``read``:
    languages they declared none of are every language (docs/workspace.md, "The annotator queue")."""
    if person is None:
        return []
    return waiting_for(graphs, person.agent, person.roles, *_declared(person), read)


def _declared(person: Person) -> tuple[frozenset[str] | None, frozenset[str]]:
    """The languages (``None``: none declared) and expertise an annotator's cases are offered by."""
    return frozenset(person.languages) or None, frozenset(person.expertise)


def _home(request: Request, graphs: GraphService, person: Person | None) -> str:
    agent, roles = (person.agent, person.roles) if person else ("", frozenset[str]())
    read = standings(graphs)  # once for both
    evaluations = evaluations_for(graphs, agent, roles, read)
    waiting: dict[str, list[WaitingItem]] = {}
    for item in waiting_of(graphs, person, read):
        waiting.setdefault(item.evaluation, []).append(item)
    documented = [e for kind in DOCUMENTED for e in graphs.catalog(kind) if not e.batch_of]
    return render(
        "workspace/home_index.html",
        title="Home",
        link=request.app.state.publisher.local_href,
        evaluations=evaluations,
        waiting=waiting,
        person=person,
        acts=may(person, *ROLES),
        steps=STEPS,
        open_words=OPEN,
        documented=documented,
    )


@router.get("/", summary="Home page", response_class=HTMLResponse)
async def home(request: Request, graphs: GraphsDep, _: ReaderDep, person: PagePerson) -> HTMLResponse:
    return HTMLResponse(await run_in_threadpool(_home, request, graphs, person))


def _overview(request: Request, graphs: GraphService, evaluation_id: str, person: Person | None) -> str:
    found = evaluation_detail(graphs, evaluation_id)
    waiting = waiting_here(graphs, found.standing, person.agent, person.roles, *_declared(person)) if person else []
    path = f"/evaluations/{evaluation_id}"
    return render(
        "workspace/home_overview.html",
        title=found.evaluation.scope.title,
        link=request.app.state.publisher.local_href,
        path=path,
        scripts=["alternates.js"],
        evaluation_id=evaluation_id,
        evaluation_title=found.evaluation.scope.title,
        current="overview",
        found=found,
        waiting=waiting,
        person=person,
        steps=STEPS,
        evaluation_path=path,
        outcome_words=ASSESSED,
        state_words=STATES,
        **FORMAT,
    )


async def evaluation_page(request: Request, graphs: GraphService, evaluation_id: str) -> HTMLResponse:
    """The evaluation's overview: what ``GET /evaluations/{id}`` answers a browser with (routers/evaluations.py)."""
    page = await run_in_threadpool(_overview, request, graphs, evaluation_id, page_person())
    return HTMLResponse(page, headers={"Vary": "Accept"})
