"""Drawing a criterion's probes from its eligible frame, deterministically for a seed.

A criterion's frame is a sub-box of the facet space (per facet, the values its concepts allow). Small
frames are enumerated and sampled exactly; large ones by rejection: draw a value per facet from the
allowed ones, keep the candidate if no rule blocks it (nor the pair rule with this criterion) and no
expert excluded it. Each criterion has its own random stream, seeded by the plan's seed and its IRI,
so adding a criterion does not reshuffle the others' probes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence, Set
from itertools import product
from math import prod

from ..core.errors import Unprocessable
from ..scenarios.facets import FacetSpace
from ..scenarios.production import Production

ENUMERATE_BELOW = 200_000
ATTEMPTS_PER_PROBE = 500


def criterion_stream(seed: int, criterion: str) -> random.Random:
    return random.Random(f"{seed}:{criterion}")


def sample_scenarios(
    space: FacetSpace,
    production: Production,
    allowed: Sequence[Set[int]],
    criterion: str,
    count: int,
    seed: int,
    excluded: Set[int] = frozenset(),
) -> list[int]:
    """``count`` distinct eligible scenario indices in the criterion's frame, in draw order."""
    if count == 0:
        return []
    choices = [sorted(positions) for positions in allowed]
    rng = criterion_stream(seed, criterion)

    def usable(index: int) -> bool:
        return index not in excluded and not production.blocks(index) and not production.pair_blocks(index, criterion)

    if prod(len(c) for c in choices) <= ENUMERATE_BELOW:
        eligible = [i for i in (space.index(d) for d in product(*choices)) if usable(i)]
        if len(eligible) < count:
            raise Unprocessable(f"only {len(eligible)} eligible scenarios can probe {criterion}, not {count}")
        return rng.sample(eligible, count)
    found: list[int] = []
    seen: set[int] = set()
    for _ in range(count * ATTEMPTS_PER_PROBE):
        index = space.index([rng.choice(c) for c in choices])
        if index in seen:
            continue
        seen.add(index)
        if usable(index):
            found.append(index)
            if len(found) == count:
                return found
    raise Unprocessable(
        f"found only {len(found)} eligible scenarios for {criterion} in {count * ATTEMPTS_PER_PROBE} draws: "
        "its frame is mostly blocked; lower its share of the budget"
    )
