"""Ontology documentation: what the index page of an ontology, DSO or knowledge graph and the page of a
term show, and the deployment's VoID and DCAT descriptions.

Every read is a published query (``queries/ontology-*.rq``, ``term-*.rq``, ``class-properties.rq``,
``void-subsets.rq``, ``dcat-catalog.rq``) with its parameters bound by VALUES. Lists that can grow with
the data are pages with their totals (no silent cut-off); the rest is bounded by an ontology's own size.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Triple

from ..core.catalog import Catalog, CatalogEntry, GraphKind
from ..core.errors import BadRequest, NotFound
from ..core.graphs import GraphService
from ..core.namespaces import DCTERMS, OWL, RDF, RDFS, VOID, XSD
from ..core.store import Row
from ..core.store.base import iri_term, subject_term
from ..scenarios.model import Page

DOCUMENTED = (GraphKind.ONTOLOGY, GraphKind.DSO, GraphKind.KG)
"""The graph kinds that have an index page."""

CATEGORIES = {"classes": OWL + "Class", "properties": RDF + "Property", "individuals": OWL + "NamedIndividual"}
"""An index page's lists, by the name its paging parameter uses, and the category ontology-terms.rq gives."""

INDEX_PAGE_SIZE = 50
TERM_PAGE_SIZE = 25
MAX_PAGE = 10_000


@dataclass(frozen=True)
class Link:
    """An IRI to link to, with the label to show (``None``: the page shows the IRI, compacted)."""

    iri: str
    label: str | None = None


@dataclass(frozen=True)
class TermRow:
    """A term on an index page; ``described``: the documented graph has statements about it."""

    term: Link
    definition: str | None
    described: bool


@dataclass(frozen=True)
class ClassNode:
    """A class in the hierarchy diagram and its direct superclasses among the graph's classes."""

    term: Link
    supers: tuple[str, ...]


@dataclass(frozen=True)
class Metadata:
    """What a documented graph says about itself (its owl:Ontology or dcat:Dataset) and its catalog record."""

    subject: str | None
    title: str
    version: str | None
    license: str | None
    source: str | None
    description: str | None
    created: str | None
    modified: str | None
    conforms_to: str | None
    entry: CatalogEntry


@dataclass(frozen=True)
class OntologyIndex:
    """The index page of one ontology, DSO or knowledge graph."""

    metadata: Metadata
    lists: dict[str, Page[TermRow]]
    """Each of :data:`CATEGORIES`, one page of it (the one asked for, else the first)."""
    hierarchy: tuple[ClassNode, ...]


@dataclass(frozen=True)
class DomainProperty:
    """A property whose domain is a class, with one of its ranges."""

    property: Link
    range: Link | None


@dataclass(frozen=True)
class Incoming:
    """What links to a term through one predicate: one page of the linking resources, and their total."""

    predicate: Link
    page: Page[Link]


@dataclass(frozen=True)
class Usage:
    """How a graph uses a term: statements about it, instances, statements with it as predicate, shape constraints."""

    graph: str
    descriptions: int
    instances: int
    statements: int
    constraints: int


@dataclass(frozen=True)
class TermDoc:
    """What a term page shows beyond the term's own statements."""

    labels: dict[str, str]
    """Labels of the IRIs the term's statements lead to."""
    domain_properties: tuple[DomainProperty, ...]
    incoming: tuple[Incoming, ...]
    usage: tuple[Usage, ...]
    documented_in: tuple[CatalogEntry, ...]
    """The documented graphs (ontology, DSO, KG) that describe the term: their index pages."""


def page_number(value: str | None) -> int:
    """The 1-based page a ``page`` query parameter asks for (1 when absent); 400 for anything else."""
    if value is None:
        return 1
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_PAGE:  # "²".isdigit(), int("²") fails
        raise BadRequest(f"page must be a whole number from 1 to {MAX_PAGE}, not {value!r}")
    return int(value)


