"""Allocating a probe budget across acceptance criteria by a named strategy.

Every strategy is exact integer arithmetic: quotas are rounded by the largest-remainder (Hamilton)
method, ties broken by higher weight, then by criterion IRI, so an allocation is reproducible by hand.
A criterion never receives more probes than its frame holds (the distinct opening turns among its eligible
scenarios, :mod:`.frames`); what a cap frees goes to the others by the same rule, and a budget larger than all
the frames together is refused (a small domain has few distinct opening turns).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from fractions import Fraction

from ..core.errors import Unprocessable


class Strategy(Enum):
    """The allocation strategies; values are the EPO individuals' local names."""

    PROPORTIONAL = "ProportionalToWeight"
    HIGHEST_WEIGHT_FIRST = "HighestWeightFirst"
    EQUAL = "Equal"
    MATCHED_TO_EXPERTISE = "MatchedToExpertise"
    POPULATION_WEIGHTED = "PopulationWeighted"
    """Across criteria as HighestWeightFirst; within each, over the scope's population strata (:mod:`.strata`)."""


class OverBudget(Unprocessable):
    """A budget larger than the probes that can be drawn for it (422): a smaller budget may fit, unlike one too small
    for its strategy (:meth:`.drawing.Drawer.largest` finds the largest that does)."""


@dataclass(frozen=True)
class CriterionDemand:
    """What allocation needs to know of one in-scope criterion."""

    iri: str
    weight: Decimal
    frame: int
    """The criterion's frame: the distinct test inputs (opening turns) among its eligible scenarios
    (:mod:`.frames`), the most probes it can take."""
    concepts: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Annotator:
    agent: str
    expertise: frozenset[str]
    capacity: int


@dataclass(frozen=True)
class Allocation:
    """Probes per criterion (and, for expertise matching, per annotator), and the criteria left out."""

    probes: dict[str, int]
    assignments: dict[str, dict[str, int]] = field(default_factory=dict)
    unallocated: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.probes.values())


HIGHEST_WEIGHT_SHARE = Fraction(2, 3)
"""Share of the budget the highest-weighted third of the criteria receive (the methodology's 200 of 300)."""


def _order(criteria: Sequence[CriterionDemand]) -> list[CriterionDemand]:
    return sorted(criteria, key=lambda c: (-c.weight, c.iri))


def hamilton(
    total: int, shares: Mapping[str, Fraction], caps: Mapping[str, int], order: Sequence[str]
) -> dict[str, int]:
    """``total`` split in proportion to ``shares`` by largest remainder, never above ``caps``.

    Capped criteria are fixed at their cap and the rest re-split, until no cap binds.
    """
    result = {iri: 0 for iri in shares}
    open_iris = [iri for iri in order if shares[iri] > 0]
    remaining = total
    while open_iris and remaining > 0:
        weight_sum = sum(shares[iri] for iri in open_iris)
        quotas = {iri: Fraction(remaining) * shares[iri] / weight_sum for iri in open_iris}
        floors = {iri: int(quotas[iri]) for iri in open_iris}
        left = remaining - sum(floors.values())
        by_remainder = sorted(open_iris, key=lambda iri: (-(quotas[iri] - floors[iri]), order.index(iri)))
        for iri in by_remainder[:left]:
            floors[iri] += 1
        over = [iri for iri in open_iris if result[iri] + floors[iri] > caps[iri]]
        if not over:
            for iri in open_iris:
                result[iri] += floors[iri]
            return result
        for iri in over:
            remaining -= caps[iri] - result[iri]
            result[iri] = caps[iri]
            open_iris.remove(iri)
    return result


