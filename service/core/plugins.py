"""What installed packages add to the engine, through entry points (``importlib.metadata``): a domain is data plus
a package, never a change under ``service/`` (issue 25, docs/architecture.md "The plugin seam").

Groups read here: ``caie.prefixes`` (a compact-IRI prefix: the entry point's name is the prefix, its object the
namespace IRI string) and ``caie.examples`` (a :class:`WorkedExample` that ``caie serve --examples`` loads).
``caie.checks`` (grounded checks) and ``caie.targets`` (targets by adapter kind) are read by their step
(:mod:`service.judgments.registry`, :mod:`service.runs.jobs`) through :func:`loaded`. Each group is read once
per process: scanning the installed distributions takes tens of milliseconds, and is not paid by a command that
does not need a group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol

from .namespaces import PREFIXES

if TYPE_CHECKING:
    from .graphs import GraphService


@dataclass(frozen=True)
class Loaded:
    """One entry point of a group: its name, the distribution that registered it, and the object it names."""

    name: str
    source: str
    value: object


@cache
def loaded(group: str) -> tuple[Loaded, ...]:
    """Every entry point of ``group``, loaded, in the order of their names (then their targets)."""
    points = sorted(entry_points(group=group), key=lambda point: (point.name, point.value))
    return tuple(
        Loaded(point.name, point.dist.name if point.dist is not None else point.value, point.load()) for point in points
    )


@cache
def domain_prefixes() -> dict[str, str]:
    """Every installed domain's prefixes (``caie.prefixes``); a :class:`ValueError` when one is no IRI string or
    redefines a prefix the engine or another plugin has."""
    found: dict[str, str] = {}
    for point in loaded("caie.prefixes"):
        if not isinstance(point.value, str) or not point.value.startswith(("http://", "https://", "urn:")):
            raise ValueError(f"caie.prefixes entry point {point.name} ({point.source}) must be a namespace IRI string")
        if {**PREFIXES, **found}.get(point.name, point.value) != point.value:
            raise ValueError(
                f"caie.prefixes entry point {point.name} ({point.source}) redefines the prefix {point.name}:"
            )
        found[point.name] = point.value
    return found


@cache
def prefixes() -> dict[str, str]:
    """The engine's prefixes (:data:`.namespaces.PREFIXES`) and every installed domain's, for RDF answers."""
    return {**PREFIXES, **domain_prefixes()}


class LoadExample(Protocol):
    """How a worked example is loaded: into ``graphs``, reporting progress line by line, its people's decisions
    signed by ``signer``, the deployment's :class:`service.credentials.signing.Signer` (typed ``Any``: core names
    no layer above it)."""

    def __call__(self, graphs: GraphService, report: Callable[[str], None], /, *, signer: Any) -> bool: ...


@dataclass(frozen=True)
class WorkedExample:
    """What a ``caie.examples`` entry point names: an evaluation ``caie serve --examples`` takes through the
    lifecycle, under ``evaluation_id``. ``load`` writes it unless it exists (so restarts change nothing) and says
    whether it was new; it reports progress line by line."""

    evaluation_id: str
    load: LoadExample


def worked_examples() -> tuple[WorkedExample, ...]:
    """The installed worked examples; a :class:`TypeError` names an entry point that is no :class:`WorkedExample`."""
    examples = []
    for point in loaded("caie.examples"):
        if not isinstance(point.value, WorkedExample):
            raise TypeError(
                f"caie.examples entry point {point.name} ({point.source}) must be a "
                f"service.core.plugins.WorkedExample, not {type(point.value).__name__}"
            )
        examples.append(point.value)
    return tuple(examples)
