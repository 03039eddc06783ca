"""The OpenAPI document, made true to what the routes answer, and Swagger UI at ``/docs`` with no CDN.

FastAPI documents a route from its signature: a JSON 200 and a 422. The routes answer more, by a few
rules that hold across the service, so :func:`document` adds them centrally (docs/api.md lists them):

- **Security.** Bearer tokens (RFC 6750, :mod:`service.core.auth`) as the ``bearer`` scheme. A write needs
  one (:class:`.security.WritesNeedCredentials`); a read that takes a credential needs one only when the
  deployment's reads are not public; ``/health`` and the JSON-LD context take none.
- **Errors** as RFC 9457 problem details (:mod:`.problems`), each status where it can happen: 400 for a
  malformed parameter or body, 401 where a credential is read, 403, 409 and 422 on writes, 404 for a path
  naming something, 406 where the answer is negotiated, 413 wherever a body is taken (each route's limit,
  :mod:`.body_limits`), 415 where a route reads its body itself,
  503 when the store fails.
- **Media types** each route negotiates (:data:`NEGOTIATED`), and the bodies a route reads itself
  (:data:`RAW_BODIES`), which FastAPI cannot see.
- **Parameters** named alike mean alike (:data:`PARAMETERS`): an ``evaluation_id`` is an identifier, a
  ``kind`` a graph kind, a ``rule`` an IRI.

Swagger UI's files come from the ``fastapi-offline`` package and are served under ``/docs/assets``; the page
gets its own Content-Security-Policy, which allows its one inline script by hash and nothing from elsewhere.
"""

from __future__ import annotations

import base64
import hashlib
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from copy import deepcopy
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from ..core.catalog import GraphKind
from ..core.config import Settings
from ..core.formats import GRAPH_FORMATS, HTML, JSON, RDF_FORMATS, RESULT_FORMATS
from ..core.graphs import IDENTIFIER_PATTERN
from ..credentials.model import VC_MEDIA, VP_MEDIA
from ..publishing.ontology_docs import CATEGORIES, MAX_PAGE
from ..scenarios.facets import SCENARIO_KEY_LENGTH
from ..scenarios.model import ScenarioStatus
from ..scenarios.records import MAX_FACETS
from . import idempotency
from .models import HTTP_IRI
from .problems import PROBLEM
from .routers import evaluations, interop, pages, records, resources, sparql
from .security import QUERY_POSTS, SAFE_METHODS

FACET_NAME = r"[A-Za-z_][A-Za-z0-9_.-]*"
"""A facet's short name: a facet property's local name, as the scenario listing shows it."""

Spec = dict[str, Any]

SCHEME = "bearer"
DOCS_URL = "/docs"
ASSETS_URL = "/docs/assets"

JSON_LD = "application/ld+json"
PUBLISHED = (JSON, *resources.OFFERED)
"""A JSON route whose path is also a minted IRI: its JSON, and what every published IRI answers in."""
QUERY_ANSWERS = tuple(dict.fromkeys((*RESULT_FORMATS, *GRAPH_FORMATS)))
NEGOTIATED: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("get", "/"): (HTML,),
    ("get", "/contexts/{name}"): (JSON_LD,),
    ("get", "/graphs"): (JSON, HTML, JSON_LD, "text/turtle", *GRAPH_FORMATS[2:]),
    ("get", "/graphs/{kind}/{identifier}"): (*GRAPH_FORMATS, HTML),
    ("get", "/sparql"): tuple(dict.fromkeys((*QUERY_ANSWERS, *sparql.DESCRIPTION_FORMATS))),
    ("post", "/sparql"): QUERY_ANSWERS,
    ("get", "/rdf-graph-store"): GRAPH_FORMATS,
    ("get", "/evaluations/{evaluation_id}"): PUBLISHED,
    ("get", "/evaluations/{evaluation_id}/envelope"): (JSON, *evaluations.RDF_OFFERED),
    ("get", "/evaluations/{evaluation_id}/approvals"): (JSON, *evaluations.RDF_OFFERED),
    ("get", "/evaluations/{evaluation_id}/plans/{number}"): PUBLISHED,
    ("get", "/evaluations/{evaluation_id}/scenarios"): PUBLISHED,
    ("get", "/evaluations/{evaluation_id}/runs/{number}"): PUBLISHED,
    ("get", "/evaluations/{evaluation_id}/reports/{number}"): PUBLISHED,
    (
        "get",
        (
            "/evaluations/{evaluation_id}/reports/{number}/comparisons/{comparison}/{reference_evaluation}/"
            "{reference_number}"
        ),
    ): PUBLISHED,
    ("get", "/evaluations/{evaluation_id}/reports/{number}/page"): (HTML,),
    ("get", "/evaluations/{evaluation_id}/judgments/{number}/credential"): (JSON, VC_MEDIA, *resources.OFFERED),
    ("get", "/evaluations/{evaluation_id}/reports/{number}/credentials"): (VP_MEDIA,),
    ("get", "/evaluations/{evaluation_id}/record"): tuple(records.DATASET_FORMATS),
    ("get", "/evaluations/{evaluation_id}/record/caie"): tuple(interop.GRAPH_FORMATS),
    ("get", "/doc/{kind}/{identifier}"): (HTML,),
    ("get", "/.well-known/void"): tuple(pages.OFFERED),
    ("get", "/dcat"): tuple(pages.OFFERED),
    ("get", "/query"): (HTML,),
    ("get", "/{path}"): tuple(resources.OFFERED),
}
"""The media types a 200 may have, by operation (a HEAD's are its GET's), where they are not FastAPI's JSON;
more than one is negotiated (406 when none fits). Each list is the route's own where it has one."""

