"""Per-criterion frames that count what reaches the prompt: the distinct opening turns among a criterion's
eligible scenarios (issue 9 §3, docs/blocking.md "Prompt frames").

A criterion's eligible frame (:mod:`service.scenarios.frame`) counts facet combinations, but a probe is its
opening turn: facets the templates never say (the country, the immunity status) and slots a text does not
use (the setting of a question on symptoms, the age group of an asker who speaks for themself) multiply the
eligible count without adding a test input. A pass-rate interval computed on that count is overstated; the
prompt frame is the number the allocation caps on and an interval uses.

How it is counted, exactly and without enumerating candidates. An opening turn
(:meth:`service.plan.openings.Openings.opening`) is written from the language's template set, the persona's
text and the texts with slots (the *triggers*, :meth:`~service.plan.openings.Openings.triggers`: they decide
which slots are filled and how states are said; for the vaccine DSO, language, persona and need), and
one part per other facet, each depending on that facet's value and the triggers only. So, for one trigger
value ``t``:

- each other facet's value maps to the text it contributes (``None``: the set cannot say it, so the
  scenario has no opening turn), found by asking the templates themselves: the opening of a base scenario
  with only that facet changed;
- within one part of the frame (a knowledge graph's product, :mod:`service.scenarios.space`), the eligible
  scenarios with triggers ``t`` are a product over the compiled tables' components (rules tie facets only
  within a component; :mod:`service.scenarios.production`), so their distinct openings are the product, over
  components, of the distinct text tuples of the component's combinations that lie in the part, are
  unblocked, not routed away from the criterion (pair blocks), within its frame and agree with ``t``;
- parts share openings (the country is never said, so a question in English on a bus reads the same in
  Nigeria and Kenya): the union over parts is counted by inclusion-exclusion, the intersection of products
  being the product of the per-component intersections;
- a global block empties everything.

Different triggers give different openings (the persona's and need's texts and the language differ), so the
frame is the sum over ``t``. When rules fell back to the reference (no tables for them), the count is over the
compiled rules only: an upper bound, and ``exact`` says so, as :class:`service.scenarios.frame.FrameCounts`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from types import MappingProxyType
from weakref import WeakKeyDictionary

from ..scenarios.components import Component
from ..scenarios.frame import allowed_positions
from ..scenarios.production import Production
from .openings import Openings

Texts = tuple[str | None, ...]
"""Per value of a facet (by position), the opening turn it gives: equal texts, one test input."""


@dataclass(frozen=True)
class PromptFrames:
    """Per criterion IRI, the number of distinct opening turns among its eligible scenarios."""

    counts: Mapping[str, int]
    """Read-only: one count is shared by every plan over the same inputs."""
    exact: bool = True


class _Sayer:
    """What each facet value contributes to the opening turn, per trigger value (asked of the templates)."""

    def __init__(self, production: Production, openings: Openings, labels: Mapping[str, str]) -> None:
        self.space = production.ctx.space
        self.openings, self.labels = openings, labels
        self.triggers = [self.space.position[n] for n in openings.triggers(self.space.facets)]
        self.others = [i for i in range(len(self.space.facets)) if i not in self.triggers]
        self._memo: dict[tuple[int, ...], list[Texts] | None] = {}

    def _base(self, trigger: Sequence[int]) -> dict[str, str]:
        """A scenario with the trigger values and, elsewhere, a value the template set has a text for (so
        the base itself can be said whenever the triggers can)."""
        facets = self.space.facets
        values = {facets[f].name: str(facets[f].values[d]) for f, d in zip(self.triggers, trigger)}
        templates = self.openings.set_for(self.openings.language_of(values))
        known = templates.texts if templates else {}
        for f in self.others:
            options = [str(v) for v in facets[f].values]
            values[facets[f].name] = next((v for v in options if v in known), options[0])
        return values

    def texts(self, trigger: tuple[int, ...]) -> list[Texts] | None:
        """Per facet (all positions; triggers get an empty tuple), the opening per value; ``None`` when the
        triggers themselves cannot be said."""
        if trigger not in self._memo:
            base = self._base(trigger)
            if self.openings.opening(base, self.labels) is None:
                self._memo[trigger] = None
            else:
                out: list[Texts] = [() for _ in self.space.facets]
                for f in self.others:
                    facet = self.space.facets[f]
                    said = []
                    for v in facet.values:
                        opening = self.openings.opening({**base, facet.name: str(v)}, self.labels)
                        said.append(None if opening is None else opening.text)
                    out[f] = tuple(said)
                self._memo[trigger] = out
        return self._memo[trigger]


SetsKey = tuple[tuple[str, str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]], ...]
"""The template sets a count was made with: each set's IRI, tag, texts and about-other texts."""
_KEPT: WeakKeyDictionary[Production, dict[SetsKey, PromptFrames]] = WeakKeyDictionary()
"""Frames already counted, per compiled tables (kept as long as the table cache keeps them) and template sets."""
_KEPT_LOCK = threading.Lock()


