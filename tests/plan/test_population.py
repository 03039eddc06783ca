"""Askers weighted by the user population (issue 22 §3): the worked example's scope declares who uses the system in
what shares, and its plan (strategy PopulationWeighted) draws each criterion's askers from those groups in those
shares. Each probe's group is worked out here from its scenario's facts as the record states them (persona, the age
group and pregnancy of the person asked about) and the groups' facts in the scope's JSON, not from the plan's own
epo:inStratum, which must agree."""

from __future__ import annotations

from collections import Counter, defaultdict
from decimal import Decimal
from fractions import Fraction

import pytest

from service.api.models import EvaluationBody
from service.core.errors import Unprocessable
from service.plan.strata import require_disjoint
from service.scenarios.cache import compiled_tables
from service.scope.model import Stratum

from ..api.test_evaluations import ID
from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from ..scenarios.conftest import DSO, KGS, SHAPES
from ..test_envelope import example_evaluation
from .test_openings import plan_iri
from .test_pinned_inputs import select

VE = "https://w3id.org/ob-caie/dso/vaccine-education/"
EPO = "https://w3id.org/ob-caie/epo/"
FACTS = {"ve:PersonaFacet": "persona", "ve:AgeGroupFacet": "age", "ve:PregnancyFacet": "pregnant"}
pytestmark = EMBEDDED_ONLY


def expand(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value).replace("ve:", VE)


def groups() -> dict[str, tuple[Fraction, dict[str, set[str]]]]:
    """Each declared group: its share and, per fact, the values its members have."""
    return {
        g["id"]: (Fraction(str(g["share"])), {FACTS[w["facet"]]: {expand(v) for v in w["values"]} for w in g["when"]})
        for g in example_evaluation()["population"]
    }


def probe_facts(service: Service) -> dict[str, dict[str, str]]:
    """Per probe: its criterion, recorded group, and persona, age group and pregnancy by its scenario."""
    rows = select(
        service,
        f"""
        PREFIX epo: <{EPO}>
        PREFIX dcterms: <http://purl.org/dc/terms/>
        PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
        SELECT ?probe ?criterion ?stratum ?property ?value WHERE {{
          GRAPH <{plan_iri()}> {{
            ?probe epo:fromScenario ?scenario ; epo:allocatedTo ?criterion .
            OPTIONAL {{ ?probe epo:inStratum ?stratum }}
          }}
          GRAPH <{BASE_URL}evaluations/{ID}/scenarios> {{ ?scenario dcterms:subject ?person . ?person ?property ?value }}
          VALUES ?property {{ rdf:type <{VE}hasAgeGroup> <{VE}isPregnant> }}
          FILTER (?value != <{VE}Person>)
        }}""",
    )
    facts: dict[str, dict[str, str]] = defaultdict(dict)
    names = {
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#type": "persona",
        VE + "hasAgeGroup": "age",
        VE + "isPregnant": "pregnant",
    }
    for row in rows:
        found = facts[row["probe"]]
        found.update(criterion=row["criterion"].rsplit("/", 1)[-1], stratum=row.get("stratum", ""))
        found[names[row["property"]]] = row["value"]
    return facts


def group_of(facts: dict[str, str]) -> list[str]:
    return [
        name for name, (_, wanted) in groups().items() if all(facts.get(k) in values for k, values in wanted.items())
    ]


def test_every_probe_is_asked_by_exactly_one_declared_group(measles_planned: Service) -> None:
    """No asker outside the declared population: no pregnant teenager or child, since no group declares one."""
    facts = probe_facts(measles_planned)
    assert len(facts) == 300
    for probe, found in facts.items():
        member = group_of(found)
        assert len(member) == 1, (probe, found, member)
        assert found["stratum"] == f"{BASE_URL}evaluations/{ID}/population/{member[0]}", (probe, found)
        if found.get("pregnant") == "true":
            assert found["age"] == VE + "Adult", (probe, found)


def test_each_criterion_follows_the_population_shares_within_one_probe_per_group(measles_planned: Service) -> None:
    """A criterion's probes are split over the groups that can ask it by their shares, renormalized: every group
    within one probe of its exact quota. Only pregnant adults can state a pregnancy (c06): the carers' groups have
    young children, who cannot be pregnant, or declare their person not pregnant, and older adults cannot be
    (the DSO's rule); every group can ask every other criterion."""
    facts = probe_facts(measles_planned)
    shares = {name: share for name, (share, _) in groups().items()}
    by_criterion: dict[str, Counter[str]] = defaultdict(Counter)
    for found in facts.values():
        by_criterion[found["criterion"]][group_of(found)[0]] += 1
    assert set(by_criterion) >= {"c01", "c06", "c13", "c14"}
    for criterion, counts in by_criterion.items():
        able = {"pregnant-adults"} if criterion == "c06" else set(shares)
        total, whole = sum(counts.values()), sum(shares[g] for g in able)
        assert set(counts) <= able, (criterion, counts)
        for group in able:
            exact = total * shares[group] / whole
            assert abs(counts[group] - exact) <= 1, (criterion, group, counts[group], float(exact))


def test_shares_that_do_not_add_up_are_refused(measles_planned: Service) -> None:
    scope = example_evaluation()
    short = {**scope, "id": "short", "population": [{**g, "share": 0.1} for g in scope["population"]]}
    answer = measles_planned.http.post("/evaluations", json=short, headers=measles_planned.auth("theo"))
    assert answer.status_code == 422 and "add up to 1" in answer.text, answer.text


def test_groups_one_scenario_can_belong_to_both_of_are_refused() -> None:
    """The worked example's groups are disjoint; two whose facts a caregiver of an infant meets are named."""
    ctx = compiled_tables(DSO, KGS, SHAPES, ()).context
    population = EvaluationBody.model_validate(example_evaluation()).to_domain(ID).population
    require_disjoint(ctx, "https://example.org/e", population)
    carers = next(s for s in population if s.id == "carers-of-young-children")
    overlapping = (carers, Stratum("all-carers", "every caregiver", Decimal("0.5"), carers.facts[:1]))
    with pytest.raises(Unprocessable, match="'carers-of-young-children' and 'all-carers' overlap"):
        require_disjoint(ctx, "https://example.org/e", overlapping)
