"""Exact, seeded sampling of eligible candidates from the compiled per-component tables.

A candidate is eligible for a criterion exactly when, in every component, its part is an unblocked
combination (no consistency rule, no routing rule for that criterion) whose values lie in the criterion's
frame (:func:`.frame.allowed_positions`). The components are independent, so the eligible candidates are
the product of each component's list of such combinations: the ``n``-th eligible candidate is decoded from
``n`` in mixed radix over those lists, and ``random.Random.sample(range(total), k)`` draws ``k`` distinct
ones uniformly, for any ``total`` and however sparse the eligible part of the frame, with no rejection. The
same seed gives the same sample.

Rules left to the reference have no table: the draw then walks a seeded uniform order of the
table-eligible candidates and keeps those the reference passes, which stays uniform over the eligible ones
(each is kept or not independently of the order); so do candidates the caller excludes.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence, Set

from .production import Production


class NotEnoughEligible(ValueError):
    """Fewer eligible candidates than asked for; ``found`` says how many there are (or were found)."""

    def __init__(self, found: int, wanted: int) -> None:
        super().__init__(f"only {found} eligible candidates, not {wanted}")
        self.found, self.wanted = found, wanted


def eligible_lists(production: Production, allowed: Sequence[Collection[int]] | None = None,
                   criterion: str | None = None) -> list[list[tuple[int, ...]]]:
    """Per component, its eligible combinations as value positions of its facets (sorted)."""
    out = []
    for comp in production.components:
        pairs = comp.pair_blocked.get(criterion, {}) if criterion else {}
        keep = []
        for k, combo in enumerate(comp.combos()):
            if k in comp.blocked or k in pairs:
                continue
            if allowed is not None and not all(d in allowed[f] for f, d in zip(comp.facets, combo)):
                continue
            keep.append(combo)
        out.append(keep)
    return out


def count_eligible(lists: Sequence[Sequence[tuple[int, ...]]]) -> int:
    total = 1
    for options in lists:
        total *= len(options)
    return total


def sample_eligible(production: Production, count: int, rng: random.Random,
                    allowed: Sequence[Collection[int]] | None = None, criterion: str | None = None,
                    excluded: Set[int] = frozenset()) -> list[int]:
    """``count`` distinct eligible candidate indices (in the criterion's frame when ``allowed`` is given),
    drawn uniformly with ``rng``, in draw order. Raises :class:`NotEnoughEligible` when there are fewer."""
    if count == 0:
        return []
    if production.global_blocks:
        raise NotEnoughEligible(0, count)
    lists = eligible_lists(production, allowed, criterion)
    total = count_eligible(lists)
    space = production.ctx.space
    comps = production.components

    def decode(n: int) -> int:
        digits = [0] * len(space.radices)
        for comp, options in zip(reversed(comps), reversed(lists)):
            n, k = divmod(n, len(options))
            for f, d in zip(comp.facets, options[k]):
                digits[f] = d
        return space.index(digits)

    def usable(index: int) -> bool:
        if index in excluded:
            return False
        if not production.fallback:
            return True
        return not production.blocks(index) and not (criterion and production.pair_blocks(index, criterion))

    if not production.fallback and not excluded:
        if total < count:
            raise NotEnoughEligible(total, count)
        return [decode(n) for n in rng.sample(range(total), count)]
    found: list[int] = []
    step = max(count, 16)
    drawn: set[int] = set()
    while len(found) < count and len(drawn) < total:  # a seeded uniform order, in growing batches
        batch = [n for n in rng.sample(range(total), min(total, len(drawn) + step)) if n not in drawn]
        production.check_fallbacks(decode(n) for n in batch if decode(n) not in excluded)
        for n in batch:
            drawn.add(n)
            index = decode(n)
            if usable(index):
                found.append(index)
                if len(found) == count:
                    return found
        step *= 2
    raise NotEnoughEligible(len(found), count)
