"""Check knowledge graphs against their DSO, and evaluation records against the record shapes.

Two complementary checks run on a knowledge graph (KG):

* SHACL, closed-world, over the asserted union KG + DSO (`SHACL`_ sections 2-5, SHACL-SPARQL section 5):
  ``shapes/kg-dso.ttl`` (generic: declared classes and properties, domain, range, functional properties,
  disjointness, enumeration membership) and the shapes the KG's DSO declares (:mod:`.kg_shapes`). KG
  nodes are marked with ``void:inDataset`` so that the shapes target them and never the DSO's own terms (see
  the header of ``shapes/kg-dso.ttl``).
* OWL 2 RL, open-world, over the closure of KG + DSO computed by owlrl (`OWL 2 RL`_ rules, section 4.3):
  inconsistencies (rule ``cls-nothing2`` via ``owl:Nothing`` memberships, a DSO's blocking classes,
  ``cax-dw``/``cax-adc`` for disjoint classes, ``eq-diff1``/``eq-diff2`` for functional properties that force
  two different individuals to be the same) become :class:`Violation` objects naming the axiom.

The SHACL pass deliberately does not run on the closure: under OWL semantics ``rdfs:domain`` and
``rdfs:range`` are inference rules, so on the closure every domain/range check would hold by construction.

The report's reading (its results as :class:`Violation` values, the OWL 2 RL ones added) is :mod:`.validation_report`.

.. _SHACL: https://www.w3.org/TR/shacl/
.. _OWL 2 RL: https://www.w3.org/TR/owl2-profiles/#Reasoning_in_OWL_2_RL_and_RDF_Graphs_using_Rules
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import owlrl
import pyoxigraph as ox
import pyshacl
from pyshacl import graph_abstraction as pyshacl_graphs
from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, SKOS, XSD
from rdflib.term import Node

from . import (
    memo,
    pyshacl_checks,  # noqa: F401  # pySHACL checks each SPARQL constraint's text once
    rdflib_terms,  # noqa: F401  # owlrl's and pySHACL's term lookups as plain attributes
)
from .digest import graph_digest
from .namespaces import SHAPES, VOID
from .store.base import solution_row
from .validation_report import (
    OWLRL_SHAPE,
    ValidationOutcome,
    Violation,
    add_to_report,
    finish,
    n3,
    prune_report,
    results,
)

SHAPES_DIR = Path(__file__).resolve().parents[2] / "shapes"
VOIDNS = Namespace(VOID)
KG_MARK = URIRef(SHAPES + "validated-kg")
"""The dataset IRI the ``void:inDataset`` markers point at (an internal name, never published)."""


def closure_graph() -> Graph:
    """An empty graph for owlrl to close: on rdflib's context-free store. owlrl reads and writes one graph, and
    rdflib's default store bookkeeps each triple's contexts at every read and write: a third of a closure's time."""
    return Graph(store="SimpleMemory")


def load_shapes(*paths_or_graphs: str | Path | Graph) -> Graph:
    """Union of shapes graphs, given as Turtle (or other rdflib-guessable) files or as rdflib graphs."""
    shapes = Graph()
    for item in paths_or_graphs:
        shapes += item if isinstance(item, Graph) else Graph().parse(str(item))
    return shapes


def default_record_shapes() -> Graph:
    """The repository's evaluation-record shapes: ``shapes/record.ttl``."""
    return load_shapes(SHAPES_DIR / "record.ttl")


def ox_term(term: Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    """rdflib term to pyoxigraph term, keeping blank-node ids so report focus nodes match the input."""
    if isinstance(term, Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype or XSD.string)))
    return ox.BlankNode(str(term)) if isinstance(term, BNode) else ox.NamedNode(str(term))


