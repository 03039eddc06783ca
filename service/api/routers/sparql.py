"""``/sparql``: the SPARQL 1.1 Protocol query operation, read-only (https://www.w3.org/TR/sparql11-protocol/).

Queries come by GET, POST form and POST ``application/sparql-query`` (§2.1.1-2.1.3); ``GET`` without a query
answers the service description. Parsing the request, choosing the dataset and running the query are in
:mod:`service.core.sparql`; this module only reads HTTP.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse
from starlette.datastructures import QueryParams

from ...core.config import Credential, Settings
from ...core.errors import BadRequest, UnsupportedMediaType
from ...core.formats import GRAPH_FORMATS, HTML, base_type, negotiate
from ...core.service_description import service_description
from ...core.sparql import DEFAULT_GRAPH, NAMED_GRAPH, QUERY, ProtocolQuery, execute, protocol_query, refuse_update
from ...core.store import QueryAnswer
from ..body import read_body
from ..body_limits import Body, body
from ..deps import ReaderDep, SettingsDep
from ..guarded import guarded
from ..methods import allow_only
from ..rdf_response import rdf_response

router = APIRouter(tags=["sparql"])

QUERY_PAGE = "/query"
"""Where a browser asking ``/sparql`` for HTML is sent: the query page."""
DESCRIPTION_FORMATS = (*GRAPH_FORMATS[:4], HTML)

_EXAMPLE = "SELECT ?graph ?kind WHERE { GRAPH ?catalog { ?graph <https://w3id.org/ob-caie/catalog/kind> ?kind } }"
_GRAPH_PARAMETER = {
    "in": "query",
    "schema": {"type": "array", "items": {"type": "string", "format": "iri"}},
    "style": "form",
    "explode": True,
}
_GRAPHS = [
    {
        "name": DEFAULT_GRAPH,
        **_GRAPH_PARAMETER,
        "description": "Graphs whose merge is the default graph; replaces the query's FROM (for POST: in the URL).",
    },
    {
        "name": NAMED_GRAPH,
        **_GRAPH_PARAMETER,
        "description": "The named graphs; replaces the query's FROM NAMED (for POST: in the URL).",
    },
]
_GET: dict[str, Any] = {
    "parameters": [
        {
            "name": QUERY,
            "in": "query",
            "schema": {"type": "string"},
            "example": _EXAMPLE,
            "description": "The SPARQL query (exactly one). Without it, GET answers the service description.",
        },
        *_GRAPHS,
    ]
}
_POST: dict[str, Any] = {
    "parameters": _GRAPHS,
    "requestBody": {
        "required": True,
        "content": {
            "application/sparql-query": {"schema": {"type": "string"}, "example": _EXAMPLE},
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "required": [QUERY],
                    "properties": {
                        QUERY: {"type": "string"},
                        DEFAULT_GRAPH: {"type": "array", "items": {"type": "string"}},
                        NAMED_GRAPH: {"type": "array", "items": {"type": "string"}},
                    },
                }
            },
        },
    },
}


def base_iri(settings: Settings) -> str:
    """The base IRI of a client's query: the endpoint's own IRI, ``{base}sparql`` (so ``<graphs/x>`` is ``{base}graphs/x``)."""
    return f"{settings.base_url}sparql"


def request_parameters(query_params: QueryParams) -> dict[str, list[str]]:
    parameters: dict[str, list[str]] = {}
    for name, value in query_params.multi_items():
        parameters.setdefault(name, []).append(value)
    return parameters


async def _answer(
    request: Request, protocol: ProtocolQuery, settings: Settings, credential: Credential | None
) -> Response:
    accept, base = request.headers.get("accept"), base_iri(settings)
    # The query runs under the guard's limits (docs/protection.md): only the store's answer() call is guarded.
    answer = await guarded(request, credential, lambda store: execute(store, protocol, accept, base))
    return query_response(answer)


def query_response(answer: QueryAnswer) -> Response:
    """A query's answer as an HTTP response (the fast lane sends the same, :mod:`service.api.fastlane`)."""
    return Response(answer.body, media_type=answer.media_type, headers={"Vary": "Accept"})


def _description(request: Request, settings: Settings) -> Response:
    wanted = negotiate(request.headers.get("accept"), DESCRIPTION_FORMATS)
    if wanted == HTML:
        return RedirectResponse(QUERY_PAGE, status_code=303, headers={"Vary": "Accept"})
    triples = service_description(base_iri(settings), request.app.state.catalog.graph, f"{settings.base_url}graphs")
    return rdf_response(triples, wanted)


@router.api_route(
    "/sparql",
    methods=["GET", "HEAD"],
    openapi_extra=_GET,
    summary="Run a read-only SPARQL query; without one, the SPARQL service description",
)
async def sparql_get(request: Request, settings: SettingsDep, credential: ReaderDep) -> Response:
    protocol = protocol_query(request_parameters(request.query_params))
    if protocol is None:
        return _description(request, settings)
    return await _answer(request, protocol, settings, credential)


@router.post(
    "/sparql",
    openapi_extra=_POST,
    summary="Run a read-only SPARQL query sent in the body (form field 'query', or application/sparql-query)",
)
@body(Body.QUERY)
async def sparql_post(request: Request, settings: SettingsDep, credential: ReaderDep) -> Response:
    media = base_type(request.headers.get("content-type"))
    url = request_parameters(request.query_params)
    if media == "application/sparql-update":
        refuse_update()
    if media not in ("application/sparql-query", "application/x-www-form-urlencoded"):
        raise UnsupportedMediaType(
            f"cannot read {media or 'no Content-Type'}: POST application/sparql-query or application/x-www-form-urlencoded"
        )
    text = (await read_body(request, settings, Body.QUERY)).decode("utf-8", errors="replace")
    if media == "application/sparql-query":
        protocol = protocol_query(url, body_query=text)
    else:
        form = parse_qs(text, keep_blank_values=True)
        protocol = protocol_query({name: [*url.get(name, []), *form.get(name, [])] for name in {*url, *form}})
    if protocol is None:
        raise BadRequest("the form has no 'query' field")
    return await _answer(request, protocol, settings, credential)


allow_only(router, "/sparql", ("GET", "HEAD", "POST"))
