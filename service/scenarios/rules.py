"""Scenario rules as data: every top-level ``sh:NodeShape`` of a scenario shapes graph is one rule.

A rule has its shape's IRI, ``rdfs:label``, ``rdfs:comment`` and ``sh:message``, and the facets it reads:
the facet properties and facet values it names (in its constraints or in the text of its SHACL-SPARQL
queries, `SHACL`_ section 5), and the persona facet when it names a persona class or one of its superclasses
or asks for a type through a variable. A rule whose shape targets ``epo:Probe`` (or names ``epo:exercises``)
is a routing rule: it judges a scenario together with the acceptance criterion it is linked to. Shapes run
on the asserted data (DSO + KGs + scenarios), as the KG shapes do (see service.validation), so that any SHACL
engine can use them without a reasoner. Adding a shape adds a rule: no code names a rule.

The service reads the rules from the store: every shapes graph ``shapes/scenario-*`` (the bootstrap loads the
repository's ``shapes/scenario-*.ttl`` there), pinned by digest like the DSO and knowledge graphs
(:mod:`service.envelope.inputs`). The repository files are read directly only by tests and benchmarks.

.. _SHACL: https://www.w3.org/TR/shacl/
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rdflib import Graph, URIRef, Variable
from rdflib.namespace import RDF, RDFS, SH
from rdflib.paths import Path as RdfPath
from rdflib.plugins.sparql import prepareQuery
from rdflib.term import Node

from .facets import EPO, Facet, Schema
from .subset import RuleError, shape_nodes

__all__ = ["Rule", "RuleError", "default_scenario_shape_paths", "load_rule_shapes", "shape_rules"]

SHAPES_DIR = Path(__file__).resolve().parents[2] / "shapes"
SCENARIO_SHAPES_PREFIX = "scenario-"
"""Shapes graphs (``shapes/{id}``) and repository files whose name starts with this hold scenario rules."""
CONSISTENCY, ROUTING = "consistency", "routing"


@dataclass(frozen=True)
class Rule:
    """One blocking rule: a node shape, or an OWL 2 RL clash class of the DSO (``kind == "owl"``)."""

    iri: str
    label: str
    comment: str
    message: str
    kind: str
    facets: frozenset[str]


def default_scenario_shape_paths() -> list[Path]:
    """The repository's scenario rule files, ``shapes/scenario-*.ttl``, for tests and benchmarks that build a
    derivation without a store; the service reads the store's copies."""
    return sorted(SHAPES_DIR.glob(f"{SCENARIO_SHAPES_PREFIX}*.ttl"))


def load_rule_shapes(sources: Iterable[str | Path | Graph]) -> Graph:
    """Union of scenario shapes graphs, given as files or graphs."""
    shapes = Graph()
    for item in sources:
        shapes += item if isinstance(item, Graph) else Graph().parse(str(item))
    return shapes


def owner_map(shapes: Graph) -> dict[Node, URIRef]:
    """Every shape or constraint node -> the top-level node shape (rule) it belongs to."""
    owners: dict[Node, URIRef] = {}
    for shape in top_level_shapes(shapes):
        for node in shape_nodes(shapes, shape):
            owners.setdefault(node, shape)
    return owners


def violations(
    report: Graph, owners: Mapping[Node, URIRef], rules: Sequence[str] | None = None
) -> list[tuple[Node, str, str]]:
    """(focus node, rule IRI, message) per violation in a pySHACL ``report`` of a shape that one of ``rules`` (all
    when ``None``) owns (:func:`owner_map`)."""
    out = []
    for result in report.subjects(RDF.type, SH.ValidationResult):
        if report.value(result, SH.resultSeverity) != SH.Violation:
            continue
        source, focus = report.value(result, SH.sourceShape), report.value(result, SH.focusNode)
        rule = None if source is None else owners.get(source)
        # focus is never None: SHACL gives every validation result a focus node
        if rule is not None and focus is not None and (rules is None or str(rule) in rules):
            out.append((focus, str(rule), str(report.value(result, SH.resultMessage) or f"violates {rule}")))
    return out


def top_level_shapes(shapes: Graph) -> list[URIRef]:
    """Named node shapes (the rules), sorted by IRI."""
    return sorted((s for s in shapes.subjects(RDF.type, SH.NodeShape) if isinstance(s, URIRef)), key=str)


