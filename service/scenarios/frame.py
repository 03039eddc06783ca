"""Exact sizes of the sampling frame: all candidates, the eligible ones, and per acceptance criterion.

Rules only tie facets within a component (:mod:`.production`), so a candidate is eligible exactly when
each component's part of it is unblocked. The frame is a union of products, one per knowledge graph
(:mod:`.space`), and within one the candidates factor as the product of the components' combinations
that lie in it. Hence eligible = sum over parts of the product over components of the number of unblocked
combinations of that component within the part, computed by enumerating each component (thousands of
combinations, not 10^8 candidates; parts that span a component alike share the count). For a
criterion, a candidate is in its frame when, on every facet the criterion's triggers name (for a criterion
that declares none, every facet its concepts constrain), its value is covered by one of them
(:meth:`.facets.Schema.matches`); that test is per facet, so the same product
holds with each component's combinations filtered to those in the frame and not blocked by a routing rule
for that criterion. Python integers are exact at any size.

A rule left to the reference (:attr:`.production.Production.fallback`) has no table: a frame of at most
:data:`ENUMERATE_UP_TO` candidates is then counted by checking every candidate, and a larger one is counted
over the compiled rules only, with ``exact`` false (its eligible counts are upper bounds, and the
derivation says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rdflib import URIRef

from ..core.errors import Unprocessable
from .components import Component
from .engine import Context, Criterion
from .production import Production
from .reference import trigger_term

ENUMERATE_UP_TO = 1_000
"""With rules left to the reference, frames up to this size are counted candidate by candidate."""


@dataclass(frozen=True)
class CriterionCount:
    """Candidates in a criterion's frame, and those of them that are eligible probes for it."""

    criterion: str
    in_frame: int
    eligible: int


@dataclass(frozen=True)
class FrameCounts:
    """Exact counts of one derivation's frame."""

    total: int
    eligible: int
    per_criterion: tuple[CriterionCount, ...]
    exact: bool = True

    @property
    def blocked(self) -> int:
        return self.total - self.eligible


def allowed_positions(ctx: Context, criterion: Criterion, defaults: bool = True) -> list[set[int]]:
    """Per facet, the value positions in the criterion's frame (all of them if it does not constrain it): by its
    triggers when it declares any (:func:`trigger_positions`; ``defaults`` false: where it bears, rather than where
    its probes are drawn), else by its concepts."""
    if criterion.triggers:
        return trigger_positions(ctx, criterion, defaults)
    out = []
    concepts = [URIRef(c) for c in sorted(criterion.concepts)]
    for facet in ctx.facets:
        constraining = [k for k in concepts if any(ctx.schema.matches(v, k) for v in facet.unrestricted)]
        if not constraining:
            out.append(set(range(len(facet.values))))
        else:
            out.append({d for d, v in enumerate(facet.values) if any(ctx.schema.matches(v, k) for k in constraining)})
    return out


def trigger_positions(ctx: Context, criterion: Criterion, defaults: bool = True) -> list[set[int]]:
    """Per facet, the value positions where every trigger of ``criterion`` on that facet holds: the value is one
    of the trigger's values or narrower (:meth:`.facets.Schema.matches`); a facet no trigger names is not
    constrained, but for one whose declaration gives a value unless triggered (``epo:valueUnlessTriggered``): that
    value only (with ``defaults``: population groups' facts leave it to the criterion's). 422 naming a trigger whose facet the DSO does not declare, or that no value of the frame meets."""
    declared = {str(facet.spec.iri) for facet in ctx.facets if facet.spec.iri is not None}
    if unknown := sorted({t.facet for t in criterion.triggers} - declared):
        raise Unprocessable(
            f"criterion {criterion.iri} is triggered on {', '.join(unknown)}, which the DSO does not "
            f"declare as a scenario facet (it declares {', '.join(sorted(declared))})"
        )
    named = {t.facet for t in criterion.triggers}
    out = []
    for facet in ctx.facets:
        allowed = set(range(len(facet.values)))
        if defaults and facet.spec.unless_triggered is not None and str(facet.spec.iri) not in named:
            allowed = {d for d, v in enumerate(facet.values) if v == facet.spec.unless_triggered}
        for trigger in (t for t in criterion.triggers if t.facet == str(facet.spec.iri)):
            wanted = [trigger_term(value) for value in trigger.values]
            allowed &= {d for d, v in enumerate(facet.values) if any(ctx.schema.matches(v, w) for w in wanted)}
        out.append(allowed)
    return out


