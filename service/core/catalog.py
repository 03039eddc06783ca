"""The catalog graph: one DCAT + PROV description per named graph, and the journal of bulk loads.

Each graph's record (kind, title, who loaded it, when, triple count, digest) is written in the same
transaction as the graph itself. A bulk load is journaled first (``cat:loadInProgress``) under a lease
held by the loading replica (``cat:loadOwner``, ``cat:leaseUntil``) and renewed while the load runs; on
start, :meth:`Catalog.recover` drops the graphs of loads whose lease has lapsed, so a crash leaves no
half-loaded graph and a load another replica is still running is left alone.

Leases are timed by the service's clock (UTC, written as ``xsd:dateTime``), not the store's: SPARQL 1.1
has no portable dateTime arithmetic for computing an expiry in the store. Replicas' clocks must agree to
well within the lease (NTP keeps them within milliseconds; the default lease is 120 s).

The journal is :mod:`.load_journal` (:class:`~.load_journal.LoadJournal`, a base class of :class:`Catalog`).
That module defines the clock, :func:`now`; it is re-exported here, where its many callers (records'
timestamps) import it from.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from pyoxigraph import Literal, NamedNode, Quad, Triple

from . import iris, queries
from .load_journal import DIGEST, LoadJournal, now
from .namespaces import CATALOG, DCAT, DCTERMS, PROV, RDF, RDFS, VOID, XSD
from .store import ChangeSet, Row, Store, iri_term

__all__ = ["Catalog", "CatalogEntry", "GraphKind", "now"]  # now: the journal's clock, re-exported (see above)


class GraphKind(Enum):
    """What a named graph holds; the value is its path segment (:func:`.iris.graph_iri` says where)."""

    ONTOLOGY = "ontologies"
    DSO = "dso"
    KG = "kg"
    SHAPES = "shapes"
    TEMPLATES = "templates"
    JUDGES = "judges"
    EVALUATION = "evaluations"

    @property
    def class_iri(self) -> NamedNode:
        names = {
            GraphKind.ONTOLOGY: "OntologyGraph",
            GraphKind.DSO: "DsoGraph",
            GraphKind.KG: "KnowledgeGraph",
            GraphKind.SHAPES: "ShapesGraph",
            GraphKind.TEMPLATES: "TemplatesGraph",
            GraphKind.JUDGES: "JudgesGraph",
            GraphKind.EVALUATION: "EvaluationRecordGraph",
        }
        return NamedNode(CATALOG + names[self])

    @classmethod
    def from_segment(cls, segment: str) -> GraphKind | None:
        return next((kind for kind in cls if kind.value == segment), None)

    @classmethod
    def from_class(cls, iri: str) -> GraphKind | None:
        return next((kind for kind in cls if kind.class_iri.value == iri), None)


@dataclass(frozen=True)
class CatalogEntry:
    """The catalog's description of one named graph."""

    graph: str
    kind: GraphKind
    identifier: str
    title: str
    agent: str
    modified: datetime
    triples: int
    digest: str
    conforms_to: str | None = None
    defines_ontology: str | None = None
    batch_of: str | None = None
    """The record this graph is an appended batch of (``cat:batchOf``)."""


def _iri(value: str) -> NamedNode:
    return NamedNode(value)


_TYPE, _LABEL = _iri(RDF + "type"), _iri(RDFS + "label")
_KIND = _iri(CATALOG + "kind")
_DEFINES, _BATCH_OF = _iri(CATALOG + "definesOntology"), _iri(CATALOG + "batchOf")
_COMMIT = _iri(CATALOG + "commit")
_TITLE, _IDENTIFIER, _MODIFIED = _iri(DCTERMS + "title"), _iri(DCTERMS + "identifier"), _iri(DCTERMS + "modified")
_CONFORMS = _iri(DCTERMS + "conformsTo")
_TRIPLES = _iri(VOID + "triples")
_ATTRIBUTED, _DATASET = _iri(PROV + "wasAttributedTo"), _iri(DCAT + "dataset")