def _ox_statement(
    s: Node, p: Node, o: Node
) -> tuple[ox.NamedNode | ox.BlankNode, ox.NamedNode, ox.NamedNode | ox.BlankNode | ox.Literal]:
    """An rdflib triple's terms as pyoxigraph's; a literal subject or a predicate that is not an IRI is refused
    (TypeError), as pyoxigraph refuses it."""
    subject, predicate = ox_term(s), ox_term(p)
    if isinstance(subject, ox.Literal) or not isinstance(predicate, ox.NamedNode):
        raise TypeError(f"not an RDF triple: {s.n3()} {p.n3()} {o.n3()}")
    return subject, predicate, ox_term(o)


def ox_quads(triples: Iterable[tuple[Node, Node, Node]]) -> list[ox.Quad]:
    """``triples`` as pyoxigraph quads in the default graph: converted once where many runs load them."""
    return [ox.Quad(*_ox_statement(s, p, o), ox.DefaultGraph()) for s, p, o in triples]


def ox_store(triples: Iterable[tuple[Node, Node, Node]], base: Sequence[ox.Quad] = ()) -> ox.Store:
    """An in-memory pyoxigraph store holding ``triples`` and the quads ``base`` (:func:`ox_quads`) in its default
    graph."""
    store = ox.Store()
    store.extend(base)
    store.extend(ox.Quad(*_ox_statement(s, p, o), ox.DefaultGraph()) for s, p, o in triples)
    return store


def rdflib_term(term: ox.NamedNode | ox.BlankNode | ox.Literal) -> Node:
    """pyoxigraph term to rdflib term (the inverse of :func:`ox_term`)."""
    if isinstance(term, ox.Literal):
        if term.language:
            return Literal(term.value, lang=term.language)
        return Literal(term.value, datatype=URIRef(term.datatype.value))
    return BNode(term.value) if isinstance(term, ox.BlankNode) else URIRef(term.value)


class _StoreGraph(pyshacl_graphs.OxigraphDataGraph):  # pyshacl defines it when pyoxigraph is installed, as here
    """pySHACL's own adapter over a pyoxigraph store, which knows whether the store is empty.

    pySHACL writes each result's description with ``stringify_node(datagraph or shapes, ...)``: the
    truth test falls back to ``len()``, which on its Oxigraph adapter is a COUNT over the whole store, once
    per result. Whether the store is empty is found once here instead: a third of the compile time of the
    scenario tables went into those counts (docs/performance.md).
    """

    def __init__(self, store: ox.Store) -> None:
        super().__init__(store)
        self._has_data = next(iter(store.quads_for_pattern(None, None, None)), None) is not None

    def __bool__(self) -> bool:
        return self._has_data


def run_pyshacl(
    triples: Iterable[tuple[Node, Node, Node]],
    shapes: Graph,
    use_shapes: Iterable[str] | None = None,
    base: Sequence[ox.Quad] = (),
) -> Graph:
    """Run pySHACL (SHACL core + SHACL-SPARQL, no inference) over ``triples`` and return the report graph.

    The data is copied into an in-memory pyoxigraph store first: pySHACL then evaluates the SHACL-SPARQL
    constraints with Oxigraph's engine, about 40 times faster than rdflib's on these shapes (same results;
    measured on the four country KGs). ``use_shapes`` limits the run to those shapes (pySHACL's option);
    ``base`` is more data, already converted (:func:`ox_quads`).
    """
    store = ox_store(triples, base)
    own_shapes = Graph()  # pySHACL adds RDFS/OWL axioms to the shapes graph it is given: the caller's stays as it was
    own_shapes += shapes
    _conforms, report, _text = pyshacl.validate(
        _StoreGraph(store),
        shacl_graph=own_shapes,
        inference="none",
        advanced=True,
        allow_warnings=True,
        inplace=True,
        use_shapes=list[str | URIRef](use_shapes) if use_shapes else None,
    )
    if not isinstance(report, Graph):  # pySHACL returns a ValidationFailure for broken shapes
        raise ValueError(f"SHACL validation could not run: {report}")  # noqa: TRY004  # broken shapes, not a wrong call
    return report


