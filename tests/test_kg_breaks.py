"""Knowledge graphs broken on purpose: each break is reported by the KG shapes or the OWL 2 RL check, naming
the node and the rule (service.core.validation.validate_kg, no HTTP)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from caie_vaccine import VE as DSO_VACCINE
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, SH, XSD
from rdflib.term import Node

from service.api.shapes import validation_json
from service.core.validation import validate_kg
from service.core.validation_report import ValidationOutcome

from .dso_kg import VE, kg_ns, load_kg

# ---------------------------------------------------------------------------------------------- broken KGs

K = kg_ns("nigeria")


def undeclared_class(g: Graph) -> None:
    g.add((K["persona-kano-infant"], RDF.type, VE.Spaceship))


def undeclared_property(g: Graph) -> None:
    g.add((K["measles-dose-1"], VE.colour, Literal("blue")))


def two_vaccination_statuses(g: Graph) -> None:
    g.add((K["persona-kano-infant"], VE.hasVaccinationStatus, VE.FullyVaccinated))


def disjointness(g: Graph) -> None:
    g.add((K["phc-centres"], RDF.type, VE.Disease))


def duplicate_dose_numbers(g: Graph) -> None:
    g.set((K["measles-dose-2"], VE.doseNumber, Literal(1)))


def decreasing_ages(g: Graph) -> None:
    g.set((K["measles-dose-2"], VE.recommendedAgeMonths, Literal(6)))


def class_range(g: Graph) -> None:
    g.set((K["persona-kano-infant"], VE.livesIn, K["phc-centres"]))


def datatype_range(g: Graph) -> None:
    g.set((K["persona-lagos-commuter-parent"], VE.isPregnant, Literal("no")))


def ill_formed_literal(g: Graph) -> None:
    g.set((K["measles-dose-1"], VE.recommendedAgeMonths, Literal("nine", datatype=XSD.integer)))


def domain(g: Graph) -> None:
    g.add((K["measles-schedule"], VE.hasAgeGroup, VE.Adult))


def scheme_membership(g: Graph) -> None:
    g.add((K["persona-kano-infant"], VE.hasVaccinationStatus, K["made-up-status"]))
    g.remove((K["persona-kano-infant"], VE.hasVaccinationStatus, VE.Unvaccinated))
    g.add((K["made-up-status"], RDF.type, VE.VaccinationStatus))
    g.add((K["made-up-status"], VE.illustrative, Literal(True)))


def immune_without_cause(g: Graph) -> None:
    g.set((K["persona-kano-infant"], VE.hasImmunityStatus, VE.Immune))


def elder_infant(g: Graph) -> None:
    g.add((K["persona-kano-infant"], RDF.type, VE.Elder))
    g.add((K["persona-kano-infant"], VE.illustrative, Literal(True)))


def pregnant_infant(g: Graph) -> None:
    g.add((K["persona-kano-infant"], VE.isPregnant, Literal(True)))


def elder_adult(g: Graph) -> None:
    g.add((K["persona-lagos-commuter-parent"], RDF.type, VE.Elder))


def no_language(g: Graph) -> None:
    g.remove((K.country, VE.officialLanguage, None))
    g.remove((K.country, VE.majorLanguage, None))


def unsourced_dose(g: Graph) -> None:
    g.remove((K["measles-dose-2"], DCTERMS.source, None))


BROKEN: list[tuple[str, Callable[[Graph], None], str, str]] = [
    # (name, change, focus node local name, a phrase the message must contain)
    ("undeclared class", undeclared_class, "persona-kano-infant", "does not declare as a class"),
    ("undeclared property", undeclared_property, "measles-dose-1", "does not declare as a property"),
    ("two vaccination statuses", two_vaccination_statuses, "persona-kano-infant", "which the DSO declares functional"),
    ("disjoint classes", disjointness, "phc-centres", "declares disjoint"),
    ("duplicate dose numbers", duplicate_dose_numbers, "measles-schedule", "same dose number"),
    ("decreasing ages", decreasing_ages, "measles-schedule", "not earlier than dose"),
    (
        "class range",
        class_range,
        "persona-kano-infant",
        "whose rdfs:range is https://w3id.org/ob-caie/dso/vaccine-education/Country",
    ),
    (
        "datatype range",
        datatype_range,
        "persona-lagos-commuter-parent",
        "is the datatype http://www.w3.org/2001/XMLSchema#boolean",
    ),
    ("ill-formed literal", ill_formed_literal, "measles-dose-1", "not valid for its datatype"),
    (
        "domain",
        domain,
        "measles-schedule",
        "whose rdfs:domain is https://w3id.org/ob-caie/dso/vaccine-education/Person",
    ),
    ("scheme membership", scheme_membership, "persona-kano-infant", "not a concept of the scheme"),
    ("immune without cause", immune_without_cause, "persona-kano-infant", "ImmuneWithoutCause"),
    ("elder infant", elder_infant, "persona-kano-infant", "declared different (owl:AllDifferent)"),
    ("pregnant infant", pregnant_infant, "persona-kano-infant", "PregnantInfant"),
    ("elder who is an adult", elder_adult, "persona-lagos-commuter-parent", "declared different (owl:AllDifferent)"),
    ("country without language", no_language, "country", "at least one official or major language"),
    ("unsourced dose", unsourced_dose, "measles-dose-2", "neither cites a source"),
]


def kg_defining_its_own_class(g: Graph) -> None:
    g.add((K.Spaceship, RDF.type, OWL.Class))
    g.add((K["persona-kano-infant"], RDF.type, K.Spaceship))


def _add_node(g: Graph, node: URIRef, *types: URIRef, **values: Node) -> None:
    g.add((node, VE.illustrative, Literal(True)))
    for t in types:
        g.add((node, RDF.type, t))
    for prop, value in values.items():
        g.add((node, VE[prop], value))


def grading_facts_and_askers(kg: Graph) -> None:
    """Grading facts and askers broken in several independent places (one node each): :data:`GRADING_EXPECTED`."""
    _add_node(kg, K.rumour, VE.Misconception, about=VE.Measles)
    kg.add((K.rumour, RDFS.label, Literal("measles is caused by the evil eye", lang="en")))
    _add_node(kg, K["no-unit"], VE.TimeWindow, windowStart=Literal(0), windowEnd=Literal(3), relativeTo=VE.Exposure)
    _add_node(kg, K["sore-arm"], VE.AdverseEvent, followsVaccine=VE.MCV)
    kg.add((K["sore-arm"], RDFS.label, Literal("sore arm", lang="en")))
    kg.remove((K["measles-campaigns"], VE.illustrative, None))
    kg.set((K["persona-kano-caregiver"], VE.hasAgeGroup, VE.Infant))
    _add_node(kg, K["self-carer"], VE.Person, VE.Carer, isCaregiverOf=K["self-carer"], hasAgeGroup=VE.Adult)
    _add_node(kg, K["child-carer"], VE.Person, VE.Carer, isCaregiverOf=K["persona-kano-infant"], hasAgeGroup=VE.Child)


GRADING_EXPECTED = [
    ("rumour", "must have a correction"),
    ("no-unit", "exactly one unit"),
    ("sore-arm", "frequency category"),
    ("measles-campaigns", "cite a source"),
    ("persona-kano-caregiver", "InfantAsker"),  # an infant does not ask ...
    ("persona-kano-caregiver", "InfantCarer"),  # ... nor care for anyone: the infant age is the child's
    ("child-carer", "ChildCarer"),
    ("self-carer", "Irreflexive property"),
]

CHANGES: dict[str, Callable[[Graph], None]] = {
    **{name: change for name, change, _focus, _phrase in BROKEN},
    "grading facts and askers": grading_facts_and_askers,
    "KG defining its own class": kg_defining_its_own_class,
}

BROKEN_KGS: tuple[tuple[str, ...], ...] = (
    # Each validation (an owlrl closure of DSO + KG, then pySHACL) takes seconds, so the Nigeria KG is broken in
    # several places at once and each break's result looked for on its own node with its own phrase. Breaks that
    # could hide or fake one another stay in different KGs: at most one OWL-RL clash on persona-kano-infant per
    # KG (two of them, and the age-group and vaccination-status clashes, make DSO individuals owl:sameAs, which
    # spreads through the closure), no two breaks of one triple (the vaccination status: functional clash and
    # scheme membership; dose 2's number and its age; dose 1's age and dose 2's), and the two undeclared classes
    # apart (one phrase, one node).
    (
        "immune without cause",
        "undeclared property",
        "disjoint classes",
        "duplicate dose numbers",
        "datatype range",
        "country without language",
        "unsourced dose",
        "grading facts and askers",
        "KG defining its own class",
    ),
    ("two vaccination statuses", "decreasing ages", "domain", "undeclared class"),
    ("elder infant", "ill-formed literal", "class range"),
    ("pregnant infant", "scheme membership", "elder who is an adult"),
)


@dataclass(frozen=True)
class BrokenKg:
    outcome: ValidationOutcome
    inputs_unchanged: bool
    """Whether the KG, DSO and shapes graphs held the same triples after the validation as before it."""


@pytest.fixture(scope="module")
def broken_kgs(dso: Graph, kg_shapes: Graph) -> dict[str, BrokenKg]:
    """Each break's name to the validation of the Nigeria KG that carries it (with the others of its group)."""
    assert sorted(n for group in BROKEN_KGS for n in group) == sorted(CHANGES), "every break in exactly one KG"
    by_break: dict[str, BrokenKg] = {}
    for group in BROKEN_KGS:
        kg = load_kg("nigeria")
        for name in group:
            CHANGES[name](kg)
        before = set(kg), set(dso), set(kg_shapes)
        outcome = validate_kg(kg, dso, kg_shapes)
        broken = BrokenKg(outcome, (set(kg), set(dso), set(kg_shapes)) == before)
        by_break.update(dict.fromkeys(group, broken))
    return by_break


