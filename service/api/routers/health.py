"""``/health``: is the service up and its store answering."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ... import __version__
from ..app_state import app_state
from ..deps import SettingsDep, StoreDep
from ..in_progress import RequestsInProgress

router = APIRouter(tags=["health"])


@router.get("/health", summary="Liveness and store reachability")
async def health(request: Request, store: StoreDep, settings: SettingsDep) -> JSONResponse:
    reachable = await run_in_threadpool(lambda: store.ask("ASK WHERE { ?s ?p ?o }", union=True))
    others = app_state(request, "in_progress", RequestsInProgress).count - 1  # every request but this one
    return JSONResponse(
        {
            "status": "ok",
            "version": __version__,
            "store": settings.store,
            "storeHasData": reachable,
            "requestsInProgress": others,
        }
    )