_INCONSISTENCY_QUERY = """
PREFIX owl: <http://www.w3.org/2002/07/owl#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
SELECT DISTINCT ?x ?axiom ?rule ?a ?b WHERE {
  {
    ?a owl:disjointWith ?b . ?x a ?a , ?b . BIND("cax-dw" AS ?rule) BIND(?a AS ?axiom)
  } UNION {
    ?axiom a owl:AllDisjointClasses ; owl:members ?l . ?l rdf:rest*/rdf:first ?a . ?l rdf:rest*/rdf:first ?b .
    FILTER(STR(?a) < STR(?b)) ?x a ?a , ?b . BIND("cax-adc" AS ?rule)
  } UNION {
    ?axiom a owl:AllDifferent ; (owl:distinctMembers|owl:members) ?l .
    ?l rdf:rest*/rdf:first ?a . ?l rdf:rest*/rdf:first ?b . FILTER(STR(?a) < STR(?b)) ?a owl:sameAs ?b .
    ?x ?p ?a , ?b . ?p a owl:FunctionalProperty . BIND("eq-diff2" AS ?rule)
  } UNION {
    ?a owl:differentFrom ?b ; owl:sameAs ?b . ?x ?p ?a , ?b . ?p a owl:FunctionalProperty .
    BIND("eq-diff1" AS ?rule) BIND(?p AS ?axiom)
  } UNION {
    # eq-diff1 with eq-ref: the closure leaves the reflexive owl:sameAs out (_WithoutReflexiveSameAs)
    ?a owl:differentFrom ?a . ?x ?p ?a . ?p a owl:FunctionalProperty .
    BIND(?a AS ?b) BIND("eq-diff1" AS ?rule) BIND(?p AS ?axiom)
  }
}
"""
_INCONSISTENCY_VARIABLES = ("x", "axiom", "rule", "a", "b")

_RULE_TEXT = {
    "cls-nothing2": "is classified into {a}, which the DSO makes a subclass of owl:Nothing (an inconsistent combination)",
    "cax-dw": "is an instance of {a} and {b}, declared disjoint (owl:disjointWith)",
    "cax-adc": "is an instance of {a} and {b}, declared pairwise disjoint (owl:AllDisjointClasses)",
    "eq-diff2": "forces {a} and {b}, declared different (owl:AllDifferent), to be the same through a functional property",
    "eq-diff1": "forces {a} and {b}, declared different (owl:differentFrom), to be the same through a functional property",
}
_TO_NOTHING = (RDFS.subClassOf, OWL.equivalentClass)


_ANNOTATIONS = tuple(
    str(t)
    for t in (
        RDFS.label,
        RDFS.comment,
        RDFS.isDefinedBy,
        RDFS.seeAlso,
        OWL.versionInfo,
        SKOS.prefLabel,
        SKOS.altLabel,
        SKOS.definition,
        SKOS.note,
        DCTERMS,
    )
)


def is_annotation(predicate: Node) -> bool:
    """Annotations (labels, comments, Dublin Core) take no part in OWL 2 RL reasoning: leave them out."""
    return str(predicate).startswith(_ANNOTATIONS)


def _ancestors(dso: Graph, cls: Node) -> set[Node]:
    """Asserted rdfs:subClassOf / owl:equivalentClass ancestors of ``cls`` (transitive, excluding itself)."""
    seen: set[Node] = set()
    todo = [cls]
    while todo:
        current = todo.pop()
        for pred in _TO_NOTHING:
            for sup in dso.objects(current, pred):
                if sup not in seen and sup != cls:
                    seen.add(sup)
                    todo.append(sup)
    return seen


def _violation(x: Node, rule: str, a: Node | None, b: Node | None, axiom: Node | None) -> Violation:
    what = _RULE_TEXT[rule].format(a=n3(a), b=n3(b))
    message = f"OWL 2 RL inconsistency ({rule}): {x.n3()} {what}; axiom {n3(axiom)}"
    return Violation(n3(x) or "", None, n3(a), message, "Violation", OWLRL_SHAPE.n3(), f"owl-rl:{rule}")


