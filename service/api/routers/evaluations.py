"""``/evaluations``: an evaluation's scope, its operational envelope and the approvals that gate it.

JSON in and out (linked to the JSON-LD context ``/contexts/evaluation.jsonld``), RDF by ``Accept``;
a scope may also be PUT as RDF. Handlers parse, call :mod:`service.envelope` / :mod:`service.envelope.approvals`
and shape the answer.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from ... import envelope
from ...core.auth import require
from ...core.config import Credential
from ...core.errors import Unprocessable
from ...core.formats import HTML, JSON, base_type, negotiate, rdf_format_for
from ...envelope import approvals
from ...envelope.unread import sign_off_reporting_unread
from ...scope import records as scope_records
from ..body import read_body
from ..body_limits import Body, body
from ..deps import GraphsDep, ReaderDep, SettingsDep, SignerDep, credential
from ..envelope_json import content_json, scope_json
from ..models import (
    AppropriatenessBody,
    EnvelopeBody,
    EvaluationBody,
    RelevanceBody,
    SignOffBody,
)
from ..rdf_response import context_iri, rdf_response
from ..shapes import approval_json, envelope_status_json, envelope_summary_json, evaluation_summary_json
from .resources import OFFERED, linked_data
from .workspace_home import evaluation_page

router = APIRouter(tags=["evaluations"])

CONTEXT_PATH = "/contexts/evaluation.jsonld"
RDF_OFFERED = ["text/turtle", "application/ld+json", "application/n-triples", "application/rdf+xml"]
CredentialDep = Annotated[Credential | None, Depends(credential)]
VersionQuery = Annotated[
    int | None, Query(ge=1, description="An earlier envelope version; the current one by default.")
]


def _context(settings: SettingsDep) -> str:
    return settings.base_url + CONTEXT_PATH.lstrip("/")


def _json(body: dict[str, object], context: str, status: int = 200, location: str | None = None) -> JSONResponse:
    """A JSON answer that is also JSON-LD: ``@context`` in the body and the context Link header (JSON-LD 1.1 §6.1)."""
    headers = {
        "Link": f'<{context}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"',
        "Vary": "Accept",
    }
    if location:
        headers["Location"] = location
    return JSONResponse({"@context": context, **body}, status_code=status, headers=headers)


def _agent(agent: Credential | None) -> Credential:
    """The credential, or 401 (roles are checked by the domain)."""
    return require(agent)


def _evaluation_json(evaluation: envelope.Evaluation) -> dict[str, object]:
    return {
        "@id": evaluation.iri,
        **scope_json(evaluation.scope),
        "envelope": envelope_summary_json(evaluation.envelope),
    }


@router.get("/evaluations", summary="Every evaluation, with its current envelope's version and digest")
async def list_evaluations(graphs: GraphsDep, settings: SettingsDep, _: ReaderDep) -> JSONResponse:
    found = await run_in_threadpool(scope_records.list_evaluations, graphs)
    return _json({"evaluations": [evaluation_summary_json(e) for e in found]}, _context(settings))


@router.post("/evaluations", summary="Create an evaluation from its JSON scope", status_code=201)
async def create_evaluation(
    body: EvaluationBody, graphs: GraphsDep, settings: SettingsDep, agent: CredentialDep
) -> JSONResponse:
    if body.id is None:
        raise Unprocessable("id: the evaluation's id is required (1-128 letters, digits, '.', '_' or '-')")
    evaluation, _ = await run_in_threadpool(
        lambda: envelope.put_scope(graphs, body.to_domain(body.id or ""), _agent(agent), must_be_new=True)
    )
    return _json(_evaluation_json(evaluation), _context(settings), 201, f"/evaluations/{evaluation.scope.id}")


@router.put("/evaluations/{evaluation_id}", summary="Create or replace an evaluation's scope (JSON or RDF)")
@body(Body.FILE)  # or JSON, by its Content-Type: read_body takes the JSON limit then
async def put_evaluation(
    evaluation_id: str, request: Request, graphs: GraphsDep, settings: SettingsDep, agent: CredentialDep
) -> JSONResponse:
    caller = _agent(agent)
    content_type = request.headers.get("content-type")
    data = await read_body(request, settings, Body.JSON if base_type(content_type) == JSON else Body.FILE)
    if base_type(content_type) == JSON:
        try:
            body = EvaluationBody.model_validate_json(data)
        except ValidationError as error:
            raise RequestValidationError(error.errors(include_url=False)) from error
        if body.id is not None and body.id != evaluation_id:
            raise Unprocessable(f"id: the body names evaluation {body.id!r} but the path names {evaluation_id!r}")
        evaluation, created = await run_in_threadpool(envelope.put_scope, graphs, body.to_domain(evaluation_id), caller)
        answer = _evaluation_json(evaluation)
    else:
        rdf_format = rdf_format_for(content_type)
        result = await run_in_threadpool(envelope.put_rdf, graphs, evaluation_id, data, rdf_format, caller)
        evaluation, created = result.evaluation, result.created
        answer = {
            **_evaluation_json(evaluation),
            "ignoredTriples": len(result.ignored),
            "ignoredExamples": [str(t) for t in result.ignored[:5]],
        }
    return _json(answer, _context(settings), 201 if created else 200, f"/evaluations/{evaluation_id}")


@router.get("/evaluations/{evaluation_id}", summary="An evaluation: JSON, its record graph as RDF, or a page")
async def get_evaluation(
    evaluation_id: str, request: Request, graphs: GraphsDep, settings: SettingsDep, _: ReaderDep
) -> Response:
    wanted = negotiate(request.headers.get("accept"), [JSON, *OFFERED])
    if wanted == HTML:  # a browser gets the evaluation's overview in the workspace
        return await evaluation_page(request, graphs, evaluation_id)
    if wanted != JSON:  # the evaluation's IRI is also its graph's: the record and its catalog entry
        return await linked_data(request)
    evaluation = await run_in_threadpool(envelope.get_evaluation, graphs, evaluation_id)
    return _json(_evaluation_json(evaluation), _context(settings))


@router.put("/evaluations/{evaluation_id}/envelope", summary="Write the current envelope version (409 once signed off)")
async def put_envelope(
    evaluation_id: str, body: EnvelopeBody, graphs: GraphsDep, settings: SettingsDep, agent: CredentialDep
) -> JSONResponse:
    env, created = await run_in_threadpool(
        envelope.put_envelope, graphs, evaluation_id, body.to_domain(), _agent(agent)
    )
    status = await run_in_threadpool(approvals.envelope_status, graphs, evaluation_id)
    return _json(
        _envelope_json(evaluation_id, env, status),
        _context(settings),
        201 if created else 200,
        f"/evaluations/{evaluation_id}/envelope",
    )


def _envelope_json(
    evaluation_id: str, env: envelope.Envelope, status: approvals.EnvelopeStatus | None
) -> dict[str, object]:
    body: dict[str, object] = {
        "@id": env.iri,
        "evaluation": evaluation_id,
        "version": env.version,
        "digest": env.digest,
        "revisionOf": env.revision_of,
        **content_json(env.content),
    }
    if status is not None and status.envelope == env.iri:
        body["status"] = envelope_status_json(status)
    return body


@router.get("/evaluations/{evaluation_id}/envelope", summary="The envelope with its digest and approval status")
async def get_envelope(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    settings: SettingsDep,
    _: ReaderDep,
    version: VersionQuery = None,
) -> Response:
    wanted = negotiate(request.headers.get("accept"), [JSON, *RDF_OFFERED])
    env, triples = await run_in_threadpool(envelope.envelope_at, graphs, evaluation_id, version)
    if wanted != JSON:
        return await run_in_threadpool(rdf_response, triples, wanted, None, context_iri(settings.base_url))
    status = await run_in_threadpool(approvals.envelope_status, graphs, evaluation_id)
    return _json(_envelope_json(evaluation_id, env, status), _context(settings))


@router.post(
    "/evaluations/{evaluation_id}/envelope/versions",
    summary="Start version n+1 of a signed-off envelope",
    status_code=201,
)
async def new_envelope_version(
    evaluation_id: str, graphs: GraphsDep, settings: SettingsDep, agent: CredentialDep
) -> JSONResponse:
    env = await run_in_threadpool(envelope.new_version, graphs, evaluation_id, _agent(agent))
    status = await run_in_threadpool(approvals.envelope_status, graphs, evaluation_id)
    return _json(
        _envelope_json(evaluation_id, env, status), _context(settings), 201, f"/evaluations/{evaluation_id}/envelope"
    )


def _approval(record: approvals.ApprovalRecord, settings: SettingsDep, evaluation_id: str) -> JSONResponse:
    return _json(approval_json(record), _context(settings), 201, f"/evaluations/{evaluation_id}/approvals")


@router.post(
    "/evaluations/{evaluation_id}/criteria/{criterion_id}/relevance",
    status_code=201,
    summary="The domain expert assesses a criterion's relevance (append-only; 409 once the envelope is signed off)",
)
async def assess_relevance(
    evaluation_id: str,
    criterion_id: str,
    body: RelevanceBody,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: CredentialDep,
    signer: SignerDep,
) -> JSONResponse:
    record = await run_in_threadpool(
        approvals.assess_relevance, graphs, evaluation_id, criterion_id, body.relevant, body.rationale, agent, signer
    )
    return _approval(record, settings, evaluation_id)


@router.post(
    "/evaluations/{evaluation_id}/dso/appropriateness",
    status_code=201,
    summary="The domain expert assesses the DSO's appropriateness for the evaluation (append-only)",
)
async def assess_dso_appropriateness(
    evaluation_id: str,
    body: AppropriatenessBody,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: CredentialDep,
    signer: SignerDep,
) -> JSONResponse:
    record = await run_in_threadpool(
        approvals.assess_dso_appropriateness, graphs, evaluation_id, body.appropriate, body.rationale, agent, signer
    )
    return _approval(record, settings, evaluation_id)


@router.post(
    "/evaluations/{evaluation_id}/envelope/appropriateness",
    status_code=201,
    summary="The domain expert assesses the envelope's appropriateness (append-only; 409 once it is signed off)",
)
async def assess_appropriateness(
    evaluation_id: str,
    body: AppropriatenessBody,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: CredentialDep,
    signer: SignerDep,
) -> JSONResponse:
    record = await run_in_threadpool(
        approvals.assess_appropriateness, graphs, evaluation_id, body.appropriate, body.rationale, agent, signer
    )
    return _approval(record, settings, evaluation_id)


@router.post(
    "/evaluations/{evaluation_id}/envelope/sign-off",
    status_code=201,
    summary="The organizational expert signs the envelope off, freezing it "
    "(409 naming what is missing, or the sign-off that froze it)",
)
async def sign_off(
    evaluation_id: str,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: CredentialDep,
    signer: SignerDep,
    body: SignOffBody | None = None,
) -> JSONResponse:
    comment = body.comment if body else None
    record, unread = await run_in_threadpool(sign_off_reporting_unread, graphs, evaluation_id, agent, comment, signer)
    return _json(
        {**approval_json(record), "warnings": [graph.describe() for graph in unread]},
        _context(settings),
        201,
        f"/evaluations/{evaluation_id}/approvals",
    )


@router.get("/evaluations/{evaluation_id}/approvals", summary="Every approval of the evaluation, oldest first")
async def list_approvals(
    evaluation_id: str, request: Request, graphs: GraphsDep, settings: SettingsDep, _: ReaderDep
) -> Response:
    wanted = negotiate(request.headers.get("accept"), [JSON, *RDF_OFFERED])
    found, triples = await run_in_threadpool(approvals.list_approvals, graphs, evaluation_id)
    if wanted != JSON:
        return await run_in_threadpool(rdf_response, triples, wanted, None, context_iri(settings.base_url))
    return _json({"approvals": [approval_json(r) for r in found]}, _context(settings))
