"""``/sparql``: the SPARQL 1.1 Protocol query operation, read-only (https://www.w3.org/TR/sparql11-protocol/)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import parse_qs

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from ...core.errors import BadRequest, UnsupportedMediaType
from ...core.formats import GRAPH_FORMATS, RESULT_ALIASES, RESULT_FORMATS, base_type, negotiate
from ...core.sparql import query_form, refuse_update
from ..body import read_body
from ..deps import ReaderDep, SettingsDep, StoreDep

router = APIRouter(tags=["sparql"])

_EXAMPLE = "SELECT ?graph ?kind WHERE { GRAPH ?catalog { ?graph <https://w3id.org/ob-caie/catalog/kind> ?kind } }"


def _answer(query: str, accept: str | None, store: StoreDep) -> Response:
    form = query_form(query)
    offered = list(GRAPH_FORMATS[:4]) if form.returns_graph else list(RESULT_FORMATS)
    media = negotiate(accept, offered, aliases=RESULT_ALIASES)
    answer = store.answer(query, media, union=True)
    return Response(answer.body, media_type=answer.media_type, headers={"Vary": "Accept"})


@router.get("/sparql", summary="Run a read-only SPARQL query (default graph: the union of all graphs)")
async def sparql_get(
    request: Request, store: StoreDep, _: ReaderDep,
    query: Annotated[str | None, Query(description="The SPARQL query", examples=[_EXAMPLE])] = None,
) -> Response:
    if "update" in request.query_params:
        refuse_update()
    if query is None:
        raise BadRequest("give a query: GET /sparql?query=..., or POST it (form field 'query' or application/sparql-query)")
    return await run_in_threadpool(_answer, query, request.headers.get("accept"), store)


@router.post("/sparql", summary="Run a read-only SPARQL query sent in the body")
async def sparql_post(request: Request, store: StoreDep, settings: SettingsDep, _: ReaderDep) -> Response:
    media = base_type(request.headers.get("content-type"))
    body = await read_body(request, settings.max_body_bytes)
    if media == "application/sparql-update":
        refuse_update()
    if media == "application/sparql-query":
        query = body.decode("utf-8", errors="replace")
    elif media == "application/x-www-form-urlencoded":
        fields = parse_qs(body.decode("utf-8", errors="replace"))
        if "update" in fields:
            refuse_update()
        if "query" not in fields:
            raise BadRequest("the form has no 'query' field")
        query = fields["query"][0]
    else:
        raise UnsupportedMediaType(
            f"cannot read {media or 'no Content-Type'}: POST application/sparql-query or application/x-www-form-urlencoded"
        )
    return await run_in_threadpool(_answer, query, request.headers.get("accept"), store)
