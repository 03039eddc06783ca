"""The derivation context, and the fast path's pySHACL runs over partial scenarios.

:class:`Context` holds one derivation's inputs prepared once: the facets, the rules as the fast path
analyses them (:mod:`.rules`), its OWL 2 RL schema (:mod:`.owl`), and the reference specification
(:class:`.reference.ReferenceSpec`), which shares none of the fast path's analysis. The fast path runs
pySHACL (over an in-memory Oxigraph store, SHACL-SPARQL enabled, no inference, on the asserted data) on
each rule's small table of facet combinations.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property

import pyoxigraph as ox
from rdflib import Graph
from rdflib.term import Node

from ..core.validation import ox_quads, run_pyshacl
from .facets import Facet, Schema, read_nodes
from .owl import OwlDependencies, OwlSchema, owl_groups
from .reference import Block, Criterion, ReferenceSpec, criterion_triples, probe_triples
from .rules import CONSISTENCY, ROUTING, Rule, owner_map, shape_rules, violations
from .space import FacetSpace, kg_parts

__all__ = ["Block", "Context", "Criterion", "probe_triples", "run_shacl"]


class Context:
    """DSO, KGs, facets and rules of one derivation, each prepared once."""

    def __init__(
        self,
        dso: Graph,
        kgs: Sequence[Graph],
        facets: Sequence[Facet],
        shapes: Graph,
        criteria: Sequence[Criterion] = (),
    ) -> None:
        self.dso, self.kgs = dso, list(kgs)
        self.schema = Schema(dso, kgs)
        self.owl = OwlSchema(dso, kgs)
        self.facets = tuple(facets)
        self.space = FacetSpace(self.facets, kg_parts(self.schema, self.kgs, self.facets))
        self.shapes = shapes
        self.owners = owner_map(shapes)
        self.rules = shape_rules(shapes, self.facets, self.schema)
        self.criteria = tuple(criteria)

    @property
    def person_classes(self) -> tuple[Node, ...]:
        """Classes every scenario's person has (the DSO's ``epo:personClass``; the OWL analysis enters them
        without a facet)."""
        person = read_nodes(self.dso).person_class
        return () if person is None else (person,)

    @cached_property
    def owl_deps(self) -> OwlDependencies:
        return owl_groups(self.owl, self.facets, self.person_classes)

    @property
    def consistency_rules(self) -> list[Rule]:
        return [r for r in self.rules if r.kind == CONSISTENCY]

    @property
    def routing_rules(self) -> list[Rule]:
        return [r for r in self.rules if r.kind == ROUTING]

    def criterion_triples(self) -> list[tuple[Node, Node, Node]]:
        return criterion_triples(self.criteria)

    @cached_property
    def reference(self) -> ReferenceSpec:
        """The specification as written, over the same inputs (built when first asked for)."""
        return ReferenceSpec(self.dso, self.kgs, self.shapes, self.facets, self.criteria, self.space)


def base_quads(ctx: Context) -> list[ox.Quad]:
    """DSO + KGs as the quads every :func:`run_shacl` loads: converted once for a compile's many runs."""
    return ox_quads(t for g in (ctx.dso, *ctx.kgs) for t in g)


def run_shacl(
    ctx: Context,
    data: Iterable[tuple[Node, Node, Node]],
    base: Sequence[ox.Quad],
    use_shapes: Sequence[str] | None = None,
) -> list[tuple[Node, str, str]]:
    """pySHACL over DSO + KGs (``base``: :func:`base_quads`) + ``data`` (asserted): (focus node, rule IRI,
    message) per violation."""
    return violations(run_pyshacl(data, ctx.shapes, use_shapes, base), ctx.owners)