def in_frame(ctx: Context, criterion: Criterion, index: int, allowed: Sequence[set[int]] | None = None) -> bool:
    """Whether candidate ``index`` is in the criterion's frame."""
    allowed = allowed if allowed is not None else allowed_positions(ctx, criterion)
    return all(d in a for d, a in zip(ctx.space.digits(index), allowed))


def count_frame(production: Production) -> FrameCounts:
    """Total, eligible and per-criterion counts, exactly (see the module docstring)."""
    ctx = production.ctx
    total = ctx.space.size
    if total == 0:
        return FrameCounts(0, 0, tuple(CriterionCount(c.iri, 0, 0) for c in ctx.criteria))
    if production.fallback and total <= ENUMERATE_UP_TO:
        return _enumerated(production)
    allowed = {c.iri: allowed_positions(ctx, c) for c in ctx.criteria}
    eligible = 0
    per = {c.iri: [0, 0] for c in ctx.criteria}
    memo: dict[tuple[tuple[int, ...], tuple[tuple[int, ...], ...]], tuple[int, dict[str, tuple[int, int]]]] = {}
    for part in ctx.space.parts:  # a union of products: each part counts as a product over components
        part_free = 0 if production.global_blocks else 1
        part_per = {c.iri: [1, part_free] for c in ctx.criteria}
        for comp in production.components:
            key = (comp.facets, tuple(part.positions[f] for f in comp.facets))
            if key not in memo:
                memo[key] = _component_counts(production, comp, [set(part.positions[f]) for f in comp.facets], allowed)
            free, counts = memo[key]
            part_free *= free
            for iri, (n_in, n_ok) in counts.items():
                part_per[iri][0] *= n_in
                part_per[iri][1] *= n_ok
        eligible += part_free
        for iri, (n_in, n_ok) in part_per.items():
            per[iri][0] += n_in
            per[iri][1] += n_ok
    return FrameCounts(
        total,
        eligible,
        tuple(CriterionCount(iri, n_in, n_ok) for iri, (n_in, n_ok) in per.items()),
        exact=not production.fallback,
    )


def _component_counts(
    production: Production, comp: Component, spans: Sequence[set[int]], allowed: dict[str, list[set[int]]]
) -> tuple[int, dict[str, tuple[int, int]]]:
    """A component's unblocked combinations within a part (``spans``: the part's positions per facet of the
    component), and per criterion those in its frame and those of them that are eligible probes."""
    free = 0
    counts = {iri: [0, 0] for iri in allowed}
    for k, combo in enumerate(comp.combos()):
        if not all(d in span for d, span in zip(combo, spans)):
            continue
        ok = k not in comp.blocked
        free += ok
        for iri, a in allowed.items():
            if all(d in a[f] for f, d in zip(comp.facets, combo)):
                counts[iri][0] += 1
                if ok and k not in comp.pair_blocked.get(iri, {}):
                    counts[iri][1] += 1
    return free, {iri: (n_in, n_ok) for iri, (n_in, n_ok) in counts.items()}


def _enumerated(production: Production) -> FrameCounts:
    """Every candidate checked (compiled tables and the reference for the rules that fell back)."""
    ctx = production.ctx
    blocked = production.blocked_many(range(ctx.space.size))
    per = []
    for c in ctx.criteria:
        members = [i for i in range(ctx.space.size) if in_frame(ctx, c, i)]
        ok = sum(1 for i in members if not blocked[i] and not production.pair_blocks(i, c.iri))
        per.append(CriterionCount(c.iri, len(members), ok))
    return FrameCounts(ctx.space.size, blocked.count(False), tuple(per))


def rule_counts(production: Production) -> dict[str, int]:
    """How many candidates of the frame each compiled rule blocks (with or without other rules), exactly:
    per part, the candidates it does not block are the product over components of the combinations in the
    part that it does not block. Rules that fell back to the reference are not counted."""
    space = production.ctx.space
    if production.global_blocks:
        return {b.rule: space.size for b in production.global_blocks}
    rules = sorted({b.rule for comp in production.components for blocks in comp.blocked.values() for b in blocks})
    out = {rule: 0 for rule in rules}
    for part in space.parts:
        spared = {rule: 1 for rule in rules}
        for comp in production.components:
            spans = [set(part.positions[f]) for f in comp.facets]
            inside, hit = 0, dict.fromkeys(rules, 0)
            for k, combo in enumerate(comp.combos()):
                if all(d in span for d, span in zip(combo, spans)):
                    inside += 1
                    for rule in {b.rule for b in comp.blocked.get(k, ())}:
                        hit[rule] += 1
            for rule in rules:
                spared[rule] *= inside - hit[rule]
        for rule in rules:
            out[rule] += part.size - spared[rule]
    return out