def _prefixes(shapes: Graph, constraint: Node) -> str:
    lines = []
    for decl_owner in shapes.objects(constraint, SH.prefixes):
        for decl in shapes.objects(decl_owner, SH.declare):
            prefix, namespace = shapes.value(decl, SH.prefix), shapes.value(decl, SH.namespace)
            if prefix is not None and namespace is not None:
                lines.append(f"PREFIX {prefix}: <{namespace}>")
    return "\n".join(lines) + "\n"


def _walk(node: object, terms: set[Node], flags: set[str], in_predicate: bool = False) -> None:
    """Collect IRIs of a SPARQL algebra tree; flag variable predicates and variable types."""
    if isinstance(node, URIRef):
        terms.add(node)
    elif isinstance(node, RdfPath):
        for attr in ("args", "path", "arg"):
            sub = getattr(node, attr, None)
            if sub is not None:
                for item in sub if isinstance(sub, list) else [sub]:
                    _walk(item, terms, flags, True)
    elif isinstance(node, dict):
        if getattr(node, "name", None) == "BGP":
            for s, p, o in node.get("triples", []):
                if isinstance(p, Variable):
                    flags.add("variable predicate")
                if isinstance(o, Variable) and (p == RDF.type or (isinstance(p, RdfPath) and _path_has_type(p))):
                    flags.add("variable type")
                for t in (s, p, o):
                    _walk(t, terms, flags)
        for value in node.values():
            _walk(value, terms, flags)
    elif isinstance(node, (list, tuple, set)):
        for item in node:
            _walk(item, terms, flags)


def _path_has_type(path: RdfPath) -> bool:
    found: set[Node] = set()
    _walk(path, found, set())
    return RDF.type in found


def _mentions(shapes: Graph, shape: URIRef) -> tuple[set[Node], set[str]]:
    terms: set[Node] = set()
    flags: set[str] = set()
    for node in shape_nodes(shapes, shape):
        for p, o in shapes.predicate_objects(node):
            if p in (SH.select, SH.ask):
                text = _prefixes(shapes, node) + str(o).replace("$this", "?this")
                try:
                    algebra = prepareQuery(text).algebra
                except Exception as exc:  # pyparsing and rdflib raise several kinds
                    raise RuleError(f"the SPARQL constraint of rule {shape.n3()} does not parse: {exc}") from exc
                _walk(algebra, terms, flags)
            elif isinstance(o, URIRef) and p not in (RDF.type, SH.prefixes, RDFS.seeAlso, RDFS.isDefinedBy):
                terms.add(o)
            if p in (SH.targetClass, SH["class"]) or (
                p == RDF.type and o not in (SH.NodeShape, SH.PropertyShape, SH.SPARQLConstraint)
            ):
                terms.add(o)
    return terms, flags


def facets_read(terms: set[Node], flags: set[str], facets: Sequence[Facet], schema: Schema) -> frozenset[str]:
    """The facets a rule's terms reach (see the module docstring)."""
    if "variable predicate" in flags:
        return frozenset(f.name for f in facets)
    out = set()
    for f in facets:
        prop = f.spec.dso_property
        if (
            prop != RDF.type
            and (prop in terms or f.spec.epo_property in terms - {EPO.hasFacet})
            or any(v in terms for v in f.unrestricted)
        ):
            out.add(f.name)
        elif prop == RDF.type:
            supers = set().union(*(schema.superclasses(v) for v in f.unrestricted)) - {f.spec.nodes.person_class}
            if "variable type" in flags or terms & supers:
                out.add(f.name)
    return frozenset(out)


def shape_rules(shapes: Graph, facets: Sequence[Facet], schema: Schema) -> list[Rule]:
    """One :class:`Rule` per top-level node shape of ``shapes``."""
    rules = []
    for shape in top_level_shapes(shapes):
        terms, flags = _mentions(shapes, shape)
        kind = ROUTING if (EPO.Probe in terms or EPO.exercises in terms) else CONSISTENCY
        message = shapes.value(shape, SH.message) or next(
            (shapes.value(c, SH.message) for c in shapes.objects(shape, SH.sparql)), None
        )
        rules.append(
            Rule(
                iri=str(shape),
                label=str(shapes.value(shape, RDFS.label) or shape),
                comment=str(shapes.value(shape, RDFS.comment) or ""),
                message=str(message or ""),
                kind=kind,
                facets=facets_read(terms, flags, facets, schema),
            )
        )
    return rules
