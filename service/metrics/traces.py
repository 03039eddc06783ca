"""Traceability both ways and the drill-down, read by their published queries (queries/trace-requirement.rq,
trace-failure.rq, drill-down.rq; docs/metrics.md). The drill-down's upper levels add up its criteria's rows."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from decimal import Decimal

from ..core.errors import NotFound
from ..core.graphs import GraphService
from ..core.namespaces import EARL
from ..core.store import Row
from .model import DrillCriterion, DrillNode, FailureTrace, TraceLink
from .records import Scope

LEVEL_OUTCOMES = (EARL + "passed", EARL + "failed", EARL + "cantTell", EARL + "untested")


def _text(row: Row, name: str) -> str | None:
    return row[name].value if name in row else None


def requirement_iri(scope: Scope, identifier: str | None) -> str | None:
    """The IRI of requirement ``identifier`` of the scope's envelope; 404 naming it when there is none."""
    return _member(scope, "requirement", identifier)


def criterion_iri(scope: Scope, identifier: str | None) -> str | None:
    """The IRI of criterion ``identifier`` of the scope's envelope; 404 naming it when there is none."""
    return _member(scope, "criterion", identifier)


def _member(scope: Scope, kind: str, identifier: str | None) -> str | None:
    if identifier is None:
        return None
    envelope = scope.envelope
    members = envelope.content.requirements if kind == "requirement" else envelope.content.criteria
    if identifier not in {m.id for m in members}:
        raise NotFound(f"envelope v{envelope.version} of {scope.evaluation} has no {kind} {identifier!r}: "
                       "its envelope lists them")
    return f"{envelope.iri}/{'requirements' if kind == 'requirement' else 'criteria'}/{identifier}"


def _node(key: str | None, label: str | None, criteria: Iterable[DrillCriterion],
          children: tuple[DrillNode, ...] = (), leaves: tuple[DrillCriterion, ...] = ()) -> DrillNode:
    items = list(criteria)
    return DrillNode(
        key=key, label=label,
        outcomes=tuple((o, sum(1 for c in items if c.outcome == o)) for o in LEVEL_OUTCOMES),
        weight=sum((c.weight for c in items), Decimal(0)),
        covered_weight=sum((c.weight for c in items if c.outcome != EARL + "untested"), Decimal(0)),
        cases=sum(c.cases for c in items), determinations=sum(c.determinations for c in items),
        children=children, criteria=leaves)


def drill_down(graphs: GraphService, scope: Scope) -> DrillNode:
    """Summary -> dimension -> category -> criterion, with the counts at each level (``cases`` and
    ``determinations`` add up per criterion: a case bearing on two criteria counts under each)."""
    tree: dict[tuple[str | None, str | None], dict[tuple[str | None, str | None], list[DrillCriterion]]] = \
        defaultdict(lambda: defaultdict(list))
    for row in graphs.rows("drill-down", scope.bindings()):
        tree[(_text(row, "dimension"), _text(row, "dimensionLabel"))][(_text(row, "category"), _text(row, "categoryLabel"))].append(
            DrillCriterion(criterion=row["criterion"].value, identifier=_text(row, "identifier"),
                           weight=Decimal(row["weight"].value), outcome=row["outcome"].value,
                           cases=int(row["cases"].value), determinations=int(row["determinations"].value)))
    dimensions = []
    for (dimension, dimension_label), categories in tree.items():
        nodes = tuple(_node(category, label, leaves, leaves=tuple(leaves)) for (category, label), leaves in categories.items())
        dimensions.append(_node(dimension, dimension_label, (c for leaves in categories.values() for c in leaves), nodes))
    return _node(None, None, (c for d in tree.values() for leaves in d.values() for c in leaves), tuple(dimensions))


def trace_requirement(graphs: GraphService, scope: Scope, *, requirement: str | None = None,
                      criterion: str | None = None) -> tuple[TraceLink, ...]:
    """Forward: requirement -> criterion -> probe -> case -> response -> determination -> attestation."""
    rows = graphs.rows("trace-requirement", scope.bindings(requirement=requirement, criterion=criterion))
    return tuple(TraceLink(
        requirement=row["requirement"].value, criterion=row["criterion"].value, probe=row["probe"].value,
        run=row["run"].value, case=row["case"].value, turn=int(row["turn"].value), response=row["response"].value,
        determination=_text(row, "determination"), outcome=_text(row, "outcome"), judge=_text(row, "judge"),
        determined_at=_text(row, "determinedAt"), attestation=_text(row, "attestation"),
        attested_outcome=_text(row, "attestedOutcome"), expert=_text(row, "expert"), attested_at=_text(row, "attestedAt"),
        current=row["current"].value == "true" if "current" in row else None) for row in rows)


def trace_failure(graphs: GraphService, scope: Scope, *, criterion: str | None = None) -> tuple[FailureTrace, ...]:
    """Backward: each failed criterion to its requirement, the expert who attested it and the judges whose failed
    determinations the attestation aggregates."""
    rows = graphs.rows("trace-failure", scope.bindings(criterion=criterion))
    return tuple(FailureTrace(
        criterion=row["criterion"].value, requirement=row["requirement"].value,
        parent_requirement=_text(row, "parentRequirement"), attestation=row["attestation"].value,
        expert=row["expert"].value, attested_at=row["attestedAt"].value, determination=_text(row, "determination"),
        judge=_text(row, "judge"), method=_text(row, "method"), determined_at=_text(row, "determinedAt"),
        probe=_text(row, "probe"), run=_text(row, "caseRun"), case=_text(row, "case")) for row in rows)
