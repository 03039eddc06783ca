"""Step 4 over REST: start a run of an approved plan against a target as a background job, follow its
progress, continue it after an interruption, retry its execution errors, and list the evaluation's runs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ...core.auth import require
from ...core.config import Credential, Settings
from ...core.graphs import GraphService
from ...runs.jobs import Job, Jobs, TargetSpec, build_target
from ...runs.model import ExecutionSettings
from ...runs.records import RUNNERS, RunView, list_runs, run_view, start_run
from ...runs.retries import list_retries, retry_errors, retryable
from ...runs.runner import continue_run, require_version
from ...runs.targets import Target
from ..deps import GraphsDep, JobsDep, ReaderDep, SettingsDep, credential
from ..models_runs import ContinueBody, DemoTargetBody, OpenAITargetBody, RunBody, RunSettingsBody
from ..shapes import retry_json, run_json
from .resources import linked_data, wants_json

router = APIRouter(prefix="/evaluations/{evaluation_id}", tags=["runs"])

CredentialDep = Annotated[Credential | None, Depends(credential)]


def _spec(body: DemoTargetBody | OpenAITargetBody) -> TargetSpec:
    if isinstance(body, DemoTargetBody):
        return TargetSpec("demo")
    return TargetSpec(
        "openai-compatible",
        base_url=body.base_url,
        model=body.model,
        parameters=dict(body.parameters),
        system=body.system,
        system_instructions=body.system_instructions,
        api_key_env=body.api_key_env,
    )


def _settings(body: RunSettingsBody) -> ExecutionSettings:
    return ExecutionSettings(
        concurrency=body.concurrency,
        rate_per_s=body.rate_per_second,
        timeout_s=body.timeout_seconds,
        retries=body.retries,
        backoff_s=body.backoff_seconds,
    )


def _launch(
    graphs: GraphService,
    jobs: JobsDep,
    evaluation_id: str,
    view: RunView,
    target: Target,
    execution: ExecutionSettings,
    agent: Credential,
) -> Job:
    return jobs.start(
        view.iri,
        lambda progress: continue_run(
            graphs, evaluation_id, view.number, target, execution, agent, on_progress=progress
        ),
    )


async def start_job(
    graphs: GraphService, jobs: Jobs, settings: Settings, evaluation_id: str, body: RunBody, agent: Credential | None
) -> tuple[RunView, Job]:
    """Run ``body``'s plan against its target as a background job, for the REST route and the operator's page alike:
    403 unless an evaluation operator, 422 for a target the deployment does not allow, 409 for a plan not approved."""
    operator = require(agent, *RUNNERS)
    target = build_target(_spec(body.target), settings.run_target_allowlist, settings.key_envs)
    execution = _settings(body.settings)
    view = await run_in_threadpool(
        lambda: start_run(
            graphs,
            evaluation_id,
            body.plan,
            target.version,
            execution,
            operator,
            outside_boundary=body.outside_boundary,
        )
    )
    return view, _launch(graphs, jobs, evaluation_id, view, target, execution, operator)


async def continue_job(
    graphs: GraphService,
    jobs: Jobs,
    settings: Settings,
    evaluation_id: str,
    number: int,
    body: ContinueBody,
    agent: Credential | None,
) -> tuple[RunView, Job]:
    """Continue run ``number`` where it stopped as a background job (REST route and page): its probes with no case
    yet, against the same target version (409 naming both fingerprints otherwise)."""
    operator = require(agent, *RUNNERS)
    target = build_target(_spec(body.target), settings.run_target_allowlist, settings.key_envs)
    view = require_version(await run_in_threadpool(run_view, graphs, evaluation_id, number), target)
    return view, _launch(graphs, jobs, evaluation_id, view, target, _settings(body.settings), operator)


async def retry_job(
    graphs: GraphService,
    jobs: Jobs,
    settings: Settings,
    evaluation_id: str,
    number: int,
    body: ContinueBody,
    agent: Credential | None,
) -> tuple[RunView, Job]:
    """Retry run ``number``'s execution errors as a background job (REST route and page): each probe whose latest
    case ended in one gets a new attempt against the same target version (:func:`...runs.retries.retry_errors`).
    Refused before any job starts: 403 unless an evaluation operator, 404, 422 for a target the deployment does not
    allow, 409 for another target version or for no execution error to retry, 409 while a job runs the run here."""
    operator = require(agent, *RUNNERS)
    target = build_target(_spec(body.target), settings.run_target_allowlist, settings.key_envs)
    execution = _settings(body.settings)
    view, _ = await run_in_threadpool(retryable, graphs, evaluation_id, number, target.version, operator)
    return view, jobs.start(
        view.iri,
        lambda progress: retry_errors(graphs, evaluation_id, number, target, execution, operator, on_progress=progress),
    )


@router.post(
    "/runs",
    status_code=202,
    summary="Start a run of an approved plan against a target (evaluation operator); it runs in the background",
)
async def post_run(
    evaluation_id: str, body: RunBody, graphs: GraphsDep, jobs: JobsDep, settings: SettingsDep, agent: CredentialDep
) -> JSONResponse:
    view, job = await start_job(graphs, jobs, settings, evaluation_id, body, agent)
    location = f"/evaluations/{evaluation_id}/runs/{view.number}"
    return JSONResponse(run_json(view, job), status_code=202, headers={"Location": location})


@router.post(
    "/runs/{number}/continuation",
    status_code=202,
    summary="Continue a run where it stopped, with the same target version (evaluation operator)",
)
async def continue_existing(
    evaluation_id: str,
    number: int,
    body: ContinueBody,
    graphs: GraphsDep,
    jobs: JobsDep,
    settings: SettingsDep,
    agent: CredentialDep,
) -> JSONResponse:
    view, job = await continue_job(graphs, jobs, settings, evaluation_id, number, body, agent)
    return JSONResponse(
        run_json(view, job), status_code=202, headers={"Location": f"/evaluations/{evaluation_id}/runs/{number}"}
    )


@router.post(
    "/runs/{number}/retries",
    status_code=202,
    summary="Send the probes whose latest case ended in an execution error again, to the same target version, "
    "each as a new attempt (evaluation operator)",
)
async def post_retry(
    evaluation_id: str,
    number: int,
    body: ContinueBody,
    graphs: GraphsDep,
    jobs: JobsDep,
    settings: SettingsDep,
    agent: CredentialDep,
) -> JSONResponse:
    view, job = await retry_job(graphs, jobs, settings, evaluation_id, number, body, agent)
    return JSONResponse(
        run_json(view, job), status_code=202, headers={"Location": f"/evaluations/{evaluation_id}/runs/{number}"}
    )


@router.get("/runs/{number}/retries", summary="A run's retries, oldest first: who asked, when, the attempts recorded")
async def get_retries(evaluation_id: str, number: int, graphs: GraphsDep, _: ReaderDep) -> JSONResponse:
    view = await run_in_threadpool(run_view, graphs, evaluation_id, number)
    retries = await run_in_threadpool(list_retries, graphs, view.iri)
    return JSONResponse({"run": view.iri, "retries": [retry_json(retry) for retry in retries]})


@router.get("/runs", summary="The evaluation's runs, oldest first, each with how far it got")
async def get_runs(evaluation_id: str, graphs: GraphsDep, jobs: JobsDep, _: ReaderDep) -> JSONResponse:
    views = await run_in_threadpool(list_runs, graphs, evaluation_id)
    return JSONResponse({"runs": [run_json(view, jobs.get(view.iri)) for view in views]})


@router.get("/runs/{number}", summary="A run: its plan, target version, settings, progress and job state")
async def get_run(
    evaluation_id: str, number: int, request: Request, graphs: GraphsDep, jobs: JobsDep, _: ReaderDep
) -> Response:
    if not wants_json(request):  # the run's IRI is its graph's: HTML and RDF negotiate as every minted IRI does
        return await linked_data(request)
    view = await run_in_threadpool(run_view, graphs, evaluation_id, number)
    return JSONResponse(run_json(view, jobs.get(view.iri)), headers={"Vary": "Accept"})
