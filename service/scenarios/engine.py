"""What the reference and the fast path share: the derivation context, and running pySHACL.

Both paths use the same scenario RDF (:func:`facets.describe`), the same OWL 2 RL clash checks
(:mod:`.owl`) and the same SHACL engine (pySHACL over an in-memory Oxigraph store, SHACL-SPARQL enabled,
no inference, on the asserted data as service.validation does for knowledge graphs). They differ only in
*what* they run it on: every candidate (reference) or each rule's small table of facet combinations (fast).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import pyoxigraph as ox
import pyshacl
from rdflib import Graph, URIRef
from rdflib.namespace import RDF, SH
from rdflib.term import Node

from ..core.validation import ox_term
from .facets import EPO, Facet, FacetSpace, Schema
from .owl import OwlDependencies, OwlSchema, owl_groups
from .rules import CONSISTENCY, ROUTING, Rule, owner_map, shape_rules


@dataclass(frozen=True, order=True)
class Block:
    """Why a scenario (or a scenario-criterion pair) is blocked: the rule's IRI and the message."""

    rule: str
    message: str


@dataclass(frozen=True)
class Criterion:
    """An acceptance criterion as the rules see it: its IRI and the DSO concepts it bears on."""

    iri: str
    concepts: frozenset[str]


class Context:
    """DSO, KGs, facets and rules of one derivation, each prepared once."""

    def __init__(self, dso: Graph, kgs: Sequence[Graph], facets: Sequence[Facet], shapes: Graph,
                 criteria: Sequence[Criterion] = ()) -> None:
        self.dso, self.kgs = dso, list(kgs)
        self.schema = Schema(dso, kgs)
        self.owl = OwlSchema(dso, kgs)
        self.facets = tuple(facets)
        self.space = FacetSpace(self.facets)
        self.shapes = shapes
        self.owners = owner_map(shapes)
        self.rules = shape_rules(shapes, self.facets, self.schema)
        self.criteria = tuple(criteria)

    @cached_property
    def owl_deps(self) -> OwlDependencies:
        return owl_groups(self.owl, self.facets)

    @property
    def consistency_rules(self) -> list[Rule]:
        return [r for r in self.rules if r.kind == CONSISTENCY]

    @property
    def routing_rules(self) -> list[Rule]:
        return [r for r in self.rules if r.kind == ROUTING]

    def criterion_triples(self) -> list[tuple[Node, Node, Node]]:
        out: list[tuple[Node, Node, Node]] = []
        for c in self.criteria:
            out.append((URIRef(c.iri), RDF.type, EPO.AcceptanceCriterion))
            out += [(URIRef(c.iri), EPO.bearsOnConcept, URIRef(k)) for k in sorted(c.concepts)]
        return out


def probe_triples(probe: str, scenario: str, criterion: str) -> list[tuple[Node, Node, Node]]:
    """A candidate probe: the scenario linked to a criterion (what the routing rules judge)."""
    p = URIRef(probe)
    return [(p, RDF.type, EPO.Probe), (p, EPO.fromScenario, URIRef(scenario)), (p, EPO.exercises, URIRef(criterion))]


def run_shacl(ctx: Context, data: Iterable[tuple[Node, Node, Node]], use_shapes: Sequence[str] | None = None
              ) -> list[tuple[Node, str, str]]:
    """pySHACL over DSO + KGs + ``data`` (asserted): (focus node, rule IRI, message) per violation."""
    store = ox.Store()
    quads = (ox.Quad(ox_term(s), ox_term(p), ox_term(o), ox.DefaultGraph())  # type: ignore[arg-type]
             for g in (ctx.dso, *ctx.kgs) for s, p, o in g)
    store.extend(quads)
    store.extend(ox.Quad(ox_term(s), ox_term(p), ox_term(o), ox.DefaultGraph())  # type: ignore[arg-type]
                 for s, p, o in data)
    kwargs = {"use_shapes": list(use_shapes)} if use_shapes else {}
    _conforms, report, _text = pyshacl.validate(store, shacl_graph=ctx.shapes, inference="none", advanced=True,
                                                allow_warnings=True, inplace=True, **kwargs)
    if not isinstance(report, Graph):
        raise ValueError(f"SHACL validation could not run: {report}")
    out = []
    for result in report.subjects(RDF.type, SH.ValidationResult):
        if report.value(result, SH.resultSeverity) != SH.Violation:
            continue
        owner = ctx.owners.get(report.value(result, SH.sourceShape))
        if owner is None:
            continue
        message = str(report.value(result, SH.resultMessage) or f"violates {owner}")
        out.append((report.value(result, SH.focusNode), str(owner), message))
    return out
