"""The published EPO's alignment to the caie-spec EPO: the expected alignments are stated, their targets exist,
and they hold under OWL-RL (our terms entail theirs, their equivalents ours, consistently). The EPO itself (it
parses, every term documented and declared): tests/test_epo.py.

No HTTP and no service code beyond :mod:`service.namespaces`.
"""

from __future__ import annotations

import pytest
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from service.core.namespaces import CAIE_EPO, EPO

from .epo_terms import XSD, C, E, in_epo

PROV_NS = Namespace(
    "http://www.w3.org/ns/prov#"
)  # a plain Namespace: rdflib's closed XSD warns when pytest introspects it
# The alignments the methodology's core chain needs at the least (our class -> caie-spec class).
EXPECTED_CLASS_ALIGNMENTS = {
    "OperationalEnvelope": "RequirementSet",
    "Requirement": "Requirement",
    "AcceptanceCriterion": "AcceptanceCriterion",
    "Probe": "Probe",
    "TestPlan": "TestPlan",
    "ConsistencyCheck": "ConsistencyCheck",
    "Turn": "Turn",
    "Response": "Response",
    "Determination": "Determination",
    "Attestation": "Attestation",
    "PlanApproval": "PlanApproval",
    "Report": "Report",
    "Recommendation": "Recommendation",
    "Run": "TestSuite",
    "Conversation": "Session",
    "Role": "Role",
}
# Where our term and caie-spec's mean the same, the alignment is an equivalence (issue 11 §5): OWL-RL then
# reads an imported caie-spec record in our terms too.
EXPECTED_EQUIVALENT_CLASSES = {"Requirement", "AcceptanceCriterion", "Determination", "Attestation"}
EXPECTED_EQUIVALENT_PROPERTIES = {
    "weight": "weight",
    "weightRationale": "weightRationale",
    "expectedResult": "expectedResult",
    "exercises": "exercises",
    "coverage": "coverage",
    "passedFraction": "passRate",
    "failedFraction": "failRate",
    "cantTellFraction": "cantTellRate",
}
EXPECTED_PROPERTY_ALIGNMENTS = {
    "weight": "weight",
    "weightRationale": "weightRationale",
    "statement": "text",
    "expectedResult": "expectedResult",
    "turnIndex": "turnIndex",
    "exercises": "exercises",
    "objective": "objective",
    "evidenceSufficiency": "sufficiency",
    "testAppropriateness": "appropriateness",
    "coverage": "coverage",
}


def _aligned(g: Graph, *predicates: URIRef) -> list[tuple[URIRef, URIRef]]:
    return sorted(
        (s, o)
        for p in predicates
        for s, o in g.subject_objects(p)
        if in_epo(s) and isinstance(o, URIRef) and str(o).startswith(CAIE_EPO)
    )


def _class_alignments(g: Graph) -> list[tuple[URIRef, URIRef]]:
    """Our class and the caie-spec class it is a subclass of or equivalent to."""
    return _aligned(g, RDFS.subClassOf, OWL.equivalentClass)


def _property_alignments(g: Graph) -> list[tuple[URIRef, URIRef]]:
    """Our property and the caie-spec property it is a subproperty of or equivalent to."""
    return _aligned(g, RDFS.subPropertyOf, OWL.equivalentProperty)


# ------------------------------------------------------------------------------------------ alignment


def test_expected_alignments_are_stated(epo: Graph) -> None:
    classes = set(_class_alignments(epo))
    missing = [
        f"{ours} -> {theirs}"
        for ours, theirs in EXPECTED_CLASS_ALIGNMENTS.items()
        if (E[ours], C[theirs]) not in classes
    ]
    props = set(_property_alignments(epo))
    missing += [
        f"{ours} -> {theirs}"
        for ours, theirs in EXPECTED_PROPERTY_ALIGNMENTS.items()
        if (E[ours], C[theirs]) not in props
    ]
    assert not missing, f"missing alignments: {missing}"


def test_equivalences_are_stated_and_run_is_a_suite(epo: Graph) -> None:
    classes = set(_aligned(epo, OWL.equivalentClass))
    assert classes == {(E[name], C[name]) for name in EXPECTED_EQUIVALENT_CLASSES}
    props = set(_aligned(epo, OWL.equivalentProperty))
    assert props == {(E[ours], C[theirs]) for ours, theirs in EXPECTED_EQUIVALENT_PROPERTIES.items()}
    # A run is a set of conversations run together (a caie-spec test suite), never one session.
    assert set(epo.objects(E.Run, RDFS.subClassOf)) == {PROV_NS.Activity, C.TestSuite}


def test_alignment_targets_exist_in_caie_spec(epo: Graph, caie_epo: Graph) -> None:
    """Every caie: term we align to (or match an individual with) is defined by the caie-spec EPO, with the same
    kind: a class for a class, an object property for an object property, a datatype property for a datatype one."""
    problems = []
    for ours, theirs in _class_alignments(epo):
        if (theirs, RDF.type, OWL.Class) not in caie_epo:
            problems.append(f"{ours} subClassOf {theirs}: not a caie-spec class")
    for ours, theirs in _property_alignments(epo):
        kind = OWL.ObjectProperty if (ours, RDF.type, OWL.ObjectProperty) in epo else OWL.DatatypeProperty
        if (theirs, RDF.type, kind) not in caie_epo:
            problems.append(f"{ours} subPropertyOf {theirs}: not a caie-spec {kind}")
    for s, p, o in epo:
        if isinstance(o, URIRef) and str(o).startswith(CAIE_EPO) and (o, None, None) not in caie_epo:
            problems.append(f"{s} {p} {o}: {o} is not in the caie-spec EPO")
    assert not problems, "\n".join(problems)


