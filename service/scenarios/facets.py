"""Scenario facets: the dimensions scenarios vary along, their value lists, and the mixed-radix index.

A facet is a property on the scenario's person node (``ve:hasAgeGroup``, ``rdf:type`` for the persona, ...)
or on the scenario node itself (``ve:about`` for the disease asked about), with a value list taken from the
DSO and the knowledge graphs (the instances of the property's DSO class) and restricted by the envelope's use
boundary (allowed countries and languages) and out-of-scope concepts. Value lists are sorted by IRI, and a
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
from rdflib.namespace import DCTERMS, RDF, RDFS, SKOS, XSD
from rdflib.term import Node

from ..core.namespaces import DSO_VACCINE, EPO as EPO_NS

VE = Namespace(DSO_VACCINE)
EPO = Namespace(EPO_NS)
PERSON_LINK = DCTERMS.subject
"""How a scenario points at the person it describes (the person node carries the DSO's person properties)."""

PERSON, SCENARIO = "person", "scenario"


@dataclass(frozen=True)
class FacetSpec:
    """Where a facet lives and where its values come from.

    ``value_class`` is the DSO class whose instances (in DSO + KGs) are the values; ``"persona"`` means the
    named subclasses of ``ve:Persona`` (the persona is the person's ``rdf:type``); ``"boolean"`` means
    ``false`` and ``true``.
    """

    name: str
    epo_property: URIRef
    node: str
    dso_property: URIRef
    value_class: URIRef | str


FACET_SPECS: tuple[FacetSpec, ...] = (
    FacetSpec("persona", EPO.persona, PERSON, RDF.type, "persona"),
    FacetSpec("age", EPO.personState, PERSON, VE.hasAgeGroup, VE.AgeGroup),
    FacetSpec("vaccination", EPO.personState, PERSON, VE.hasVaccinationStatus, VE.VaccinationStatus),
    FacetSpec("infection", EPO.personState, PERSON, VE.hasInfectionHistory, VE.InfectionHistory),
    FacetSpec("immunity", EPO.personState, PERSON, VE.hasImmunityStatus, VE.ImmunityStatus),
    FacetSpec("pregnancy", EPO.personState, PERSON, VE.isPregnant, "boolean"),
    FacetSpec("setting", EPO.setting, PERSON, VE.inSetting, VE.TransmissionSetting),
    FacetSpec("country", EPO.country, PERSON, VE.livesIn, VE.Country),
    FacetSpec("language", EPO.language, PERSON, VE.speaksLanguage, VE.Language),
    FacetSpec("need", EPO.informationNeed, PERSON, VE.hasInformationNeed, VE.InformationNeed),
    FacetSpec("disease", EPO.hasFacet, SCENARIO, VE.about, VE.Disease),
    FacetSpec("style", EPO.conversationStyle, SCENARIO, EPO.conversationStyle, VE.ConversationStyle),
)
"""Facet order = significance in the index. A facet whose class has no instances (the DSO 0.1.0 has no
conversation styles) is left out rather than given an empty list, so it does not empty the frame."""

SPEC_BY_NAME = {spec.name: spec for spec in FACET_SPECS}
SCENARIO_KEY_LENGTH = 32
"""Hex digits of a scenario key: 128 bits, so no two situations of any frame share a key."""


@dataclass(frozen=True)
class Facet:
    """One facet with its sorted, envelope-restricted values and its unrestricted candidates."""

    spec: FacetSpec
    values: tuple[Node, ...]
    unrestricted: tuple[Node, ...]

    @property
    def name(self) -> str:
        return self.spec.name


def _sort_key(term: Node) -> str:
    return str(term)


class Schema:
    """Lookups over DSO + KGs (asserted): instances, types, superclasses and broader concepts."""

    def __init__(self, dso: Graph, kgs: Sequence[Graph]) -> None:
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


def build_facets(schema: Schema, allowed_countries: frozenset[str] | None = None,
                 allowed_languages: frozenset[str] | None = None,
                 excluded: frozenset[str] = frozenset()) -> tuple[Facet, ...]:
    """The facets of a derivation, value lists sorted by IRI and restricted by the envelope."""
    facets = []
    excluded_terms = {URIRef(e) for e in excluded}
    for spec in FACET_SPECS:
        if spec.value_class == "persona":
            candidates: set[Node] = schema.subclasses(VE.Persona) - {VE.Persona}
        elif spec.value_class == "boolean":
            candidates = {Literal(False), Literal(True)}
        else:
            candidates = schema.instances(spec.value_class)
        if not candidates:
            continue
        unrestricted = tuple(sorted(candidates, key=_sort_key))
        values = [v for v in unrestricted if not any(schema.matches(v, e) for e in excluded_terms)]
        if spec.name == "country" and allowed_countries is not None:
            values = [v for v in values if str(v) in allowed_countries]
        if spec.name == "language" and allowed_languages is not None:
            values = [v for v in values if str(v) in allowed_languages]
        facets.append(Facet(spec, tuple(values), unrestricted))
    return tuple(facets)


class FacetSpace:
    """The mixed-radix enumeration of the facets' value lists: index <-> combination (value positions)."""

    def __init__(self, facets: Sequence[Facet]) -> None:
        self.facets = tuple(facets)
        self.names = tuple(f.name for f in self.facets)
        self.radices = tuple(len(f.values) for f in self.facets)
        self.position = {name: i for i, name in enumerate(self.names)}
        size = 1
        for r in self.radices:
            size *= r
        self.size = size

    def digits(self, index: int) -> tuple[int, ...]:
        """Value positions of candidate ``index`` (first facet most significant)."""
        if not 0 <= index < self.size:
            raise IndexError(f"scenario index {index} outside the frame of {self.size}")
        out = [0] * len(self.radices)
        for i in range(len(self.radices) - 1, -1, -1):
            index, out[i] = divmod(index, self.radices[i])
        return tuple(out)

    def index(self, digits: Sequence[int]) -> int:
        index = 0
        for d, r in zip(digits, self.radices):
            index = index * r + d
        return index

    def values(self, index: int) -> dict[str, Node]:
        """Facet name -> value of candidate ``index``."""
        return {f.name: f.values[d] for f, d in zip(self.facets, self.digits(index))}

    def locate(self, values: Mapping[str, Node]) -> int | None:
        """The index of the candidate with exactly these facet values; ``None`` when it is not in this frame
        (a facet missing or extra, or a value the envelope or the inputs no longer allow)."""
        if set(values) != set(self.names):
            return None
        digits = []
        for facet in self.facets:
            if values[facet.name] not in facet.values:
                return None
            digits.append(facet.values.index(values[facet.name]))
        return self.index(digits)


def scenario_key(values: Mapping[str, Node]) -> str:
    """A scenario's identity: SHA-256 over its facet values, the first :data:`SCENARIO_KEY_LENGTH` hex digits.

    Each value is one line ``<facet's DSO property> <value in N-Triples>`` (``rdf:type`` for the persona);
    the lines are sorted and joined with newlines. Only the situation enters it, never the value lists or
    the index, so a knowledge graph edit that renumbers the frame leaves every key as it was.
    """
    lines = sorted(f"<{SPEC_BY_NAME[name].dso_property}> {value.n3()}" for name, value in values.items())
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:SCENARIO_KEY_LENGTH]


def person_iri(scenario: str) -> URIRef:
    return URIRef(scenario + "#person")


def describe(scenario: str, facets: Sequence[Facet], values: Mapping[str, Node]) -> list[tuple[Node, Node, Node]]:
    """The RDF of one scenario: the scenario node (``epo:Scenario``, its EPO facet properties, the disease
    asked about) and its person node (``ve:Person``, typed by the persona, with the DSO's person properties).

    ``values`` may leave facets out (the fast path describes partial scenarios that way).
    """
    s = URIRef(scenario)
    p = person_iri(scenario)
    out: list[tuple[Node, Node, Node]] = [(s, RDF.type, EPO.Scenario), (s, PERSON_LINK, p), (p, RDF.type, VE.Person)]
    by_name = {f.name: f for f in facets}
    for name, value in values.items():
        spec = by_name[name].spec
        node = p if spec.node == PERSON else s
        out.append((node, spec.dso_property, value))
        if spec.epo_property != spec.dso_property and not isinstance(value, Literal):
            out.append((s, spec.epo_property, value))
    return out


def boolean(value: bool) -> Literal:
    return Literal(value, datatype=XSD.boolean)


def sorted_unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(items)))
