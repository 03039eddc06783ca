"""The fast path's tables per facet component: facets tied by rules, each component with its blocked combinations
(index over the component's own radices), filled from the rule tables (:mod:`.production`) and read by
:mod:`.frame` and :mod:`..plan.frames`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from types import MappingProxyType
from typing import TypeVar

from .engine import Block

_Key = TypeVar("_Key")
_Value = TypeVar("_Value")
RuleTable = tuple[tuple[int, ...], dict[tuple[int, ...], list[Block]], str | None]
"""One rule's blocks over its facets: the facets' positions, blocks by their combination, and the criterion a
routing rule was run for (``None`` for every other rule)."""


def _frozen() -> Mapping[_Key, _Value]:
    return MappingProxyType({})


@dataclass
class Component:
    """Facets tied by rules, with the blocked combinations (index over the component's own radices).

    The tables are read-only mappings once :class:`.production.Production` has filled them: compiled tables are
    shared (:mod:`.cache`), so nothing may change them.
    """

    facets: tuple[int, ...]
    radices: tuple[int, ...]
    blocked: Mapping[int, tuple[Block, ...]] = field(default_factory=_frozen)
    pair_blocked: Mapping[str, Mapping[int, tuple[Block, ...]]] = field(default_factory=_frozen)

    @property
    def size(self) -> int:
        n = 1
        for r in self.radices:
            n *= r
        return n

    def sub_index(self, digits: Sequence[int]) -> int:
        i = 0
        for pos, r in zip(self.facets, self.radices):
            i = i * r + digits[pos]
        return i

    def combos(self) -> Iterable[tuple[int, ...]]:
        return product(*(range(r) for r in self.radices))


def linked_components(n_facets: int, sets: Iterable[frozenset[int]]) -> list[tuple[int, ...]]:
    """The facets tied by the ``sets`` each rule reads, as sorted groups (union-find over facet positions)."""
    parent = list(range(n_facets))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for s in sets:
        items = sorted(s)
        for x in items[1:]:
            parent[find(x)] = find(items[0])
    groups: dict[int, list[int]] = {}
    for i in range(n_facets):
        groups.setdefault(find(i), []).append(i)
    return sorted(tuple(g) for g in groups.values())


def fill_component(comp: Component, tables: Sequence[RuleTable]) -> None:
    """A component's read-only tables from the rule tables over its facets."""
    where = {f: k for k, f in enumerate(comp.facets)}
    blocked: dict[int, tuple[Block, ...]] = {}
    pair_blocked: dict[str, dict[int, tuple[Block, ...]]] = {}
    for k, combo in enumerate(comp.combos()):
        found: dict[str | None, set[Block]] = {}
        for facets, table, criterion in tables:
            hit = table.get(tuple(combo[where[f]] for f in facets))
            if hit:
                found.setdefault(criterion, set()).update(hit)
        for criterion, blocks in found.items():
            target = blocked if criterion is None else pair_blocked.setdefault(criterion, {})
            target[k] = tuple(sorted(blocks))
    comp.blocked = MappingProxyType(blocked)
    comp.pair_blocked = MappingProxyType({c: MappingProxyType(t) for c, t in pair_blocked.items()})


def decode_index(k: int, radices: Sequence[int]) -> list[int]:
    """The mixed-radix digits of index ``k`` over ``radices``."""
    out = [0] * len(radices)
    for i in range(len(radices) - 1, -1, -1):
        k, out[i] = divmod(k, radices[i])
    return out
