"""Traceability both ways and the drill-down, read by their published queries (queries/trace-requirement.rq,
trace-failure.rq, drill-down.rq; docs/metrics.md). The drill-down's query gives every level's totals: Python only
arranges its rows into the tree."""

from __future__ import annotations

from collections import defaultdict
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
        raise NotFound(
            f"envelope v{envelope.version} of {scope.evaluation} has no {kind} {identifier!r}: its envelope lists them"
        )
    return f"{envelope.iri}/{'requirements' if kind == 'requirement' else 'criteria'}/{identifier}"


def _node(row: Row, children: tuple[DrillNode, ...] = (), leaves: tuple[DrillCriterion, ...] = ()) -> DrillNode:
    """A level's node from its row of drill-down.rq (an empty row: the summary of no applicable criterion, zeros)."""

    def count(name: str) -> int:
        return int(row[name].value) if name in row else 0

    level = row["level"].value if "level" in row else "summary"
    key = None if level == "summary" else level  # the row's variable naming the group: ?dimension or ?category
    return DrillNode(
        key=_text(row, key) if key else None,
        label=_text(row, f"{key}Label") if key else None,
        outcomes=tuple((o, count(o.removeprefix(EARL))) for o in LEVEL_OUTCOMES),
        weight=Decimal(row["weight"].value) if "weight" in row else Decimal(0),
        covered_weight=Decimal(row["coveredWeight"].value) if "coveredWeight" in row else Decimal(0),
        cases=count("cases"),
        determinations=count("determinations"),
        children=children,
        criteria=leaves,
    )


def drill_down(graphs: GraphService, scope: Scope) -> DrillNode:
    """Summary -> dimension -> category -> criterion, each level's totals as drill-down.rq adds them up (``cases``
    and ``determinations`` add up per criterion: a case bearing on two criteria counts under each)."""
    levels: dict[str, list[Row]] = defaultdict(list)
    for row in graphs.rows("drill-down", scope.bindings()):
        levels[row["level"].value].append(row)
    leaves: dict[tuple[str | None, str | None], list[DrillCriterion]] = defaultdict(list)
    for row in levels["criterion"]:
        leaves[(_text(row, "dimension"), _text(row, "category"))].append(
            DrillCriterion(
                criterion=row["criterion"].value,
                identifier=_text(row, "identifier"),
                weight=Decimal(row["weight"].value),
                outcome=row["outcome"].value,
                cases=int(row["cases"].value),
                determinations=int(row["determinations"].value),
            )
        )
    categories: dict[str | None, list[DrillNode]] = defaultdict(list)
    for row in levels["category"]:
        dimension, category = _text(row, "dimension"), _text(row, "category")
        categories[dimension].append(_node(row, leaves=tuple(leaves[(dimension, category)])))
    dimensions = tuple(_node(row, tuple(categories[_text(row, "dimension")])) for row in levels["dimension"])
    return _node(next(iter(levels["summary"]), {}), dimensions)


def trace_requirement(
    graphs: GraphService, scope: Scope, *, requirement: str | None = None, criterion: str | None = None
) -> tuple[TraceLink, ...]:
    """Forward: requirement -> criterion -> probe -> case -> response -> determination -> attestation."""
    rows = graphs.rows("trace-requirement", scope.bindings(requirement=requirement, criterion=criterion))
    return tuple(
        TraceLink(
            requirement=row["requirement"].value,
            criterion=row["criterion"].value,
            probe=row["probe"].value,
            run=row["run"].value,
            case=row["case"].value,
            turn=int(row["turn"].value),
            response=row["response"].value,
            determination=_text(row, "determination"),
            outcome=_text(row, "outcome"),
            judge=_text(row, "judge"),
            determined_at=_text(row, "determinedAt"),
            attestation=_text(row, "attestation"),
            attested_outcome=_text(row, "attestedOutcome"),
            expert=_text(row, "expert"),
            attested_at=_text(row, "attestedAt"),
            current=row["current"].value == "true" if "current" in row else None,
        )
        for row in rows
    )


def trace_failure(graphs: GraphService, scope: Scope, *, criterion: str | None = None) -> tuple[FailureTrace, ...]:
    """Backward: each failed criterion to its requirement, the expert who attested it and the judges whose failed
    determinations the attestation aggregates."""
    rows = graphs.rows("trace-failure", scope.bindings(criterion=criterion))
    return tuple(
        FailureTrace(
            criterion=row["criterion"].value,
            requirement=row["requirement"].value,
            parent_requirement=_text(row, "parentRequirement"),
            attestation=row["attestation"].value,
            expert=row["expert"].value,
            attested_at=row["attestedAt"].value,
            determination=_text(row, "determination"),
            judge=_text(row, "judge"),
            method=_text(row, "method"),
            determined_at=_text(row, "determinedAt"),
            probe=_text(row, "probe"),
            run=_text(row, "caseRun"),
            case=_text(row, "case"),
        )
        for row in rows
    )
