"""Shared, session-scoped inputs: the repository's DSO, KGs and scenario shapes, read once, and their
full-frame tables compiled once through the process's table cache (what derive() uses too)."""

from __future__ import annotations

import pytest
from rdflib import Graph

from service.scenarios.cache import CompiledTables, compiled_tables
from service.scenarios.engine import Criterion
from service.scenarios.rules import default_scenario_shape_paths, load_rule_shapes

from . import LANG, NG, ROOT, VE

DSO = Graph().parse(ROOT / "ontologies" / "dso" / "vaccine-education.ttl")
KGS = tuple(Graph().parse(p) for p in sorted((ROOT / "ontologies" / "kg").glob("*.ttl")))
SHAPES = load_rule_shapes(default_scenario_shape_paths())
MR_CRITERION = Criterion("https://example.org/criteria/mr-schedule", frozenset({str(VE.MR), str(VE.ScheduleQuestion)}))
NG_CRITERION = Criterion("https://example.org/criteria/ng-schedule", frozenset({str(NG["measles-schedule"])}))
MEASLES_CRITERION = Criterion("https://example.org/criteria/measles", frozenset({str(VE.Measles)}))
CRITERIA = (MR_CRITERION, NG_CRITERION, MEASLES_CRITERION)
TINY_CRITERIA = (Criterion("https://example.org/criteria/mr", frozenset({str(VE.MR)})),)
TINY = {
    "allowed_countries": frozenset({str(NG.country)}),
    "allowed_languages": frozenset({str(LANG.eng)}),
    "excluded_concepts": frozenset(
        str(VE[n])
        for n in (
            "Polio",
            "Cholera",
            "COVID19",
            "Malaria",
            "Rubella",
            "SchoolSetting",
            "ClinicSetting",
            "PlaceOfWorshipSetting",
            "WorkplaceSetting",
            "MarketSetting",
            "PublicTransportSetting",
            "TreatmentQuestion",
            "SymptomRecognition",
            "VaccineSafety",
            "ExposureAdvice",
            "WhereToGetVaccinated",
            "TransmissionRisk",
            "Student",
            "Commuter",
            "HealthWorker",
            "Elder",
            "Adolescent",
            "OlderAdult",
            "Child",
            "Infant",
            "UnknownVaccinationStatus",
            "UnknownInfectionHistory",
            "UnknownImmunity",
            "PartiallyVaccinated",
            "CurrentInfection",
            "PastInfection",
            "AnxiousStyle",
            "SkepticalStyle",
            "Misconception",
        )
    ),
}
"""A 64-candidate frame (Nigeria, English, one setting, ...), shared by test_cache.py and test_derivation.py."""


@pytest.fixture(scope="session")
def full() -> CompiledTables:
    """The whole frame of the repository's inputs with three criteria, compiled (and cross-checked) once."""
    return compiled_tables(DSO, KGS, SHAPES, CRITERIA)
