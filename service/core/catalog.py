"""The catalog graph: one DCAT + PROV description per named graph, and the journal of bulk loads.

Each graph's record (kind, title, who loaded it, when, triple count, digest) is written in the same
transaction as the graph itself. A bulk load is journaled first (``cat:loadInProgress``); on start,
:func:`recover` drops any graph whose load never finished, so a crash leaves no half-loaded graph.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum

from pyoxigraph import Literal, NamedNode, Quad, Triple

from .namespaces import CATALOG, DCAT, DCTERMS, PROV, RDF, RDFS, VOID, XSD
from . import queries
from .store import ChangeSet, Store


class GraphKind(Enum):
    """What a named graph holds; the value is its path segment under the deployment base."""

    ONTOLOGY = "ontologies"
    DSO = "dso"
    KG = "kg"
    SHAPES = "shapes"
    EVALUATION = "evaluations"

    @property
    def class_iri(self) -> NamedNode:
        names = {
            GraphKind.ONTOLOGY: "OntologyGraph",
            GraphKind.DSO: "DsoGraph",
            GraphKind.KG: "KnowledgeGraph",
            GraphKind.SHAPES: "ShapesGraph",
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

    def to_json(self) -> dict[str, object]:
        return {
            "graph": self.graph,
            "kind": self.kind.value,
            "identifier": self.identifier,
            "title": self.title,
            "loadedBy": self.agent,
            "modified": self.modified.isoformat(),
            "triples": self.triples,
            "digest": self.digest,
            "conformsTo": self.conforms_to,
            "definesOntology": self.defines_ontology,
            "batchOf": self.batch_of,
        }


def _iri(value: str) -> NamedNode:
    return NamedNode(value)


_TYPE, _LABEL = _iri(RDF + "type"), _iri(RDFS + "label")
_KIND, _DIGEST, _PENDING = _iri(CATALOG + "kind"), _iri(CATALOG + "digest"), _iri(CATALOG + "loadInProgress")
_DEFINES, _BATCH_OF = _iri(CATALOG + "definesOntology"), _iri(CATALOG + "batchOf")
_COMMIT = _iri(CATALOG + "commit")
_TITLE, _IDENTIFIER, _MODIFIED = _iri(DCTERMS + "title"), _iri(DCTERMS + "identifier"), _iri(DCTERMS + "modified")
_CONFORMS = _iri(DCTERMS + "conformsTo")
_TRIPLES = _iri(VOID + "triples")
_ATTRIBUTED, _DATASET = _iri(PROV + "wasAttributedTo"), _iri(DCAT + "dataset")


class Catalog:
    """Reads and writes the catalog graph ``{base}catalog`` of one deployment."""

    def __init__(self, store: Store, base_url: str) -> None:
        self._store = store
        self.base_url = base_url
        self.graph = NamedNode(base_url + "catalog")

    def graph_iri(self, kind: GraphKind, identifier: str) -> NamedNode:
        return NamedNode(f"{self.base_url}{kind.value}/{identifier}")

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
            self._quad(graph, _DIGEST, Literal(entry.digest)),
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
        return [Quad(graph, row["p"], row["o"], self.graph) for row in rows]  # type: ignore[arg-type]

    def forget(self, graph: NamedNode, token: str) -> ChangeSet:
        """Removes what a deletion's commit left of ``graph`` in the catalog (its commit token and dataset link)."""
        return ChangeSet(delete=[self._quad(graph, _COMMIT, Literal(token)), self._quad(self.graph, _DATASET, graph)])

    def set_digest(self, graph: NamedNode, digest: str, triples: int) -> ChangeSet:
        """Sets ``graph``'s digest, size and commit to one value each (repairs an entry two writers committed on)."""
        stale = [q for q in self.current_quads(graph) if q.predicate in (_DIGEST, _TRIPLES, _COMMIT)]
        fresh = [self._quad(graph, _DIGEST, Literal(digest)),
                 self._quad(graph, _TRIPLES, Literal(str(triples), datatype=_iri(XSD + "integer")))]
        return ChangeSet(delete=stale, insert=fresh)

    def next_batch_number(self, record: NamedNode, segment: str) -> int:
        """One more than the highest number of ``record``'s batches under ``{record}/{segment}/``."""
        rows = self._store.select(queries.load("record-batch-numbers"),
                                  {"catalog": self.graph, "record": record, "segment": Literal(segment)})
        return 1 + int(rows[0]["highest"].value) if rows and "highest" in rows[0] else 1

    def entries(self, graph: NamedNode | None = None) -> list[CatalogEntry]:
        """Every catalogued graph (or the one named), ordered by IRI."""
        query = """
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
                OPTIONAL { ?graph dcterms:conformsTo ?conformsTo }
                OPTIONAL { ?graph cat:definesOntology ?defines }
                OPTIONAL { ?graph cat:batchOf ?batchOf }
              }
            }
            ORDER BY ?graph
        """
        bindings: dict[str, NamedNode] = {"catalog": self.graph}
        if graph is not None:
            bindings["graph"] = graph
        entries = []
        for row in self._store.select(query, bindings):
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

    def entry(self, graph: NamedNode) -> CatalogEntry | None:
        found = self.entries(graph)
        return found[0] if found else None

    def graph_defining(self, ontology: str, kind: GraphKind) -> CatalogEntry | None:
        """The catalogued graph of ``kind`` that declares the ontology IRI ``ontology``."""
        return next(
            (entry for entry in self.entries() if entry.kind is kind and entry.defines_ontology == ontology),
            None,
        )

    def triples(self) -> list[Triple]:
        return self._store.graph_triples(self.graph)

    # The bulk-load journal.

    def begin_bulk_load(self, graph: NamedNode) -> Quad:
        marker = self._quad(graph, _PENDING, Literal(str(uuid.uuid4())))
        self._store.apply(ChangeSet(insert=[marker]))
        return marker

    def recover(self) -> list[str]:
        """Drop the graphs of bulk loads that never finished; the IRIs dropped."""
        rows = self._store.select(
            "SELECT ?graph ?marker WHERE { GRAPH ?catalog { ?graph ?pending ?marker } }",
            {"catalog": self.graph, "pending": _PENDING},
        )
        for row in rows:
            graph = row["graph"]
            assert isinstance(graph, NamedNode)
            self._store.apply(
                ChangeSet(drop_graphs=[graph], delete=[self._quad(graph, _PENDING, row["marker"])])  # type: ignore[arg-type]
            )
        return [row["graph"].value for row in rows]


def now() -> datetime:
    """The current time, UTC, to the microsecond (catalog and record timestamps)."""
    return datetime.now(timezone.utc)
