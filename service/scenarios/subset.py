"""The fast path's supported subset of SHACL and OWL 2 RL: the one place that decides what it compiles.

The fast path (:mod:`.production`) runs a rule over the combinations of the facets the analysis says it
reads (:mod:`.rules`, :func:`.owl.owl_groups`). That is right only for constructs the analysis reads
completely; this module names every construct outside them, and the compiler then leaves that rule to the
reference (:mod:`.reference`) and records why. docs/blocking.md lists the subset.

SHACL (per top-level node shape): targets by ``sh:targetClass``; property shapes whose ``sh:path`` is one
IRI; the core constraints listed in :data:`SHACL_PARAMETERS`, with ``sh:node``/``sh:not``/``sh:and``/
``sh:or``/``sh:xone`` to inline (blank-node) shapes only; ``sh:sparql`` SELECT constraints whose
predicates are IRIs or sequences, alternatives and ``*``/``+``/``?`` of IRIs (no inverse or negated
paths, no variable predicate, no ``SERVICE``); no property that is a sub-, super-, equivalent or inverse
property of a facet property without being one.

OWL 2 RL (the DSO and KGs as a whole, one unit): class axioms (``rdfs:subClassOf``,
``owl:equivalentClass``, intersections, unions, ``owl:hasValue`` and ``owl:someValuesFrom`` restrictions,
``owl:disjointWith``, ``owl:AllDisjointClasses``, ``⊑ owl:Nothing``), functional properties with
``owl:AllDifferent``/``owl:differentFrom``, ``rdfs:range`` anywhere and ``rdfs:domain`` of a facet
property only when it is a class every person has; other property axioms only on properties that no
sub-, super-, equivalent- or inverse-property axiom ties to a facet property. Outside: an ``owl:sameAs``
in the DSO or KGs; on a facet property (or one tied to it) an inverse, a chain, a key, a symmetric,
transitive or inverse-functional characteristic, a cardinality, ``owl:allValuesFrom`` or ``owl:hasSelf``
restriction; any restriction on a property tied to a facet property.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rdflib import BNode, Graph, URIRef, Variable
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS, SH
from rdflib.paths import InvPath, NegatedPath
from rdflib.paths import Path as RdfPath
from rdflib.plugins.sparql import prepareQuery
from rdflib.term import Node

from .facets import Facet

SHACL_PARAMETERS = frozenset(
    SH[n]
    for n in (
        "targetClass",
        "property",
        "path",
        "message",
        "severity",
        "name",
        "description",
        "order",
        "group",
        "hasValue",
        "in",
        "not",
        "and",
        "or",
        "xone",
        "node",
        "class",
        "datatype",
        "nodeKind",
        "minCount",
        "maxCount",
        "minInclusive",
        "maxInclusive",
        "minExclusive",
        "maxExclusive",
        "minLength",
        "maxLength",
        "pattern",
        "flags",
        "languageIn",
        "uniqueLang",
        "equals",
        "disjoint",
        "lessThan",
        "lessThanOrEquals",
        "sparql",
        "select",
        "prefixes",
        "deactivated",
    )
) | {RDF.type, RDF.first, RDF.rest, RDFS.label, RDFS.comment, RDFS.seeAlso, RDFS.isDefinedBy}
"""Predicates a rule's shape (and the blank nodes under it) may use."""

OWL_UNSUPPORTED_ON = {
    OWL.maxCardinality: "a cardinality restriction",
    OWL.cardinality: "a cardinality restriction",
    OWL.maxQualifiedCardinality: "a cardinality restriction",
    OWL.qualifiedCardinality: "a cardinality restriction",
    OWL.allValuesFrom: "an owl:allValuesFrom restriction",
    OWL.hasSelf: "an owl:hasSelf restriction",
}
"""Restrictions outside the subset when their ``owl:onProperty`` is a facet property or tied to one."""
OWL_UNSUPPORTED_TYPES = {
    OWL.SymmetricProperty: "a symmetric property",
    OWL.TransitiveProperty: "a transitive property",
    OWL.InverseFunctionalProperty: "an inverse-functional property",
}
"""Property characteristics outside the subset on a facet property or one tied to it. (Irreflexive and
asymmetric properties, disjoint properties and negative assertions only make owlrl note an error, which
neither path reads as a clash.)"""
_PROPERTY_LINKS = (RDFS.subPropertyOf, OWL.equivalentProperty, OWL.inverseOf)


