"""The published EPO (ontologies/epo.ttl): it parses (rdflib, pyoxigraph, a JSON-LD round trip), and every
term is documented and declared. Its alignment to the caie-spec EPO: tests/test_epo_alignment.py.

No HTTP and no service code beyond :mod:`service.namespaces`.
"""

from __future__ import annotations

import json

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.compare import isomorphic
from rdflib.namespace import OWL, RDF, RDFS

from service.core.namespaces import EPO_ONTOLOGY

from .epo_terms import EPO_FILE, XSD, E, in_epo

ONTOLOGY = URIRef(EPO_ONTOLOGY)
DECLARATION_TYPES = {
    OWL.Class,
    OWL.ObjectProperty,
    OWL.DatatypeProperty,
    OWL.AnnotationProperty,
    OWL.NamedIndividual,
}


def declared_terms(g: Graph) -> set[URIRef]:
    """Terms in the epo: namespace that the file declares: OWL declarations or individuals typed by a class."""
    out: set[URIRef] = set()
    for s, t in g.subject_objects(RDF.type):
        if in_epo(s) and (t in DECLARATION_TYPES or isinstance(t, URIRef)):
            out.add(s)
    return out


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
    for term in sorted(declared_terms(epo)):
        labels = [lbl for lbl in epo.objects(term, RDFS.label) if isinstance(lbl, Literal) and lbl.language == "en"]
        if len(labels) != 1:
            problems.append(f"{term}: {len(labels)} English labels")
        if not list(epo.objects(term, RDFS.comment)):
            problems.append(f"{term}: no rdfs:comment")
        if (term, RDFS.isDefinedBy, ONTOLOGY) not in epo:
            problems.append(f"{term}: no rdfs:isDefinedBy <{ONTOLOGY}>")
    assert not problems, "\n".join(problems)


def test_every_used_term_is_declared(epo: Graph) -> None:
    declared = declared_terms(epo)
    used = {t for triple in epo for t in triple if in_epo(t)}
    assert not sorted(used - declared), f"used but not declared: {sorted(used - declared)}"


def test_every_class_and_property_is_typed_consistently(epo: Graph) -> None:
    classes = set(epo.subjects(RDF.type, OWL.Class))
    obj = set(epo.subjects(RDF.type, OWL.ObjectProperty))
    dat = set(epo.subjects(RDF.type, OWL.DatatypeProperty))
    assert not (obj & dat), f"both object and datatype property: {obj & dat}"
    assert not (classes & (obj | dat))
    for s, o in epo.subject_objects(RDFS.subClassOf):
        if in_epo(s):
            assert s in classes, f"{s} has rdfs:subClassOf but is not an owl:Class"
    for s, o in epo.subject_objects(RDFS.subPropertyOf):
        if in_epo(s):
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


# ------------------------------------------------------------------------------------------ JSON-LD


def test_jsonld_round_trip_via_pyld(epo: Graph) -> None:
    from pyld import jsonld

    doc = json.loads(epo.serialize(format="json-ld"))
    nquads = jsonld.to_rdf(jsonld.expand(doc), {"format": "application/n-quads"})
    back = Graph()
    back.parse(data=nquads, format="nt")
    assert len(back) == len(epo)
    assert isomorphic(back, epo)