class _WithoutReflexiveSameAs(owlrl.OWLRL_Semantics):  # type: ignore[misc]  # owlrl ships no types: its class is Any
    """owlrl's OWL 2 RL rules, keeping no reflexive ``x owl:sameAs x`` (rule eq-ref and its echoes).

    Such a triple entails nothing else: fed to eq-sym, eq-trans or eq-rep-* it gives back triples already
    there, and no other rule reads ``owl:sameAs``. But eq-ref makes one for every term of the graph, and owlrl
    applies every rule to every triple of each cycle, so they cost a third of a KG's closure. The one check
    that read them, a node declared different from itself (eq-diff1), is in the clash query instead.
    """

    def store_triple(self, t: tuple[Node, Node, Node]) -> None:
        if t[1] == OWL.sameAs and t[0] == t[2]:
            return
        super().store_triple(t)


def owl_rl_inconsistencies(kg: Graph, dso: Graph, kg_nodes: set[Node]) -> list[Violation]:
    """OWL 2 RL closure of KG + DSO (owlrl) and the inconsistencies it shows on KG nodes.

    Classes the DSO makes subclasses of ``owl:Nothing`` (the blocking rules, such as ``ve:ImmuneWithoutCause``)
    are cut loose from ``owl:Nothing`` before the closure and checked after it (rule ``cls-nothing2``): under
    OWL 2 RL a member of ``owl:Nothing`` becomes a member of every class, which would hide which rule fired.
    The other clashes are found by SPARQL on the closure rather than from owlrl's error messages, because
    owlrl's ``eq-diff2`` check skips the last member of an ``owl:AllDifferent`` list and its messages do not
    name the KG node at fault. Remaining owlrl messages (an ill-typed literal, say) are passed on as they are.
    """
    unsatisfiable = {
        c
        for c in set(dso.subjects(RDFS.subClassOf, None)) | set(dso.subjects(OWL.equivalentClass, None))
        if isinstance(c, URIRef) and OWL.Nothing in _ancestors(dso, c)
    }
    closure = closure_graph()
    for graph in (dso, kg):
        closure += (
            (s, p, o) for s, p, o in graph if not is_annotation(p) and not (p in _TO_NOTHING and o == OWL.Nothing)
        )
    reasoner = owlrl.DeductiveClosure(_WithoutReflexiveSameAs, axiomatic_triples=False, datatype_axioms=False)
    reasoner.expand(closure)
    found: dict[tuple[str, str], Violation] = {}
    for x in kg_nodes:
        blocked = {c for c in closure.objects(x, RDF.type) if c in unsatisfiable}
        specific = {c for c in blocked if not any(c in _ancestors(dso, d) for d in blocked if d != c)}
        if (x, RDF.type, OWL.Nothing) in closure:
            specific.add(OWL.Nothing)
        for cls in specific:
            v = _violation(x, "cls-nothing2", cls, None, cls)
            found.setdefault((v.focus_node, v.message), v)
    # Oxigraph's engine answers this query on the closure in milliseconds; rdflib's took a fifth of a validation.
    # owlrl's generalized triples (a literal subject) are left out: no pattern of the query can match them.
    reasoned = ox_store(t for t in closure if not isinstance(t[0], Literal) and isinstance(t[1], URIRef))
    solutions = reasoned.query(_INCONSISTENCY_QUERY)
    if not isinstance(solutions, ox.QuerySolutions):
        raise TypeError("the inconsistency query is a SELECT query")
    for solution in solutions:
        row = solution_row(solution, _INCONSISTENCY_VARIABLES)
        node, axiom, rule, a, b = (rdflib_term(row[name]) if name in row else None for name in _INCONSISTENCY_VARIABLES)
        if node is not None and node in kg_nodes:
            v = _violation(node, str(rule), a, b, axiom)
            found.setdefault((v.focus_node, v.message), v)
    for message in closure.objects(None, URIRef("http://www.daml.org/2002/03/agents/agent-ont#error")):
        text = str(message)
        if text.startswith(("Disjoint classes", "'sameAs' and")) or "of type 'Nothing'" in text:
            continue  # found above, with the KG node named
        focus: Node | None = next((n for n in kg_nodes if isinstance(n, URIRef) and str(n) in text), None)
        if focus is None and text.startswith("Lexical value"):
            focus = next((s for s, _p, o in kg if isinstance(o, Literal) and o.ill_typed and str(o) in text), None)
        if focus is not None:
            v = Violation(
                n3(focus) or "", None, None, f"OWL 2 RL: {text}", "Violation", OWLRL_SHAPE.n3(), "owl-rl:error"
            )
            found.setdefault((v.focus_node, v.message), v)
    return sorted(found.values(), key=lambda v: (v.focus_node, v.message))


