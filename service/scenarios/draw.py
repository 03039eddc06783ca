"""Exact, seeded sampling of eligible candidates from the compiled per-component tables.

A candidate is eligible for a criterion exactly when, in every component, its part is an unblocked
combination (no consistency rule, no routing rule for that criterion) whose values lie in the criterion's
frame (:func:`.frame.allowed_positions`). The frame is a union of per-knowledge-graph products
(:mod:`.space`); within one, the components are independent, so its eligible candidates are the product of
each component's list of such combinations within it: the ``n``-th eligible candidate is found in its part
by the parts' cumulative counts and decoded from the rest in mixed radix over those lists, and ``random.Random.sample(range(total), k)`` draws ``k`` distinct
ones uniformly, for any ``total`` and however sparse the eligible part of the frame, with no rejection. The
same seed gives the same sample.

Rules left to the reference have no table: the draw then walks a seeded uniform order of the
table-eligible candidates and keeps those the reference passes, which stays uniform over the eligible ones
(each is kept or not independently of the order); so do candidates the caller excludes.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Collection, Sequence
from collections.abc import Set as AbstractSet

from .production import Production


class NotEnoughEligible(ValueError):
    """Fewer eligible candidates than asked for; ``found`` says how many there are (or were found)."""

    def __init__(self, found: int, wanted: int) -> None:
        super().__init__(f"only {found} eligible candidates, not {wanted}")
        self.found, self.wanted = found, wanted


def eligible_lists(
    production: Production, allowed: Sequence[Collection[int]] | None = None, criterion: str | None = None
) -> list[list[list[tuple[int, ...]]]]:
    """Per part of the frame (:mod:`.space`), per component, its eligible combinations within the part as
    value positions of the component's facets (sorted)."""
    out = []
    seen: dict[
        tuple[tuple[int, ...], tuple[tuple[int, ...], ...]], list[tuple[int, ...]]
    ] = {}  # parts that span a component alike share its list
    for part in production.ctx.space.parts:
        lists = []
        for comp in production.components:
            key = (comp.facets, tuple(part.positions[f] for f in comp.facets))
            if key not in seen:
                pairs = comp.pair_blocked.get(criterion, {}) if criterion else {}
                spans = [set(positions) for positions in key[1]]
                seen[key] = [
                    combo
                    for k, combo in enumerate(comp.combos())
                    if k not in comp.blocked
                    and k not in pairs
                    and all(d in span for d, span in zip(combo, spans))
                    and (allowed is None or all(d in allowed[f] for f, d in zip(comp.facets, combo)))
                ]
            lists.append(seen[key])
        out.append(lists)
    return out


def count_eligible(lists: Sequence[Sequence[tuple[int, ...]]]) -> int:
    """The eligible candidates of one part: the product of its components' list lengths."""
    total = 1
    for options in lists:
        total *= len(options)
    return total


def sample_eligible(
    production: Production,
    count: int,
    rng: random.Random,
    allowed: Sequence[Collection[int]] | None = None,
    criterion: str | None = None,
    excluded: AbstractSet[int] = frozenset(),
) -> list[int]:
    """``count`` distinct eligible candidate indices (in the criterion's frame when ``allowed`` is given),
    drawn uniformly with ``rng``, in draw order. Raises :class:`NotEnoughEligible` when there are fewer."""
    if count == 0:
        return []
    if production.global_blocks:
        raise NotEnoughEligible(0, count)
    per_part = eligible_lists(production, allowed, criterion)
    per_part = [lists for lists in per_part if count_eligible(lists)]  # parts with an eligible candidate
    sizes = [count_eligible(lists) for lists in per_part]
    starts = [sum(sizes[:k]) for k in range(len(sizes))]
    total = sum(sizes)
    space = production.ctx.space
    comps = production.components

    def decode(n: int) -> int:
        k = bisect.bisect_right(starts, n) - 1
        n -= starts[k]
        digits = [0] * len(space.radices)
        for comp, options in zip(reversed(comps), reversed(per_part[k])):
            n, j = divmod(n, len(options))
            for f, d in zip(comp.facets, options[j]):
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
