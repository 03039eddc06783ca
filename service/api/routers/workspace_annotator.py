"""The annotator's pages (issue 24 §4, docs/workspace.md "Annotator"): the signed-in person's queue of cases
(``/evaluations/{id}/workspace/annotate``, ``?run=n``) and one case to determine
(``…/workspace/annotate/{run}/{probe}``, :func:`service.workspace.annotation.annotate_path`): the conversation, and
per criterion it bears on a determination form, blind to everyone else's verdicts until the person has given their
own there.

A determination is read with the REST route's own request body (``RulingBody``) and recorded by
:func:`service.judgments.records.record_rulings`, the function ``POST …/runs/{n}/determinations`` calls, with the
person's credential: roles, the separation rule and the record's checks apply as they do over REST. Success goes on
(303) to the case's next criterion waiting for the person, else to the next case of their queue; a refusal
re-renders the case with the message at its form, under the refusal's status. ``static/annotate.js`` adds keyboard
shortcuts; the forms work without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from ...core.config import Settings
from ...core.errors import NotFound, ServiceError
from ...core.graphs import GraphService
from ...core.namespaces import EARL
from ...core.people import Person
from ...core.rdf import local_name
from ...core.roles import ADMIN
from ...credentials.signing import Signer
from ...envelope import get_evaluation
from ...judgments.records import DETERMINERS, Ruling, record_rulings
from ...judgments.separation import Separation
from ...runs.records import list_runs
from ...workspace import CaseView, Queue, annotation_queue, case_view, reads
from ...workspace.annotation import annotate_path, waiting_on
from ..deps import GraphsDep, SettingsDep, signer
from ..guarded import computed
from ..html import render
from ..models_judgments import RulingBody
from ..problems import status_of
from ..sessions import FormWriter, SignedIn

router = APIRouter(prefix="/evaluations/{evaluation_id}/workspace/annotate", include_in_schema=False)

OUTCOMES = (
    ("passed", "Pass", "p"),
    ("failed", "Fail", "f"),
    ("cantTell", "Cannot tell", "c"),
    ("inapplicable", "Not applicable", "n"),
)
"""The four outcomes a person gives (EARL's names), as the form says them, with their keyboard shortcut."""
SAID = {EARL + name: label for name, label, _ in OUTCOMES}
QUEUE_SHOWN = 20
FIELDS = {"outcome": "Outcome", "rationale": "Rationale", "turn": "Reply", "criterion": "Criterion", "probe": "Case"}
NO_STORE = {"Cache-Control": "no-store"}  # each page carries the session's CSRF token and changes with every verdict
Number = Annotated[int, Query(ge=1, le=1_000_000)]


def determines(person: Person) -> bool:
    """Whether the domain lets ``person`` determine outcomes (an admin may act as any role)."""
    return bool(person.roles & {*DETERMINERS, ADMIN})


def languages_of(person: Person) -> frozenset[str] | None:
    """The languages ``person`` declared they read (``None``: declared none, so every language is offered)."""
    return frozenset(person.languages) or None


@dataclass(frozen=True)
class Refusal:
    """A determination form refused: which criterion's, why, and what the person had filled in."""

    criterion: str
    message: str
    outcome: str
    turn: str
    rationale: str


@dataclass(frozen=True)
class Recorded:
    """The confirmation a page shows after a determination: the person's own latest verdict on the criterion."""

    run: int
    probe: int
    identifier: str
    outcome: str
    path: str


def _queue(graphs: GraphService, evaluation_id: str, run: int | None, person: Person, limit: int) -> Queue:
    return annotation_queue(
        graphs, evaluation_id, run, person.agent, languages_of(person), frozenset(person.expertise), limit
    )


def _recorded(
    graphs: GraphService, evaluation_id: str, person: Person, run: int | None, probe: int | None, identifier: str | None
) -> Recorded | None:
    """What a redirect after a determination names, if the record holds it as the person's (never shown on the
    query string's word alone)."""
    if run is None or probe is None or not identifier:
        return None
    try:
        view = case_view(graphs, evaluation_id, run, probe, person.agent)
    except NotFound:
        return None
    own = next((c.own for c in view.criteria if c.criterion.identifier == identifier), ())
    if not own:
        return None
    latest = max(own, key=lambda v: v.at)
    return Recorded(
        run,
        probe,
        identifier,
        SAID.get(latest.outcome, local_name(latest.outcome)),
        annotate_path(evaluation_id, run, probe),
    )


def _page(
    request: Request,
    template: str,
    title: str,
    evaluation_id: str,
    person: Person,
    context: dict[str, object],
    status: int = 200,
) -> HTMLResponse:
    html = render(
        template,
        title=f"{title}: {context['evaluation_title']}",
        link=request.app.state.publisher.local_href,
        path=None,
        scripts=["annotate.js"],
        evaluation_id=evaluation_id,
        current="annotate",
        person=person,
        determiner=determines(person),
        reads=languages_of(person),
        outcomes=OUTCOMES,
        said=SAID,
        tail=local_name,
        **context,
    )
    return HTMLResponse(html, status_code=status, headers=NO_STORE)


@router.get("", response_class=HTMLResponse)
async def queue_page(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    person: SignedIn,
    run: Number | None = None,
    recorded: str | None = None,
    case: Number | None = None,
) -> HTMLResponse:
    def read() -> dict[str, object]:
        context: dict[str, object] = {"evaluation_title": get_evaluation(graphs, evaluation_id).scope.title, "run": run}
        if determines(person):
            context |= {
                "queue": _queue(graphs, evaluation_id, run, person, QUEUE_SHOWN),
                "runs": [r.number for r in list_runs(graphs, evaluation_id)],
                "recorded": _recorded(graphs, evaluation_id, person, run, case, recorded),
            }
        return context

    context = await computed(request, person.credential, read)
    return _page(request, "workspace/annotator_queue.html", "Annotate", evaluation_id, person, context)


def _case_context(graphs: GraphService, evaluation_id: str, run: int, probe: int, person: Person) -> dict[str, object]:
    view = case_view(graphs, evaluation_id, run, probe, person.agent)
    context: dict[str, object] = {
        "evaluation_title": get_evaluation(graphs, evaluation_id).scope.title,
        "case": view,
        "waiting": (),
        "queue": None,
        "next_case": None,
        "unread": False,
        "queue_path": f"/evaluations/{evaluation_id}/workspace/annotate?run={run}",
    }
    if determines(person):
        queue = _queue(graphs, evaluation_id, run, person, 2)
        context |= {
            "waiting": waiting_on(graphs, evaluation_id, run, probe, person.agent, languages_of(person)),
            "unread": not reads(languages_of(person), view.language),
            "queue": queue,
            "next_case": next((i for i in queue.items if i.probe != probe), None),
        }
    return context


async def _case_page(
    request: Request,
    graphs: GraphService,
    evaluation_id: str,
    run: int,
    probe: int,
    person: Person,
    recorded: tuple[int, str] | None = None,
    refusal: Refusal | None = None,
    status: int = 200,
) -> HTMLResponse:
    def read() -> dict[str, object]:
        context = _case_context(graphs, evaluation_id, run, probe, person)
        confirmed = _recorded(graphs, evaluation_id, person, run, *recorded) if recorded else None
        return context | {"refusal": refusal, "recorded": confirmed}

    context = await computed(request, person.credential, read)
    return _page(
        request, "workspace/annotator_case.html", f"Case {probe} of run {run}", evaluation_id, person, context, status
    )


@router.get("/{run}/{probe}", response_class=HTMLResponse)
async def case_page(
    evaluation_id: str,
    run: int,
    probe: int,
    request: Request,
    graphs: GraphsDep,
    person: SignedIn,
    recorded: str | None = None,
    case: Number | None = None,
) -> HTMLResponse:
    """``recorded`` (a criterion's identifier) and ``case`` (a probe number, this one by default): the
    determination just made, confirmed on the page."""
    return await _case_page(
        request, graphs, evaluation_id, run, probe, person, (case or probe, recorded) if recorded else None
    )


def _message(error: ValidationError) -> str:
    """A refused field in the form's words (the REST body's checks, named as the form names its fields)."""
    words = []
    for problem in error.errors(include_url=False):
        field = str(problem["loc"][0]) if problem["loc"] else ""
        if field == "outcome":
            words.append("Choose an outcome: " + ", ".join(label.lower() for _, label, _ in OUTCOMES) + ".")
        elif field == "rationale":
            words.append("Write a rationale: why the reply meets the criterion or not, in a sentence.")
        else:
            words.append(f"{FIELDS.get(field, field or 'The form')}: {problem['msg']}.")
    return " ".join(words)


def _onward(
    graphs: GraphService, evaluation_id: str, run: int, probe: int, person: Person, view: CaseView, identifier: str
) -> str:
    """Where a determination goes on to: the case's next criterion waiting for the person, else the next case of
    their queue in this run, else the queue; each with the confirmation's parameters."""
    confirm = {"recorded": identifier, "case": probe}
    waiting = waiting_on(graphs, evaluation_id, run, probe, person.agent, languages_of(person))
    if waiting:
        number = next(n for n, c in enumerate(view.criteria, start=1) if c.criterion.iri == waiting[0])
        return f"{annotate_path(evaluation_id, run, probe)}?{urlencode(confirm)}#criterion-{number}"
    queue = _queue(graphs, evaluation_id, run, person, 1)
    if queue.items:
        return f"{queue.items[0].path}?{urlencode(confirm)}"
    return f"/evaluations/{evaluation_id}/workspace/annotate?{urlencode({'run': run, **confirm})}"


@router.post("/{run}/{probe}")
async def determine(
    evaluation_id: str,
    run: int,
    probe: int,
    request: Request,
    graphs: GraphsDep,
    settings: SettingsDep,
    person: FormWriter,
    criterion: Annotated[str, Form()] = "",
    outcome: Annotated[str, Form()] = "",
    turn: Annotated[str, Form()] = "",
    rationale: Annotated[str, Form()] = "",
) -> Response:
    done = await run_in_threadpool(
        _record,
        graphs,
        settings,
        evaluation_id,
        run,
        probe,
        person,
        criterion,
        outcome,
        turn,
        rationale,
        signer(request),
    )
    if isinstance(done, str):
        return RedirectResponse(done, status_code=303)
    message, status = done
    return await _case_page(
        request,
        graphs,
        evaluation_id,
        run,
        probe,
        person,
        refusal=Refusal(criterion, message, outcome, turn, rationale),
        status=status,
    )


def _record(
    graphs: GraphService,
    settings: Settings,
    evaluation_id: str,
    run: int,
    probe: int,
    person: Person,
    criterion: str,
    outcome: str,
    turn: str,
    rationale: str,
    by: Signer,
) -> str | tuple[str, int]:
    """Record the form's determination as the REST route does (signed by the person's key, ``by``); where to go next, or why not and the status."""
    view = case_view(graphs, evaluation_id, run, probe, person.agent)
    on = next((c.criterion for c in view.criteria if c.criterion.iri == criterion), None)
    if on is None:  # the form names one of the case's criteria: anything else was not sent from it
        return f"Case {probe} does not bear on the criterion {criterion!r}: determine one of those it shows.", 422
    sent = {"probe": view.probe_iri, "criterion": criterion, "turn": turn, "outcome": outcome, "rationale": rationale}
    try:
        body = RulingBody.model_validate({name: value for name, value in sent.items() if value or name == "rationale"})
        record_rulings(
            graphs,
            evaluation_id,
            run,
            [Ruling(body.probe, body.criterion, body.turn, EARL + body.outcome, body.rationale)],
            person.credential,
            separation=Separation.of(settings, graphs),
            signer=by,
        )
    except ValidationError as error:
        return _message(error), 422
    except ServiceError as error:
        status = status_of(error)
        if status >= 500 or status == 404:
            raise
        return error.message, status
    return _onward(graphs, evaluation_id, run, probe, person, view, on.identifier)