_ENTRIES = """
    PREFIX cat: <https://w3id.org/ob-caie/catalog/>
    PREFIX dcterms: <http://purl.org/dc/terms/>
    PREFIX prov: <http://www.w3.org/ns/prov#>
    PREFIX void: <http://rdfs.org/ns/void#>
    SELECT ?graph ?kind ?identifier ?title ?agent ?modified ?triples ?digest ?conformsTo ?defines ?batchOf
    WHERE {
      GRAPH ?catalog {
        ?graph cat:kind ?kind ; dcterms:identifier ?identifier ; dcterms:title ?title ;
               prov:wasAttributedTo ?agentIri ; dcterms:modified ?modified ;
               void:triples ?triples ; cat:digest ?digest .
        ?agentIri <http://www.w3.org/2000/01/rdf-schema#label> ?agent .
      }
      OPTIONAL { GRAPH ?catalog { ?graph dcterms:conformsTo ?conformsTo } }
      OPTIONAL { GRAPH ?catalog { ?graph cat:definesOntology ?defines } }
      OPTIONAL { GRAPH ?catalog { ?graph cat:batchOf ?batchOf } }
    }
    ORDER BY ?graph
"""
"""Catalog entries. The OPTIONALs stand outside the GRAPH block so that Oxigraph joins them to the bound
``?graph``; inside it, they were evaluated over the whole catalog, making one entry's read O(catalog)."""


def _entries(rows: Sequence[Row]) -> list[CatalogEntry]:
    entries = []
    for row in rows:
        kind = GraphKind.from_class(row["kind"].value)
        if kind is None:
            continue
        entries.append(
            CatalogEntry(
                graph=row["graph"].value,
                kind=kind,
                identifier=row["identifier"].value,
                title=row["title"].value,
                agent=row["agent"].value,
                modified=datetime.fromisoformat(row["modified"].value),
                triples=int(row["triples"].value),
                digest=row["digest"].value,
                conforms_to=row["conformsTo"].value if "conformsTo" in row else None,
                defines_ontology=row["defines"].value if "defines" in row else None,
                batch_of=row["batchOf"].value if "batchOf" in row else None,
            )
        )
    return entries