# A document in the media type's syntax, as bytes (any text, the empty document too); JSON-LD is JSON, and its
# parser reads a JSON scalar as no triples, so no JSON type is promised.
_DOCUMENT: Spec = {"type": "string", "format": "binary"}
_RDF: Mapping[str, Spec] = {
    media: {"description": "A JSON-LD document"} if media == JSON_LD else _DOCUMENT for media in RDF_FORMATS
}
_ONTOLOGY = "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n<https://example.org/ontology> a owl:Ontology .\n"
_GRAPH_BODY = {
    **_RDF,
    "text/turtle": {**_DOCUMENT, "example": _ONTOLOGY},
}  # the smallest graph /graphs/ontologies takes
RAW_BODIES: Mapping[tuple[str, str], Mapping[str, Spec]] = {
    ("put", "/graphs/{kind}/{identifier}"): _GRAPH_BODY,
    ("post", "/graphs/{kind}/{identifier}"): _GRAPH_BODY,
    ("post", "/evaluations/imports"): _RDF,
    ("put", "/evaluations/{evaluation_id}"): {JSON: {"$ref": "#/components/schemas/EvaluationBody"}, **_RDF},
}
"""Bodies that routes read themselves (RDF), by operation and media type, where the route does not state them
(``/sparql`` does, in its decorator)."""

