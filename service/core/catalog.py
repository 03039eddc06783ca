"""The catalog graph: one DCAT + PROV description per named graph, and the journal of bulk loads.

Each graph's record (kind, title, who loaded it, when, triple count, digest) is written in the same
transaction as the graph itself. A bulk load is journaled first (``cat:loadInProgress``) under a lease
held by the loading replica (``cat:loadOwner``, ``cat:leaseUntil``) and renewed while the load runs; on
start, :meth:`Catalog.recover` drops the graphs of loads whose lease has lapsed, so a crash leaves no
half-loaded graph and a load another replica is still running is left alone.

Leases are timed by the service's clock (UTC, written as ``xsd:dateTime``), not the store's: SPARQL 1.1
has no portable dateTime arithmetic for computing an expiry in the store. Replicas' clocks must agree to
well within the lease (NTP keeps them within milliseconds; the default lease is 120 s).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from types import TracebackType
from typing import Self

from pyoxigraph import Literal, NamedNode, Quad, Triple

from . import iris, queries
from .errors import Conflict, ServiceError
from .namespaces import CATALOG, DCAT, DCTERMS, PROV, RDF, RDFS, VOID, XSD
from .store import ChangeSet, Row, Store, iri_term


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
_KIND, _DIGEST, _PENDING = _iri(CATALOG + "kind"), _iri(CATALOG + "digest"), _iri(CATALOG + "loadInProgress")
_DEFINES, _BATCH_OF = _iri(CATALOG + "definesOntology"), _iri(CATALOG + "batchOf")
_COMMIT = _iri(CATALOG + "commit")
_OWNER, _LEASE = _iri(CATALOG + "loadOwner"), _iri(CATALOG + "leaseUntil")
_DATETIME = _iri(XSD + "dateTime")
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


class Catalog:
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

    # The bulk-load journal.

    def _lease_until(self) -> Literal:
        return Literal((now() + timedelta(seconds=self.lease_s)).isoformat(), datatype=_DATETIME)

    def begin_bulk_load(self, graph: NamedNode) -> str:
        """Journal a bulk load of the new ``graph`` under this replica's lease; the load's id.

        A load of the graph whose lease has lapsed is dropped first (its replica died; no restart need
        come first). The marker is written only where the graph is neither catalogued nor being loaded,
        then read back: updates are not serialized (see :mod:`service.core.commits`), so two replicas may
        both write one; whoever sees another's marker withdraws its own (409). Nothing renews the lease:
        :meth:`bulk_load` does.
        """
        self._drop_abandoned(graph, orphans=False)
        load = uuid.uuid4().hex
        marker = [
            self._quad(graph, _PENDING, Literal(load)),
            self._quad(graph, _OWNER, Literal(self.replica)),
            self._quad(graph, _LEASE, self._lease_until()),
        ]
        body = " ".join(f"{q.subject} {q.predicate} {q.object} ." for q in marker)
        self._store.run_update(
            f"INSERT {{ GRAPH {self.graph} {{ {body} }} }} WHERE {{ "
            f"FILTER NOT EXISTS {{ GRAPH {self.graph} {{ {graph} {_DIGEST} ?digest }} }} "
            f"FILTER NOT EXISTS {{ GRAPH {self.graph} {{ {graph} {_PENDING} ?load }} }} }}"
        )
        loads = {
            row["load"].value
            for row in self._store.select(
                f"SELECT ?load WHERE {{ GRAPH ?catalog {{ ?graph {_PENDING} ?load }} }}",
                {"catalog": self.graph, "graph": graph},
            )
        }
        if loads == {load}:
            return load
        if load in loads:
            self._store.apply(ChangeSet(delete=marker))
        raise Conflict(
            f"<{graph.value}> is being created by another request (another replica's load or write): "
            "read it again and retry"
        )

    def bulk_load(self, graph: NamedNode) -> BulkLoad:
        """A journaled bulk load of the new ``graph`` whose lease is renewed until it ends (a context manager)."""
        return BulkLoad(self, graph, self.begin_bulk_load(graph))

    def _renew(self, graph: NamedNode, load: str) -> None:
        """Extend the lease of ``load``, only while its marker is this replica's."""
        until = self._lease_until()
        self._store.run_update(
            f"DELETE {{ GRAPH {self.graph} {{ {graph} {_LEASE} ?until }} }} "
            f"INSERT {{ GRAPH {self.graph} {{ {graph} {_LEASE} {until} }} }} "
            f"WHERE {{ GRAPH {self.graph} {{ {graph} {_PENDING} {Literal(load)} ; {_OWNER} {Literal(self.replica)} . "
            f"OPTIONAL {{ {graph} {_LEASE} ?until }} }} }}"
        )

    def _holds(self, graph: NamedNode, load: str) -> bool:
        """Whether ``load``'s marker is still on ``graph`` with a lease that has not lapsed."""
        rows = self._store.select(
            f"SELECT ?until WHERE {{ GRAPH ?catalog {{ ?graph {_PENDING} ?load ; {_OWNER} ?replica ; {_LEASE} ?until }} }}",
            {"catalog": self.graph, "graph": graph, "load": Literal(load), "replica": Literal(self.replica)},
        )
        return any(datetime.fromisoformat(row["until"].value) > now() for row in rows)

    def _abandon(self, graph: NamedNode, load: str, condition: str = "") -> None:
        """Drop what ``load`` wrote to ``graph`` and its marker, unless another writer has catalogued or is
        loading the graph since; ``condition`` (SPARQL, in the catalog graph) must also hold."""
        catalog, pending = self.graph, Literal(load)
        journal = f"({_PENDING}, {_OWNER}, {_LEASE})"
        required = f"GRAPH {catalog} {{ {condition} }}" if condition else ""
        self._store.run_update(
            f"DELETE {{ GRAPH {graph} {{ ?s ?p ?o }} }} WHERE {{ {required} "
            f"FILTER NOT EXISTS {{ GRAPH {catalog} {{ {graph} {_DIGEST} ?digest }} }} "
            f"FILTER NOT EXISTS {{ GRAPH {catalog} {{ {graph} {_PENDING} ?other FILTER(?other != {pending}) }} }} "
            f"GRAPH {graph} {{ ?s ?p ?o }} }} ;\n"
            f"DELETE {{ GRAPH {catalog} {{ {graph} ?p ?v }} }} WHERE {{ GRAPH {catalog} {{ {condition} "
            f"{graph} {_PENDING} {pending} ; ?p ?v FILTER(?p IN {journal}) }} }} ;\n"
            f"DELETE {{ GRAPH {catalog} {{ {graph} ?p ?v }} }} WHERE {{ GRAPH {catalog} {{ {graph} ?p ?v "
            f"FILTER(?p IN ({_OWNER}, {_LEASE})) FILTER NOT EXISTS {{ {graph} {_PENDING} ?any }} }} }}"
        )

    def recover(self) -> list[str]:
        """Drop the graphs of bulk loads that were abandoned; the IRIs dropped.

        A load is abandoned when its lease has lapsed (or it has none: a marker from before leases), or
        when it is this replica's and no longer running here. Each drop holds only while the marker still
        has the lease read, so a load renewed meanwhile is kept.
        """
        return self._drop_abandoned(None, orphans=True)

    def _drop_abandoned(self, graph: NamedNode | None, *, orphans: bool) -> list[str]:
        """Drop lapsed loads (of ``graph``, or of every graph), and with ``orphans`` this replica's loads
        that no longer run here; the IRIs dropped."""
        # The journal's predicates are written into the query (our constants, never caller text): bound as
        # variables, the engine scans every catalog triple against every other one.
        bindings: dict[str, NamedNode] = {"catalog": self.graph}
        if graph is not None:
            bindings["graph"] = graph
        rows = self._store.select(
            f"SELECT ?graph ?load ?owner ?until WHERE {{ GRAPH ?catalog {{ ?graph {_PENDING} ?load "
            f"OPTIONAL {{ ?graph {_OWNER} ?owner }} OPTIONAL {{ ?graph {_LEASE} ?until }} }} }}",
            bindings,
        )
        dropped = []
        for row in rows:
            loading, load, until = row["graph"], row["load"].value, row.get("until")
            assert isinstance(loading, NamedNode)
            lapsed = until is None or datetime.fromisoformat(until.value) <= now()
            orphaned = orphans and "owner" in row and row["owner"].value == self.replica and load not in self._running
            if not (lapsed or orphaned):
                continue
            held = (
                f"{loading} {_LEASE} {until} ."
                if until is not None
                else f"FILTER NOT EXISTS {{ {loading} {_LEASE} ?any }}"
            )
            self._abandon(loading, load, f"{loading} {_PENDING} {Literal(load)} . {held}")
            dropped.append(loading.value)
        return dropped