class RuleError(ValueError):
    """A scenario rule that is malformed (not merely outside the subset): the derivation cannot run."""


def _facet_properties(facets: Sequence[Facet]) -> set[Node]:
    return {f.spec.dso_property for f in facets if f.spec.dso_property != RDF.type}


def _linked_properties(graph: Graph, facet_props: set[Node]) -> dict[Node, Node]:
    """Properties tied to a facet property by sub-, super-, equivalent- or inverse-property axioms (at any
    distance), each with the facet property it is tied to; facet properties themselves are left out."""
    out: dict[Node, Node] = {}
    for fp in facet_props:
        seen, todo = {fp}, [fp]
        while todo:
            p = todo.pop()
            for link in _PROPERTY_LINKS:
                for q in (*graph.objects(p, link), *graph.subjects(link, p)):
                    if q not in seen:
                        seen.add(q)
                        todo.append(q)
        for q in seen - facet_props:
            out.setdefault(q, fp)
    return out


def shape_nodes(shapes: Graph, shape: Node) -> list[Node]:
    """The shape and the blank nodes under it (its property shapes, constraints, lists), in the order found
    (so the first reason a rule falls back is the same every run)."""
    seen, todo = [shape], [shape]
    while todo:
        for o in shapes.objects(todo.pop(), None):
            if isinstance(o, BNode) and o not in seen:
                seen.append(o)
                todo.append(o)
    return seen


def _sparql_issue(node: object) -> str | None:
    """What in a SPARQL algebra tree the analysis cannot read, if anything."""
    if isinstance(node, (InvPath, NegatedPath)):
        return f"the property path {node.n3()} (inverse or negated)"
    if isinstance(node, RdfPath):
        for attr in ("args", "path", "arg"):
            sub = getattr(node, attr, None)
            for item in (sub if isinstance(sub, list) else [sub]) if sub is not None else []:
                found = _sparql_issue(item)
                if found:
                    return found
        return None
    if isinstance(node, dict):
        name = getattr(node, "name", None)
        if name == "ServiceGraphPattern":
            return "a SERVICE clause"
        if name == "BGP":
            for _s, p, _o in node.get("triples", []):
                if isinstance(p, Variable):
                    return "a variable predicate"
        for value in node.values():
            found = _sparql_issue(value)
            if found:
                return found
    elif isinstance(node, (list, tuple)):
        for item in node:
            found = _sparql_issue(item)
            if found:
                return found
    return None


def _query_text(shapes: Graph, constraint: Node, text: str) -> str:
    lines = []
    for owner in shapes.objects(constraint, SH.prefixes):
        for decl in shapes.objects(owner, SH.declare):
            prefix, namespace = shapes.value(decl, SH.prefix), shapes.value(decl, SH.namespace)
            if prefix is not None and namespace is not None:
                lines.append(f"PREFIX {prefix}: <{namespace}>")
    return "\n".join(lines) + "\n" + text.replace("$this", "?this")


