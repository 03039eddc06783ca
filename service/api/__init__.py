"""The HTTP layer: :func:`create_app` builds the FastAPI application around one store."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ..core.config import Settings
    from ..core.store import Store


def create_app(settings: Settings | None = None, store: Store | None = None) -> FastAPI:
    """The application; ``store`` defaults to the one ``settings`` name (opened now, closed on shutdown)."""
    # Every router and middleware imported here, not with the package: a module that only needs the API's JSON
    # shapes (``caie load`` and ``caie validate`` print them) does not build FastAPI's routes (a second of CPU).
    from .app import create_app as build

    return build(settings, store)
