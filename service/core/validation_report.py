"""A SHACL validation report read and completed: its results flattened to :class:`Violation` values, those on
nodes outside the data checked dropped, the OWL 2 RL inconsistencies added as results, and ``sh:conforms`` set.

:mod:`.validation` runs the checks; this module is what both of them (KGs and evaluation records) make of
pySHACL's report graph.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, SH
from rdflib.term import Node

from .namespaces import SHAPES

OWLRL_SHAPE = URIRef(SHAPES + "owl-rl")
"""``sh:sourceShape`` of the results that come from the OWL 2 RL closure rather than a SHACL shape."""


@dataclass(frozen=True)
class Violation:
    """One validation result, flattened from ``sh:ValidationResult`` (SHACL section 3.6.2)."""

    focus_node: str
    path: str | None
    value: str | None
    message: str
    severity: str
    source_shape: str | None
    constraint: str | None


@dataclass(frozen=True)
class ValidationOutcome:
    """Whether the data conforms (no result of severity ``sh:Violation``), its results, and the report graph."""

    conforms: bool
    violations: tuple[Violation, ...]
    report: Graph


def n3(term: Node | None) -> str | None:
    """N-Triples form of a term (blank nodes as ``_:id``); ``None`` stays ``None``."""
    return None if term is None else term.n3()


def results(report: Graph, keep: set[Node] | None = None) -> list[Violation]:
    """Flatten the ``sh:result`` nodes of a report; with ``keep``, only those whose focus node is in it."""
    out: list[Violation] = []
    for result in report.subjects(RDF.type, SH.ValidationResult):
        focus = report.value(result, SH.focusNode)
        if keep is not None and focus not in keep:
            continue
        severity = report.value(result, SH.resultSeverity)
        component = report.value(result, SH.sourceConstraintComponent)
        out.append(
            Violation(
                focus_node=n3(focus) or "",
                path=n3(report.value(result, SH.resultPath)),
                value=n3(report.value(result, SH.value)),
                message=str(report.value(result, SH.resultMessage) or "validation result without message"),
                severity=str(severity).rsplit("#", 1)[-1] if severity is not None else "Violation",
                source_shape=n3(report.value(result, SH.sourceShape)),
                constraint=None if component is None else str(component).replace(str(SH), "sh:"),
            )
        )
    return sorted(out, key=lambda v: (v.focus_node, v.message))


def prune_report(report: Graph, keep: set[Node]) -> None:
    """Drop from ``report`` the results whose focus node is not a KG node."""
    for report_node, _p, result in list(report.triples((None, SH.result, None))):
        if report.value(result, SH.focusNode) not in keep:
            report.remove((report_node, SH.result, result))
            report.remove((result, None, None))


def add_to_report(report: Graph, violations: Iterable[Violation], kg_nodes: set[Node]) -> None:
    """Record OWL-RL inconsistencies in the SHACL report graph as ``sh:ValidationResult`` nodes."""
    by_n3 = {n.n3(): n for n in kg_nodes}
    report_node = next(report.subjects(RDF.type, SH.ValidationReport))
    for v in violations:
        result = BNode()
        component = URIRef(SHAPES + str(v.constraint).replace(":", "/"))
        report.addN(
            (s, p, o, report)
            for s, p, o in [
                (report_node, SH.result, result),
                (result, RDF.type, SH.ValidationResult),
                (result, SH.focusNode, by_n3[v.focus_node]),
                (result, SH.resultMessage, Literal(v.message)),
                (result, SH.resultSeverity, SH.Violation),
                (result, SH.sourceShape, OWLRL_SHAPE),
                (result, SH.sourceConstraintComponent, component),
            ]
        )


def finish(report: Graph, violations: list[Violation]) -> ValidationOutcome:
    conforms = not any(v.severity == "Violation" for v in violations)
    for report_node in report.subjects(RDF.type, SH.ValidationReport):
        report.set((report_node, SH.conforms, Literal(conforms)))
    return ValidationOutcome(conforms=conforms, violations=tuple(violations), report=report)
