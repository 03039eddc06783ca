"""Scenario facets: the dimensions scenarios vary along, their value lists, and the mixed-radix index.

A DSO brings its facets: each is an ``epo:ScenarioFacet`` declaration in the DSO graph (docs/blocking.md)
naming the DSO property that carries the value (``epo:facetProperty``, ``rdf:type`` for a persona), the node
it sits on (the scenario, the asker or the person asked about), the EPO property that links the scenario to
it, and where its values come from (the instances of a DSO class in DSO + KGs, the named subclasses of a
class, or the booleans). The DSO's ontology node names its person class and the link from the asker to the
person asked about. No code names a facet or a DSO term: :func:`read_specs` reads the declarations.

Value lists are restricted by the envelope's use boundary (allowed countries and languages: the facets
whose EPO property is ``epo:country`` / ``epo:language``) and out-of-scope concepts, and sorted by IRI; a
candidate is addressed by its index in the mixed-radix enumeration of the facets (first facet most
significant), so a frame of 10^8 candidates never has to be stored: any candidate is decoded from its index.
An index depends on the value lists, so it is stable only for given inputs; a scenario's identity is its
content key (:func:`scenario_key`), the same for the same situation in every derivation.
See the methodology, section 5.2 (seeds/000), and docs/decisions.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, SKOS, XSD
from rdflib.term import Node

from ..core.errors import Unprocessable
from ..core.namespaces import EPO as EPO_NS
from ..core.rdf import local_name

EPO = Namespace(EPO_NS)
PERSON_LINK = DCTERMS.subject
"""How a scenario points at its asker (the asker's node carries the facets declared on ``epo:AskerNode``)."""

SCENARIO, ASKER, SUBJECT = "scenario", "asker", "subject"
"""The nodes a facet sits on: the scenario itself, the asker (``#person``) and the person asked about (the
asker's own node, or ``#subject`` for a carer persona, :func:`describe`)."""
PERSON = ASKER
"""The asker's node, as callers that knew one person node name it."""
NODE_OF = {EPO.ScenarioNode: SCENARIO, EPO.AskerNode: ASKER, EPO.SubjectNode: SUBJECT}
INSTANCES, SUBCLASSES, BOOLEANS = EPO.InstanceValues, EPO.SubclassValues, EPO.BooleanValues


class FacetDeclarationError(Unprocessable):
    """A DSO's facet declarations are incomplete or contradictory (the message names the declaration): 422."""


@dataclass(frozen=True)
class Nodes:
    """How a DSO's scenario nodes are typed and linked: its person class, the link from the asker to the person
    asked about (``epo:subjectLink``) and the carer link (``epo:carerLink``), whose domain's persona
    subclasses ask about a second person they look after."""

    person_class: URIRef | None = None
    subject_link: URIRef | None = None
    carer_link: URIRef | None = None


@dataclass(frozen=True)
class FacetSpec:
    """One ``epo:ScenarioFacet`` declaration: where a facet lives and where its values come from.

    ``value_kind``: :data:`INSTANCES` of ``value_class`` (in DSO + KGs), its named :data:`SUBCLASSES`, or the
    :data:`BOOLEANS`. ``per_kg``, ``via``, ``via_facet`` and ``includes_dso`` say how one knowledge graph
    restricts the values (:mod:`.space`).
    """

    name: str
    epo_property: URIRef
    node: str
    dso_property: URIRef
    value_class: URIRef | None
    value_kind: URIRef = INSTANCES
    order: int = 0
    per_kg: bool = False
    via: tuple[URIRef, ...] = ()
    via_facet: str | None = None
    includes_dso: bool = False
    nodes: Nodes = Nodes()
    iri: URIRef | None = None
    opening_position: int | None = None
    """Where the value is said in a probe's opening turn (``epo:openingPosition``; ``None``: only where a
    template names the facet as a slot, or never)."""
    opening_required: bool = False
    """A value the template set has no text for makes the scenario unsayable (``epo:openingTextRequired``),
    rather than leaving the value unsaid."""
    unless_triggered: Node | None = None
    """The value a probe has on this facet unless a criterion's trigger names the facet (``epo:valueUnlessTriggered``):
    a stated misconception is drawn for the criterion it triggers, not put into every other criterion's probes."""

    def values_from(self) -> URIRef:
        """The class the values come from, which every facet but a boolean one names (:func:`read_specs`)."""
        if self.value_class is None:
            raise FacetDeclarationError(f"the facet {self.name!r} names no epo:valuesFrom class")
        return self.value_class


SCENARIO_KEY_LENGTH = 32
"""Hex digits of a scenario key: 128 bits, so no two situations of any frame share a key."""


def read_nodes(dso: Graph) -> Nodes:
    """The person class and links stated on the DSO's ontology node (``epo:personClass``, ``epo:subjectLink``,
    ``epo:carerLink``); none when the DSO states none."""
    onto = next(dso.subjects(RDF.type, OWL.Ontology), None)
    if onto is None:
        return Nodes()
    found = [dso.value(onto, p) for p in (EPO.personClass, EPO.subjectLink, EPO.carerLink)]
    return Nodes(*(t if isinstance(t, URIRef) else None for t in found))


def read_specs(dso: Graph) -> tuple[FacetSpec, ...]:
    """The DSO's facet declarations in facet order (ties by name); :class:`FacetDeclarationError` when one
    lacks a name, a property, a node, a scenario property or (but for booleans) a value class."""
    nodes = read_nodes(dso)
    names = {d: dso.value(d, EPO.facetName) for d in dso.subjects(RDF.type, EPO.ScenarioFacet)}
    specs = [_spec(dso, decl, str(name), names, nodes) for decl, name in names.items()]
    if len({s.name for s in specs}) != len(specs):
        raise FacetDeclarationError("two facet declarations of the DSO share one epo:facetName")
    return tuple(sorted(specs, key=lambda s: (s.order, s.name)))


def _spec(dso: Graph, decl: Node, name: str, names: Mapping[Node, Node | None], nodes: Nodes) -> FacetSpec:
    """One facet declaration read; its properties, node and classes are IRIs, so a literal there counts as missing."""

    def one(prop: URIRef) -> Node | None:
        return dso.value(decl, prop)

    def iri(prop: URIRef) -> URIRef | None:
        value = dso.value(decl, prop)
        return value if isinstance(value, URIRef) else None

    kind = iri(EPO.valueKind) or INSTANCES
    epo_property, dso_property, value_class = iri(EPO.scenarioProperty), iri(EPO.facetProperty), iri(EPO.valuesFrom)
    required = (
        (EPO.facetName, one(EPO.facetName)),
        (EPO.facetProperty, dso_property),
        (EPO.facetNode, one(EPO.facetNode)),
        (EPO.scenarioProperty, epo_property),
    )
    missing = [local_name(str(p)) for p, value in required if value is None]
    if kind != BOOLEANS and value_class is None:
        missing.append("valuesFrom")
    facet_node = iri(EPO.facetNode)
    node = None if facet_node is None else NODE_OF.get(facet_node)
    if missing or epo_property is None or dso_property is None or node is None:
        raise FacetDeclarationError(
            f"the facet declaration {decl.n3()} needs epo:{', epo:'.join(missing) or 'facetNode'}"
            + ("" if missing else " among epo:ScenarioNode, epo:AskerNode, epo:SubjectNode")
        )
    via_facet, position = one(EPO.viaFacet), one(EPO.openingPosition)
    return FacetSpec(
        name=name,
        epo_property=epo_property,
        node=node,
        dso_property=dso_property,
        value_class=value_class,
        value_kind=kind,
        order=int(str(one(EPO.facetOrder) or 0)),
        per_kg=bool(one(EPO.valuesPerKnowledgeGraph)),
        via=tuple(
            sorted((v for v in dso.objects(decl, EPO.valuesPerKnowledgeGraphVia) if isinstance(v, URIRef)), key=str)
        ),
        via_facet=None if via_facet is None else str(names.get(via_facet, via_facet)),
        includes_dso=bool(one(EPO.includesDsoValues)),
        nodes=nodes,
        iri=decl if isinstance(decl, URIRef) else None,
        opening_position=None if position is None else int(str(position)),
        opening_required=bool(one(EPO.openingTextRequired)),
        unless_triggered=one(EPO.valueUnlessTriggered),
    )


@dataclass(frozen=True)
class Facet:
    """One facet with its sorted, envelope-restricted values and its unrestricted candidates.

    ``asks_about_other`` (the persona facet only): the personas whose asker asks about the person they care
    for, so that the facets designated :data:`SUBJECT` sit on a second person node (:func:`describe`).
    """

    spec: FacetSpec
    values: tuple[Node, ...]
    unrestricted: tuple[Node, ...]
    asks_about_other: frozenset[Node] = frozenset()

    @property
    def name(self) -> str:
        return self.spec.name


def _sort_key(term: Node) -> str:
    return str(term)


class Schema:
    """Lookups over DSO + KGs (asserted): instances, types, superclasses and broader concepts."""

    def __init__(self, dso: Graph, kgs: Sequence[Graph]) -> None:
        self.dso = dso
        self.graph = Graph()
        for g in (dso, *kgs):
            self.graph += g
        self._supers: dict[Node, frozenset[Node]] = {}

    def superclasses(self, cls: Node) -> frozenset[Node]:
        """``cls`` and its asserted rdfs:subClassOf ancestors (named ones)."""
        if cls not in self._supers:
            seen = {cls}
            todo = [cls]
            while todo:
                for sup in self.graph.objects(todo.pop(), RDFS.subClassOf):
                    if isinstance(sup, URIRef) and sup not in seen:
                        seen.add(sup)
                        todo.append(sup)
            self._supers[cls] = frozenset(seen)
        return self._supers[cls]

    def subclasses(self, cls: Node) -> set[Node]:
        """``cls`` and its asserted named descendants."""
        seen = {cls}
        todo = [cls]
        while todo:
            for sub in self.graph.subjects(RDFS.subClassOf, todo.pop()):
                if isinstance(sub, URIRef) and sub not in seen:
                    seen.add(sub)
                    todo.append(sub)
        return seen

    def types(self, node: Node) -> set[Node]:
        """Asserted types of ``node`` with their superclasses."""
        out: set[Node] = set()
        for t in self.graph.objects(node, RDF.type):
            out |= self.superclasses(t)
        return out

    def broader(self, node: Node) -> set[Node]:
        """``node`` and its skos:broader ancestors."""
        seen = {node}
        todo = [node]
        while todo:
            for b in self.graph.objects(todo.pop(), SKOS.broader):
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen

    def instances(self, cls: Node) -> set[Node]:
        return {s for c in self.subclasses(cls) for s in self.graph.subjects(RDF.type, c) if isinstance(s, URIRef)}

    def matches(self, value: Node, concept: Node) -> bool:
        """A criterion or envelope concept covers a value: the value itself, a class the value is typed by
        (or, for persona classes, a superclass of it), or a broader concept (``ve:PublicTransportSetting``
        covers a KG's local minibus ride)."""
        if value == concept:
            return True
        if isinstance(value, Literal):
            return False
        return concept in self.types(value) or concept in self.superclasses(value) or concept in self.broader(value)


def build_facets(
    schema: Schema,
    allowed_countries: frozenset[str] | None = None,
    allowed_languages: frozenset[str] | None = None,
    excluded: frozenset[str] = frozenset(),
) -> tuple[Facet, ...]:
    """The facets the DSO declares (:func:`read_specs`), value lists sorted by IRI and restricted by the
    envelope: out-of-scope concepts, and the allowed countries and languages on the facets whose EPO
    property is ``epo:country`` and ``epo:language``. A facet with no value at all is left out rather than
    given an empty list, so it does not empty the frame (a DSO without conversation styles)."""
    facets = []
    excluded_terms = {URIRef(e) for e in excluded}
    allowed = {EPO.country: allowed_countries, EPO.language: allowed_languages}
    for spec in read_specs(schema.dso):
        if spec.value_kind == BOOLEANS:
            candidates: set[Node] = {Literal(False), Literal(True)}
        elif spec.value_kind == SUBCLASSES:
            candidates = schema.subclasses(spec.values_from()) - {spec.values_from()}
        else:
            candidates = schema.instances(spec.values_from())
        if not candidates:
            continue
        unrestricted = tuple(sorted(candidates, key=_sort_key))
        values = [v for v in unrestricted if not any(schema.matches(v, e) for e in excluded_terms)]
        boundary = allowed.get(spec.epo_property)
        if boundary is not None:
            values = [v for v in values if str(v) in boundary]
        carers = frozenset(v for v in unrestricted if spec.value_kind == SUBCLASSES and asks_about_other(schema, v))
        facets.append(Facet(spec, tuple(values), unrestricted, carers))
    return tuple(facets)


def asks_about_other(schema: Schema, persona: Node) -> bool:
    """Whether the DSO makes ``persona`` a carer (a subclass of the domain of its carer link, ``epo:carerLink``):
    someone asking in that role asks about the person they look after, not about themself."""
    link = read_nodes(schema.dso).carer_link
    return link is not None and bool(set(schema.graph.objects(link, RDFS.domain)) & schema.superclasses(persona))


class Situation(dict[str, Node]):
    """Facet name -> value of one candidate, with the facets it is over (what :func:`scenario_key` reads)."""

    def __init__(self, facets: Sequence[Facet], values: Mapping[str, Node]) -> None:
        super().__init__(values)
        self.facets = tuple(facets)


def scenario_key(values: Mapping[str, Node], facets: Sequence[Facet] | None = None) -> str:
    """A scenario's identity: SHA-256 over its facet values, the first :data:`SCENARIO_KEY_LENGTH` hex digits.

    Each value is one line ``<facet's DSO property> <value in N-Triples>`` (``rdf:type`` for the persona);
    the lines are sorted and joined with newlines. Only the situation enters it, never the value lists or
    the index, so a knowledge graph edit that renumbers the frame leaves every key as it was. ``facets``
    defaults to those of a :class:`Situation`.
    """
    over = facets if facets is not None else getattr(values, "facets", None)
    if over is None:
        raise TypeError("scenario_key needs the facets the values are over (a Situation, or facets=)")
    prop = {f.name: f.spec.dso_property for f in over}
    lines = sorted(f"<{prop[name]}> {value.n3()}" for name, value in values.items())
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:SCENARIO_KEY_LENGTH]