def shape_outside_subset(shapes: Graph, shape: URIRef, facets: Sequence[Facet], world: Graph) -> str | None:
    """Why the rule ``shape`` is outside the supported SHACL subset (``None``: inside it).

    ``world`` is DSO + KGs (for property axioms). Raises :class:`RuleError` for a malformed rule: a SPARQL
    constraint that does not parse, or a property shape without exactly one ``sh:path``.
    """
    linked = _linked_properties(world, _facet_properties(facets))
    for node in shape_nodes(shapes, shape):
        if (node, SH.closed, None) in shapes:
            return "it uses sh:closed"
        if (node, RDF.type, SH.PropertyShape) in shapes or (None, SH.property, node) in shapes:
            paths = list(shapes.objects(node, SH.path))
            if len(paths) != 1:
                raise RuleError(f"the rule {shape.n3()} has a property shape with {len(paths)} sh:path values, not one")
            if not isinstance(paths[0], URIRef):
                return "a property shape's sh:path is not a single property"
        for p, o in shapes.predicate_objects(node):
            if p not in SHACL_PARAMETERS and not str(p).startswith(str(RDFS)):
                return f"it uses {p.n3()}, outside the supported SHACL constraints"
            if p in (SH.node, SH["not"], SH["and"], SH["or"], SH.xone) and isinstance(o, URIRef):
                return f"{p.n3()} points to the named shape {o.n3()}"
            if p == SH.select:
                try:
                    algebra = prepareQuery(_query_text(shapes, node, str(o))).algebra
                except Exception as exc:  # pyparsing and rdflib raise several kinds
                    raise RuleError(f"the SPARQL constraint of rule {shape.n3()} does not parse: {exc}") from exc
                issue = _sparql_issue(algebra)
                if issue:
                    return f"its SPARQL uses {issue}"
                named: set[str] = set()
                _collect(algebra, named)
                tied = sorted((q for q in linked if str(q) in named), key=str)
                if tied:
                    return f"its SPARQL reads {tied[0].n3()}, tied by a property axiom to the facet property {linked[tied[0]].n3()}"
            if isinstance(o, URIRef) and o in linked:
                return f"it reads {o.n3()}, tied by a property axiom to the facet property {linked[o].n3()}"
    return None


def _collect(node: object, out: set[str]) -> None:
    if isinstance(node, URIRef):
        out.add(str(node))
    elif isinstance(node, RdfPath):
        for attr in ("args", "path", "arg"):
            sub = getattr(node, attr, None)
            if sub is not None:
                _collect(sub, out)
    elif isinstance(node, dict):
        for value in node.values():
            _collect(value, out)
        if getattr(node, "name", None) == "BGP":
            _collect(node.get("triples", []), out)
    elif isinstance(node, (list, tuple)):
        for item in node:
            _collect(item, out)


def owl_outside_subset(world: Graph, facets: Sequence[Facet], constant: Iterable[Node]) -> str | None:
    """Why DSO + KGs (``world``) are outside the supported OWL 2 RL subset (``None``: inside it).
    ``constant``: classes every person has (their ancestors count too)."""
    same = next(iter(world.subject_objects(OWL.sameAs)), None)
    if same is not None:
        return f"the DSO asserts an equality (owl:sameAs) of {same[0].n3()} and {same[1].n3()}"
    facet_props = _facet_properties(facets)
    linked = _linked_properties(world, facet_props)
    relevant = facet_props | set(linked)
    for a, b in sorted(world.subject_objects(OWL.inverseOf), key=str):
        if a in relevant or b in relevant:
            return f"the DSO declares {a.n3()} the inverse of {b.n3()}, tied to a facet property"
    for p, members in world.subject_objects(OWL.propertyChainAxiom):
        if p in relevant or relevant & set(Collection(world, members)):
            return f"the DSO has a property chain for {p.n3()} through a facet property"
    for cls, keys in world.subject_objects(OWL.hasKey):
        if relevant & set(Collection(world, keys)):
            return f"the DSO has a key (owl:hasKey) on {cls.n3()} with a facet property"
    for t, what in OWL_UNSUPPORTED_TYPES.items():
        for p in sorted(world.subjects(RDF.type, t), key=str):
            if p in relevant:
                return (
                    f"the facet property {p.n3()} is {what}"
                    if p in facet_props
                    else (f"{p.n3()}, tied to the facet property {linked[p].n3()}, is {what}")
                )
    for r, prop in world.subject_objects(OWL.onProperty):
        if prop in linked:
            return (
                f"the DSO has a restriction on {prop.n3()}, tied by a property axiom to the facet property "
                f"{linked[prop].n3()}"
            )
        if prop in facet_props:
            restriction = next((w for k, w in OWL_UNSUPPORTED_ON.items() if (r, k, None) in world), None)
            if restriction:
                return f"the DSO has {restriction} on the facet property {prop.n3()}"
    constant_set: set[Node] = set()
    for c in constant:
        todo = [c]
        while todo:
            x = todo.pop()
            if x not in constant_set:
                constant_set.add(x)
                todo += list(world.objects(x, RDFS.subClassOf))
    for prop in sorted(facet_props, key=str):
        for domain in world.objects(prop, RDFS.domain):
            if domain not in constant_set:
                return f"the facet property {prop.n3()} has the domain {domain.n3()}, a class not every person has"
    return None
