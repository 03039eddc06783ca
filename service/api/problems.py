"""Errors as RFC 9457 problem details, mapped from the domain's error classes in one place.

A browser (a client whose Accept prefers ``text/html``) gets the same error as a page, with the same status
and headers (:func:`respond`); every other client gets ``application/problem+json``.

An error none of these classes names is a fault of ours: :func:`_unplanned` answers it as a 500 problem (or page)
that names only a trace id, and logs the traceback under that id. It is Starlette's ``ServerErrorMiddleware``
handler, outside every middleware, so an error raised in a middleware gets the same answer, never Starlette's
plain-text "Internal Server Error".
"""

from __future__ import annotations

import logging
import uuid

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ..core import errors
from ..core.formats import HTML, negotiate
from ..core.graph_checks import KnowledgeGraphInvalid
from . import html
from .shapes import error_detail_json, validation_json

STATUS: dict[type[errors.ServiceError], int] = {
    errors.BadRequest: 400,
    errors.Unauthenticated: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.NotAcceptable: 406,
    errors.Conflict: 409,
    errors.PayloadTooLarge: 413,
    errors.UnsupportedMediaType: 415,
    errors.Unprocessable: 422,
    errors.StoreUnavailable: 503,
    errors.Cancelled: 503,
    errors.QueryLimitExceeded: 500,
    errors.TooManyRequests: 429,
    errors.Misconfigured: 500,
}

PROBLEM = "application/problem+json"
_LOG = logging.getLogger(__name__)


def problem(
    status: int, title: str, message: str, headers: dict[str, str] | None = None, **extra: object
) -> JSONResponse:
    if status == 401:
        headers = {**(headers or {}), "WWW-Authenticate": 'Bearer realm="ob-caie"'}
    body = {"type": "about:blank", "status": status, "title": title, "detail": message, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def respond(
    request: Request, status: int, title: str, message: str, headers: dict[str, str] | None = None, **extra: object
) -> Response:
    """The error as a page when the client prefers HTML, else as problem details."""
    try:
        wanted = negotiate(request.headers.get("accept"), [PROBLEM, "application/json", HTML])
    except errors.NotAcceptable:
        wanted = PROBLEM  # an error is answered whatever the client accepts
    if wanted != HTML:
        return problem(status, title, message, headers, **extra)
    response = HTMLResponse(html.error_page(status, title, message), status_code=status, headers=headers)
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="ob-caie"'
    return response


def status_of(error: errors.ServiceError) -> int:
    """The status an error is answered with (a page that shows it in a form answers with the same)."""
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


async def _service_error(request: Request, error: errors.ServiceError) -> Response:
    status = status_of(error)
    title = type(error).__name__
    if isinstance(error, KnowledgeGraphInvalid):
        outcome = error.outcome
        wanted = negotiate(
            request.headers.get("accept"), [PROBLEM, "application/json", "text/turtle", "application/ld+json"]
        )
        if wanted in ("text/turtle", "application/ld+json"):
            rdflib_format = "turtle" if wanted == "text/turtle" else "json-ld"
            return Response(outcome.report.serialize(format=rdflib_format), status_code=status, media_type=wanted)
        return problem(status, title, error.message, **validation_json(outcome))
    extra: dict[str, object] = {"errors": error_detail_json(error.detail)} if error.detail is not None else {}
    if isinstance(error, errors.QueryLimitExceeded):
        extra |= {"limit": error.limit, "limitValue": error.value}
    headers = {"Retry-After": str(error.retry_after)} if isinstance(error, errors.TooManyRequests) else None
    return respond(request, status, title, error.message, headers, **extra)


async def _validation_error(request: Request, error: RequestValidationError) -> Response:
    details = jsonable_encoder([{k: v for k, v in e.items() if k in ("type", "loc", "msg")} for e in error.errors()])
    messages = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in details]
    return respond(request, 422, "Unprocessable", "; ".join(messages), errors=details)


async def _unplanned(request: Request, error: Exception) -> Response:
    """A 500 naming a trace id and nothing of the error (its text may hold paths, queries or secrets); the
    traceback goes to the log under that id. Outside every middleware, so it adds the headers they would have."""
    trace = uuid.uuid4()
    _LOG.error("unplanned error, trace id %s, on %s %s", trace, request.method, request.url.path, exc_info=error)
    message = f"The service failed on this request. Its operators find the cause in the log under trace id {trace}."
    # uvicorn closes the connection after an error it sees raised: told so, a client does not reuse it
    headers = {
        "Content-Security-Policy": html.CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "Connection": "close",
    }
    try:
        return respond(request, 500, "InternalServerError", message, headers, instance=f"urn:uuid:{trace}")
    except Exception:  # noqa: BLE001  # the page failed too (a template): the problem details never do
        _LOG.exception("the error page for trace id %s failed", trace)
        return problem(500, "InternalServerError", message, headers, instance=f"urn:uuid:{trace}")


def install(app: FastAPI) -> None:
    app.add_exception_handler(Exception, _unplanned)
    app.add_exception_handler(errors.ServiceError, _service_error)  # type: ignore[arg-type]  # Starlette types a handler as taking any Exception
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]  # Starlette types a handler as taking any Exception
