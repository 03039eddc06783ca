"""Shared, session-scoped inputs: the repository's DSO, KGs and scenario shapes, read once, and their
full-frame tables compiled once through the process's table cache (what derive() uses too)."""

from __future__ import annotations

import pytest
from rdflib import Graph

from service.scenarios.cache import CompiledTables, compiled_tables
from service.scenarios.engine import Criterion
from service.scenarios.rules import default_scenario_shape_paths, load_rule_shapes

from . import NG, ROOT, VE

DSO = Graph().parse(ROOT / "ontologies" / "dso" / "vaccine-education.ttl")
KGS = tuple(Graph().parse(p) for p in sorted((ROOT / "ontologies" / "kg").glob("*.ttl")))
SHAPES = load_rule_shapes(default_scenario_shape_paths())
MR_CRITERION = Criterion("https://example.org/criteria/mr-schedule", frozenset({str(VE.MR), str(VE.ScheduleQuestion)}))
NG_CRITERION = Criterion("https://example.org/criteria/ng-schedule", frozenset({str(NG["measles-schedule"])}))
MEASLES_CRITERION = Criterion("https://example.org/criteria/measles", frozenset({str(VE.Measles)}))
CRITERIA = (MR_CRITERION, NG_CRITERION, MEASLES_CRITERION)


@pytest.fixture(scope="session")
def full() -> CompiledTables:
    """The whole frame of the repository's inputs with three criteria, compiled (and cross-checked) once."""
    return compiled_tables(DSO, KGS, SHAPES, CRITERIA)