class Catalog(LoadJournal):
    """Reads and writes the catalog graph ``{base}graphs`` of one deployment."""

    def __init__(self, store: Store, base_url: str, *, replica: str | None = None, lease_s: float = 120.0) -> None:
        """``replica`` names this process's bulk loads (``cat:loadOwner``; a fresh id by default); ``lease_s``
        is how long a load of it stays safe from other replicas' recovery without a renewal."""
        self._store = store
        self.base_url = base_url
        self.graph = NamedNode(iris.catalog_graph_iri(base_url))
        self.replica = replica or uuid.uuid4().hex
        self.lease_s = lease_s
        self._running: set[str] = set()
        """Ids of the bulk loads this replica is running now (recovery never drops those)."""

    def graph_iri(self, kind: GraphKind, identifier: str) -> NamedNode:
        return NamedNode(iris.graph_iri(self.base_url, kind.value, identifier))

    def agent_iri(self, agent: str) -> NamedNode:
        return NamedNode(f"{self.base_url}agents/{agent}")

    def _quad(self, subject: NamedNode, predicate: NamedNode, value: NamedNode | Literal) -> Quad:
        return Quad(subject, predicate, value, self.graph)

    def entry_quads(self, entry: CatalogEntry) -> list[Quad]:
        """The quads describing ``entry`` (DCAT dataset, PROV entity, VoID count)."""
        graph = _iri(entry.graph)
        quads = [
            self._quad(self.graph, _TYPE, _iri(DCAT + "Catalog")),
            self._quad(self.graph, _DATASET, graph),
            self._quad(graph, _TYPE, _iri(DCAT + "Dataset")),
            self._quad(graph, _TYPE, _iri(PROV + "Entity")),
            self._quad(graph, _TYPE, entry.kind.class_iri),
            self._quad(graph, _KIND, entry.kind.class_iri),
            self._quad(graph, _IDENTIFIER, Literal(entry.identifier)),
            self._quad(graph, _TITLE, Literal(entry.title)),
            self._quad(graph, _ATTRIBUTED, self.agent_iri(entry.agent)),
            self._quad(graph, _MODIFIED, Literal(entry.modified.isoformat(), datatype=_iri(XSD + "dateTime"))),
            self._quad(graph, _TRIPLES, Literal(str(entry.triples), datatype=_iri(XSD + "integer"))),
            self._quad(graph, DIGEST, Literal(entry.digest)),
            self._quad(self.agent_iri(entry.agent), _TYPE, _iri(PROV + "Agent")),
            self._quad(self.agent_iri(entry.agent), _LABEL, Literal(entry.agent)),
        ]
        if entry.conforms_to:
            quads.append(self._quad(graph, _CONFORMS, _iri(entry.conforms_to)))
        if entry.defines_ontology:
            quads.append(self._quad(graph, _DEFINES, _iri(entry.defines_ontology)))
        if entry.batch_of:
            quads.append(self._quad(graph, _BATCH_OF, _iri(entry.batch_of)))
        return quads

    def current_quads(self, graph: NamedNode) -> list[Quad]:
        """The catalog's present statements about ``graph`` (to delete them on a rewrite)."""
        rows = self._store.select(
            "SELECT ?p ?o WHERE { GRAPH ?catalog { ?graph ?p ?o } }",
            {"catalog": self.graph, "graph": graph},
        )
        return [Quad(graph, iri_term(row["p"]), row["o"], self.graph) for row in rows]

    def forget(self, graph: NamedNode, token: str) -> ChangeSet:
        """Removes what a deletion's commit left of ``graph`` in the catalog (its commit token and dataset link)."""
        return ChangeSet(delete=[self._quad(graph, _COMMIT, Literal(token)), self._quad(self.graph, _DATASET, graph)])

    def next_batch_number(self, record: NamedNode, segment: str) -> int:
        """One more than the highest number of ``record``'s batches under ``{record}/{segment}/``."""
        rows = self._store.select(
            queries.load("record-batch-numbers"), {"catalog": self.graph, "record": record, "segment": Literal(segment)}
        )
        return 1 + int(rows[0]["highest"].value) if rows and "highest" in rows[0] else 1

    def entries(self, graph: NamedNode | None = None, kind: GraphKind | None = None) -> list[CatalogEntry]:
        """Every catalogued graph (or the one named, or those of one kind), ordered by IRI."""
        bindings: dict[str, NamedNode] = {"catalog": self.graph}
        if graph is not None:
            bindings["graph"] = graph
        if kind is not None:
            bindings["kind"] = kind.class_iri
        return _entries(self._store.select(_ENTRIES, bindings))

    def entries_of(self, graphs: Sequence[NamedNode]) -> dict[str, CatalogEntry]:
        """The entries of those of ``graphs`` that are catalogued, by IRI: one read for a whole write."""
        if not graphs:
            return {}
        values = "VALUES ?graph { " + " ".join(str(g) for g in graphs) + " }"
        query = _ENTRIES.replace("WHERE {", "WHERE {\n" + values, 1)
        return {e.graph: e for e in _entries(self._store.select(query, {"catalog": self.graph}))}

    def entry(self, graph: NamedNode) -> CatalogEntry | None:
        found = self.entries(graph)
        return found[0] if found else None

    def graph_defining(self, ontology: str, kind: GraphKind) -> CatalogEntry | None:
        """The catalogued graph of ``kind`` that declares the ontology IRI ``ontology``."""
        return next(
            (entry for entry in self.entries(kind=kind) if entry.defines_ontology == ontology),
            None,
        )

    def triples(self) -> list[Triple]:
        return self._store.graph_triples(self.graph)
