"""Who may write which graph through the generic graph API, and who may import an outside record.

The one table of these rules; docs/decisions.md ("Who may write which graph") says why. Evaluation
graphs are absent from it on purpose: they change only through the lifecycle operations, which check
the method's own roles and rules (DESIGN.md, "Evaluation graphs change only through the lifecycle's own
operations").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .auth import require
from .catalog import GraphKind
from .config import Credential
from .errors import Forbidden

ADMIN: Final = "admin"
DOMAIN_EXPERT: Final = "domain_expert"
EVALUATION_OPERATOR: Final = "evaluation_operator"
ORGANIZATIONAL_EXPERT: Final = "organizational_expert"
ANNOTATOR: Final = "annotator"
VIEWER: Final = "viewer"

GRAPH_WRITERS: Final[Mapping[GraphKind, frozenset[str]]] = {
    GraphKind.ONTOLOGY: frozenset({ADMIN}),
    GraphKind.SHAPES: frozenset({ADMIN}),
    GraphKind.TEMPLATES: frozenset({ADMIN, DOMAIN_EXPERT}),
    GraphKind.JUDGES: frozenset({ADMIN, DOMAIN_EXPERT}),
    GraphKind.DSO: frozenset({ADMIN, DOMAIN_EXPERT}),
    GraphKind.KG: frozenset({ADMIN, DOMAIN_EXPERT}),
}
"""The roles that may replace, append to or delete a graph of each kind through ``/graphs``."""

IMPORTERS: Final = frozenset({ADMIN, EVALUATION_OPERATOR})
"""The roles that may import an outside evaluation record (``POST /evaluations/imports``)."""


def lifecycle_operations(evaluation_id: str = "{id}") -> str:
    """Where evaluation records are written instead of ``/graphs``: the lifecycle's operations, and the import."""
    record = f"/evaluations/{evaluation_id}"
    return (
        "evaluation records change only through the lifecycle operations: "
        f"PUT {record} for the scope, POST {record}/dso/appropriateness, PUT {record}/envelope, POST {record}/envelope/versions, "
        f"POST {record}/criteria/{{criterion}}/relevance, POST {record}/envelope/appropriateness, "
        f"POST {record}/envelope/sign-off, POST {record}/plans, POST {record}/plans/{{n}}/approval, "
        f"POST {record}/scenarios/{{index}}/exclusion; "
        f"outside records come in through POST /evaluations/imports?id={evaluation_id}"
    )


def _roles_of(agent: Credential) -> str:
    return ", ".join(sorted(agent.roles)) or "no role"


def _has_one_of(agent: Credential, roles: frozenset[str], action: str) -> Credential:
    if agent.roles & roles:
        return agent
    raise Forbidden(
        f"{action} needs the role {' or '.join(sorted(roles))}; agent {agent.agent!r} has {_roles_of(agent)}"
    )


def require_graph_writer(credential: Credential | None, kind: GraphKind, identifier: str = "{id}") -> Credential:
    """The credential, if it may write graphs of ``kind`` through ``/graphs``: 401 without one, else 403 naming why."""
    agent = require(credential)
    if kind is GraphKind.EVALUATION:
        raise Forbidden(f"evaluation graphs are not written through /graphs: {lifecycle_operations(identifier)}")
    return _has_one_of(agent, GRAPH_WRITERS[kind], f"writing a {kind.value} graph through /graphs")


def require_importer(credential: Credential | None) -> Credential:
    """The credential, if it may import an outside evaluation record: 401 without one, else 403 naming the roles."""
    return _has_one_of(require(credential), IMPORTERS, "importing an evaluation record")
