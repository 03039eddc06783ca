"""``POST /evaluations/imports``: an outside evaluation record (RDF) becomes a new evaluation.

Credential and role are checked before anything else (401, 403), then the body is read and handed to
:func:`service.scope.imports.import_record`, which validates and stores it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ...core.config import Credential
from ...core.formats import rdf_format_for
from ...core.roles import require_importer
from ...scope.imports import ImportedRecord, import_record
from ..body import read_body
from ..body_limits import Body, body
from ..deps import GraphsDep, SettingsDep, WriterDep


def importer(agent: WriterDep) -> Credential:
    """The caller, if an evaluation operator or admin (checked before the query and body are)."""
    return require_importer(agent)


router = APIRouter(tags=["evaluations"])

ImporterDep = Annotated[Credential, Depends(importer)]
IdQuery = Annotated[str, Query(alias="id", max_length=128, description="Identifier of the new evaluation.")]
SourceQuery = Annotated[str | None, Query(max_length=2000, description="The http(s) IRI the record came from.")]
TitleQuery = Annotated[str | None, Query(max_length=500, description="Title for the catalog.")]


def _json(imported: ImportedRecord) -> dict[str, object]:
    return {
        "id": imported.evaluation_id,
        "graph": imported.graph,
        "triples": imported.triples,
        "digest": imported.digest,
        "importer": imported.importer,
        "importerIri": imported.importer_iri,
        "importedAt": imported.imported_at.isoformat(),
        "source": imported.source,
        "conforms": True,
    }


@router.post(
    "/evaluations/imports",
    status_code=201,
    summary="Import an outside evaluation record (RDF) as a new evaluation, checked against shapes/record.ttl",
)
@body(Body.FILE)
async def import_evaluation(
    request: Request,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: ImporterDep,
    evaluation_id: IdQuery,
    source: SourceQuery = None,
    title: TitleQuery = None,
) -> JSONResponse:
    rdf_format = rdf_format_for(request.headers.get("content-type"))
    data = await read_body(request, settings, Body.FILE)
    imported = await run_in_threadpool(
        import_record,
        graphs,
        evaluation_id,
        data,
        rdf_format,
        agent,
        source=source,
        title=title,
        spec_record_max_triples=settings.spec_record_max_triples,
    )
    return JSONResponse(
        _json(imported), status_code=201, headers={"Location": f"/evaluations/{imported.evaluation_id}"}
    )
