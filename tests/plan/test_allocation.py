"""Probe budget allocation: the arithmetic of each strategy, checked by hand-computable cases."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from service.core.errors import Unprocessable
from service.plan.allocation import Annotator, CriterionDemand, Strategy, allocate, hamilton

WEIGHTS = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
CRITERIA = [
    CriterionDemand(f"c{i:02d}", Decimal(w), 10**9, frozenset({f"concept{i % 3}"})) for i, w in enumerate(WEIGHTS)
]


def test_proportional_gives_one_each_then_the_rest_by_weight() -> None:
    allocation = allocate(300, CRITERIA, Strategy.PROPORTIONAL)
    assert allocation.total == 300
    for criterion in CRITERIA:
        quota = Fraction(290) * Fraction(criterion.weight) / sum(WEIGHTS)
        assert abs(allocation.probes[criterion.iri] - 1 - quota) < 1
    assert allocation.probes == {
        "c00": 54,
        "c01": 48,
        "c02": 43,
        "c03": 38,
        "c04": 33,
        "c05": 27,
        "c06": 22,
        "c07": 17,
        "c08": 12,
        "c09": 6,
    }


def test_highest_weight_first_gives_two_thirds_to_the_top_third() -> None:
    """The methodology's example: of 300 probes, 200 go to the highest-weighted criteria."""
    allocation = allocate(300, CRITERIA, Strategy.HIGHEST_WEIGHT_FIRST)
    top = [c.iri for c in CRITERIA[:4]]
    assert sum(allocation.probes[iri] for iri in top) == 200
    assert sorted(allocation.probes[c.iri] for c in CRITERIA[4:]) == [16, 16, 17, 17, 17, 17]
    assert allocation.total == 300
    assert [allocation.probes[iri] for iri in top] == sorted((allocation.probes[iri] for iri in top), reverse=True)


def test_equal_splits_evenly_and_remainder_goes_to_higher_weights() -> None:
    allocation = allocate(305, CRITERIA, Strategy.EQUAL)
    assert [allocation.probes[c.iri] for c in CRITERIA] == [31] * 5 + [30] * 5


def test_caps_at_the_eligible_frame_and_redistributes() -> None:
    capped = [CriterionDemand("big", Decimal(10), 5), CriterionDemand("small", Decimal(1), 1000)]
    allocation = allocate(100, capped, Strategy.PROPORTIONAL)
    assert allocation.probes == {"big": 5, "small": 95}


def test_matched_to_expertise_assigns_within_capacity() -> None:
    annotators = [Annotator("ana", frozenset({"concept0"}), 150), Annotator("ben", frozenset({"concept1"}), 150)]
    allocation = allocate(300, CRITERIA, Strategy.MATCHED_TO_EXPERTISE, annotators)
    served = [c for c in CRITERIA if c.concepts & {"concept0", "concept1"}]
    assert set(allocation.unallocated) == {c.iri for c in CRITERIA if c not in served}
    assert allocation.total == 300
    for criterion in served:
        assert sum(allocation.assignments[criterion.iri].values()) == allocation.probes[criterion.iri]
    per_agent = {"ana": 0, "ben": 0}
    for by_agent in allocation.assignments.values():
        for agent, count in by_agent.items():
            per_agent[agent] += count
    assert all(count <= 150 for count in per_agent.values())


@pytest.mark.parametrize("strategy", [Strategy.PROPORTIONAL, Strategy.EQUAL, Strategy.HIGHEST_WEIGHT_FIRST])
def test_budget_smaller_than_one_probe_per_criterion_is_refused(strategy: Strategy) -> None:
    with pytest.raises(Unprocessable, match="too small"):
        allocate(9, CRITERIA, strategy)


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(Unprocessable, match="positive"):
        allocate(0, CRITERIA, Strategy.EQUAL)
    with pytest.raises(Unprocessable, match="no eligible scenario"):
        allocate(10, [CriterionDemand("none", Decimal(1), 0)], Strategy.EQUAL)
    with pytest.raises(Unprocessable, match="annotators"):
        allocate(10, CRITERIA, Strategy.MATCHED_TO_EXPERTISE)


def test_hamilton_is_exact_on_ties() -> None:
    assert hamilton(
        10, {"a": Fraction(1), "b": Fraction(1), "c": Fraction(1)}, {"a": 99, "b": 99, "c": 99}, ["a", "b", "c"]
    ) == {"a": 4, "b": 3, "c": 3}
