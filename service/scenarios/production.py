"""The fast path: rule tables per facet component, then one table lookup per component per candidate.

A rule's outcome depends only on the facets it reads (:mod:`.rules`, :func:`.owl.owl_groups`). So each
shape rule is run once, with pySHACL, over the distinct combinations of its own facets (a few dozen partial
scenarios instead of millions), and the OWL 2 RL clashes once over the combinations of each OWL facet group
(several groups share one partial scenario, since they cannot interact). Facets read together by some rule
form a component; each component gets a table of its blocked combinations with (rule, message). Checking a
candidate is then a decode of its mixed-radix index and one dictionary lookup per component, and exact
counts are products over components (:mod:`.frame`).
"""

from __future__ import annotations

import bisect
import logging
import random
import threading
from collections.abc import Iterable, Mapping, Sequence
from itertools import product
from math import prod
from types import MappingProxyType

import pyoxigraph as ox
from rdflib import URIRef
from rdflib.term import Node

from .components import Component, RuleTable, decode_index, fill_component, linked_components
from .engine import Block, Context, base_quads, probe_triples, run_shacl
from .facets import describe, person_iri, subject_iri
from .reference import reference_check, scenario_iri
from .rules import ROUTING, Rule
from .subset import owl_outside_subset, shape_outside_subset

log = logging.getLogger(__name__)

_PROJECTION = "urn:x-ob-caie:projection:"
_CHECK = "urn:x-ob-caie:cross-check"
_FALLBACK = "urn:x-ob-caie:fallback"
_HOLE = "\x00"
OWL_RULES = "urn:x-ob-caie:rules/owl-2-rl"
"""How :attr:`Production.fallback` and :attr:`Production.compiled` name the DSO's OWL 2 RL axioms as one unit."""
MAX_COMPONENT = 200_000
"""Combinations a linked component may have; a rule that would make one larger falls back."""
CROSS_CHECK = 12
"""Uniform candidates of the compile-time cross-check (edge cases come on top, :data:`EDGE_CASES` per component)."""
EDGE_CASES = 2