def _value_for(epo: Graph, prop: URIRef, n: int) -> Literal | URIRef:
    if (prop, RDF.type, OWL.DatatypeProperty) not in epo:
        return URIRef(f"urn:test:object/{n}")
    rng = epo.value(prop, RDFS.range)
    samples = {
        XSD.decimal: Literal("1.5", datatype=XSD.decimal),
        XSD.integer: Literal(3, datatype=XSD.integer),
        XSD.boolean: Literal(True),
    }
    return samples.get(rng, Literal("text"))


@pytest.fixture(scope="module")
def entailed(epo: Graph, caie_epo: Graph) -> tuple[Graph, dict[URIRef, URIRef], dict[URIRef, tuple]]:
    """Both ontologies plus one individual per aligned class and one triple per aligned property, closed under
    OWL-RL once."""
    import owlrl

    g = Graph()
    g += epo
    g += caie_epo
    individuals: dict[URIRef, URIRef] = {}
    for n, (ours, _) in enumerate(_class_alignments(epo)):
        if ours not in individuals:
            individuals[ours] = URIRef(f"urn:test:individual/{n}")
            g.add((individuals[ours], RDF.type, ours))
    triples: dict[URIRef, tuple] = {}
    for n, (ours, _) in enumerate(_property_alignments(epo)):
        if ours not in triples:
            triples[ours] = (URIRef(f"urn:test:subject/{n}"), ours, _value_for(epo, ours, n))
            g.add(triples[ours])
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
    return g, individuals, triples


def test_owlrl_entails_caie_classes_from_ours(epo: Graph, caie_epo: Graph, entailed) -> None:
    import owlrl

    g, individuals, _ = entailed
    onto = Graph()
    onto += epo
    onto += caie_epo
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(onto)
    ignore = {OWL.Thing, RDFS.Resource, OWL.Nothing}
    problems = []
    for ours, theirs in _class_alignments(epo):
        ind = individuals[ours]
        expected = {theirs} | {
            sup
            for sup in onto.transitive_objects(theirs, RDFS.subClassOf)
            if isinstance(sup, URIRef) and sup not in ignore
        }
        missing = sorted(cls for cls in expected if (ind, RDF.type, cls) not in g)
        if missing:
            problems.append(f"an epo:{ours.removeprefix(EPO)} is not entailed to be {missing}")
    assert not problems, "\n".join(problems)
    assert len(individuals) >= len(EXPECTED_CLASS_ALIGNMENTS)


def test_owlrl_entails_caie_properties_from_ours(epo: Graph, entailed) -> None:
    g, _, triples = entailed
    problems = []
    for ours, theirs in _property_alignments(epo):
        s, _, o = triples[ours]
        if (s, theirs, o) not in g:
            problems.append(
                f"{s} epo:{ours.removeprefix(EPO)} {o} does not entail caie:{theirs.removeprefix(CAIE_EPO)}"
            )
    assert not problems, "\n".join(problems)
    # The brief's own example, spelled out.
    s, _, o = triples[E.weight]
    assert (s, C.weight, o) in g


def test_owlrl_entails_ours_from_caie_equivalents(epo: Graph) -> None:
    """The other way: a caie-spec criterion with a weight is, under OWL-RL, one of our criteria with our weight."""
    import owlrl

    g = Graph()  # the alignment's equivalences alone: what entails our terms from theirs
    for predicate in (OWL.equivalentClass, OWL.equivalentProperty):
        g += epo.triples((None, predicate, None))
    criterion, weight = URIRef("urn:test:caie/a1"), Literal("2", datatype=XSD.decimal)
    g.add((criterion, RDF.type, C.AcceptanceCriterion))
    g.add((criterion, C.weight, weight))
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
    assert (criterion, RDF.type, E.AcceptanceCriterion) in g
    assert (criterion, E.weight, weight) in g


def test_alignment_is_consistent_under_owlrl(entailed) -> None:
    """OWL-RL records inconsistencies (e.g. an individual in two disjoint classes) as error messages."""
    g, _, _ = entailed
    errors = [
        str(m)
        for node in g.subjects(RDF.type, URIRef("http://www.daml.org/2002/03/agents/agent-ont#ErrorMessage"))
        for m in g.objects(node, URIRef("http://www.daml.org/2002/03/agents/agent-ont#error"))
    ]
    assert not errors, "\n".join(errors)


def test_no_class_is_both_activity_and_entity(epo: Graph, caie_epo: Graph) -> None:
    """PROV-O makes prov:Activity and prov:Entity disjoint; neither our hierarchy nor the caie-spec classes we align
    to may put a class of ours under both."""
    PROV = Namespace("http://www.w3.org/ns/prov#")
    onto = Graph()
    onto += epo
    onto += caie_epo
    both = [
        str(cls)
        for cls in epo.subjects(RDF.type, OWL.Class)
        if {PROV.Activity, PROV.Entity} <= set(onto.transitive_objects(cls, RDFS.subClassOf))
    ]
    assert not both, f"both prov:Activity and prov:Entity: {both}"
