"""``OPTIONS`` and ``405`` for a path, with an ``Allow`` that lists every method the path takes.

Starlette answers a method no route takes with the methods of the first route on the path only (``/sparql``
said ``Allow: GET`` although POST works), and FastAPI answers no ``OPTIONS`` at all; these routes do both.
CORS preflight requests never get here: the CORS middleware answers them (:mod:`.security`).
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from .problems import problem

WRITE_METHODS = ("PUT", "POST", "DELETE", "PATCH")


def allow_only(router: APIRouter, path: str, allowed: tuple[str, ...]) -> None:
    """Add to ``router`` an ``OPTIONS`` route for ``path`` and a 405 route for each write method not in ``allowed``."""
    allow = ", ".join((*allowed, "OPTIONS"))

    async def options() -> Response:
        return Response(status_code=204, headers={"Allow": allow})

    async def refuse(request: Request) -> Response:
        response = problem(405, "MethodNotAllowed", f"{request.method} is not allowed on {path}: it takes {allow}")
        response.headers["Allow"] = allow
        return response

    router.add_api_route(path, options, methods=["OPTIONS"], include_in_schema=False)
    refused = [method for method in WRITE_METHODS if method not in allowed]
    router.add_api_route(path, refuse, methods=refused, include_in_schema=False)