def _one_each_then(
    budget: int,
    criteria: list[CriterionDemand],
    shares: Mapping[str, Fraction],
    strategy: Strategy,
    limits: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """One probe per criterion first (every criterion exercised), the rest by ``shares``, within ``limits``."""
    needed = len(criteria)
    if budget < needed:
        raise Unprocessable(
            f"a budget of {budget} probes is too small for strategy {strategy.value}: it gives every one of the "
            f"{needed} in-scope criteria at least one probe"
        )
    base = {c.iri: 1 for c in criteria}
    caps = {c.iri: min(c.frame, (limits or {}).get(c.iri, c.frame)) - 1 for c in criteria}
    extra = hamilton(budget - needed, shares, caps, [c.iri for c in criteria])
    return {iri: base[iri] + extra[iri] for iri in base}


def allocate(
    budget: int,
    criteria: Sequence[CriterionDemand],
    strategy: Strategy,
    annotators: Sequence[Annotator] = (),
) -> Allocation:
    """Split ``budget`` probes over ``criteria`` by ``strategy``."""
    if budget < 1:
        raise Unprocessable(f"the probe budget must be a positive number of probes, not {budget}")
    if not criteria:
        raise Unprocessable("the envelope has no in-scope criterion to allocate probes to")
    ordered = _order(criteria)
    weights = {c.iri: Fraction(c.weight) for c in ordered}
    if strategy is not Strategy.MATCHED_TO_EXPERTISE:
        _require_frames_hold(budget, ordered)
    if strategy is Strategy.PROPORTIONAL:
        return Allocation(_one_each_then(budget, ordered, weights, strategy))
    if strategy is Strategy.EQUAL:
        return Allocation(_one_each_then(budget, ordered, {c.iri: Fraction(1) for c in ordered}, strategy))
    if strategy in (Strategy.HIGHEST_WEIGHT_FIRST, Strategy.POPULATION_WEIGHTED):
        return _highest_weight_first(budget, ordered, weights)
    return _matched_to_expertise(budget, ordered, weights, annotators)


def _require_frames_hold(budget: int, ordered: Sequence[CriterionDemand]) -> None:
    """422 when a criterion has no probe to give, or the budget is more than all the frames hold together."""
    empty = [c.iri for c in ordered if c.frame < 1]
    if empty:
        raise Unprocessable(
            f"no eligible scenario with an opening turn exercises {', '.join(empty)}: the criterion cannot be probed"
        )
    room = sum(c.frame for c in ordered)
    if budget > room:
        frames = ", ".join(f"{c.iri} {c.frame}" for c in ordered)
        raise OverBudget(
            f"a budget of {budget} probes is more than the in-scope criteria's prompt frames hold "
            f"together ({room}: {frames}; a frame is the distinct opening turns a criterion can be "
            "probed with)"
        )


def _highest_weight_first(budget: int, ordered: list[CriterionDemand], weights: dict[str, Fraction]) -> Allocation:
    """The top third of criteria by weight share two thirds of the budget by weight; the rest share the rest equally.
    What one group's frames cannot take goes to the other (the budget fits all the frames: :func:`_require_frames_hold`)."""
    top_count = max(1, -(-len(ordered) // 3))
    top, rest = ordered[:top_count], ordered[top_count:]
    top_room, rest_room = sum(c.frame for c in top), sum(c.frame for c in rest)
    top_budget = min(int(Fraction(budget) * HIGHEST_WEIGHT_SHARE), top_room) if rest else budget
    top_budget = max(top_budget, budget - rest_room)
    probes = _one_each_then(top_budget, top, {c.iri: weights[c.iri] for c in top}, Strategy.HIGHEST_WEIGHT_FIRST)
    if rest:
        if budget - top_budget < len(rest):
            raise Unprocessable(
                f"a budget of {budget} probes is too small for strategy HighestWeightFirst: after {top_budget} probes "
                f"for the {len(top)} highest-weighted criteria, {budget - top_budget} remain for {len(rest)} others"
            )
        probes.update(
            _one_each_then(budget - top_budget, rest, {c.iri: Fraction(1) for c in rest}, Strategy.HIGHEST_WEIGHT_FIRST)
        )
    return Allocation(probes)


def _matched_to_expertise(
    budget: int, ordered: list[CriterionDemand], weights: dict[str, Fraction], annotators: Sequence[Annotator]
) -> Allocation:
    """Only criteria some annotator is expert in are probed, within the annotators' capacity.

    Probes go one at a time: first one to each servable criterion, then each to the criterion with the
    highest weight per probe already given (D'Hondt), and to its expert with the most capacity left.
    """
    if not annotators:
        raise Unprocessable("strategy MatchedToExpertise needs the available annotators, their expertise and capacity")
    experts = {c.iri: [a for a in annotators if a.expertise & c.concepts] for c in ordered}
    servable = [c for c in ordered if experts[c.iri]]
    unallocated = tuple(c.iri for c in ordered if not experts[c.iri])
    if not servable:
        raise Unprocessable("no annotator's expertise matches any in-scope criterion")
    if budget < len(servable):
        raise Unprocessable(
            f"a budget of {budget} probes is too small for strategy MatchedToExpertise: it gives every one of the "
            f"{len(servable)} criteria an annotator can judge at least one probe"
        )
    left = {a.agent: a.capacity for a in annotators}
    probes = {c.iri: 0 for c in ordered}
    assignments: dict[str, dict[str, int]] = {}

    def give(criterion: CriterionDemand) -> bool:
        candidates = [a for a in experts[criterion.iri] if left[a.agent] > 0]
        if not candidates or probes[criterion.iri] >= criterion.frame:
            return False
        chosen = max(candidates, key=lambda a: (left[a.agent], a.agent))
        left[chosen.agent] -= 1
        probes[criterion.iri] += 1
        by_agent = assignments.setdefault(criterion.iri, {})
        by_agent[chosen.agent] = by_agent.get(chosen.agent, 0) + 1
        return True

    for criterion in servable:
        if not give(criterion):
            raise Unprocessable(f"no annotator expert in {criterion.iri} has capacity left for even one of its probes")
    for _ in range(budget - len(servable)):
        ranked = sorted(servable, key=lambda c: (-weights[c.iri] / (probes[c.iri] + 1), ordered.index(c)))
        if not any(give(criterion) for criterion in ranked):
            raise OverBudget(
                f"the annotators can judge only {sum(probes.values())} of the {budget} probes in their fields of expertise"
            )
    return Allocation(probes, assignments, unallocated)