def person_iri(scenario: str) -> URIRef:
    """The asker's node."""
    return URIRef(scenario + "#person")


def subject_iri(scenario: str) -> URIRef:
    """The node of the person asked about when that is not the asker (a carer's child or dependant)."""
    return URIRef(scenario + "#subject")


def describe(scenario: str, facets: Sequence[Facet], values: Mapping[str, Node]) -> list[tuple[Node, Node, Node]]:
    """The RDF of one scenario: the scenario node (``epo:Scenario``, its EPO facet properties and the facets
    on :data:`SCENARIO`), the asker's node (typed by the DSO's person class and by the persona) and the node
    of the person asked about, as the DSO's declarations place them (:class:`Nodes`).

    A persona that asks for themself asks about their own node (the subject link to itself), which then
    carries the facets designated :data:`SUBJECT` too; a carer persona (:attr:`Facet.asks_about_other`) asks
    about a second node, ``#subject``, which they are the carer of (the carer link) and which carries those
    facets. The scenario points at each person node with :data:`PERSON_LINK`. ``values`` may leave facets
    out (the fast path describes partial scenarios that way; without the persona, the asker asks about
    themself).
    """
    s = URIRef(scenario)
    asker = person_iri(scenario)
    by_name = {f.name: f for f in facets}
    nodes_model = facets[0].spec.nodes if facets else Nodes()
    carer = any(v in by_name[n].asks_about_other for n, v in values.items())
    subject = subject_iri(scenario) if carer else asker
    out: list[tuple[Node, Node, Node]] = [(s, RDF.type, EPO.Scenario), (s, PERSON_LINK, asker)]
    people = [asker, subject] if carer else [asker]
    if nodes_model.person_class is not None:
        out += [(p, RDF.type, nodes_model.person_class) for p in people]
    if nodes_model.subject_link is not None:
        out.append((asker, nodes_model.subject_link, subject))
    if carer:
        out.append((s, PERSON_LINK, subject))
        if nodes_model.carer_link is not None:
            out.append((asker, nodes_model.carer_link, subject))
    nodes = {ASKER: asker, SUBJECT: subject, SCENARIO: s}
    for name, value in values.items():
        spec = by_name[name].spec
        out.append((nodes[spec.node], spec.dso_property, value))
        if spec.epo_property != spec.dso_property and not isinstance(value, Literal):
            out.append((s, spec.epo_property, value))
    return out


def boolean(value: bool) -> Literal:
    return Literal(value, datatype=XSD.boolean)


def sorted_unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(items)))
