"""A workspace form's act, or why it was refused: the same checks as the REST route, shown on the form's page.

A form sends what the REST route's body holds; the act validates it as that body (pydantic) and calls the same domain
function. A field the body refuses is a 422 naming the field by the label the page gives it; a refusal of the domain
(a 409 of a signed-off record, a 404 of a run that does not exist) keeps its status. A missing or insufficient
credential is raised, answered as everywhere else (sign-in, 403), never shown as a form's refusal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from pydantic import ValidationError

from ..core.errors import Forbidden, ServiceError, Unauthenticated
from .problems import status_of

T = TypeVar("T")


@dataclass(frozen=True)
class Refused:
    """Why a form's act was not done, in the form's words, and the status its page is answered with."""

    message: str
    status: int


def field_errors(error: ValidationError, labels: Mapping[str, str]) -> str:
    """What a form got wrong, each field named by its label: the innermost part of its location the form labels,
    else the location itself."""

    def where(location: tuple[int | str, ...]) -> str:
        named = [labels[str(part)] for part in location if str(part) in labels]
        return named[-1] if named else ".".join(str(part) for part in location) or "the form"

    return "; ".join(f"{where(e['loc'])}: {e['msg']}" for e in error.errors(include_url=False))


async def attempt(act: Callable[[], Awaitable[T]], labels: Mapping[str, str]) -> T | Refused:
    """``act()``'s result, or :class:`Refused` for a field the body refuses or a refusal of the domain."""
    try:
        return await act()
    except ValidationError as invalid:
        return Refused(field_errors(invalid, labels), 422)
    except (Unauthenticated, Forbidden):
        raise
    except ServiceError as refused:
        return Refused(refused.message, status_of(refused))
