"""The published EPO (ontologies/epo.ttl): it parses, every term is documented and declared, and its alignment to
the caie-spec EPO holds under OWL-RL (our terms entail theirs).

No HTTP and no service code beyond :mod:`service.namespaces`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.compare import isomorphic
from rdflib.namespace import OWL, RDF, RDFS

from service.core.namespaces import CAIE_EPO, EPO, EPO_ONTOLOGY
from service.core.namespaces import XSD as XSD_NS

from .conftest import unavailable

REPO = Path(__file__).resolve().parents[1]
EPO_FILE = REPO / "ontologies" / "epo.ttl"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CAIE_EPO_FILE = SHARED / "interop" / "caie-spec" / "explorer" / "data" / "epo.ttl"

E = Namespace(EPO)
C = Namespace(CAIE_EPO)
XSD = Namespace(XSD_NS)
PROV_NS = Namespace(
    "http://www.w3.org/ns/prov#"
)  # a plain Namespace: rdflib's closed XSD warns when pytest introspects it
ONTOLOGY = URIRef(EPO_ONTOLOGY)
DECLARATION_TYPES = {
    OWL.Class,
    OWL.ObjectProperty,
    OWL.DatatypeProperty,
    OWL.AnnotationProperty,
    OWL.NamedIndividual,
}

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


def _in_epo(term: object) -> bool:
    return isinstance(term, URIRef) and str(term).startswith(EPO) and str(term) != EPO


@pytest.fixture(scope="module")
def epo() -> Graph:
    g = Graph()
    g.parse(EPO_FILE, format="turtle")
    return g


@pytest.fixture(scope="module")
def caie() -> Graph:
    if not CAIE_EPO_FILE.is_file():
        unavailable(f"caie-spec EPO not found at {CAIE_EPO_FILE}; the alignment tests need the shared interop folder")
    g = Graph()
    g.parse(CAIE_EPO_FILE, format="turtle")
    return g


def _declared(g: Graph) -> set[URIRef]:
    """Terms in the epo: namespace that the file declares: OWL declarations or individuals typed by a class."""
    out: set[URIRef] = set()
    for s, t in g.subject_objects(RDF.type):
        if _in_epo(s) and (t in DECLARATION_TYPES or isinstance(t, URIRef)):
            out.add(s)
    return out


def _aligned(g: Graph, *predicates: URIRef) -> list[tuple[URIRef, URIRef]]:
    return sorted(
        (s, o)
        for p in predicates
        for s, o in g.subject_objects(p)
        if _in_epo(s) and isinstance(o, URIRef) and str(o).startswith(CAIE_EPO)
    )


def _class_alignments(g: Graph) -> list[tuple[URIRef, URIRef]]:
    """Our class and the caie-spec class it is a subclass of or equivalent to."""
    return _aligned(g, RDFS.subClassOf, OWL.equivalentClass)


def _property_alignments(g: Graph) -> list[tuple[URIRef, URIRef]]:
    """Our property and the caie-spec property it is a subproperty of or equivalent to."""
    return _aligned(g, RDFS.subPropertyOf, OWL.equivalentProperty)


# ------------------------------------------------------------------------------------------ parsing


def test_parses_with_rdflib(epo: Graph) -> None:
    assert len(epo) > 500
    assert (ONTOLOGY, RDF.type, OWL.Ontology) in epo


def test_parses_with_pyoxigraph(epo: Graph) -> None:
    import pyoxigraph

    store = pyoxigraph.Store()
    store.load(path=str(EPO_FILE), format=pyoxigraph.RdfFormat.TURTLE)
    assert len(store) == len(epo)


def test_header(epo: Graph) -> None:
    DCTERMS = Namespace("http://purl.org/dc/terms/")
    PROV = Namespace("http://www.w3.org/ns/prov#")
    assert epo.value(ONTOLOGY, OWL.versionInfo) == Literal("0.1.0")
    assert epo.value(ONTOLOGY, DCTERMS.license) == URIRef("https://creativecommons.org/licenses/by-sa/4.0/")
    assert epo.value(ONTOLOGY, RDFS.label) is not None
    assert epo.value(ONTOLOGY, RDFS.comment) is not None
    source = epo.value(ONTOLOGY, DCTERMS.source)
    assert source is not None and "caie-spec" in str(source) and "f8cbe4e" in str(source)
    assert (ONTOLOGY, PROV.wasDerivedFrom, source) in epo
    assert "Michael Zargham and Julie Hollek" in str(epo.value(source, DCTERMS.creator))
    # caie-spec is referenced, never imported: the file stands alone.
    assert not list(epo.objects(ONTOLOGY, OWL.imports))


# ------------------------------------------------------------------------------------------ documentation


def test_every_declared_term_has_one_english_label_and_a_comment(epo: Graph) -> None:
    problems = []
    for term in sorted(_declared(epo)):
        labels = [lbl for lbl in epo.objects(term, RDFS.label) if isinstance(lbl, Literal) and lbl.language == "en"]
        if len(labels) != 1:
            problems.append(f"{term}: {len(labels)} English labels")
        if not list(epo.objects(term, RDFS.comment)):
            problems.append(f"{term}: no rdfs:comment")
        if (term, RDFS.isDefinedBy, ONTOLOGY) not in epo:
            problems.append(f"{term}: no rdfs:isDefinedBy <{ONTOLOGY}>")
    assert not problems, "\n".join(problems)


def test_every_used_term_is_declared(epo: Graph) -> None:
    declared = _declared(epo)
    used = {t for triple in epo for t in triple if _in_epo(t)}
    assert not sorted(used - declared), f"used but not declared: {sorted(used - declared)}"


def test_every_class_and_property_is_typed_consistently(epo: Graph) -> None:
    classes = set(epo.subjects(RDF.type, OWL.Class))
    obj = set(epo.subjects(RDF.type, OWL.ObjectProperty))
    dat = set(epo.subjects(RDF.type, OWL.DatatypeProperty))
    assert not (obj & dat), f"both object and datatype property: {obj & dat}"
    assert not (classes & (obj | dat))
    for s, o in epo.subject_objects(RDFS.subClassOf):
        if _in_epo(s):
            assert s in classes, f"{s} has rdfs:subClassOf but is not an owl:Class"
    for s, o in epo.subject_objects(RDFS.subPropertyOf):
        if _in_epo(s):
            assert s in obj | dat, f"{s} has rdfs:subPropertyOf but is not declared as a property"
    for p in dat:
        for rng in epo.objects(p, RDFS.range):
            assert str(rng).startswith(str(XSD)), f"datatype property {p} has non-datatype range {rng}"


def test_required_terms_are_present(epo: Graph) -> None:
    classes = {
        "Evaluation",
        "TestTarget",
        "VersionBoundary",
        "UseBoundary",
        "OperatingEnvironment",
        "OutOfScopeDeclaration",
        "Assumption",
        "OperationalEnvelope",
        "Requirement",
        "AcceptanceCriterion",
        "JudgingMethod",
        "Scenario",
        "Facet",
        "ConsistencyCheck",
        "BlockedScenario",
        "EligibleScenario",
        "Probe",
        "TestPlan",
        "AllocationStrategy",
        "SamplingFrame",
        "EvaluationMethod",
        "TestMaterial",
        "Run",
        "Conversation",
        "Turn",
        "Response",
        "Trace",
        "ExecutionError",
        "Determination",
        "Attestation",
        "Approval",
        "RelevanceAssessment",
        "EnvelopeAppropriatenessAssessment",
        "EnvelopeSignOff",
        "PlanApproval",
        "ReportSignOff",
        "SignOff",
        "Role",
        "Report",
        "Recommendation",
        "Gap",
        "Comparison",
        "VersionComparison",
        "BaselineComparison",
    }
    properties = {
        "weight",
        "weightRationale",
        "inScope",
        "statement",
        "expectedResult",
        "dimension",
        "category",
        "bearsOnConcept",
        "judgedBy",
        "judgingMethod",
        "hasFacet",
        "persona",
        "personState",
        "setting",
        "country",
        "language",
        "informationNeed",
        "conversationStyle",
        "blockedBy",
        "probeBudget",
        "seed",
        "frameSize",
        "methodVersion",
        "turnIndex",
        "supersedes",
        "supersessionReason",
        "evidenceSufficiency",
        "testAppropriateness",
        "compatible",
        "incompatibilityReason",
        "envelopeDigest",
        "graphDigest",
    }
    individuals = {
        "HumanJudge": "JudgingMethod",
        "RuleJudge": "JudgingMethod",
        "ModelJudge": "JudgingMethod",
        "ProportionalToWeight": "AllocationStrategy",
        "HighestWeightFirst": "AllocationStrategy",
        "Equal": "AllocationStrategy",
        "MatchedToExpertise": "AllocationStrategy",
        "DomainExpert": "Role",
        "EvaluationOperator": "Role",
        "OrganizationalExpert": "Role",
        "Annotator": "Role",
        "Viewer": "Role",
        "Admin": "Role",
    }
    missing = [c for c in classes if (E[c], RDF.type, OWL.Class) not in epo]
    missing += [
        p
        for p in properties
        if not (
            {(E[p], RDF.type, OWL.ObjectProperty), (E[p], RDF.type, OWL.DatatypeProperty)}
            & set(epo.triples((E[p], RDF.type, None)))
        )
    ]
    missing += [i for i, cls in individuals.items() if (E[i], RDF.type, E[cls]) not in epo]
    assert not missing, f"missing: {sorted(missing)}"
    for sub in (
        "RelevanceAssessment",
        "EnvelopeAppropriatenessAssessment",
        "EnvelopeSignOff",
        "PlanApproval",
        "ReportSignOff",
    ):
        closure = set(epo.transitive_objects(E[sub], RDFS.subClassOf))
        assert E.Approval in closure, f"{sub} is not an approval"
    DQV = Namespace("http://www.w3.org/ns/dqv#")
    for metric in ("Coverage", "OutcomeDistribution", "ProbePassRate"):
        assert (E[metric], RDF.type, DQV.Metric) in epo
        dim = epo.value(E[metric], DQV.inDimension)
        assert dim is not None and (dim, RDF.type, DQV.Dimension) in epo
    EARL = Namespace("http://www.w3.org/ns/earl#")
    PROV = Namespace("http://www.w3.org/ns/prov#")
    for judged in ("Determination", "Attestation"):
        closure = set(epo.transitive_objects(E[judged], RDFS.subClassOf))
        assert {EARL.Assertion, PROV.Entity} <= closure
    for activity in ("Run", "Conversation", "Turn", "ScenarioDerivation", "MetricComputation"):
        assert PROV.Activity in set(epo.transitive_objects(E[activity], RDFS.subClassOf))


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


def test_alignment_targets_exist_in_caie_spec(epo: Graph, caie: Graph) -> None:
    """Every caie: term we align to (or match an individual with) is defined by the caie-spec EPO, with the same
    kind: a class for a class, an object property for an object property, a datatype property for a datatype one."""
    problems = []
    for ours, theirs in _class_alignments(epo):
        if (theirs, RDF.type, OWL.Class) not in caie:
            problems.append(f"{ours} subClassOf {theirs}: not a caie-spec class")
    for ours, theirs in _property_alignments(epo):
        kind = OWL.ObjectProperty if (ours, RDF.type, OWL.ObjectProperty) in epo else OWL.DatatypeProperty
        if (theirs, RDF.type, kind) not in caie:
            problems.append(f"{ours} subPropertyOf {theirs}: not a caie-spec {kind}")
    for s, p, o in epo:
        if isinstance(o, URIRef) and str(o).startswith(CAIE_EPO) and (o, None, None) not in caie:
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
def entailed(epo: Graph, caie: Graph) -> tuple[Graph, dict[URIRef, URIRef], dict[URIRef, tuple]]:
    """Both ontologies plus one individual per aligned class and one triple per aligned property, closed under
    OWL-RL once."""
    import owlrl

    g = Graph()
    g += epo
    g += caie
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


def test_owlrl_entails_caie_classes_from_ours(epo: Graph, caie: Graph, entailed) -> None:
    import owlrl

    g, individuals, _ = entailed
    onto = Graph()
    onto += epo
    onto += caie
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


# ------------------------------------------------------------------------------------------ JSON-LD


def test_jsonld_round_trip_via_pyld(epo: Graph) -> None:
    from pyld import jsonld

    doc = json.loads(epo.serialize(format="json-ld"))
    nquads = jsonld.to_rdf(jsonld.expand(doc), {"format": "application/n-quads"})
    back = Graph()
    back.parse(data=nquads, format="nt")
    assert len(back) == len(epo)
    assert isomorphic(back, epo)


def test_no_class_is_both_activity_and_entity(epo: Graph, caie: Graph) -> None:
    """PROV-O makes prov:Activity and prov:Entity disjoint; neither our hierarchy nor the caie-spec classes we align
    to may put a class of ours under both."""
    PROV = Namespace("http://www.w3.org/ns/prov#")
    onto = Graph()
    onto += epo
    onto += caie
    both = [
        str(cls)
        for cls in epo.subjects(RDF.type, OWL.Class)
        if {PROV.Activity, PROV.Entity} <= set(onto.transitive_objects(cls, RDFS.subClassOf))
    ]
    assert not both, f"both prov:Activity and prov:Entity: {both}"
