"""Step 6 over REST: make a (draft) report on a run, list and read reports (the report's IRI also negotiates
Turtle and JSON-LD, like every minted IRI), sign it off and accept it, and verify it against the record."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ...core.catalog import GraphKind
from ...core.config import Credential
from ...core.formats import HTML, JSON, negotiate
from ...credentials.model import VP_MEDIA
from ...credentials.presentations import report_presentation
from ...reports.model import Report
from ...reports.records import get_report, list_reports, make_report
from ...reports.signoffs import sign
from ...reports.verify import verify
from ..deps import GraphsDep, ReaderDep, SignerDep, credential
from ..guarded import computed
from ..models_judgments import ReportBody, ReportSignOffBody
from ..report_shapes import report_json, verification_json
from .report_pages import report_page_response
from .resources import OFFERED, linked_data

router = APIRouter(prefix="/evaluations/{evaluation_id}", tags=["reports"])

CredentialDep = Annotated[Credential | None, Depends(credential)]


def _created(evaluation_id: str, report: Report) -> JSONResponse:
    return JSONResponse(
        report_json(report),
        status_code=201,
        headers={"Location": f"/evaluations/{evaluation_id}/reports/{report.number}"},
    )


@router.post(
    "/reports",
    status_code=201,
    summary="Make a draft report on a run, dated now (evaluation operator or domain expert)",
)
async def post_report(evaluation_id: str, body: ReportBody, graphs: GraphsDep, agent: CredentialDep) -> JSONResponse:
    report = await run_in_threadpool(
        make_report, graphs, evaluation_id, body.run, body.limitations, body.recommendations, body.fitness, agent
    )
    return _created(evaluation_id, report)


@router.get("/reports", summary="The evaluation's reports, oldest first, each with its status")
async def get_reports(evaluation_id: str, graphs: GraphsDep, _: ReaderDep) -> JSONResponse:
    reports = await run_in_threadpool(list_reports, graphs, evaluation_id)
    return JSONResponse({"reports": [report_json(report) for report in reports]})


@router.get("/reports/{number}", summary="A report: its basis, figures, statement, digests and sign-offs")
async def get_one(evaluation_id: str, number: int, request: Request, graphs: GraphsDep, reader: ReaderDep) -> Response:
    wanted = negotiate(request.headers.get("accept"), [JSON, *OFFERED])
    if wanted == HTML:  # a browser following the run page's link gets the page a sponsor reads
        return await report_page_response(request, graphs, evaluation_id, number, reader)
    if wanted != JSON:  # the report's IRI is its graph's: RDF negotiates as every minted IRI does
        return await linked_data(request)
    report = await run_in_threadpool(get_report, graphs, evaluation_id, number)
    return JSONResponse(report_json(report), headers={"Vary": "Accept"})


@router.post(
    "/reports/{number}/sign-off",
    status_code=201,
    summary="Sign a report off (domain expert); refused while its figures no longer verify",
)
async def post_sign_off(
    evaluation_id: str,
    number: int,
    body: ReportSignOffBody,
    graphs: GraphsDep,
    agent: CredentialDep,
    signer: SignerDep,
) -> JSONResponse:
    report = await run_in_threadpool(sign, graphs, evaluation_id, number, "sign-off", body.comment, agent, signer)
    return _created(evaluation_id, report)


@router.post(
    "/reports/{number}/acceptance",
    status_code=201,
    summary="Accept a signed-off report (organizational expert), which makes it final",
)
async def post_acceptance(
    evaluation_id: str,
    number: int,
    body: ReportSignOffBody,
    graphs: GraphsDep,
    agent: CredentialDep,
    signer: SignerDep,
) -> JSONResponse:
    report = await run_in_threadpool(sign, graphs, evaluation_id, number, "acceptance", body.comment, agent, signer)
    return _created(evaluation_id, report)


@router.get(
    "/reports/{number}/verify",
    summary="Recompute every figure and digest of a report from the record: each holds or differs",
)
async def get_verify(
    evaluation_id: str, number: int, request: Request, graphs: GraphsDep, reader: ReaderDep
) -> JSONResponse:
    def check() -> dict[str, object]:
        return verification_json(verify(graphs, evaluation_id, get_report(graphs, evaluation_id, number)))

    return JSONResponse(await computed(request, reader, check))


@router.get(
    "/reports/{number}/credentials",
    summary="The Verifiable Credentials that bear on a report (the signed records among the graphs it was computed "
    "from) as a Verifiable Presentation, JSON-LD; check it offline with `caie verify-credentials` (docs/trust.md)",
)
async def get_credentials(
    evaluation_id: str, number: int, graphs: GraphsDep, signer: SignerDep, _: ReaderDep
) -> JSONResponse:
    report = graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/reports/{number}").iri.value
    found = await run_in_threadpool(report_presentation, graphs, report, signer.keys)  # its status lists signed
    return JSONResponse(found, media_type=VP_MEDIA)
