"""Named graphs as the user manages them: replace, append, read, delete, each checked before storing.

Nothing reaches the store until the body has parsed and, for a knowledge graph, conformed to its
DSO; the graph and its catalog record are then written in one transaction (or, for a large new
graph, bulk-loaded under the catalog's journal and this replica's lease). The checks by kind are
:mod:`.graph_checks`, batch appends :mod:`.appends` (both base classes of :class:`GraphService`).
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum

from pyoxigraph import NamedNode, RdfFormat, Triple

from . import queries
from .appends import BatchAppends
from .catalog import Catalog, CatalogEntry, GraphKind, now
from .commits import ConcurrentWrite, GraphWrite, commit, guard
from .config import Credential
from .digest import blank_skolems, digest_and_size
from .errors import BadRequest, Conflict, NotFound
from .graph_checks import GraphChecks, ontology_of, refuse_record, title_of
from .graph_edits import GraphEdit, GraphRef
from .rdf import parse_triples, skolemize
from .rdf_limits import DEFAULT_LIMITS, RdfLimits
from .store import Row, Store, Term
from .store.base import bind_rows

_IDENTIFIER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
IDENTIFIER_PATTERN = _IDENTIFIER.pattern
"""What a graph identifier (and so an evaluation id) may be; the OpenAPI document states it for path parameters."""


Clock = Callable[[], datetime]
"""What dates a record: the current time, UTC (:func:`.catalog.now` in a deployment; a test's own clock in tests)."""


class WriteMode(Enum):
    REPLACE = "replace"
    APPEND = "append"


@dataclass(frozen=True)
class WriteResult:
    entry: CatalogEntry
    created: bool


class GraphService(BatchAppends, GraphChecks):
    """Graph management over one store and its catalog."""

    def __init__(
        self,
        store: Store,
        catalog: Catalog,
        *,
        bulk_threshold: int = 100_000,
        max_update_triples: int | None = None,
        max_graphs_per_write: int | None = None,
        skolemize: bool = False,
        rdf_limits: RdfLimits = DEFAULT_LIMITS,
        clock: Clock = now,
    ) -> None:
        self._store = store
        self._catalog = catalog
        self._bulk_threshold = bulk_threshold
        self._max_update_triples = max_update_triples
        self.max_graphs_per_write = max_graphs_per_write
        """The most graphs a caller should write at once (claims, cases), ``None``: no limit (docs/stores.md)."""
        self._skolemize = skolemize
        self.rdf_limits = rdf_limits
        """The bounds on an RDF body a client sends, and on canonicalizing what is written (docs/protection.md)."""
        self._writes = threading.Lock()
        self.clock = clock
        """What dates the catalog's entries and the records written through this service (their one clock)."""

    def ref(self, kind: str, identifier: str) -> GraphRef:
        """The graph ``{base}graphs/{kind}/{identifier}``, or 404/400 naming what is wrong with the path."""
        graph_kind = GraphKind.from_segment(kind)
        if graph_kind is None:
            known = ", ".join(k.value for k in GraphKind)
            raise NotFound(f"unknown graph kind {kind!r}: the kinds are {known}")
        if not _IDENTIFIER.match(identifier):
            raise BadRequest(
                f"invalid graph identifier {identifier!r}: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        return GraphRef(graph_kind, identifier, self._catalog.graph_iri(graph_kind, identifier))

    def write(
        self,
        ref: GraphRef,
        data: bytes,
        rdf_format: RdfFormat,
        agent: Credential,
        *,
        mode: WriteMode = WriteMode.REPLACE,
        title: str | None = None,
        dso: str | None = None,
    ) -> WriteResult:
        """Replace or append to a graph after checking the body; returns the new catalog record."""
        refuse_record(ref)
        incoming = self._stored(parse_triples(data, rdf_format, ref.iri.value, self.rdf_limits))
        with self._writes:
            previous = self._catalog.entry(ref.iri)
            exists = self._store.graph_exists(ref.iri)
            existing = self._store.graph_triples(ref.iri) if exists and mode is WriteMode.APPEND else []
            content = existing + incoming
            conforms_to = self._check(ref, content, dso)
            digest, size = digest_and_size(content, self.rdf_limits.canonicalize_time_limit_s)
            entry = CatalogEntry(
                graph=ref.iri.value,
                kind=ref.kind,
                identifier=ref.identifier,
                title=title or title_of(content, ref),
                agent=agent.agent,
                modified=self.clock(),
                triples=size,
                digest=digest,
                conforms_to=conforms_to,
                defines_ontology=ontology_of(content) if ref.kind in (GraphKind.ONTOLOGY, GraphKind.DSO) else None,
            )
            expected = previous.digest if previous else None
            if not exists and len(incoming) >= self._bulk_threshold:
                with self._catalog.bulk_load(ref.iri) as load:  # leased: other replicas' recovery leaves it alone
                    self._store.bulk_load_new_graph(ref.iri, data, rdf_format, ref.iri.value)
                    load.finish()
                    self._commit([GraphWrite(ref.iri, expected, self._catalog.entry_quads(entry))])
                return WriteResult(entry, created=True)
            self._commit(
                [
                    GraphWrite(
                        ref.iri,
                        expected,
                        self._catalog.entry_quads(entry),
                        insert=incoming,
                        replace=mode is WriteMode.REPLACE and exists,
                    )
                ]
            )
            return WriteResult(entry, created=not exists)

    def _stored(self, triples: list[Triple]) -> list[Triple]:
        """The triples as this store gets them: blank nodes skolemized where the store is remote (their
        digest is unchanged: digests read skolem IRIs as blank nodes)."""
        return skolemize(triples, self._catalog.base_url) if self._skolemize else triples

    def _commit(self, writes: list[GraphWrite]) -> str:
        """Commit ``writes``; content larger than one request may carry is staged first (:meth:`_staged`)."""
        limit = self._max_update_triples
        if limit is None or all(len(w.insert) <= limit for w in writes):
            return commit(self._store, self._catalog.graph, writes)
        with ExitStack() as loads:
            staged = [self._staged(w, limit, loads) if len(w.insert) > limit else w for w in writes]
            return commit(self._store, self._catalog.graph, staged)

    def _staged(self, write: GraphWrite, limit: int, loads: ExitStack) -> GraphWrite:
        """``write`` with its insert moved to a staging graph, written in requests of at most ``limit`` triples.

        The staging graph lies outside every record and is journaled like a bulk load, so a crash leaves
        nothing that counts and recovery drops it once its lease lapses; the commit copies and drops it.
        """
        staging = NamedNode(f"{self._catalog.base_url}.well-known/staging/{uuid.uuid4().hex}")
        load = loads.enter_context(self._catalog.bulk_load(staging))
        self._store.stage(staging, write.insert, limit)
        load.finish()
        return replace(write, insert=[], staged=staging)

    def agent_iri(self, agent: str) -> str:
        """The IRI the deployment mints for an agent (``{base}agents/{name}``)."""
        return self._catalog.agent_iri(agent).value

    def member(self, kind: GraphKind, path: str) -> GraphRef:
        """A graph the domain layer manages, e.g. ``evaluations`` + ``e1/scenarios`` (slashes allowed)."""
        if not all(_IDENTIFIER.match(part) for part in path.split("/")):
            raise BadRequest(f"invalid graph path {path!r}")
        return GraphRef(kind, path, self._catalog.graph_iri(kind, path))

    @property
    def catalog_graph(self) -> NamedNode:
        """The catalog graph's IRI (a parameter of queries that read digests or batches)."""
        return self._catalog.graph

    def rows(self, name: str, bindings: Mapping[str, Term], *, limit: int | None = None, offset: int = 0) -> list[Row]:
        """Rows of the published query ``queries/{name}.rq`` with its parameters bound (VALUES, never pasted
        text); a page appends ``LIMIT``/``OFFSET`` as integers (SPARQL cannot bind them)."""
        text = queries.load(name)
        if limit is not None:
            text = f"{text}\nLIMIT {int(limit)}\nOFFSET {int(offset)}\n"
        return self._store.select(text, bindings)

    def rows_over(
        self, name: str, names: Sequence[str], values: Sequence[Sequence[Term]], *, chunk: int = 500
    ) -> list[Row]:
        """Rows of ``queries/{name}.rq`` asked about several rows of parameters at once (one VALUES block of up
        to ``chunk`` rows per request, each a term per name): what a batch needs to know of its own items."""
        text = queries.load(name)
        return [
            row
            for start in range(0, len(values), chunk)
            for row in self._store.select(bind_rows(text, names, values[start : start + chunk]))
        ]

    def triples(self, ref: GraphRef) -> list[Triple]:
        """The graph's triples (empty if it does not exist), skolem IRIs read as the blank nodes they stand
        for: reasoning and SHACL over a DSO's restrictions and lists must see them as written."""
        return blank_skolems(self._store.graph_triples(ref.iri))

    def update(
        self,
        ref: GraphRef,
        agent: Credential,
        *,
        insert: list[Triple] | None = None,
        delete: list[Triple] | None = None,
        title: str | None = None,
        precondition: Callable[[list[Triple]], None] | None = None,
    ) -> CatalogEntry:
        """Delete then insert triples in one transaction with the graph's new catalog record.

        ``precondition`` sees the graph's current triples under the write lock and raises to refuse
        (e.g. a change to an approved envelope), so checks and write cannot interleave with another writer.
        """
        edit = GraphEdit(ref, insert or [], delete or [], title=title)
        return self.apply_edits([edit], agent, precondition=precondition)[0]

    def apply_edits(
        self,
        edits: list[GraphEdit],
        agent: Credential,
        *,
        precondition: Callable[[list[Triple]], None] | None = None,
        guards: Mapping[str, str | None] | None = None,
    ) -> list[CatalogEntry]:
        """Several graphs' edits and their catalog records in one conditional write; ``precondition`` sees the first graph.

        Each graph's write holds only if its catalog digest is still the one read here (409 otherwise); ``guards``
        maps more graphs to the digest each must still have (``None``: the graph must still be absent).

        Writes are serialized in this process, so that one reading a graph another is changing reads it afterwards;
        a write of new graphs only reads nothing and is not: locked or not, of two writes creating one graph one
        commits and the other finds it stale (:mod:`.commits`), and a runner's claims and cases go on side by side.
        """
        fresh = precondition is None and all(edit.expected_digest is None for edit in edits)
        with nullcontext() if fresh else self._writes:
            writes = []
            entries = []
            # one catalog read for the write; an edit whose graph must be new and that names its title needs none
            # (the commit checks that the graph is absent)
            known = self._catalog.entries_of(
                [e.ref.iri for e in edits if e.expected_digest is not None or e.title is None]
            )
            for position, edit in enumerate(edits):
                edit = replace(edit, insert=self._stored(edit.insert))
                previous = known.get(edit.ref.iri.value)
                expected = (
                    (previous.digest if previous else None) if edit.expected_digest is ... else edit.expected_digest
                )
                if expected != (previous.digest if previous else None):
                    raise ConcurrentWrite(f"<{edit.ref.iri.value}> changed after it was read")
                # Only what a check or the new digest needs is read: a new batch or a replaced graph needs nothing.
                wanted = (previous is not None and not edit.replace) or (position == 0 and precondition is not None)
                current = self._store.graph_triples(edit.ref.iri) if wanted else []
                if position == 0 and precondition is not None:
                    precondition(current)
                removed = {(t.subject, t.predicate, t.object) for t in edit.delete}
                kept = [] if edit.replace else [t for t in current if (t.subject, t.predicate, t.object) not in removed]
                digest, size = digest_and_size(kept + edit.insert, self.rdf_limits.canonicalize_time_limit_s)
                entry = CatalogEntry(
                    graph=edit.ref.iri.value,
                    kind=edit.ref.kind,
                    identifier=edit.ref.identifier,
                    title=edit.title
                    or (previous.title if previous else f"{edit.ref.kind.value}/{edit.ref.identifier}"),
                    agent=agent.agent,
                    modified=self.clock(),
                    triples=size,
                    digest=digest,
                    batch_of=edit.batch_of,
                )
                entries.append(entry)
                writes.append(
                    GraphWrite(
                        edit.ref.iri,
                        expected,
                        self._catalog.entry_quads(entry),
                        insert=edit.insert,
                        delete=[] if edit.replace else edit.delete,
                        replace=edit.replace,
                    )
                )
            self._commit(writes + [guard(NamedNode(g), d) for g, d in (guards or {}).items()])
            return entries

    def read(self, ref: GraphRef, rdf_format: RdfFormat, prefixes: dict[str, str] | None = None) -> bytes:
        self._require(ref)
        return self._store.export_graph(ref.iri, rdf_format, prefixes)

    def find(self, ref: GraphRef) -> CatalogEntry | None:
        """The catalog record of ``ref``, if the graph exists."""
        return self._catalog.entry(ref.iri)

    def find_graph(self, iri: str) -> CatalogEntry | None:
        """The catalog record of the graph named ``iri`` (e.g. one a record pinned), if it exists."""
        return self._catalog.entry(NamedNode(iri))

    def find_graphs(self, iris: Sequence[str]) -> dict[str, CatalogEntry]:
        """The catalog records of those of the graphs named ``iris`` that exist, by IRI, in one read."""
        return self._catalog.entries_of([NamedNode(iri) for iri in iris])

    def entry(self, ref: GraphRef) -> CatalogEntry:
        entry = self._catalog.entry(ref.iri)
        if entry is None:
            raise NotFound(f"no graph <{ref.iri.value}>")
        return entry

    def _require(self, ref: GraphRef) -> None:
        if self._catalog.entry(ref.iri) is None:
            raise NotFound(f"no graph <{ref.iri.value}>: GET /graphs lists the graphs")

    def delete(self, ref: GraphRef) -> None:
        refuse_record(ref)
        with self._writes:
            entry = self.entry(ref)
            dependants = self._dependants(ref)
            if dependants:
                raise Conflict(f"knowledge graphs conform to this DSO: {', '.join(dependants)}; delete them first")
            token = self._commit([GraphWrite(ref.iri, entry.digest, replace=True)])
            self._store.apply(self._catalog.forget(ref.iri, token))

    def _dependants(self, ref: GraphRef) -> list[str]:
        """Knowledge graphs checked against the DSO ``ref`` (they would lose their DSO)."""
        if ref.kind is not GraphKind.DSO:
            return []
        ontology = self.entry(ref).defines_ontology
        return [e.graph for e in self._catalog.entries(kind=GraphKind.KG) if e.conforms_to == ontology]

    def catalog(self, kind: GraphKind | None = None) -> list[CatalogEntry]:
        """Every catalogued graph, or those of ``kind`` (a record's batches make the whole catalog large)."""
        return self._catalog.entries(kind=kind)