_IDENTIFIER: Spec = {"type": "string", "pattern": IDENTIFIER_PATTERN}
PARAMETERS: Mapping[tuple[str, str], Spec] = {
    ("path", "evaluation_id"): _IDENTIFIER,
    ("path", "identifier"): _IDENTIFIER,
    ("path", "criterion_id"): _IDENTIFIER,
    ("path", "name"): _IDENTIFIER,
    ("path", "kind"): {"type": "string", "enum": [kind.value for kind in GraphKind]},
    ("path", "scenario"): {"type": "string", "pattern": rf"^(?:[0-9a-f]{{{SCENARIO_KEY_LENGTH}}}|[0-9]{{1,9}})$"},
    ("path", "path"): {"type": "string", "pattern": r"^[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*$"},
    ("path", "number"): {"type": "integer", "minimum": 1},
    ("query", "id"): _IDENTIFIER,
    ("query", "status"): {"anyOf": [{"type": "string", "enum": [s.value for s in ScenarioStatus]}, {"type": "null"}]},
    ("query", "rule"): {"anyOf": [{"type": "string", "pattern": f"^{HTTP_IRI}$"}, {"type": "null"}]},
    ("query", "source"): {
        "anyOf": [{"type": "string", "pattern": f"^{HTTP_IRI}$", "maxLength": 2000}, {"type": "null"}]
    },
    ("query", "criterion"): {
        "anyOf": [{"type": "string", "pattern": rf"^(?:{HTTP_IRI}|{IDENTIFIER_PATTERN[1:-1]})$"}, {"type": "null"}]
    },
    ("query", "list"): {"anyOf": [{"type": "string", "enum": list(CATEGORIES)}, {"type": "null"}]},
    ("query", "page"): {"anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_PAGE}, {"type": "null"}]},
    ("query", "facet"): {
        "type": "array",
        "maxItems": MAX_FACETS,
        "items": {"type": "string", "pattern": rf"^(?:{FACET_NAME}|{HTTP_IRI})={HTTP_IRI}$"},
    },
}
"""Parameters named alike mean alike: their schemas, where the route's type says less than it accepts."""

PROBLEM_SCHEMA: Spec = {
    "title": "Problem",
    "description": "An error as RFC 9457 problem details (service/api/problems.py).",
    "type": "object",
    "required": ["type", "status", "title", "detail"],
    "properties": {
        "type": {"type": "string", "description": "always about:blank: the status says what kind of error"},
        "status": {"type": "integer", "minimum": 400, "maximum": 599},
        "title": {"type": "string", "description": "the error's class, e.g. NotFound"},
        "detail": {"type": "string", "description": "what is wrong, for a person"},
        "errors": {"description": "the parts at fault: validation errors or SHACL results"},
        "conforms": {"type": "boolean"},
        "violations": {"type": "array"},
    },
}

ERRORS: Mapping[int, str] = {
    400: "The request cannot be read: a malformed parameter, path or body",
    401: "No credential, or one this deployment does not know: send 'Authorization: Bearer <token>'",
    403: "The credential's roles do not allow this",
    404: "Nothing is there: the evaluation, graph, plan or resource does not exist",
    406: "None of the media types in Accept can be produced",
    409: "The action contradicts the current state (e.g. a signed-off envelope, a graph changed meanwhile)",
    413: "The body exceeds its route's limit (a query, a file or JSON: docs/protection.md)",
    415: "The body's media type is not one this operation reads",
    422: "The input parses but breaks a rule: a field's value, or a rule across records",
    429: "The client runs as many queries at once as it may, or every query worker is busy: retry after Retry-After",
    500: "The query was stopped at a configured limit (time, result size, memory), named in the problem",
    503: "The store did not answer, or the work stopped because the client left or the service is stopping",
}


ERROR_HEADERS: Mapping[int, tuple[str, str]] = {
    401: ("WWW-Authenticate", 'Bearer realm="ob-caie" (RFC 6750 §3)'),
    429: ("Retry-After", "Seconds to wait before trying again"),
}
NAMING = frozenset({("query", "graph")})
"""Query parameters that name a resource (the Graph Store Protocol's ``?graph=IRI``): 404 when there is none."""
GUARDED = frozenset({"/sparql"})
"""Paths whose operations run a client's query under the query guard (:mod:`.guarded`, docs/protection.md)."""


@dataclass(frozen=True)
class Operation:
    """One operation of the document, with the facts the error rules read."""

    method: str
    path: str
    spec: Spec
    takes_credential: bool

    @property
    def writes(self) -> bool:
        return self.method.upper() not in SAFE_METHODS and self.path not in QUERY_POSTS

    @property
    def has_input(self) -> bool:
        return bool(self.spec.get("parameters") or self.spec.get("requestBody"))

    @property
    def reads_own_body(self) -> bool:
        """Whether the route reads its body itself (RDF, SPARQL), under the size limit: FastAPI parses only JSON."""
        return any(media != JSON for media in self.spec.get("requestBody", {}).get("content", {}))

    @property
    def names_something(self) -> bool:
        """Whether a parameter names a resource that may not exist: a path parameter, or a graph's IRI."""
        return any(p["in"] == "path" or (p["in"], p["name"]) in NAMING for p in self.spec.get("parameters", []))


def _media(op: Operation) -> tuple[str, ...]:
    """What a 200 of ``op`` may be; a HEAD's headers are its GET's."""
    return NEGOTIATED.get(("get" if op.method == "head" else op.method, op.path), ())


STATUS_RULES: Mapping[int, Callable[[Operation], bool]] = {
    400: lambda op: op.has_input,
    401: lambda op: op.takes_credential or op.writes,
    403: lambda op: op.writes,
    404: lambda op: op.names_something or op.writes,
    406: lambda op: len(_media(op)) > 1,
    409: lambda op: op.writes,
    413: lambda op: "requestBody" in op.spec,  # every body has its route's limit (.body_limits)
    415: lambda op: op.reads_own_body,
    422: lambda op: op.has_input or op.writes,
    429: lambda op: op.path in GUARDED,
    500: lambda op: op.path in GUARDED,
    503: lambda op: op.takes_credential or op.path == "/health",  # every store read; /health asks the store too
}
"""When each error status can happen; :data:`ERRORS` says what it means."""


def _problem_response(status: int) -> Spec:
    """Problem details, or the same error as a page for a client that prefers HTML (:func:`.problems.respond`)."""
    response: Spec = {
        "description": ERRORS[status],
        "content": {
            PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}},
            HTML: {"schema": {"type": "string"}},
        },
    }
    header = ERROR_HEADERS.get(status)
    if header:
        response["headers"] = {header[0]: {"description": header[1], "schema": {"type": "string"}}}
    return response


def _is_authorization(parameter: Spec) -> bool:
    return bool(parameter["in"] == "header" and parameter["name"].lower() == "authorization")


def _refine_parameters(op: Operation) -> None:
    """Drop the Authorization header (the security scheme states it); give named parameters their schema."""
    parameters = [p for p in op.spec.get("parameters", []) if not _is_authorization(p)]
    for parameter in parameters:
        schema = PARAMETERS.get((parameter["in"], parameter["name"]))
        if schema is not None:
            parameter["schema"] = {
                **deepcopy(schema),
                **{k: v for k, v in parameter["schema"].items() if k in ("title", "description", "default")},
            }
    if parameters:
        op.spec["parameters"] = parameters
    else:
        op.spec.pop("parameters", None)


