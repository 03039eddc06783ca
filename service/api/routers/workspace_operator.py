"""The evaluation operator's pages (issue 24 §5): an evaluation's runs with a form that starts one from an approved
plan (``/evaluations/{id}/workspace/runs``), and one run's live progress, its execution errors, its retries and the
earlier attempts they retried, and a form that continues it or retries its errors (``/evaluations/{id}/workspace/runs/{n}``).

The forms call what the REST routes call (:func:`.runs.start_job`, :func:`.runs.continue_job`, :func:`.runs.retry_job`)
with the signed-in person's credential, after validating the same request bodies (:class:`..models_runs.RunBody`,
:class:`..models_runs.ContinueBody`):
the role, the target allow-list, the variables a key may be read from, the plan's approval and the version boundary
are checked there, never here. A refusal shows the form again with the reason and the refusal's status. A key is
never asked for: a target names the environment variable that holds it, among those the deployment lists. The
forms as sent, and the request bodies made of them, are :mod:`.workspace_run_forms`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ...core.config import Credential, Settings
from ...core.errors import NotFound
from ...core.graphs import GraphService
from ...core.iris import minted_number
from ...core.people import Person
from ...runs.jobs import Job, Jobs
from ...runs.records import RUNNERS, RunView, list_runs, run_errors, run_view
from ...runs.retries import list_retries
from ...scope.model import EvaluationSummary
from ...scope.records import list_evaluations
from ...workspace.records import current_plans
from ..deps import GraphsDep, JobsDep, ReaderDep, SettingsDep
from ..form_refusals import Refused, attempt
from ..html import render
from ..models_runs import ContinueBody, RunBody
from ..sessions import FormWriter, PagePerson
from .runs import continue_job, retry_job, start_job
from .workspace_run_forms import LABELS, ContinueForm, StartForm, continuation_body, continue_defaults, run_target

router = APIRouter(prefix="/evaluations/{evaluation_id}/workspace", tags=["workspace"], include_in_schema=False)

RunAction = Callable[
    [GraphService, Jobs, Settings, str, int, ContinueBody, Credential | None], Awaitable[tuple[RunView, Job]]
]
"""What the Retry form calls: :func:`.runs.continue_job` or :func:`.runs.retry_job`."""

ERRORS_PAGE = 50
"""Execution errors listed per page of a run."""
CONTINUABLE = ("demo", "openai-compatible")
"""The adapters a run can be continued with over REST (an imported run has nothing left to run)."""
NOTICES = {
    "started": "The run started: it runs in the background, and this page follows it.",
    "continued": "The run continues where it stopped: it runs in the background, and this page follows it.",
    "retried": "The retry started: the probes whose latest attempt ended in an execution error are sent again "
    "in the background, and this page follows it.",
}


def _summary(graphs: GraphService, evaluation_id: str) -> EvaluationSummary:
    """The evaluation as listed (its title, its current envelope); 404 for no such evaluation."""
    found = next((s for s in list_evaluations(graphs) if s.id == evaluation_id), None)
    if found is None:
        raise NotFound(f"no evaluation {evaluation_id!r}: GET /evaluations lists them")
    return found


def _frame(summary: EvaluationSummary) -> dict[str, str]:
    """What the workspace frame shows (workspace/evaluation.html)."""
    return {"evaluation_id": summary.id, "evaluation_title": summary.title, "current": "runs"}


def may_run(person: Person | None) -> bool:
    """Whether the domain would let this person start or continue a run (it checks again when they do)."""
    return person is not None and bool(person.roles & {*RUNNERS, "admin"})


def state_of(view: RunView, job: Job | None) -> Literal["running", "finished", "failed", "stopped"]:
    """A run as an operator follows it: its job running in this service, every probe with its case, its job failed
    (the reason in ``job.error``), or stopped short of its plan with nothing running it here."""
    if job is not None and job.state == "running":
        return "running"
    if view.done:
        return "finished"
    return "failed" if job is not None and job.state == "failed" else "stopped"


def _run_row(view: RunView, job: Job | None) -> dict[str, Any]:
    return {"view": view, "job": job, "state": state_of(view, job), "target": run_target(view)}


def _listing(graphs: GraphService, jobs: Jobs, evaluation_id: str, offer: bool) -> dict[str, Any]:
    """The runs page's reads: the evaluation, its runs, and (for whom may start one) the plans of its current envelope
    content, approved or not as the record states it (starting one recomputes the digests)."""
    summary = _summary(graphs, evaluation_id)
    runs = [_run_row(view, jobs.get(view.iri)) for view in list_runs(graphs, evaluation_id)]
    plans = current_plans(graphs, summary) if offer else ()
    return _frame(summary) | {
        "runs": runs,
        "approved": [p for p in plans if p.approved],
        "unapproved": [p for p in plans if not p.approved],
    }


def _runs_page(
    request: Request,
    graphs: GraphService,
    jobs: Jobs,
    settings: Settings,
    evaluation_id: str,
    person: Person | None,
    form: StartForm,
    error: str | None = None,
    status: int = 200,
) -> HTMLResponse:
    offer = may_run(person)
    found = _listing(graphs, jobs, evaluation_id, offer)
    html = render(
        "workspace/operator_runs.html",
        title=f"Runs: {found['evaluation_title']}",
        link=request.app.state.publisher.local_href,
        offer=offer,
        form=form,
        error=error,
        key_envs=settings.key_envs,
        allowlist=settings.run_target_allowlist,
        **found,
    )
    return HTMLResponse(html, status_code=status)


@router.get("/runs", response_class=HTMLResponse)
async def runs_page(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    jobs: JobsDep,
    settings: SettingsDep,
    _: ReaderDep,
    person: PagePerson,
    plan: int | None = None,
) -> HTMLResponse:
    form = StartForm(plan=str(plan) if plan else "")
    return await run_in_threadpool(_runs_page, request, graphs, jobs, settings, evaluation_id, person, form)


@router.post("/runs")
async def start(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    jobs: JobsDep,
    settings: SettingsDep,
    person: FormWriter,
    form: Annotated[StartForm, Form()],
) -> Response:
    async def act() -> tuple[RunView, Job]:
        return await start_job(
            graphs, jobs, settings, evaluation_id, RunBody.model_validate(form.body()), person.credential
        )

    started = await attempt(act, LABELS)
    if isinstance(started, Refused):
        return await run_in_threadpool(
            _runs_page, request, graphs, jobs, settings, evaluation_id, person, form, started.message, started.status
        )
    return RedirectResponse(
        f"/evaluations/{evaluation_id}/workspace/runs/{started[0].number}?done=started", status_code=303
    )


def _run_page(
    request: Request,
    graphs: GraphService,
    jobs: Jobs,
    settings: Settings,
    evaluation_id: str,
    number: int,
    person: Person | None,
    page: int,
    form: ContinueForm | None = None,
    error: str | None = None,
    status: int = 200,
    notice: str | None = None,
    retried_page: int = 1,
) -> HTMLResponse:
    frame = _frame(_summary(graphs, evaluation_id))
    view = run_view(graphs, evaluation_id, number)
    job = jobs.get(view.iri)
    errors = run_errors(graphs, view.iri, ERRORS_PAGE, (page - 1) * ERRORS_PAGE) if view.errors else []
    retried = (
        run_errors(graphs, view.iri, ERRORS_PAGE, (retried_page - 1) * ERRORS_PAGE, latest=False)
        if view.retried
        else []
    )
    target, state = run_target(view), state_of(view, job)
    html = render(
        "workspace/operator_run.html",
        title=f"Run {number}: {frame['evaluation_title']}",
        link=request.app.state.publisher.local_href,
        scripts=["run-progress.js"] if state == "running" else [],
        view=view,
        job=job,
        state=state,
        target=target,
        settings=json.loads(view.settings),
        errors=errors,
        page=page,
        pages=-(-view.errors // ERRORS_PAGE),
        retried=retried,
        retried_page=retried_page,
        retried_pages=-(-view.retried // ERRORS_PAGE),
        retries=list_retries(graphs, view.iri),
        offer=may_run(person),
        continuable=target.get("adapter") in CONTINUABLE,
        form=form or continue_defaults(view),
        key_envs=settings.key_envs,
        error=error,
        notice=notice,
        run_json=f"/evaluations/{evaluation_id}/runs/{number}",
        plan_number=minted_number(view.plan),
        **frame,
    )
    return HTMLResponse(html, status_code=status)


@router.get("/runs/{number}", response_class=HTMLResponse)
async def run_page(
    evaluation_id: str,
    number: int,
    request: Request,
    graphs: GraphsDep,
    jobs: JobsDep,
    settings: SettingsDep,
    _: ReaderDep,
    person: PagePerson,
    page: int = 1,
    retried: int = 1,
    done: str | None = None,
) -> HTMLResponse:
    return await run_in_threadpool(
        _run_page,
        request,
        graphs,
        jobs,
        settings,
        evaluation_id,
        number,
        person,
        max(page, 1),
        notice=NOTICES.get(done or ""),
        retried_page=max(retried, 1),
    )


@router.post("/runs/{number}/continuation")
async def continuation(
    evaluation_id: str,
    number: int,
    request: Request,
    graphs: GraphsDep,
    jobs: JobsDep,
    settings: SettingsDep,
    person: FormWriter,
    form: Annotated[ContinueForm, Form()],
) -> Response:
    return await _run_form(
        continue_job, "continued", evaluation_id, number, request, graphs, jobs, settings, person, form
    )


@router.post("/runs/{number}/retries")
async def retries(
    evaluation_id: str,
    number: int,
    request: Request,
    graphs: GraphsDep,
    jobs: JobsDep,
    settings: SettingsDep,
    person: FormWriter,
    form: Annotated[ContinueForm, Form()],
) -> Response:
    return await _run_form(retry_job, "retried", evaluation_id, number, request, graphs, jobs, settings, person, form)


async def _run_form(
    act: RunAction,
    done: str,
    evaluation_id: str,
    number: int,
    request: Request,
    graphs: GraphService,
    jobs: Jobs,
    settings: Settings,
    person: Person,
    form: ContinueForm,
) -> Response:
    """The Retry form sent to continue the run or retry its errors (``act``, the REST route's function, with the
    person's credential): 303 to the run's page saying so (``done``), or the page again with the refusal."""
    view = await run_in_threadpool(run_view, graphs, evaluation_id, number)

    async def run_act() -> tuple[RunView, Job]:
        body = ContinueBody.model_validate(continuation_body(view, form))
        return await act(graphs, jobs, settings, evaluation_id, number, body, person.credential)

    acted = await attempt(run_act, LABELS)
    if not isinstance(acted, Refused):
        return RedirectResponse(f"/evaluations/{evaluation_id}/workspace/runs/{number}?done={done}", status_code=303)
    return await run_in_threadpool(
        _run_page, request, graphs, jobs, settings, evaluation_id, number, person, 1, form, acted.message, acted.status
    )
