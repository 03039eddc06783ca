"""The vaccine-education DSO's grading reference (no HTTP): the post-exposure windows read as typed numbers, the
content the criteria grade on (contraindications, symptoms, misconceptions with corrections, adverse events'
frequencies, vitamin A doses), every grading fact sourced or flagged illustrative; the reference passes its SHACL
shapes (shapes/vaccine-education-kg.ttl, through service.core.validation.load_shapes), and each kind of break is
reported on its node.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pyshacl import validate as shacl_validate
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, RDF, RDFS
from rdflib.term import Node

from service.core.validation import load_shapes

from .dso_kg import ROOT, VE

WINDOWS = """
    PREFIX ve: <https://w3id.org/ob-caie/dso/vaccine-education/>
    SELECT ?fact ?start ?end ?unit ?from WHERE {
        ?fact ve:hasTimeWindow ?w .
        ?w ve:windowStart ?start ; ve:windowEnd ?end ; ve:timeUnit ?unit ; ve:relativeTo ?from .
    }"""


def test_post_exposure_windows_read_as_numbers(dso: Graph) -> None:
    """c04 grades on these: a query reads "vaccine within 72 h, immunoglobulin within 6 days" as typed values."""
    rows = {(r.fact, r.start.toPython(), r.end.toPython(), r.unit, r["from"]) for r in dso.query(WINDOWS)}
    assert (VE.PostExposureVaccination, 0, 72, VE.Hour, VE.Exposure) in rows
    assert (VE.PostExposureImmunoglobulin, 0, 6, VE.Day, VE.Exposure) in rows
    assert set(dso.objects(VE.PostExposureImmunoglobulin, VE.intendedFor)) == {
        VE.InfantsUnder12Months,
        VE.PregnantWithoutImmunity,
        VE.SeverelyImmunocompromised,
    }
    assert (VE.VitaminATreatment, 24, 24, VE.Hour, VE.PreviousDose) in rows
    infectious = (
        dso.value(VE.InfectiousPeriod, VE.windowStart).toPython(),  # type: ignore[union-attr]  # the DSO states it: value() is not None here
        dso.value(VE.InfectiousPeriod, VE.windowEnd).toPython(),  # type: ignore[union-attr]  # the DSO states it: value() is not None here
        dso.value(VE.InfectiousPeriod, VE.relativeTo),
    )
    assert infectious == (-4, 4, VE.RashOnset)


def test_grading_content_the_criteria_need(dso: Graph) -> None:
    assert set(dso.subjects(VE.contraindicates, VE.MCV)) == {
        VE.PregnancyContraindication,
        VE.SevereImmunosuppressionContraindication,
        VE.AnaphylaxisContraindication,
    }
    assert set(dso.subjects(VE.symptomOf, VE.Measles)) == {
        VE.FeverSymptom,
        VE.CoughSymptom,
        VE.CoryzaSymptom,
        VE.ConjunctivitisSymptom,
        VE.KoplikSpots,
        VE.MaculopapularRash,
    }
    misconceptions = set(dso.subjects(RDF.type, VE.Misconception))
    assert len(misconceptions) >= 5
    assert all(dso.value(m, VE.correction) is not None for m in misconceptions)
    frequencies = {e: dso.value(e, VE.frequencyCategory) for e in dso.subjects(RDF.type, VE.AdverseEvent)}
    assert (
        frequencies[VE.FeverAfterVaccination] == VE.Common
        and frequencies[VE.AnaphylaxisAfterVaccination] == VE.VeryRare
    )
    amounts = {
        dso.value(d, VE.fromAgeMonths).toPython(): dso.value(d, VE.amount).toPython()  # type: ignore[union-attr]  # every dose states both: value() is not None here
        for d in dso.objects(VE.VitaminATreatment, VE.hasAgeDependentDose)
    }
    assert amounts == {0: 50000, 6: 100000, 12: 200000}
    assert (VE.EarlyOutbreakDose, VE.fromAgeMonths, Literal(6)) in dso
    assert (VE.CallAhead, RDF.type, VE.CareSeekingAdvice) in dso


def test_every_grading_fact_is_sourced_or_flagged(dso: Graph) -> None:
    facts = {f for c in dso.transitive_subjects(RDFS.subClassOf, VE.GradingFact) for f in dso.subjects(RDF.type, c)}
    assert len(facts) > 30
    for fact in facts:
        sources = list(dso.objects(fact, DCTERMS.source))
        if (fact, VE.illustrative, Literal(True)) in dso:
            assert not sources and "not verified" in str(dso.value(fact, RDFS.comment)), fact
        else:
            assert sources, f"{fact} has no source"
            assert all(str(s).startswith("https://") and dso.value(s, DCTERMS.title) for s in sources), fact


def _without(node: URIRef, prop: URIRef) -> Callable[[Graph], None]:
    return lambda g: g.remove((node, prop, None))


DSO_BREAKS: list[tuple[str, Callable[[Graph], None], URIRef, str]] = [
    (
        "misconception without correction",
        _without(VE.MisconceptionAutism, VE.correction),
        VE.MisconceptionAutism,
        "must have a correction",
    ),
    ("window without unit", _without(VE.Within72Hours, VE.timeUnit), VE.Within72Hours, "exactly one unit"),
    (
        "window ending before it starts",
        lambda g: g.set((VE.IncubationPeriod, VE.windowEnd, Literal(3))),
        VE.IncubationPeriod,
        "not after its end",
    ),
    ("unsourced fact", _without(VE.KoplikSpots, DCTERMS.source), VE.KoplikSpots, "cite a source"),
    (
        "adverse event without frequency",
        _without(VE.RashAfterVaccination, VE.frequencyCategory),
        VE.RashAfterVaccination,
        "frequency category",
    ),
]


def _shape_messages(data: Graph, shapes: Graph) -> set[tuple[Node, str]]:
    _conforms, report, _text = shacl_validate(data, shacl_graph=shapes, advanced=True)
    return {
        (r.focus, str(r.message))
        for r in report.query(
            "SELECT ?focus ?message WHERE { ?r <http://www.w3.org/ns/shacl#focusNode> ?focus ; "
            "<http://www.w3.org/ns/shacl#resultMessage> ?message }"
        )
    }


def test_dso_grading_reference_passes_its_shapes(dso: Graph) -> None:
    assert _shape_messages(dso, load_shapes(ROOT / "shapes" / "vaccine-education-kg.ttl")) == set()


@pytest.fixture(scope="module")
def broken_dso_messages(dso: Graph) -> set[tuple[Node, str]]:
    """One SHACL run over the DSO carrying every break of :data:`DSO_BREAKS`, each on its own node (the DSO without
    them has no result at all: :func:`test_dso_grading_reference_passes_its_shapes`)."""
    assert len({b[2] for b in DSO_BREAKS}) == len(DSO_BREAKS), "each break has a node of its own: none hides another"
    broken = Graph() + dso
    for _name, change, _focus, _phrase in DSO_BREAKS:
        change(broken)
    return _shape_messages(broken, load_shapes(ROOT / "shapes" / "vaccine-education-kg.ttl"))


@pytest.mark.parametrize(
    ("name", "focus", "phrase"), [(b[0], b[2], b[3]) for b in DSO_BREAKS], ids=[b[0] for b in DSO_BREAKS]
)
def test_broken_grading_reference_is_reported(
    name: str, focus: URIRef, phrase: str, broken_dso_messages: set[tuple[Node, str]]
) -> None:
    assert any(f == focus and phrase in m for f, m in broken_dso_messages), (name, broken_dso_messages)
