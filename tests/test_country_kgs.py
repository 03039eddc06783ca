"""The four country knowledge graphs (no HTTP): each one's header and IRIs, conformance to the DSO and the KG shapes
(service.core.validation.validate_kg), its national measles schedule, every fact node and schedule fact sourced or
flagged illustrative; the languages declared once, in the DSO, with ISO 639-3 IRIs, a country's unsourced language
links flagged, and text in a language none of us reads natively marked as awaiting review.
"""

from __future__ import annotations

import pytest
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, SH
from rdflib.term import Node

from service.core.validation import validate_kg

from .dso_kg import COUNTRIES, DCAT, DSO_IRI, VE, kg_ns, load_kg

# The measles schedule each KG must state: dose number -> (vaccine, recommended age in months, end of window).
EXPECTED_SCHEDULES = {
    "nigeria": {1: (VE.MCV, 9, None), 2: (VE.MCV, 15, None)},
    "kenya": {1: (VE.MR, 9, None), 2: (VE.MR, 18, None)},
    "india": {1: (VE.MR, 9, 12), 2: (VE.MR, 16, 24)},
    "bangladesh": {1: (VE.MR, 9, None), 2: (VE.MR, 15, None)},
}


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
