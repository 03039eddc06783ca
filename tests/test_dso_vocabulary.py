"""The vaccine-education DSO's vocabulary (no HTTP): its header, every term labelled, commented and defined by it,
its SKOS concepts in schemes, the classes and functional properties the criteria and scenarios use, the asker kept
apart from the person asked about (with the Nigerian KG's caregiver and infant as the case), and its axioms within
OWL 2 RL. Its grading reference: test_dso_grading_reference.py; the country KGs: test_country_kgs.py.
"""

from __future__ import annotations

from caie_vaccine import VE as DSO_VACCINE
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, SKOS

from .dso_kg import DSO_IRI, VE, XSD, kg_ns, load_kg


def test_dso_header(dso: Graph) -> None:
    assert (DSO_IRI, RDF.type, OWL.Ontology) in dso
    assert dso.value(DSO_IRI, OWL.versionInfo) == Literal("0.2.0")
    assert dso.value(DSO_IRI, DCTERMS.license) == URIRef("https://creativecommons.org/licenses/by/4.0/")
    assert dso.value(DSO_IRI, RDFS.label) is not None and dso.value(DSO_IRI, RDFS.comment) is not None


def dso_terms(dso: Graph) -> set[URIRef]:
    return {s for s in dso.subjects() if isinstance(s, URIRef) and str(s).startswith(DSO_VACCINE)}


def test_every_dso_term_has_label_comment_and_is_defined_by(dso: Graph) -> None:
    terms = dso_terms(dso)
    assert len(terms) > 100
    for term in terms:
        labels = [lab for lab in dso.objects(term, RDFS.label) if isinstance(lab, Literal) and lab.language == "en"]
        assert labels, f"{term} has no English rdfs:label"
        assert dso.value(term, RDFS.comment) is not None, f"{term} has no rdfs:comment"
        assert dso.value(term, RDFS.isDefinedBy) == DSO_IRI, f"{term} has no rdfs:isDefinedBy"


def test_dso_concepts_are_in_schemes_with_pref_labels(dso: Graph) -> None:
    concepts = set(dso.subjects(RDF.type, SKOS.Concept))
    assert {
        VE.Infant,
        VE.Unvaccinated,
        VE.NeverInfected,
        VE.Immune,
        VE.Measles,
        VE.MR,
        VE.PublicTransportSetting,
        VE.VaccineSafety,
        VE.Minibus,
    } <= concepts
    for concept in concepts:
        assert dso.value(concept, SKOS.prefLabel) is not None, concept
        scheme = dso.value(concept, SKOS.inScheme)
        assert (scheme, RDF.type, SKOS.ConceptScheme) in dso, concept


def test_dso_declares_the_main_vocabulary(dso: Graph) -> None:
    for cls in (
        VE.Person,
        VE.Persona,
        VE.Caregiver,
        VE.PregnantPerson,
        VE.HealthWorker,
        VE.Commuter,
        VE.Student,
        VE.Elder,
        VE.AgeGroup,
        VE.VaccinationStatus,
        VE.InfectionHistory,
        VE.ImmunityStatus,
        VE.Disease,
        VE.Vaccine,
        VE.VaccinationSchedule,
        VE.ScheduledDose,
        VE.TransmissionSetting,
        VE.InformationNeed,
        VE.Country,
        VE.Language,
        VE.HealthService,
        VE.Clinic,
        VE.HealthLine,
        VE.TransportMode,
        VE.ImmuneWithoutCause,
    ):
        assert (cls, RDF.type, OWL.Class) in dso, cls
    for prop in (
        VE.hasAgeGroup,
        VE.hasVaccinationStatus,
        VE.hasInfectionHistory,
        VE.hasImmunityStatus,
        VE.isPregnant,
        VE.livesIn,
    ):
        assert (prop, RDF.type, OWL.FunctionalProperty) in dso, prop
        assert dso.value(prop, RDFS.domain) == VE.Person
    assert dso.value(VE.isPregnant, RDFS.range) == XSD.boolean
    assert (VE.ImmuneWithoutCause, RDFS.subClassOf, VE.InconsistentCombination) in dso
    assert (VE.InconsistentCombination, RDFS.subClassOf, OWL.Nothing) in dso


K = kg_ns("nigeria")


def test_dso_separates_asker_from_person_asked_about(dso: Graph) -> None:
    assert {dso.value(VE.asksAbout, RDFS.domain), dso.value(VE.asksAbout, RDFS.range)} == {
        VE.Asker,
        VE.PersonAskedAbout,
    }
    assert (VE.asksAbout, RDF.type, OWL.FunctionalProperty) in dso
    assert (VE.isCaregiverOf, RDF.type, OWL.IrreflexiveProperty) in dso
    for rule in (VE.InfantAsker, VE.InfantCarer, VE.ChildCarer, VE.PregnantInfant):
        assert (rule, RDFS.subClassOf, VE.InconsistentCombination) in dso, rule
    # the caregiver-and-infant situation exists, each person with their own age group
    kg = load_kg("nigeria")
    caregiver, infant = K["persona-kano-caregiver"], K["persona-kano-infant"]
    assert kg.value(caregiver, VE.asksAbout) == infant and (caregiver, VE.isCaregiverOf, infant) in kg
    assert (kg.value(caregiver, VE.hasAgeGroup), kg.value(infant, VE.hasAgeGroup)) == (VE.Adult, VE.Infant)


def test_dso_stays_in_owl_2_rl(dso: Graph) -> None:
    """Constructs outside OWL 2 RL in the positions the DSO could use them are absent, and every equivalent
    class is an intersection of named classes and hasValue restrictions (OWL 2 RL equivalence expressions)."""
    for construct in (
        OWL.someValuesFrom,
        OWL.allValuesFrom,
        OWL.unionOf,
        OWL.oneOf,
        OWL.complementOf,
        OWL.minCardinality,
        OWL.cardinality,
        OWL.qualifiedCardinality,
    ):
        assert not list(dso.subject_objects(construct)), construct
    for expr in dso.objects(None, OWL.equivalentClass):
        for member in dso.items(dso.value(expr, OWL.intersectionOf)):
            assert isinstance(member, URIRef) or dso.value(member, OWL.hasValue) is not None, member
