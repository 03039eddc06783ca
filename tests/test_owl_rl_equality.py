"""The KG check's OWL 2 RL closure leaves out eq-ref's reflexive ``owl:sameAs`` (service.core.validation): the
clashes that read equality are still found, on the KG node at fault."""

from __future__ import annotations

from pathlib import Path

from rdflib import Graph, Namespace
from rdflib.namespace import OWL

from service.core.validation import kg_nodes_of, owl_rl_inconsistencies

ROOT = Path(__file__).resolve().parents[1]
VE = Namespace("https://w3id.org/ob-caie/dso/vaccine-education/")
KENYA = Namespace("https://w3id.org/ob-caie/kg/kenya/")


def clashes(kg: Graph) -> list[tuple[str, str]]:
    dso = Graph().parse(ROOT / "ontologies" / "dso" / "vaccine-education.ttl")
    return [(v.focus_node, v.constraint or "") for v in owl_rl_inconsistencies(kg, dso, kg_nodes_of(kg, dso))]


def test_no_clash_on_a_consistent_kg_and_a_node_different_from_itself_is_one() -> None:
    kg = Graph().parse(ROOT / "ontologies" / "kg" / "kenya.ttl")
    assert clashes(kg) == []
    persona = next(kg.subjects(VE.hasVaccinationStatus, VE.PartiallyVaccinated))
    kg.add((VE.PartiallyVaccinated, OWL.differentFrom, VE.PartiallyVaccinated))
    found = clashes(kg)
    assert (persona.n3(), "owl-rl:eq-diff1") in found, found


def test_a_functional_property_forcing_two_different_values_together_is_a_clash() -> None:
    kg = Graph().parse(ROOT / "ontologies" / "kg" / "kenya.ttl")
    persona = next(kg.subjects(VE.hasVaccinationStatus, VE.PartiallyVaccinated))
    kg.add((persona, VE.hasVaccinationStatus, VE.UnknownVaccinationStatus))
    found = clashes(kg)
    assert (persona.n3(), "owl-rl:eq-diff2") in found, found
