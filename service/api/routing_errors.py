"""Starlette's own errors (no route, a method no route takes, a body that is not JSON) as problem details,
or as pages for a browser, like every other error (:func:`.problems.respond`).

Starlette answers a method that no route on a path takes with the ``Allow`` of the first route that matched
the path only (``OPTIONS /evaluations`` said ``Allow: GET`` though ``POST`` works), and in JSON that is not
RFC 9457. Here a 405's ``Allow`` is what the OpenAPI document gives the path: the catch-all that
dereferences published IRIs (``/{path}``) counts only where no other path matches, and of the paths that
match, those with the fewest parameters name the resource (``/evaluations/imports`` is the import, not an
evaluation called ``imports``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from .problems import respond

_TITLES = {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed", 415: "UnsupportedMediaType"}
_PARAMETER = re.compile(r"\{[^}]+\}")


def _matches(template: str, path: str) -> bool:
    """Whether ``path`` is an instance of the documented ``template`` (each ``{parameter}`` one segment)."""
    return re.fullmatch("[^/]+".join(re.escape(part) for part in _PARAMETER.split(template)), path) is not None


def allowed_methods(paths: Mapping[str, Mapping[str, Any]], path: str) -> list[str]:
    """The methods the OpenAPI ``paths`` give the resource at ``path`` (see the module)."""
    matching = [template for template in paths if _matches(template, path)]
    catch_all = [template for template in paths if _PARAMETER.fullmatch(template.lstrip("/"))]
    specific = matching or catch_all
    fewest = min((len(_PARAMETER.findall(t)) for t in specific), default=0)
    return sorted(
        {
            method.upper()
            for template in specific
            if len(_PARAMETER.findall(template)) == fewest
            for method in paths[template]
        }
    )


async def _http_error(request: Request, error: HTTPException) -> Response:
    status = error.status_code
    headers = dict(error.headers or {})
    detail = error.detail if isinstance(error.detail, str) else str(error.detail)
    if status == 405:
        allow = allowed_methods(request.app.openapi().get("paths", {}), request.url.path)
        headers["Allow"] = ", ".join(allow)
        detail = f"{request.method} is not allowed on {request.url.path}: it takes {', '.join(allow)}"
    return respond(request, status, _TITLES.get(status, "HTTPError"), detail, headers)


def install(app: FastAPI) -> None:
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]  # Starlette types a handler as taking any Exception
