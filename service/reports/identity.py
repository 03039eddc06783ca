"""Criteria across envelope versions and evaluations: which criterion of one report is which of another's.

A criterion's IRI names its envelope version (``…/envelope/v2/criteria/c05``), so two reports never share one.
Its identity is its ``dcterms:identifier`` (``c05``); it is the *same* criterion only when its statement and
expected result are also the same, compared by :func:`content_digest` (SHA-256 over both texts, so anyone can
recompute it from the record). Same identifier, other content: the criterion *changed*. Weights are not part of
identity: a new weight is the same test weighed otherwise, and shows in the envelope digest (docs/comparison.md).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import Literal, NamedNode

from ..core.graphs import GraphService
from ..core.namespaces import EARL, XSD
from ..core.store import Row

UNTESTED = EARL + "untested"
"""The outcome of a criterion with no current attested outcome: it is not covered."""


def content_digest(statement: str | None, expected_result: str | None) -> str:
    """SHA-256 (hex) of the statement and the expected result, each as UTF-8, joined by a NUL."""
    return hashlib.sha256(f"{statement or ''}\0{expected_result or ''}".encode()).hexdigest()


@dataclass(frozen=True)
class CriterionState:
    """One applicable criterion as a report saw it: its identity, weight, requirement and outcome then."""

    identifier: str
    criterion: str
    statement: str | None
    content: str
    weight: Decimal
    requirement: str
    requirement_identifier: str | None
    requirement_statement: str | None
    outcome: str
    """An EARL outcome: passed, failed, cantTell, or :data:`UNTESTED` when not covered."""

    @property
    def covered(self) -> bool:
        return self.outcome != UNTESTED


def _text(row: Row, name: str) -> str | None:
    term = row.get(name)
    return term.value if term is not None else None


def criterion_states(
    graphs: GraphService, envelope: str, *, as_of: str | None = None, run: str | None = None
) -> tuple[CriterionState, ...]:
    """Every applicable criterion of ``envelope`` with its outcome from the attestations dated no later than
    ``as_of`` (of ``run`` only, when given): ``queries/criterion-outcomes.rq``."""
    bindings: dict[str, NamedNode | Literal] = {"envelope": NamedNode(envelope)}
    if as_of is not None:
        bindings["asOf"] = Literal(as_of, datatype=NamedNode(XSD + "dateTime"))
    if run is not None:
        bindings["run"] = NamedNode(run)
    return tuple(
        CriterionState(
            identifier=_text(row, "identifier") or row["criterion"].value,
            criterion=row["criterion"].value,
            statement=_text(row, "statement"),
            content=content_digest(_text(row, "statement"), _text(row, "expectedResult")),
            weight=Decimal(row["weight"].value),
            requirement=row["requirement"].value,
            requirement_identifier=_text(row, "requirementIdentifier"),
            requirement_statement=_text(row, "requirementStatement"),
            outcome=row["outcome"].value,
        )
        for row in graphs.rows("criterion-outcomes", bindings)
    )


def envelope_differences(current: tuple[CriterionState, ...], reference: tuple[CriterionState, ...]) -> list[str]:
    """How two envelopes' applicable criteria differ, by identity: only in one, changed content, other weight."""
    mine, theirs = ({state.identifier: state for state in states} for states in (current, reference))
    found = [f"criterion {key} only in the current report's envelope" for key in sorted(mine.keys() - theirs.keys())]
    found += [f"criterion {key} only in the reference report's envelope" for key in sorted(theirs.keys() - mine.keys())]
    for key in sorted(mine.keys() & theirs.keys()):
        if mine[key].content != theirs[key].content:
            found.append(f"criterion {key} changed (its statement or expected result differs)")
        elif mine[key].weight != theirs[key].weight:
            found.append(f"criterion {key} weighs {mine[key].weight} against {theirs[key].weight}")
    return found