def _refine_responses(op: Operation) -> None:
    """The 200's media types where the route negotiates, and every error status the rules give ``op``."""
    responses: Spec = op.spec["responses"]
    media = _media(op)
    success = next((code for code in responses if code.startswith("2")), None)
    if media and success:
        schema = responses[success].get("content", {}).get(JSON, {}).get("schema", {})
        responses[success]["content"] = {m: {"schema": schema if m == JSON else {}} for m in media}
    if op.method == "put" and success:  # RFC 9110 §9.3.4: 201 when it created the resource, 200 when it replaced it
        for code, description in (("200", "Replaced"), ("201", "Created")):
            responses.setdefault(code, {**deepcopy(responses[success]), "description": description})
    for status, applies in STATUS_RULES.items():
        if applies(op):
            responses[str(status)] = _problem_response(status)
        elif str(status) == "422":
            responses.pop("422", None)


def _body(schema: Spec) -> Spec:
    """A media type's entry: its schema, and its example beside it (where OpenAPI and Swagger UI read it)."""
    return {
        "schema": {k: v for k, v in schema.items() if k != "example"},
        **({"example": schema["example"]} if "example" in schema else {}),
    }


def _security(op: Operation, public_reads: bool) -> list[Spec]:
    """None for what takes no credential; else required, or optional (``{}``) for a read when reads are public."""
    if not (op.takes_credential or op.writes):
        return []
    required: list[Spec] = [{SCHEME: []}]
    return required if op.writes or not public_reads else [{}, *required]


def _operations(paths: Spec) -> Iterable[Operation]:
    for path, item in paths.items():
        for method, spec in item.items():
            yield Operation(method, path, spec, any(_is_authorization(p) for p in spec.get("parameters", [])))


def document(app: FastAPI, settings: Settings) -> Spec:
    """The OpenAPI 3.1 document of ``app``: FastAPI's, with the service's rules applied (see the module)."""
    with warnings.catch_warnings():  # a route taking GET and HEAD has one id for both: made unique below
        warnings.filterwarnings("ignore", "Duplicate Operation ID", UserWarning)
        spec = get_openapi(
            title=app.title,
            version=app.version,
            summary=app.summary,
            description=app.description,
            routes=app.routes,
            tags=app.openapi_tags,
        )
    components = spec.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schemas["Problem"] = PROBLEM_SCHEMA
    components["securitySchemes"] = {
        SCHEME: {
            "type": "http",
            "scheme": "bearer",
            "description": "A token the deployment configured (CAIE_TOKENS): it names the agent and its roles.",
        }
    }
    spec["security"] = [{SCHEME: []}]
    if "PlanBody" in schemas:  # the deployment's own limit (CAIE_MAX_PLAN_BUDGET) is part of the contract
        schemas["PlanBody"]["properties"]["budget"]["maximum"] = settings.max_plan_budget
    seen: set[str] = set()
    for op in _operations(spec.get("paths", {})):
        if op.spec.get("operationId") in seen:  # one handler for GET and HEAD: FastAPI gives both one id
            op.spec["operationId"] += f"_{op.method}"
        seen.add(op.spec.get("operationId", ""))
        body = RAW_BODIES.get((op.method, op.path))
        if body and "requestBody" not in op.spec:
            op.spec["requestBody"] = {"required": True, "content": {m: _body(s) for m, s in body.items()}}
        _refine_parameters(op)
        _refine_responses(op)
        if idempotency.recording(op.method, op.path):
            idempotency.document(op.spec)
        op.spec["security"] = _security(op, settings.public_reads)
    return spec


def _docs_page(app: FastAPI) -> tuple[str, str]:
    """Swagger UI's page on the packaged assets, and the Content-Security-Policy that lets exactly it run."""
    page = bytes(
        get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
            oauth2_redirect_url=None,
            swagger_ui_parameters={"persistAuthorization": True},
        ).body
    ).decode()
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in scripts)
    policy = (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return page, policy


def install(app: FastAPI, settings: Settings) -> None:
    """The true document at ``app.openapi_url`` and Swagger UI at ``/docs``, before any catch-all route."""
    cached: list[Spec] = []

    def openapi() -> Spec:
        if not cached:
            cached.append(document(app, settings))
        return cached[0]

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to replace the schema
    app.mount(ASSETS_URL, StaticFiles(directory=str(files("fastapi_offline") / "static")), name="docs-assets")
    page, policy = _docs_page(app)

    @app.get(DOCS_URL, include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return HTMLResponse(page, headers={"Content-Security-Policy": policy})
