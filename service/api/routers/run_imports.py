"""Step 4 from elsewhere over REST: responses collected outside the service (an Inspect AI eval log, red-teaming
sessions in JSONL or CSV) imported as a run of an approved plan, and the plan exported as an Inspect dataset so
that Inspect users can run it and bring the log back (docs/imports.md)."""

from __future__ import annotations

from typing import Annotated, NoReturn

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from ...core.auth import require
from ...core.config import Credential
from ...runs.imports import ImportFormat, import_upload, inspect_dataset
from ...runs.records import RUNNERS
from ..body import read_body
from ..body_limits import Body, body
from ..deps import GraphsDep, ReaderDep, SettingsDep, credential
from ..shapes import run_json

router = APIRouter(prefix="/evaluations/{evaluation_id}", tags=["runs"])


def operator(agent: Annotated[Credential | None, Depends(credential)]) -> Credential:
    """The caller, if an evaluation operator: checked before the parameters and the body are."""
    return require(agent, *RUNNERS)


OperatorDep = Annotated[Credential, Depends(operator)]
PlanQuery = Annotated[int, Query(ge=1, description="The number of the approved plan whose probes the file answers.")]
FormatQuery = Annotated[
    ImportFormat,
    Query(
        alias="format",
        description=(
            "inspect: an Inspect AI eval log (.eval or .json); jsonl or csv: red-teaming rows (docs/imports.md)."
        ),
    ),
]
JSONL = "application/jsonl"
_FILE = {"schema": {"type": "string", "format": "binary"}}
# The file is the body, read by the route itself (FastAPI parses only JSON bodies); its type is ``format``'s.
_UPLOAD = {
    "requestBody": {"required": True, "content": {"application/octet-stream": _FILE, JSONL: _FILE, "text/csv": _FILE}}
}


@router.post(
    "/runs/imports",
    status_code=201,
    openapi_extra=_UPLOAD,
    summary="Import responses collected elsewhere (Inspect log, red-teaming JSONL or CSV) as a run of an "
    "approved plan (evaluation operator); the file is the body, nothing is stored on any refusal",
)
@body(Body.FILE)
async def post_import(
    evaluation_id: str,
    request: Request,
    agent: OperatorDep,
    plan: PlanQuery,
    form: FormatQuery,
    graphs: GraphsDep,
    settings: SettingsDep,
) -> JSONResponse:
    data = await read_body(request, settings, Body.FILE)
    view = await run_in_threadpool(import_upload, graphs, evaluation_id, plan, data, form, agent)
    return JSONResponse(
        run_json(view, None), status_code=201, headers={"Location": f"/evaluations/{evaluation_id}/runs/{view.number}"}
    )


@router.api_route("/runs/imports", methods=["GET", "HEAD"], include_in_schema=False, response_model=None)
async def not_a_run() -> NoReturn:
    """``/runs/imports`` is the import, not a run called ``imports`` (``GET /runs/{number}`` would answer 422 for
    its number): a 405, whose ``Allow`` comes from the document (:mod:`..routing_errors`)."""
    raise HTTPException(405)


@router.get(
    "/plans/{number}/inspect-dataset",
    response_class=Response,
    responses={200: {"content": {JSONL: {}}, "description": "One Inspect sample a line"}},
    summary="The plan's probes as an Inspect AI dataset (JSONL, one sample per probe carrying its IRI)",
)
async def get_inspect_dataset(evaluation_id: str, number: int, graphs: GraphsDep, _: ReaderDep) -> Response:
    text = await run_in_threadpool(inspect_dataset, graphs, evaluation_id, number)
    return Response(
        text,
        media_type=JSONL,
        headers={"Content-Disposition": f'attachment; filename="{evaluation_id}-plan-{number}.jsonl"'},
    )
