"""Typed reads of the application's state: Starlette types ``app.state`` as ``Any``."""

from __future__ import annotations

from typing import TypeVar

from starlette.requests import Request

_Kind = TypeVar("_Kind")


def app_state(request: Request, name: str, kind: type[_Kind]) -> _Kind:
    """``request.app.state.<name>``, set when the app was made, checked to be a ``kind``."""
    value = getattr(request.app.state, name)
    if not isinstance(value, kind):
        raise TypeError(f"app.state.{name} is a {type(value).__name__}, not a {kind.__name__}")
    return value
