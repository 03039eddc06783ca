"""Step 5 over REST: determinations on a run's responses (by people, or by the rule judges an operator starts),
the domain expert's attestations (append-only; a correction supersedes), and their listings."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from ...core.catalog import GraphKind
from ...core.config import Credential
from ...core.errors import NotFound, UnsupportedMediaType
from ...core.formats import JSON, negotiate
from ...core.namespaces import EARL
from ...credentials.model import VC_MEDIA
from ...credentials.records import document as credential_document
from ...credentials.signing import credential_iri
from ...credentials.status import status_list, status_list_iri
from ...judgments.attestations import AttestationView, attest, attestations
from ...judgments.automated import judge_run
from ...judgments.human_steps import MEDIA, Imported, import_steps, read_steps
from ...judgments.records import Ruling, determinations, record_rulings, run_criterion
from ...judgments.separation import Separation
from ..body import read_body
from ..body_limits import Body, body
from ..deps import GraphsDep, ReaderDep, SettingsDep, SignerDep, credential
from ..models_judgments import AttestationBody, DeterminationsBody
from ..shapes import attestation_json, determination_json
from .resources import OFFERED, linked_data

router = APIRouter(prefix="/evaluations/{evaluation_id}", tags=["determinations and attestations"])

CredentialDep = Annotated[Credential | None, Depends(credential)]


@router.post(
    "/runs/{number}/determinations",
    status_code=201,
    summary="Record people's determinations on a run's responses, as one batch (annotator or domain expert)",
)
async def post_determinations(
    evaluation_id: str,
    number: int,
    body: DeterminationsBody,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: CredentialDep,
    signer: SignerDep,
) -> JSONResponse:
    def record() -> list[str]:
        rulings = [
            Ruling(
                r.probe,
                run_criterion(graphs, evaluation_id, number, r.criterion),
                r.turn,
                EARL + r.outcome,
                r.rationale,
                (r.pointer.start, r.pointer.end) if r.pointer else None,
            )
            for r in body.determinations
        ]
        return record_rulings(
            graphs, evaluation_id, number, rulings, agent, separation=Separation.of(settings, graphs), signer=signer
        )

    made = await run_in_threadpool(record)
    return JSONResponse({"determinations": made}, status_code=201)


_STEPS = {"schema": {"type": "string", "format": "binary"}}


@router.post(
    "/runs/{number}/human-steps",
    status_code=201,
    openapi_extra={"requestBody": {"required": True, "content": {m: _STEPS for m in MEDIA}}},
    summary="Import a person's determinations and attestations from a file (JSON Lines or CSV, the body), as "
    "that person; every line checked first, nothing recorded on a refusal (docs/judgments.md)",
)
@body(Body.FILE)
async def post_human_steps(
    evaluation_id: str,
    number: int,
    request: Request,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: CredentialDep,
    signer: SignerDep,
) -> JSONResponse:
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in MEDIA:
        raise UnsupportedMediaType(f"a file of steps is one of {', '.join(MEDIA)}, not {media or 'untyped'}")
    data = await read_body(request, settings, Body.FILE)

    def record() -> Imported:
        found = read_steps(data, MEDIA[media])
        return import_steps(
            graphs,
            evaluation_id,
            number,
            found,
            agent,
            separation=Separation.of(settings, graphs),
            supersede_role=settings.supersede_role,
            signer=signer,
        )

    made = await run_in_threadpool(record)
    return JSONResponse(
        {"determinations": list(made.determinations), "attestations": list(made.attestations)}, status_code=201
    )


@router.post(
    "/runs/{number}/rule-judgments",
    status_code=201,
    summary="Apply every judging rule in the store to the run's answered cases (evaluation operator)",
)
async def post_rule_judgments(evaluation_id: str, number: int, graphs: GraphsDep, agent: CredentialDep) -> JSONResponse:
    made = await run_in_threadpool(judge_run, graphs, evaluation_id, number, agent)
    return JSONResponse({"determinations": made}, status_code=201)


@router.get("/determinations", summary="The evaluation's determinations; filter by criterion IRI or run IRI")
async def get_determinations(
    evaluation_id: str, graphs: GraphsDep, _: ReaderDep, criterion: str | None = None, run: str | None = None
) -> JSONResponse:
    found = await run_in_threadpool(lambda: determinations(graphs, evaluation_id, criterion=criterion, run=run))
    return JSONResponse({"determinations": [determination_json(d) for d in found]})


@router.post(
    "/runs/{number}/attestations",
    status_code=201,
    summary="Attest a criterion's outcome for a run (domain expert); a correction supersedes, with a reason",
)
async def post_attestation(
    evaluation_id: str,
    number: int,
    body: AttestationBody,
    graphs: GraphsDep,
    settings: SettingsDep,
    signer: SignerDep,
    agent: CredentialDep,
) -> JSONResponse:
    def record() -> AttestationView:
        criterion = run_criterion(graphs, evaluation_id, number, body.criterion)
        return attest(
            graphs,
            evaluation_id,
            number,
            criterion,
            EARL + body.outcome,
            body.rationale,
            body.sufficiency,
            body.appropriateness,
            agent,
            supersedes=body.supersedes,
            reason=body.reason,
            separation=Separation.of(settings, graphs),
            supersede_role=settings.supersede_role,
            signer=signer,
        )

    made = await run_in_threadpool(record)
    # the credential that signs it, written with it (docs/trust.md)
    signed = {"credential": credential_iri(made.iri.rsplit("/attestations/", 1)[0])}
    return JSONResponse(attestation_json(made) | signed, status_code=201)


@router.get(
    "/judgments/{number}/credential",
    summary="The Verifiable Credential that signs a judgments batch (an attestation), as its signer's key signed it; "
    "other media types describe the credential's graph",
)
async def get_credential(
    evaluation_id: str, number: int, request: Request, graphs: GraphsDep, _: ReaderDep
) -> Response:
    if negotiate(request.headers.get("accept"), [JSON, VC_MEDIA, *OFFERED]) not in (JSON, VC_MEDIA):
        return await linked_data(request)
    iri = credential_iri(graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/judgments/{number}").iri.value)
    found = await run_in_threadpool(credential_document, graphs, iri)
    return JSONResponse(found, media_type=VC_MEDIA)


@router.get(
    "/status-list",
    summary="The evaluation's W3C Bitstring Status List credential, signed by the service's key: the bit an "
    "attestation's credential names (its credentialStatus) is set once the attestation is superseded (docs/trust.md)",
)
async def get_status_list(evaluation_id: str, graphs: GraphsDep, signer: SignerDep, _: ReaderDep) -> JSONResponse:
    iri = status_list_iri(graphs.member(GraphKind.EVALUATION, evaluation_id).iri.value)
    found = await run_in_threadpool(status_list, graphs, signer.keys, iri)
    if found is None:
        raise NotFound(f"no status list <{iri}>: the evaluation has no signed attestation")
    return JSONResponse(found, media_type=VC_MEDIA)


@router.get("/attestations", summary="The evaluation's attestations, each with whether it is current")
async def get_attestations(evaluation_id: str, graphs: GraphsDep, _: ReaderDep) -> JSONResponse:
    found = await run_in_threadpool(attestations, graphs, evaluation_id)
    return JSONResponse({"attestations": [attestation_json(a) for a in found]})
