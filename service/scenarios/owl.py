"""OWL 2 RL reasoning for the fast path's scenario blocking (the reference reasons on its own, :mod:`.reference`).

Many scenarios are reasoned over in one graph, but in OWL an equality is global: a person whose persona
forces one age group while the scenario states another would, through a functional property (rule prp-fp),
make two DSO age groups ``owl:sameAs`` and leak into every other scenario. So, as service.validation does
for ``owl:Nothing``, the closure is computed without the equality generators and the clashes are read off
it per node (`OWL 2 RL`_ section 4.3):

* ``cls-nothing2``: the node is classified into a class the DSO makes a subclass of ``owl:Nothing``
  (``ve:ImmuneWithoutCause``, ``ve:PregnantInfant``); the rule is that class (the most specific ones).
* ``prp-fp`` + ``eq-diff1/2``: two values of a functional property that are declared different
  (``owl:AllDifferent``, ``owl:differentFrom``) or are different literals; the rule is the property.
* ``cax-dw`` / ``cax-adc``: the node is in two disjoint classes; the rule is the first class by IRI.

.. _OWL 2 RL: https://www.w3.org/TR/owl2-profiles/#Reasoning_in_OWL_2_RL_and_RDF_Graphs_using_Rules
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS
from rdflib.term import Node

from ..core.validation import closure_graph, is_annotation
from .facets import Facet
from .reference import close, disjoint_message, functional_message, nothing_message

_CLASS_AXIOMS = (RDFS.subClassOf, OWL.equivalentClass, OWL.disjointWith, OWL.complementOf)


@dataclass(frozen=True)
class Finding:
    """One OWL 2 RL clash on a node: the rule (an IRI of the DSO) and a message naming no scenario IRI."""

    rule: str
    message: str
    terms: tuple[Node, ...] = ()


class OwlSchema:
    """DSO + KGs prepared once for reasoning: annotations, ``⊑ owl:Nothing`` and functional typing removed,
    with the facts the clash checks need."""

    def __init__(self, dso: Graph, kgs: Sequence[Graph]) -> None:
        source = Graph()
        for g in (dso, *kgs):
            source += g
        self.source = source
        self.functional = {p for p in source.subjects(RDF.type, OWL.FunctionalProperty) if isinstance(p, URIRef)}
        nothing_direct = {c for c in source.subjects(RDFS.subClassOf, OWL.Nothing)}
        self.unsatisfiable = {
            c for c in source.subjects(None, None) if isinstance(c, URIRef) and self._reaches(c, nothing_direct)
        }
        self.different: set[frozenset[Node]] = set()
        for axiom in source.subjects(RDF.type, OWL.AllDifferent):
            for lst in list(source.objects(axiom, OWL.distinctMembers)) + list(source.objects(axiom, OWL.members)):
                members = list(Collection(source, lst))
                self.different |= {frozenset((a, b)) for a in members for b in members if a != b}
        self.different |= {frozenset((a, b)) for a, b in source.subject_objects(OWL.differentFrom)}
        self.disjoint: set[frozenset[Node]] = {frozenset((a, b)) for a, b in source.subject_objects(OWL.disjointWith)}
        for axiom in source.subjects(RDF.type, OWL.AllDisjointClasses):
            for lst in source.objects(axiom, OWL.members):
                members = list(Collection(source, lst))
                self.disjoint |= {frozenset((a, b)) for a, b in pairwise(members)} | {
                    frozenset((a, b)) for a in members for b in members if a != b
                }
        self.triples = [
            (s, p, o)
            for s, p, o in source
            if not is_annotation(p)
            and not (p in _CLASS_AXIOMS[:2] and o == OWL.Nothing)
            and not (p == RDF.type and o == OWL.FunctionalProperty)
        ]

    def _reaches(self, cls: Node, targets: set[Node]) -> bool:
        seen, todo = {cls}, [cls]
        while todo:
            current = todo.pop()
            if current in targets:
                return True
            for pred in _CLASS_AXIOMS[:2]:
                for sup in self.source.objects(current, pred):
                    if sup not in seen:
                        seen.add(sup)
                        todo.append(sup)
        return False

    def closure(self, data: Iterable[tuple[Node, Node, Node]]) -> Graph:
        """OWL 2 RL closure (owlrl, the rules of :func:`.reference.close`) of the prepared schema plus ``data``."""
        graph = closure_graph()
        graph += self.triples
        graph += data
        return close(graph)

    def findings(self, closure: Graph, node: Node) -> list[Finding]:
        """The clashes the closure shows on ``node`` (see the module docstring), sorted by rule."""
        out: dict[str, Finding] = {}
        types = set(closure.objects(node, RDF.type))
        bad = {c for c in types if c in self.unsatisfiable}
        specific = {
            c for c in bad if not any(c != d and self._reaches(d, {c}) and not self._reaches(c, {d}) for d in bad)
        }
        for cls in specific:
            out[str(cls)] = Finding(str(cls), nothing_message(node, cls, self.source.value(cls, RDFS.label)), (cls,))
        for prop in self.functional:
            values = sorted(set(closure.objects(node, prop)), key=str)
            for i, a in enumerate(values):
                for b in values[i + 1 :]:
                    literal_clash = isinstance(a, Literal) and isinstance(b, Literal) and not a.eq(b)
                    if literal_clash or frozenset((a, b)) in self.different:
                        out.setdefault(str(prop), Finding(str(prop), functional_message(node, prop, a, b), (prop,)))
        named = sorted((t for t in types if isinstance(t, URIRef)), key=str)
        for i, a in enumerate(named):
            for b in named[i + 1 :]:
                if frozenset((a, b)) in self.disjoint:
                    out.setdefault(str(a), Finding(str(a), disjoint_message(node, a, b), (a, b)))
        return sorted(out.values(), key=lambda f: f.rule)


@dataclass(frozen=True)
class OwlDependencies:
    """The facet groups of :func:`owl_groups`, and which facets the terms of a finding depend on."""

    groups: tuple[frozenset[str], ...]
    term_facets: dict[Node, frozenset[str]]

    def group_of(self, finding: Finding) -> frozenset[str]:
        """The group a finding belongs to; empty when it depends on no facet (then it blocks everything)."""
        names = set().union(*(self.term_facets.get(t, frozenset()) for t in finding.terms)) if finding.terms else set()
        for g in self.groups:
            if names & g:
                return g
        return frozenset()


def owl_groups(schema: OwlSchema, facets: Sequence[Facet], constant: Iterable[Node] = ()) -> OwlDependencies:
    """Facets the DSO's axioms tie together, so that no OWL 2 RL clash spans two groups.

    A class is entered in alternative ways, each depending on a set of facets: the persona facet when the
    class is a persona or a superclass of one, each alternative of its equivalent class expressions (an
    intersection needs one alternative of every member; a restriction on a facet property depends on that
    facet), and each alternative of its subclasses. Classes every person is asserted to have (``ve:Person``)
    (``constant``: the DSO's person class) are entered without a facet. An axiom ties every alternative of its subject to the facets whose values
    it entails (restrictions in its object); an unsatisfiable class ties its own alternatives together (the
    rule that names it must see all of them); disjoint classes tie their alternatives pairwise.
    """
    graph = schema.source
    facet_of: dict[Node, str] = {f.spec.dso_property: f.name for f in facets if f.spec.dso_property != RDF.type}
    persona = next((f for f in facets if f.spec.dso_property == RDF.type), None)
    persona_supers: set[Node] = set()
    if persona is not None:
        for v in persona.unrestricted:
            persona_supers |= _ancestors(graph, v)
    constant_set: set[Node] = set()
    for c in constant:
        constant_set |= _ancestors(graph, c)
    memo: dict[tuple[Node, bool], list[frozenset[str]]] = {}

    def alts(cls: Node, stack: frozenset[Node], own: bool = False) -> list[frozenset[str]]:
        """Alternative facet sets that put a node in ``cls`` (``own``: not through unsatisfiable subclasses)."""
        if cls in constant_set:
            return [frozenset()]
        if isinstance(cls, BNode):
            return expr_alts(cls, stack)
        if cls in stack:
            return []
        key = (cls, own)
        if key in memo:
            return memo[key]
        stack = stack | {cls}
        out: list[frozenset[str]] = []
        if cls in persona_supers and persona is not None:
            out.append(frozenset({persona.name}))
        for expr in graph.objects(cls, OWL.equivalentClass):
            out += alts(expr, stack)
        for pred in (RDFS.subClassOf, OWL.equivalentClass):
            for sub in graph.subjects(pred, cls):
                if not (own and sub in schema.unsatisfiable):
                    out += alts(sub, stack)
        out = list(dict.fromkeys(out))
        memo[key] = out
        return out

    def expr_alts(expr: Node, stack: frozenset[Node]) -> list[frozenset[str]]:
        prop = graph.value(expr, OWL.onProperty)
        if prop is not None:
            return [frozenset({facet_of[prop]})] if prop in facet_of else []
        members = graph.value(expr, OWL.intersectionOf)
        if members is not None:
            combos: list[frozenset[str]] = [frozenset()]
            for m in Collection(graph, members):
                combos = [a | b for a in combos for b in alts(m, stack)]
            return combos
        members = graph.value(expr, OWL.unionOf)
        if members is not None:
            return [a for m in Collection(graph, members) for a in alts(m, stack)]
        return []

    def entailed(expr: Node) -> set[str]:
        """Facets whose values an expression entails (restrictions on facet properties, through lists)."""
        if not isinstance(expr, BNode):
            return set()
        prop = graph.value(expr, OWL.onProperty)
        if prop is not None:
            return {facet_of[prop]} if prop in facet_of else set()
        out: set[str] = set()
        for key in (OWL.intersectionOf, OWL.unionOf):
            lst = graph.value(expr, key)
            if lst is not None:
                for m in Collection(graph, lst):
                    out |= entailed(m)
        return out

    parent = {f.name: f.name for f in facets}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(names: Iterable[str]) -> None:
        names = list(names)
        for n in names[1:]:
            parent[find(n)] = find(names[0])

    def own_facets(cls: Node) -> frozenset[str]:
        return frozenset().union(*alts(cls, frozenset(), own=True))

    for s, p, o in graph:
        if p in (RDFS.subClassOf, OWL.equivalentClass) and isinstance(s, URIRef):
            for a in alts(s, frozenset()):
                union(a | entailed(o))
        elif p == OWL.disjointWith:
            union(own_facets(s) | own_facets(o))
        elif p == RDF.type and o == OWL.AllDisjointClasses:
            for lst in graph.objects(s, OWL.members):
                members = list(Collection(graph, lst))
                for i, first in enumerate(members):
                    for second in members[i + 1 :]:
                        union(own_facets(first) | own_facets(second))
    for cls in schema.unsatisfiable:
        union(own_facets(cls))
    groups: dict[str, set[str]] = {}
    for f in facets:
        groups.setdefault(find(f.name), set()).add(f.name)
    term_facets: dict[Node, frozenset[str]] = {}
    for term in schema.unsatisfiable | {c for pair in schema.disjoint for c in pair}:
        term_facets[term] = own_facets(term)
    for prop, name in facet_of.items():
        term_facets[prop] = frozenset({name})
    return OwlDependencies(tuple(frozenset(g) for g in groups.values()), term_facets)


def _ancestors(graph: Graph, cls: Node) -> set[Node]:
    seen, todo = {cls}, [cls]
    while todo:
        for sup in graph.objects(todo.pop(), RDFS.subClassOf):
            if isinstance(sup, URIRef) and sup not in seen:
                seen.add(sup)
                todo.append(sup)
    return seen