@pytest.mark.parametrize(("name", "focus", "phrase"), [(b[0], b[2], b[3]) for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_broken_kg_is_reported(name: str, focus: str, phrase: str, broken_kgs: dict[str, BrokenKg]) -> None:
    outcome = broken_kgs[name].outcome
    assert not outcome.conforms, name
    hits = [v for v in outcome.violations if v.focus_node == K[focus].n3() and phrase in v.message]
    assert hits, f"{name}: no violation on {focus} containing {phrase!r}: {outcome.violations}"
    # the KG carries other breaks too: this one's own result is of severity Violation, so alone it fails a KG
    assert any(v.severity == "Violation" for v in hits), hits
    assert all(v.severity in {"Violation", "Warning", "Info"} for v in outcome.violations)
    # only KG nodes are ever reported, never DSO terms
    assert all(not v.focus_node.startswith("<" + DSO_VACCINE) for v in outcome.violations)
    assert (None, SH.conforms, Literal(False)) in outcome.report


def test_owl_rl_names_the_blocking_axiom(broken_kgs: dict[str, BrokenKg]) -> None:
    outcome = broken_kgs["immune without cause"].outcome
    infant = K["persona-kano-infant"].n3()
    reasoned = [v for v in outcome.violations if v.constraint == "owl-rl:cls-nothing2" and v.focus_node == infant]
    assert reasoned and VE.ImmuneWithoutCause.n3() in reasoned[0].message, reasoned
    shacl = [
        v
        for v in outcome.violations
        if v.constraint == "sh:SPARQLConstraintComponent"
        and v.focus_node == infant
        and "ImmuneWithoutCause" in v.message
    ]
    assert shacl, "the SHACL restatement of the rule fires too"


def test_owl_rl_detects_functional_clash(broken_kgs: dict[str, BrokenKg]) -> None:
    outcome = broken_kgs["two vaccination statuses"].outcome
    assert any(
        v.constraint == "owl-rl:eq-diff2" and v.focus_node == K["persona-kano-infant"].n3() for v in outcome.violations
    ), outcome.violations


def test_broken_grading_facts_and_askers_in_a_kg_are_reported(broken_kgs: dict[str, BrokenKg]) -> None:
    """Each break of :func:`grading_facts_and_askers` is reported on its own node with its own message."""
    outcome = broken_kgs["grading facts and askers"].outcome
    for focus, phrase in GRADING_EXPECTED:
        # owlrl's own messages (prp-irp) are put on the first KG node whose IRI the text contains, which can be
        # the dataset's IRI (a prefix of every node's), so the node is looked for in the message too
        assert any(
            phrase in v.message and (v.focus_node == K[focus].n3() or f" on {K[focus]} " in v.message)
            for v in outcome.violations
        ), (focus, phrase)


def test_kg_defining_its_own_class_is_still_undeclared(broken_kgs: dict[str, BrokenKg]) -> None:
    outcome = broken_kgs["KG defining its own class"].outcome
    assert any(
        v.focus_node == K["persona-kano-infant"].n3()
        and v.value == K.Spaceship.n3()
        and "does not declare as a class" in v.message
        for v in outcome.violations
    ), outcome.violations


def test_validate_kg_does_not_modify_inputs(broken_kgs: dict[str, BrokenKg]) -> None:
    # pySHACL adds axioms to a shapes graph: not to ours (checked on every validation of the broken KGs)
    assert all(broken.inputs_unchanged for broken in broken_kgs.values())


def test_outcome_json_shape(broken_kgs: dict[str, BrokenKg]) -> None:
    data = validation_json(broken_kgs["duplicate dose numbers"].outcome)
    assert data["conforms"] is False
    keys = {"focus_node", "path", "value", "message", "severity", "source_shape", "constraint"}
    assert data["violations"] and all(set(v) == keys for v in data["violations"])


# ---------------------------------------------------------------------------------------------- shapes files