def _text(row: Row, name: str) -> str | None:
    return row[name].value if name in row else None


def _link(row: Row, iri: str, label: str) -> Link:
    return Link(row[iri].value, _text(row, label))


class OntologyDocs:
    """Reads the documentation pages' content through the published queries."""

    def __init__(self, graphs: GraphService, catalog: Catalog) -> None:
        self._graphs = graphs
        self._catalog = catalog

    def documented_entry(self, kind: str, identifier: str) -> CatalogEntry:
        """The catalog record of a graph that has an index page; 404 naming what exists otherwise."""
        ref = self._graphs.ref(kind, identifier)
        if ref.kind not in DOCUMENTED:
            raise NotFound(f"{kind} graphs have no documentation index: only {', '.join(k.value for k in DOCUMENTED)}")
        return self._graphs.entry(ref)

    def index(self, kind: str, identifier: str, listing: str | None = None, page: int = 1) -> OntologyIndex:
        """The index of ``{kind}/{identifier}``: page ``page`` of the list ``listing`` and the first page of the others."""
        if listing is not None and listing not in CATEGORIES:
            raise BadRequest(f"list must be one of {', '.join(CATEGORIES)}, not {listing!r}")
        entry = self.documented_entry(kind, identifier)
        graph = NamedNode(entry.graph)
        totals = {
            row["category"].value: int(row["terms"].value)
            for row in self._graphs.rows("ontology-term-count", {"graph": graph})
        }
        lists = {}
        for name, category in CATEGORIES.items():
            number = page if name == listing else 1
            rows = self._graphs.rows(
                "ontology-terms",
                {"graph": graph, "category": NamedNode(category)},
                limit=INDEX_PAGE_SIZE,
                offset=(number - 1) * INDEX_PAGE_SIZE,
            )
            items = tuple(
                TermRow(_link(row, "term", "label"), _text(row, "definition"), row["described"].value == "true")
                for row in rows
            )
            lists[name] = Page(items, totals.get(category, 0), INDEX_PAGE_SIZE, (number - 1) * INDEX_PAGE_SIZE)
        return OntologyIndex(self._metadata(entry), lists, self._hierarchy(entry))

    def _metadata(self, entry: CatalogEntry) -> Metadata:
        rows = self._graphs.rows("ontology-metadata", {"graph": NamedNode(entry.graph)})
        # An ontology graph names itself with owl:Ontology; prefer the subject the catalog says it defines.
        row = next((r for r in rows if r["subject"].value == entry.defines_ontology), rows[0] if rows else {})
        return Metadata(
            subject=_text(row, "subject"),
            title=_text(row, "title") or _text(row, "label") or entry.title,
            version=_text(row, "version"),
            license=_text(row, "license"),
            source=_text(row, "source"),
            description=_text(row, "description"),
            created=_text(row, "created"),
            modified=_text(row, "modified"),
            conforms_to=_text(row, "conformsTo") or entry.conforms_to,
            entry=entry,
        )

    def _hierarchy(self, entry: CatalogEntry) -> tuple[ClassNode, ...]:
        graph = NamedNode(entry.graph)
        schema = graph
        if entry.kind is GraphKind.KG and entry.conforms_to:
            dso = self._catalog.graph_defining(entry.conforms_to, GraphKind.DSO)
            schema = NamedNode(dso.graph) if dso else graph
        supers: dict[str, list[str]] = {}
        labels: dict[str, str | None] = {}
        for row in self._graphs.rows("ontology-class-hierarchy", {"graph": graph, "schema": schema}):
            iri = row["class"].value
            labels[iri] = labels.get(iri) or _text(row, "label")
            supers.setdefault(iri, [])
            if "super" in row:
                supers[iri].append(row["super"].value)
        return tuple(ClassNode(Link(iri, labels[iri]), tuple(sorted(parents))) for iri, parents in supers.items())

    def term(self, iri: str, via: str | None = None, page: int = 1) -> TermDoc:
        """What the page of ``iri`` shows besides its statements; the incoming links through ``via`` at ``page``."""
        term = NamedNode(iri)
        labels = {row["resource"].value: row["label"].value for row in self._graphs.rows("term-labels", {"term": term})}
        domain = tuple(
            DomainProperty(
                _link(row, "property", "propertyLabel"), _link(row, "range", "rangeLabel") if "range" in row else None
            )
            for row in self._graphs.rows("class-properties", {"class": term})
        )
        incoming = []
        for row in self._graphs.rows("term-incoming-count", {"term": term}):
            predicate = row["predicate"].value
            if predicate == RDFS + "domain":
                continue  # shown with their ranges as the class's properties
            number = page if predicate == via else 1
            offset = (number - 1) * TERM_PAGE_SIZE
            rows = self._graphs.rows(
                "term-incoming", {"term": term, "predicate": row["predicate"]}, limit=TERM_PAGE_SIZE, offset=offset
            )
            items = tuple(_link(r, "resource", "label") for r in rows)
            incoming.append(
                Incoming(
                    _link(row, "predicate", "label"), Page(items, int(row["resources"].value), TERM_PAGE_SIZE, offset)
                )
            )
        usage = tuple(
            Usage(
                row["graph"].value,
                *(int(row[name].value) for name in ("descriptions", "instances", "statements", "constraints")),
            )
            for row in self._graphs.rows("term-usage", {"term": term})
        )
        documented = tuple(
            entry
            for use in usage
            if use.descriptions
            for entry in [self._graphs.find_graph(use.graph)]
            if entry is not None and entry.kind in DOCUMENTED
        )
        return TermDoc(labels, domain, tuple(incoming), usage, documented)

    def dataset_iri(self) -> str:
        """The IRI of the deployment's void:Dataset (in the VoID document at ``/.well-known/void``)."""
        return self._catalog.base_url + ".well-known/void#dataset"

    def void(self) -> list[Triple]:
        """The VoID description: the deployment's dataset, its SPARQL endpoint and one subset per named graph."""
        dataset = NamedNode(self.dataset_iri())
        endpoint = NamedNode(self._catalog.base_url + "sparql")
        rows = self._graphs.rows("void-subsets", {"catalog": self._catalog.graph})
        total = sum(int(row["triples"].value) for row in rows)
        integer = NamedNode(XSD + "integer")
        triples = [
            Triple(dataset, NamedNode(RDF + "type"), NamedNode(VOID + "Dataset")),
            Triple(dataset, NamedNode(DCTERMS + "title"), Literal("OB-CAIE deployment at " + self._catalog.base_url)),
            Triple(dataset, NamedNode(VOID + "sparqlEndpoint"), endpoint),
            Triple(dataset, NamedNode(VOID + "triples"), Literal(str(total), datatype=integer)),
            Triple(dataset, NamedNode(VOID + "uriSpace"), Literal(self._catalog.base_url)),
        ]
        for row in rows:
            graph = row["graph"]
            assert isinstance(graph, NamedNode)
            triples += [
                Triple(dataset, NamedNode(VOID + "subset"), graph),
                Triple(graph, NamedNode(RDF + "type"), NamedNode(VOID + "Dataset")),
                Triple(graph, NamedNode(VOID + "triples"), Literal(row["triples"].value, datatype=integer)),
                Triple(graph, NamedNode(DCTERMS + "title"), row["title"]),
                Triple(graph, NamedNode(DCTERMS + "modified"), row["modified"]),
                Triple(graph, NamedNode(VOID + "sparqlEndpoint"), endpoint),
            ]
        return triples

    def dcat(self) -> list[Triple]:
        """The DCAT catalog of every named graph (the catalog graph without its write bookkeeping)."""
        return [
            Triple(subject_term(row["subject"]), iri_term(row["predicate"]), row["object"])
            for row in self._graphs.rows("dcat-catalog", {"catalog": self._catalog.graph})
        ]
