"""A report's failure-point map (issue 24 §6): the requirement tree of the report's envelope version, each requirement
under the one it refines, each criterion under its requirement with its weight and its outcome as the report states
it.

The tree is ``queries/envelope-tree.rq`` over the envelope the report names; every outcome is the report's own
standing (``queries/report-standings.rq``), never recounted here, so the map and the report's figures cannot
disagree. A criterion the envelope puts out of scope has no standing: it is not applicable. Only the report's row,
its standings and the tree are read, each O(criteria): not its provenance (a digest per case graph), nor any
determination, so the map costs the same at any number of determinations.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import NamedNode

from ..core.graphs import GraphService
from ..core.namespaces import EARL
from ..core.store import Row
from .figures import stored_criteria, stored_standings
from .records import report_row

INAPPLICABLE = EARL + "inapplicable"
"""The outcome shown for a criterion the envelope puts out of scope: no report counts it."""

ORDER = (EARL + "failed", EARL + "cantTell", EARL + "untested", EARL + "passed", INAPPLICABLE)
"""The outcomes a map shows, the ones that need looking at first."""


@dataclass(frozen=True)
class MapCriterion:
    """A criterion on the map: its weight and the report's outcome for it (``None``: a report made before reports
    stated each criterion's outcome, which states only the failed and untested ones)."""

    criterion: str
    identifier: str
    statement: str | None
    weight: Decimal | None
    outcome: str | None


@dataclass(frozen=True)
class MapRequirement:
    """A requirement with its own criteria, the requirements that refine it, and how many criteria of the whole
    branch have each outcome (in :data:`ORDER`, none left out)."""

    requirement: str
    identifier: str
    statement: str | None
    criteria: tuple[MapCriterion, ...]
    refinements: tuple[MapRequirement, ...]
    outcomes: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class FailureMap:
    """Report ``number`` (its IRI, date, run, envelope and target's name) and its requirement tree; ``outcomes``
    counts the whole envelope's criteria by outcome."""

    report: str
    number: int
    as_of: str
    run: str
    envelope: str
    target_name: str
    requirements: tuple[MapRequirement, ...]
    outcomes: tuple[tuple[str, int], ...]


def _text(row: Row, name: str) -> str | None:
    return row[name].value if name in row else None


def _outcomes(criteria: list[MapCriterion]) -> tuple[tuple[str, int], ...]:
    counted = Counter(c.outcome for c in criteria)
    return tuple((outcome, counted[outcome]) for outcome in ORDER)


def failure_map(graphs: GraphService, evaluation_id: str, number: int) -> FailureMap:
    """Report ``number``'s failure-point map (404 if there is no such report)."""
    header = report_row(graphs, evaluation_id, number)
    report, envelope = header["report"].value, header["envelope"].value
    stated = {st.criterion: st for st in stored_standings(graphs, report)}
    # a report made before standings names only its failed and untested criteria
    named = (
        {}
        if stated
        else {
            item.criterion: outcome
            for outcome, items in zip((EARL + "failed", EARL + "untested"), stored_criteria(graphs, report))
            for item in items
        }
    )
    rows = graphs.rows("envelope-tree", {"envelope": NamedNode(envelope)})
    requirements: dict[str, Row] = {}
    criteria: dict[str, list[MapCriterion]] = defaultdict(list)
    for row in rows:
        requirement = row["requirement"].value
        requirements.setdefault(requirement, row)
        if "criterion" not in row:
            continue
        iri = row["criterion"].value
        standing = stated.get(iri)
        if row["inScope"].value == "false":
            outcome: str | None = INAPPLICABLE
        elif standing is not None:
            outcome = standing.outcome
        else:
            outcome = named.get(iri)
        criteria[requirement].append(
            MapCriterion(
                iri,
                _text(row, "identifier") or iri,
                _text(row, "statement"),
                standing.weight if standing else (Decimal(row["weight"].value) if "weight" in row else None),
                outcome,
            )
        )
    children: dict[str | None, list[str]] = defaultdict(list)
    for requirement, row in requirements.items():
        parent = _text(row, "parent")
        children[parent if parent in requirements else None].append(requirement)

    def branch(requirement: str) -> tuple[MapRequirement, list[MapCriterion]]:
        """The requirement's node and every criterion of its branch (refinement has no cycle: envelope checks)."""
        row = requirements[requirement]
        below = [branch(child) for child in children[requirement]]
        everything = [*criteria[requirement], *(c for _, under in below for c in under)]
        return MapRequirement(
            requirement,
            _text(row, "requirementIdentifier") or requirement,
            _text(row, "requirementStatement"),
            tuple(criteria[requirement]),
            tuple(node for node, _ in below),
            _outcomes(everything),
        ), everything

    roots = [branch(requirement) for requirement in children[None]]
    return FailureMap(
        report,
        number,
        header["asOf"].value,
        header["run"].value,
        envelope,
        header["targetName"].value,
        tuple(node for node, _ in roots),
        _outcomes([c for _, under in roots for c in under]),
    )