def kg_nodes_of(kg: Graph, dso: Graph) -> set[Node]:
    """The KG's own nodes: its subjects and non-class objects that the DSO does not describe."""
    dso_subjects = set(dso.subjects())
    nodes: set[Node] = set(kg.subjects())
    nodes.update(o for p, o in kg.predicate_objects() if p != RDF.type and not isinstance(o, Literal))
    return {n for n in nodes if n not in dso_subjects}


def content_digest(graph: Graph) -> str:
    """The RDFC-1.0 content digest of an rdflib graph (the one the catalog records for stored graphs)."""
    return graph_digest(ox.Triple(*_ox_statement(s, p, o)) for s, p, o in graph)


_SOURCES = memo.source_version(Path(__file__), Path(__file__).with_name("validation_report.py"))
_VALIDATION_VERSION = f"{_SOURCES}-owlrl{owlrl.__version__}-pyshacl{pyshacl.__version__}"
"""What else a KG's outcome depends on: this module's and :mod:`.validation_report`'s code, the reasoners' versions."""


def validate_kg(kg: Graph, dso: Graph, shapes: Graph) -> ValidationOutcome:
    """OWL-RL closure over DSO+KG (owlrl), then pySHACL with the given shapes; violations on KG focus nodes only.

    SHACL runs on the asserted union (marked as described in ``shapes/kg-dso.ttl``), the closure is computed
    separately and its inconsistencies are appended to the report. Neither input graph is modified.

    The outcome depends only on the three graphs' content and the code, so it is kept by their digests
    (:func:`service.core.memo.kept`): a KG loaded again against the same DSO, by this process or another
    sharing the cache directory, is not reasoned over again.
    """
    key = hashlib.sha256(
        "\0".join([content_digest(kg), content_digest(dso), content_digest(shapes), _VALIDATION_VERSION]).encode()
    ).hexdigest()
    return memo.kept("kg-validation", key, lambda: _validate_kg(kg, dso, shapes), ValidationOutcome)


def _validate_kg(kg: Graph, dso: Graph, shapes: Graph) -> ValidationOutcome:
    kg_nodes = kg_nodes_of(kg, dso)
    data = dso + kg
    data += ((node, VOIDNS.inDataset, KG_MARK) for node in kg_nodes)
    report = run_pyshacl(data, shapes)
    prune_report(report, kg_nodes)
    violations = results(report, kg_nodes)
    reasoned = owl_rl_inconsistencies(kg, dso, kg_nodes)
    add_to_report(report, reasoned, kg_nodes)
    return finish(report, violations + reasoned)


def validate_record(record: Graph, shapes: Graph) -> ValidationOutcome:
    """Validate an evaluation record with the given shapes (pySHACL, SHACL-SPARQL enabled, no inference)."""
    report = run_pyshacl(record, shapes)
    return finish(report, results(report))
