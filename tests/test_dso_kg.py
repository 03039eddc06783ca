"""The vaccine-education DSO, the four country knowledge graphs, the KG and record shapes, and
service.validation (no HTTP)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from caie_vaccine import VE as DSO_VACCINE
from pyshacl import validate as shacl_validate
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, SH, SKOS
from rdflib.term import Node

from service.core.validation import load_shapes, validate_kg

ROOT = Path(__file__).resolve().parents[1]
DSO_IRI = URIRef("https://w3id.org/ob-caie/dso/vaccine-education")
COUNTRIES = ("nigeria", "kenya", "india", "bangladesh")
VE = Namespace(DSO_VACCINE)
EPO = Namespace("https://w3id.org/ob-caie/epo/")
EARL = Namespace("http://www.w3.org/ns/earl#")
PROV = Namespace("http://www.w3.org/ns/prov#")
EX = Namespace("https://example.org/record/")
# plain Namespace objects: pytest's collector trips over rdflib's closed DefinedNamespace for these two
DCAT = Namespace("http://www.w3.org/ns/dcat#")
XSD = Namespace("http://www.w3.org/2001/XMLSchema#")

# The measles schedule each KG must state: dose number -> (vaccine, recommended age in months, end of window).
EXPECTED_SCHEDULES = {
    "nigeria": {1: (VE.MCV, 9, None), 2: (VE.MCV, 15, None)},
    "kenya": {1: (VE.MR, 9, None), 2: (VE.MR, 18, None)},
    "india": {1: (VE.MR, 9, 12), 2: (VE.MR, 16, 24)},
    "bangladesh": {1: (VE.MR, 9, None), 2: (VE.MR, 15, None)},
}


def kg_path(country: str) -> Path:
    return ROOT / "ontologies" / "kg" / f"{country}.ttl"


def load_kg(country: str) -> Graph:
    return Graph().parse(kg_path(country))


def kg_ns(country: str) -> Namespace:
    return Namespace(f"https://w3id.org/ob-caie/kg/{country}/")


# ---------------------------------------------------------------------------------------------- the DSO


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


# ---------------------------------------------------------------------------------------------- grading reference

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


# ---------------------------------------------------------------------------------------------- the KGs


@pytest.mark.parametrize("country", COUNTRIES)
def test_kg_header(country: str) -> None:
    kg = load_kg(country)
    dataset = URIRef(f"https://w3id.org/ob-caie/kg/{country}")
    assert (dataset, RDF.type, DCAT.Dataset) in kg
    assert kg.value(dataset, DCTERMS.conformsTo) == DSO_IRI
    assert kg.value(dataset, RDFS.label) is not None and kg.value(dataset, RDFS.comment) is not None
    for s in kg.subjects():
        if isinstance(s, URIRef) and s != dataset and "ob-caie" in str(s):
            assert str(s).startswith(f"https://w3id.org/ob-caie/kg/{country}/"), s


@pytest.mark.parametrize("country", COUNTRIES)
def test_kg_conforms_to_dso(country: str, dso: Graph, kg_shapes: Graph) -> None:
    outcome = validate_kg(load_kg(country), dso, kg_shapes)
    assert outcome.conforms, outcome.violations
    assert outcome.violations == ()  # not even warnings
    assert (None, SH.conforms, Literal(True)) in outcome.report


@pytest.mark.parametrize("country", COUNTRIES)
def test_schedule_facts_are_sourced_or_illustrative(country: str) -> None:
    kg = load_kg(country)
    nodes = set(kg.subjects(RDF.type, VE.VaccinationSchedule)) | set(kg.subjects(RDF.type, VE.ScheduledDose))
    assert len(nodes) >= 3
    for node in nodes:
        sources = list(kg.objects(node, DCTERMS.source))
        illustrative = (node, VE.illustrative, Literal(True)) in kg
        assert sources or illustrative, node
        for source in sources:
            assert isinstance(source, URIRef) and str(source).startswith(("https://", "http://"))
            assert kg.value(source, DCTERMS.title) is not None, source


@pytest.mark.parametrize("country", COUNTRIES)
def test_kg_states_the_national_measles_schedule(country: str) -> None:
    kg = load_kg(country)
    schedule = kg_ns(country)["measles-schedule"]
    assert kg.value(schedule, VE.about) == VE.Measles
    doses = {int(kg.value(d, VE.doseNumber)): d for d in kg.objects(schedule, VE.dose)}  # type: ignore[arg-type]  # value() may be None for mypy; each dose has a number
    assert set(doses) == set(EXPECTED_SCHEDULES[country])
    for number, (vaccine, age, age_max) in EXPECTED_SCHEDULES[country].items():
        dose = doses[number]
        assert kg.value(dose, VE.vaccine) == vaccine
        assert kg.value(dose, VE.recommendedAgeMonths).toPython() == age  # type: ignore[union-attr]  # each dose states its age: value() is not None
        end = kg.value(dose, VE.recommendedAgeMonthsMax)
        assert (end.toPython() if end is not None else None) == age_max  # type: ignore[union-attr]  # value() is a Node for mypy; a literal here


@pytest.mark.parametrize("country", COUNTRIES)
def test_every_fact_node_is_sourced_or_illustrative(country: str) -> None:
    kg = load_kg(country)
    for cls in (
        VE.Country,
        VE.Language,
        VE.HealthService,
        VE.Clinic,
        VE.HealthLine,
        VE.TransportMode,
        VE.TransmissionSetting,
        VE.Person,
        VE.Caregiver,
        VE.Commuter,
        VE.Student,
        VE.PregnantPerson,
    ):
        for node in kg.subjects(RDF.type, cls):
            assert kg.value(node, DCTERMS.source) is not None or (node, VE.illustrative, Literal(True)) in kg, node


LEXVO = Namespace("http://lexvo.org/id/iso639-3/")


def test_languages_are_declared_once_with_iso_639_3_iris(dso: Graph) -> None:
    languages = set(dso.subjects(RDF.type, VE.Language))
    assert {LEXVO.eng, LEXVO.hau, LEXVO.yor, LEXVO.ibo, LEXVO.pcm, LEXVO.swa, LEXVO.hin, LEXVO.ben} <= languages
    for lang in languages:
        assert str(lang).startswith(str(LEXVO)), lang
        assert dso.value(lang, VE.languageCode) is not None and dso.value(lang, RDFS.label) is not None, lang
        source = dso.value(lang, DCTERMS.source)
        assert source == URIRef(f"https://iso639-3.sil.org/code/{str(lang)[-3:]}") and dso.value(source, DCTERMS.title)
    countries_of: dict[Node, set[str]] = {}
    for country in COUNTRIES:
        kg = load_kg(country)
        assert not set(kg.subjects(RDF.type, VE.Language)), f"{country} declares its own languages"
        used = set(kg.objects(None, VE.officialLanguage)) | set(kg.objects(None, VE.majorLanguage))
        used |= set(kg.objects(None, VE.speaksLanguage))
        assert used <= languages, (country, used - languages)
        for lang in used:
            countries_of.setdefault(lang, set()).add(country)
    assert countries_of[LEXVO.ben] == {"india", "bangladesh"}  # one Bengali, not one per country


@pytest.mark.parametrize(
    ("country", "unsourced"),
    [("nigeria", {"pcm"}), ("kenya", {"kik", "luo"}), ("india", set()), ("bangladesh", {"eng"})],
)
def test_unsourced_language_links_are_flagged(country: str, unsourced: set[str]) -> None:
    """A country's language links are backed by its dcterms:source, except those an owl:Axiom annotation marks
    illustrative (the statement, not the language, is unverified)."""
    kg = load_kg(country)
    country_node = kg_ns(country).country
    assert kg.value(country_node, DCTERMS.source) is not None
    flagged = {
        str(kg.value(a, OWL.annotatedTarget))[-3:]
        for a in kg.subjects(RDF.type, OWL.Axiom)
        if kg.value(a, OWL.annotatedSource) == country_node and (a, VE.illustrative, Literal(True)) in kg
    }
    assert flagged == unsourced
    for code in unsourced:
        assert (country_node, VE.majorLanguage, LEXVO[code]) in kg


def test_text_in_other_languages_awaits_native_review(dso: Graph) -> None:
    """Text in a language none of us reads natively is marked as provisional."""
    for graph in (dso, *(load_kg(c) for c in COUNTRIES)):
        for s, _p, o in graph:
            if isinstance(o, Literal) and o.language and not o.language.startswith("en"):
                assert (s, VE.awaitingNativeReview, Literal(True)) in graph, (s, o)


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
