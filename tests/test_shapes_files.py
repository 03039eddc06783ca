"""The shapes files' documentation, and the record shapes on a minimal record and on broken ones (no HTTP)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rdflib import BNode, Graph, Literal
from rdflib.namespace import RDF, RDFS, SH, XSD

from service.core.validation import default_record_shapes, load_shapes, validate_record
from service.core.validation_report import ValidationOutcome

from .dso_kg import EARL, EPO, EX, PROV, ROOT


@pytest.mark.parametrize("name", ["kg-dso.ttl", "vaccine-education-kg.ttl", "record.ttl"])
def test_every_shape_has_label_comment_message(name: str) -> None:
    shapes = load_shapes(ROOT / "shapes" / name)
    nodes = set(shapes.subjects(RDF.type, SH.NodeShape)) | set(shapes.subjects(RDF.type, SH.PropertyShape))
    nodes |= set(shapes.objects(None, SH.property))
    assert nodes
    for shape in nodes:
        assert shapes.value(shape, RDFS.label) is not None, shape
        assert shapes.value(shape, RDFS.comment) is not None, shape
        has_message = shapes.value(shape, SH.message) is not None or all(
            shapes.value(c, SH.message) is not None for c in shapes.objects(shape, SH.sparql)
        )
        assert has_message, shape
    for constraint in shapes.objects(None, SH.sparql):
        assert shapes.value(constraint, SH.message) is not None, constraint


# ---------------------------------------------------------------------------------------------- records


def minimal_record() -> Graph:
    g = Graph()
    g.add((EX.a1, RDF.type, EPO.AcceptanceCriterion))
    g.add((EX.a1, EPO.weight, Literal("2.0", datatype=XSD.decimal)))
    g.add((EX.att1, RDF.type, EPO.Attestation))
    result = BNode()
    g.add((EX.att1, EARL.result, result))
    g.add((result, EARL.outcome, EARL.passed))
    g.add((EX.att1, EARL.assertedBy, EX.annie))
    g.add((EX.att1, PROV.generatedAtTime, Literal("2026-08-11T09:10:00Z", datatype=XSD.dateTime)))
    g.add((EX.att2, RDF.type, EPO.Attestation))
    g.add((EX.att2, EARL.outcome, EARL.cantTell))
    g.add((EX.att2, EARL.assertedBy, EX.annie))
    g.add((EX.att2, PROV.generatedAtTime, Literal("2026-08-11T09:20:00Z", datatype=XSD.dateTime)))
    return g


def test_minimal_record_conforms() -> None:
    outcome = validate_record(minimal_record(), default_record_shapes())
    assert outcome.conforms and outcome.violations == (), outcome.violations


def test_integer_weight_is_accepted() -> None:
    g = minimal_record()
    g.set((EX.a1, EPO.weight, Literal(2)))
    assert validate_record(g, default_record_shapes()).conforms


def _drop_outcome(g: Graph) -> None:
    for result in list(g.objects(EX.att1, EARL.result)):
        g.remove((result, EARL.outcome, None))


def _two_outcomes(g: Graph) -> None:
    g.add((EX.att1, EARL.outcome, EARL.failed))


BROKEN_RECORDS: list[tuple[str, Callable[[Graph], None], str, str]] = [
    ("zero weight", lambda g: g.set((EX.a1, EPO.weight, Literal("0", datatype=XSD.decimal))), "a1", "weight"),
    ("negative weight", lambda g: g.set((EX.a1, EPO.weight, Literal("-1.5", datatype=XSD.decimal))), "a1", "weight"),
    ("missing weight", lambda g: g.remove((EX.a1, EPO.weight, None)), "a1", "weight"),
    ("string weight", lambda g: g.set((EX.a1, EPO.weight, Literal("2"))), "a1", "weight"),
    ("two weights", lambda g: g.add((EX.a1, EPO.weight, Literal("3.0", datatype=XSD.decimal))), "a1", "weight"),
    ("no outcome", _drop_outcome, "att1", "outcome"),
    ("two outcomes", _two_outcomes, "att1", "outcome"),
    ("untested outcome", lambda g: g.set((EX.att2, EARL.outcome, EARL.untested)), "att2", "outcome"),
    ("no attestor", lambda g: g.remove((EX.att1, EARL.assertedBy, None)), "att1", "attestor"),
    ("no time", lambda g: g.remove((EX.att2, PROV.generatedAtTime, None)), "att2", "time"),
    (
        "date not dateTime",
        lambda g: g.set((EX.att2, PROV.generatedAtTime, Literal("2026-08-11", datatype=XSD.date))),
        "att2",
        "time",
    ),
]


@pytest.mark.parametrize(("name", "change", "focus", "phrase"), BROKEN_RECORDS, ids=[b[0] for b in BROKEN_RECORDS])
def test_broken_record_fails(name: str, change: Callable[[Graph], None], focus: str, phrase: str) -> None:
    g = minimal_record()
    change(g)
    outcome: ValidationOutcome = validate_record(g, default_record_shapes())
    assert not outcome.conforms, name
    assert any(v.focus_node == EX[focus].n3() and phrase in v.message for v in outcome.violations), outcome.violations