class BulkLoad:
    """One journaled bulk load, renewing its lease every third of the lease from a daemon thread.

    ``with catalog.bulk_load(graph) as load:`` load the graph, call :meth:`finish`, then commit the catalog
    entry (the commit removes the marker). Leaving the block by an exception rolls the load back.
    """

    def __init__(self, catalog: Catalog, graph: NamedNode, load: str) -> None:
        self._catalog = catalog
        self.graph = graph
        self.load = load
        self._stop = threading.Event()
        self._renewer = threading.Thread(target=self._renew_until_stopped, name=f"lease {load}", daemon=True)

    def __enter__(self) -> Self:
        self._catalog._running.add(self.load)
        self._renewer.start()
        return self

    def _renew_until_stopped(self) -> None:
        while not self._stop.wait(self._catalog.lease_s / 3):
            try:
                self._catalog._renew(self.graph, self.load)
            except ServiceError:
                continue  # the store did not answer: the next renewal may still come before the lease lapses

    def _stop_renewing(self) -> None:
        """Stop the renewer and wait out a renewal in flight (it must not land after the commit)."""
        self._stop.set()
        if self._renewer.is_alive():
            self._renewer.join()

    def finish(self) -> None:
        """Stop renewing, with a full lease left for the commit; 409 if the load lost its lease meanwhile.

        A load stalled past its lease may have been dropped by another replica's recovery; committing
        it would catalogue a partial graph.
        """
        self._stop_renewing()
        self._catalog._renew(self.graph, self.load)
        if not self._catalog._holds(self.graph, self.load):
            raise Conflict(
                f"the load of <{self.graph.value}> stalled past its lease and was rolled back by "
                "another replica: send it again"
            )

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop_renewing()
        try:
            if error is not None:
                self._catalog._abandon(self.graph, self.load)
        except ServiceError:
            pass  # the store did not answer: the lease lapses and any replica's recovery drops the load
        finally:
            self._catalog._running.discard(self.load)


def now() -> datetime:
    """The current time, UTC, to the microsecond (catalog and record timestamps)."""
    return datetime.now(UTC)