class Production:
    """Compiled rule tables for one :class:`Context`; build once, then check any number of candidates.

    Compiling: each rule outside the supported subset (:mod:`.subset`), or whose linked component would
    exceed ``max_component`` combinations, is left to the reference; the others are compiled into tables,
    which are then cross-checked against the reference on a seeded sample plus edge cases (``cross_check``
    uniform candidates, and per component blocked and unblocked combinations); a rule whose blocks differ
    anywhere falls back too. :attr:`fallback` names each rule left to the reference and why (``OWL_RULES``
    for the DSO's OWL 2 RL axioms as a unit); checking a candidate runs the reference for those rules only.

    Read-only once built (the tables are immutable mappings), so one instance can be shared (:mod:`.cache`).
    """

    def __init__(
        self, ctx: Context, max_component: int = MAX_COMPONENT, cross_check: int = CROSS_CHECK, seed: int = 0
    ) -> None:
        self.ctx = ctx
        self.max_component = max_component
        fallback: dict[str, str] = {}
        for rule in ctx.rules:
            reason = shape_outside_subset(ctx.shapes, URIRef(rule.iri), ctx.facets, ctx.schema.graph)
            if reason:
                fallback[rule.iri] = f"outside the supported subset: {reason}"
        reason = owl_outside_subset(ctx.owl.source, ctx.facets, ctx.person_classes)
        if reason:
            fallback[OWL_RULES] = f"outside the supported subset: {reason}"
        self._shape_cache: dict[str, list[RuleTable]] = {}
        self._memo: dict[int, tuple[tuple[Block, ...], dict[str, tuple[Block, ...]]]] = {}
        self._memo_lock = threading.Lock()
        self._build(fallback)
        if ctx.space.size and cross_check >= 0:
            differing = self._cross_check(cross_check, seed)
            if differing:
                self._build({**self.fallback, **differing})
        for iri, why in sorted(self.fallback.items()):
            log.warning("scenario rule %s falls back to the reference: %s", iri, why)

    def __getstate__(self) -> dict[str, object]:
        """What the table cache keeps on disk (:mod:`.cache`): no lock, and no memo of reference answers."""
        state = dict(self.__dict__)
        del state["_memo_lock"]
        state["_memo"] = {}
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._memo_lock = threading.Lock()

    @property
    def compiled(self) -> tuple[str, ...]:
        """The rules the tables decide (shape IRIs, and ``OWL_RULES`` when the OWL 2 RL axioms compile)."""
        units = [r.iri for r in self.ctx.rules] + [OWL_RULES]
        return tuple(u for u in units if u not in self.fallback)

    def _build(self, fallback: dict[str, str]) -> None:
        ctx = self.ctx
        space = ctx.space
        pos = space.position
        rules = [r for r in ctx.rules if r.iri not in fallback]
        owl_sets = [] if OWL_RULES in fallback else [frozenset(pos[n] for n in g) for g in ctx.owl_deps.groups]
        while True:  # the component limit: drop the widest rule of an oversized component, then look again
            sets = [frozenset(pos[n] for n in r.facets) for r in rules] + owl_sets
            comps = linked_components(len(space.radices), sets)
            sizes = {c: prod(space.radices[i] for i in c) for c in comps}
            over = next(
                (c for c in comps if sizes[c] > self.max_component and any(s and s <= set(c) for s in sets)), None
            )
            if over is None:
                break
            mine = [r for r in rules if r.facets and {pos[n] for n in r.facets} <= set(over)]
            why = f"its linked component would have {sizes[over]} combinations, over the limit of {self.max_component}"
            if mine:
                widest = max(mine, key=lambda r: (len(r.facets), r.iri))
                fallback[widest.iri] = why
                rules.remove(widest)
            else:
                fallback[OWL_RULES] = why
                owl_sets = []
        self.fallback: Mapping[str, str] = MappingProxyType(dict(fallback))
        self._fallback_shapes = tuple(r.iri for r in ctx.rules if r.iri in fallback)
        self._fallback_routing = any(r.kind == ROUTING for r in ctx.rules if r.iri in fallback)
        self.global_blocks: tuple[Block, ...] = ()
        self.components = tuple(Component(c, tuple(space.radices[i] for i in c)) for c in comps)
        self.component_of = MappingProxyType({i: comp for comp in self.components for i in comp.facets})
        if space.size == 0:
            return
        tables: list[RuleTable] = []
        if owl_sets:
            tables += self._owl_tables(owl_sets)
        base = base_quads(ctx) if any(r.iri not in self._shape_cache for r in rules) else []
        for rule in rules:
            if rule.iri not in self._shape_cache:
                self._shape_cache[rule.iri] = self._shape_tables(rule, base)
            tables += self._shape_cache[rule.iri]
        for comp in self.components:
            fill_component(comp, [t for t in tables if set(t[0]) <= set(comp.facets)])

    def _cross_check(self, size: int, seed: int) -> dict[str, str]:
        """The compiled rules whose tables give other blocks than the reference on a seeded sample plus, per
        component, blocked and unblocked combinations set in random candidates (see the class docstring)."""
        ctx, space = self.ctx, self.ctx.space
        rng = random.Random(seed)
        indices = set(rng.sample(range(space.size), min(size, space.size)))
        for comp in self.components:
            keys = sorted(comp.blocked)
            free = [k for k in range(comp.size) if k not in comp.blocked]
            for k in rng.sample(keys, min(EDGE_CASES, len(keys))) + rng.sample(free, min(EDGE_CASES, len(free))):
                index = space.random_with(rng, dict(zip(comp.facets, decode_index(k, comp.radices))))
                if index is not None:  # a combination no part of the frame spans is never asked about
                    indices.add(index)
        compiled = self.compiled
        shapes = [r for r in compiled if r != OWL_RULES]
        routing = any(r.kind == ROUTING and r.iri in shapes for r in ctx.rules)
        ref, pairs = reference_check(
            ctx.reference, sorted(indices), base=_CHECK, with_pairs=routing, shapes=shapes, owl=OWL_RULES in compiled
        )
        differing: dict[str, str] = {}
        for i in sorted(indices):
            scenario = scenario_iri(_CHECK, i)
            mine = [(self._table_blocks(i, scenario), ref[i])]
            mine += [(self._table_pair_blocks(i, c.iri, scenario), pairs[(i, c.iri)]) for c in ctx.criteria if routing]
            for ours, theirs in mine:
                for b in set(ours) ^ set(theirs):
                    rule = b.rule if b.rule in shapes else OWL_RULES
                    candidate = {k: v.n3() for k, v in space.values(i).items()}
                    differing.setdefault(
                        rule,
                        (
                            f"the compile-time cross-check found other blocks than the reference's on the candidate {candidate}"
                        ),
                    )
        return differing

    # ------------------------------------------------------------------------------------------ building

    def _partial(self, facets: Sequence[int], combo: Sequence[int]) -> dict[str, Node]:
        return {self.ctx.space.facets[f].name: self.ctx.space.facets[f].values[d] for f, d in zip(facets, combo)}

    def _owl_tables(self, groups: Sequence[frozenset[int]]) -> list[RuleTable]:
        """OWL 2 RL clashes per group; partial scenario j carries combination j (mod size) of every group."""
        ctx = self.ctx
        ordered = [tuple(sorted(g)) for g in groups]
        combos = [list(product(*(range(ctx.space.radices[f]) for f in g))) for g in ordered]
        n = max((len(c) for c in combos), default=0)
        data: list[tuple[Node, Node, Node]] = []
        for j in range(n):
            values: dict[str, Node] = {}
            for g, cs in zip(ordered, combos):
                values.update(self._partial(g, cs[j % len(cs)]))
            data += describe(f"{_PROJECTION}{j}", ctx.facets, values)
        closure = ctx.owl.closure(data)
        by_group: dict[frozenset[str], tuple[tuple[int, ...], dict[tuple[int, ...], list[Block]]]] = {
            frozenset(ctx.space.names[f] for f in g): (g, {}) for g in ordered
        }
        global_blocks: set[Block] = set()
        for j in range(n):
            s = f"{_PROJECTION}{j}"
            for node in (URIRef(s), person_iri(s), subject_iri(s)):
                for finding in ctx.owl.findings(closure, node):
                    group = ctx.owl_deps.group_of(finding)
                    block = Block(finding.rule, finding.message)
                    if not group:
                        global_blocks.add(block)
                        continue
                    g, table = by_group[group]
                    cs = combos[ordered.index(g)]
                    table.setdefault(cs[j % len(cs)], []).append(block)
        self.global_blocks = tuple(sorted(global_blocks))
        return [(g, table, None) for g, table in by_group.values()]

    def _shape_tables(self, rule: Rule, base: Sequence[ox.Quad]) -> list[RuleTable]:
        """One shape rule over its own facets' combinations (a routing rule: once per criterion), with DSO + KGs
        as ``base`` (:func:`.engine.base_quads`)."""
        ctx = self.ctx
        pos = ctx.space.position
        out = []
        facets = tuple(sorted(pos[n] for n in rule.facets))
        combos = list(product(*(range(ctx.space.radices[f]) for f in facets)))
        criteria = [None] if rule.kind != "routing" else [c.iri for c in ctx.criteria]
        data = list(ctx.criterion_triples()) if rule.kind == "routing" else []
        where: dict[Node, tuple[str | None, tuple[int, ...], str]] = {}
        for k, criterion in enumerate(criteria):
            for j, combo in enumerate(combos):
                s = f"{_PROJECTION}{k}.{j}"
                data += describe(s, ctx.facets, self._partial(facets, combo))
                where[URIRef(s)] = where[person_iri(s)] = where[subject_iri(s)] = (criterion, combo, s)
                if criterion is not None:
                    probe = f"{s}#probe"
                    data += probe_triples(probe, s, criterion)
                    where[URIRef(probe)] = (criterion, combo, s)
        tables: dict[str | None, dict[tuple[int, ...], list[Block]]] = {c: {} for c in criteria}
        if combos and criteria:
            for focus, rule_iri, message in run_shacl(ctx, data, base, [rule.iri]):
                if focus in where and rule_iri == rule.iri:
                    criterion, combo, s = where[focus]
                    tables[criterion].setdefault(combo, []).append(Block(rule_iri, message.replace(s, _HOLE)))
        out += [(facets, table, criterion) for criterion, table in tables.items()]
        return out

    # ------------------------------------------------------------------------------------------ checking

    def _table_blocks(self, index: int, scenario: str) -> tuple[Block, ...]:
        digits = self.ctx.space.digits(index)
        found = list(self.global_blocks)
        for comp in self.components:
            hit = comp.blocked.get(comp.sub_index(digits))
            if hit:
                found += hit
        return _fill(found, scenario)

    def _table_pair_blocks(self, index: int, criterion: str, scenario: str) -> tuple[Block, ...]:
        digits = self.ctx.space.digits(index)
        found: list[Block] = []
        for comp in self.components:
            hit = comp.pair_blocked.get(criterion, {}).get(comp.sub_index(digits))
            if hit:
                found += hit
        return _fill(found, scenario)

    def check_fallbacks(self, indices: Iterable[int]) -> None:
        """Run the reference, in chunks, for the rules that fell back on each of ``indices`` not checked
        yet, and remember the results (what :meth:`blocks` reads); nothing to do when every rule compiled."""
        if not self.fallback:
            return
        with self._memo_lock:
            todo = sorted({i for i in indices if i not in self._memo})
        if not todo:
            return
        ref, pairs = reference_check(
            self.ctx.reference,
            todo,
            base=_FALLBACK,
            with_pairs=self._fallback_routing,
            shapes=self._fallback_shapes,
            owl=OWL_RULES in self.fallback,
        )
        found = {}
        for i in todo:
            own = scenario_iri(_FALLBACK, i)
            found[i] = (_hole(ref[i], own), {c: _hole(b, own) for (j, c), b in pairs.items() if j == i and b})
        with self._memo_lock:
            self._memo.update(found)

    def _fallback_blocks(self, index: int) -> tuple[tuple[Block, ...], dict[str, tuple[Block, ...]]]:
        """The reference's blocks of ``index`` for the rules that fell back (remembered per candidate)."""
        if not self.fallback:
            return (), {}
        self.check_fallbacks([index])
        with self._memo_lock:
            return self._memo[index]

    def blocks(self, index: int, scenario: str = "") -> tuple[Block, ...]:
        """Why candidate ``index`` is blocked (empty: eligible); ``scenario`` fills messages that name it."""
        return tuple(sorted({*self._table_blocks(index, scenario), *_fill(self._fallback_blocks(index)[0], scenario)}))

    def pair_blocks(self, index: int, criterion: str, scenario: str = "") -> tuple[Block, ...]:
        """Why candidate ``index`` cannot be a probe of ``criterion`` (routing rules only)."""
        fallback = _fill(self._fallback_blocks(index)[1].get(criterion, ()), scenario)
        return tuple(sorted({*self._table_pair_blocks(index, criterion, scenario), *fallback}))

    def blocked_many(self, indices: Iterable[int]) -> list[bool]:
        """Whether each candidate is blocked: the hot loop, inlined (about 2 microseconds a candidate); with
        rules left to the reference, a candidate the tables pass is checked by it."""
        if self.global_blocks:
            return [True for _ in indices]
        space = self.ctx.space
        n = len(space.radices)
        plan = [
            (comp.blocked, [(n - 1 - f, r) for f, r in zip(comp.facets, comp.radices)])
            for comp in self.components
            if comp.blocked
        ]
        parts = [[(len(p), p) for p in part.positions[::-1]] for part in space.parts]  # last facet first
        offsets = [part.offset for part in space.parts]
        indices = list(indices)
        if self.fallback:
            self.check_fallbacks(indices)
        out = []
        for index in indices:
            original = index
            k = bisect.bisect_right(offsets, index) - 1
            index -= offsets[k]
            digits = []
            for r, positions in parts[k]:  # the part's local mixed radix, as global positions
                index, d = divmod(index, r)
                digits.append(positions[d])
            hit = False
            for blocked, spec in plan:
                k = 0
                for p, r in spec:
                    k = k * r + digits[p]
                if k in blocked:
                    hit = True
                    break
            out.append(hit or bool(self.fallback and self._fallback_blocks(original)[0]))
        return out


def _hole(blocks: Iterable[Block], scenario: str) -> tuple[Block, ...]:
    return tuple(sorted(Block(b.rule, b.message.replace(scenario, _HOLE)) for b in blocks))


def _fill(blocks: Iterable[Block], scenario: str) -> tuple[Block, ...]:
    return tuple(sorted({Block(b.rule, b.message.replace(_HOLE, scenario)) for b in blocks}))