def prompt_frames(production: Production, openings: Openings, labels: Mapping[str, str]) -> PromptFrames:
    """Each criterion's prompt frame (see the module docstring), counted once per compiled tables and template
    sets: the tables fix the DSO, KGs, rules and envelope (their cache key), and so the labels too."""
    key: SetsKey = tuple(
        sorted(
            (s.iri, s.tag, tuple(sorted(s.texts.items())), tuple(sorted(s.about_other.items())))
            for s in openings.sets.values()
        )
    )
    with _KEPT_LOCK:
        found = _KEPT.get(production, {}).get(key)
    if found is None:
        found = _count(production, openings, labels)
        with _KEPT_LOCK:
            _KEPT.setdefault(production, {})[key] = found
    return found


def _count(production: Production, openings: Openings, labels: Mapping[str, str]) -> PromptFrames:
    ctx = production.ctx
    if ctx.space.size == 0 or production.global_blocks:
        return PromptFrames(MappingProxyType({c.iri: 0 for c in ctx.criteria}), exact=not production.fallback)
    sayer = _Sayer(production, openings, labels)
    spans = [[frozenset(p) for p in part.positions] for part in ctx.space.parts]
    counts = {}
    for criterion in ctx.criteria:
        allowed = allowed_positions(ctx, criterion)
        groups = [_groups(comp, allowed, criterion.iri, sayer.triggers) for comp in production.components]
        total = 0
        for trigger in product(*(sorted(allowed[f]) for f in sayer.triggers)):
            said = sayer.texts(trigger)
            at = dict(zip(sayer.triggers, trigger))
            parts = [span for span in spans if all(d in span[f] for f, d in at.items())]
            if said is not None and parts:
                total += _distinct(production, groups, said, at, parts)
        counts[criterion.iri] = total
    return PromptFrames(MappingProxyType(counts), exact=not production.fallback)


def _distinct(
    production: Production,
    groups: Sequence[Mapping[tuple[int, ...], list[tuple[int, ...]]]],
    said: Sequence[Texts],
    at: Mapping[int, int],
    parts: Sequence[Sequence[frozenset[int]]],
) -> int:
    """Distinct openings of one trigger value over the parts that span it (inclusion-exclusion over parts:
    within a part the openings are a product over components, and the intersection of products is the
    product of the intersections; an opening's component texts lie in a set of parts, its mask)."""
    full = (1 << len(parts)) - 1
    radices = production.ctx.space.radices
    # per facet and value: the parts whose span holds it, as a bit mask (a combination's mask is their AND)
    spans = [
        [sum(1 << j for j, span in enumerate(parts) if d in span[f]) for d in range(radices[f])]
        for f in range(len(radices))
    ]
    per_component = []
    for comp, grouped in zip(production.components, groups):
        keep = [k for k, f in enumerate(comp.facets) if f not in at]
        masks: dict[tuple[str | None, ...], int] = {}
        for combo in grouped.get(tuple(at[f] for f in comp.facets if f in at), ()):
            texts = tuple(said[comp.facets[k]][combo[k]] for k in keep)
            if None in texts:
                continue
            mask = full
            for f, d in zip(comp.facets, combo):
                mask &= spans[f][d]
            if mask:
                masks[texts] = masks.get(texts, 0) | mask
        per_component.append(list(masks.values()))
    total = 0
    for chosen in range(1, full + 1):
        count = 1
        for component_masks in per_component:
            count *= sum(1 for m in component_masks if m & chosen == chosen)
            if not count:
                break
        total += count if chosen.bit_count() % 2 else -count
    return total


def _groups(
    comp: Component, allowed: Sequence[set[int]], criterion: str, triggers: Sequence[int]
) -> dict[tuple[int, ...], list[tuple[int, ...]]]:
    """A component's combinations that are eligible probes of ``criterion`` (unblocked, not routed away,
    within its frame), grouped by their trigger values."""
    pair = comp.pair_blocked.get(criterion, {})
    at = [k for k, f in enumerate(comp.facets) if f in triggers]
    out: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for k, combo in enumerate(comp.combos()):
        if k in comp.blocked or k in pair or not all(d in allowed[f] for f, d in zip(comp.facets, combo)):
            continue
        out.setdefault(tuple(combo[i] for i in at), []).append(combo)
    return out
