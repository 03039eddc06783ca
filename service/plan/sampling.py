"""Drawing a criterion's probes from its eligible frame, deterministically for a seed.

A criterion's frame is a sub-box of the facet space (per facet, the values its concepts allow). Its
eligible candidates are drawn exactly and uniformly from the compiled per-component tables
(:mod:`service.scenarios.draw`), however sparse they are; candidates an expert excluded are skipped.
Each criterion has its own random stream, seeded by the plan's seed and its IRI, so adding a criterion
does not reshuffle the others' probes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from ..scenarios.draw import NotEnoughEligible, count_eligible, eligible_lists, sample_eligible
from ..scenarios.production import Production
from ..scenarios.space import FacetSpace
from .allocation import OverBudget


def criterion_stream(seed: int, name: str) -> random.Random:
    """The random stream ``name`` (a criterion's identifier, or that and a part of its frame), keyed by the plan's
    seed: named by identifier, not IRI, the same seed draws the same probes under any deployment's base IRI."""
    return random.Random(f"{seed}:{name}")


def sample_scenarios(
    space: FacetSpace,
    production: Production,
    allowed: Sequence[AbstractSet[int]],
    criterion: str,
    count: int,
    seed: int,
    excluded: AbstractSet[int] = frozenset(),
    *,
    stream: str,
) -> list[int]:
    """``count`` distinct eligible scenario indices in the criterion's frame (or the part of it ``allowed`` says), in
    draw order from the random stream ``stream`` (:func:`criterion_stream`)."""
    try:
        return sample_eligible(production, count, criterion_stream(seed, stream), allowed, criterion, excluded)
    except NotEnoughEligible as exc:
        raise OverBudget(f"only {exc.found} eligible scenarios can probe {criterion}, not {count}") from exc


def eligible_count(production: Production, allowed: Sequence[AbstractSet[int]], criterion: str) -> int:
    """How many eligible scenarios of the criterion lie where ``allowed`` says, exactly (experts' exclusions not
    subtracted): the most a draw from there can give."""
    return sum(count_eligible(lists) for lists in eligible_lists(production, allowed, criterion))
