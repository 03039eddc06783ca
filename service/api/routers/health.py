"""``/health``: is the service up and its store answering."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ... import __version__
from ..deps import SettingsDep, StoreDep

router = APIRouter(tags=["health"])


@router.get("/health", summary="Liveness and store reachability")
async def health(store: StoreDep, settings: SettingsDep) -> JSONResponse:
    reachable = await run_in_threadpool(lambda: store.ask("ASK WHERE { ?s ?p ?o }", union=True))
    return JSONResponse({"status": "ok", "version": __version__, "store": settings.store, "storeHasData": reachable})
