"""Batch appends: a record grows by new batch graphs ``{record}/{segment}/{key}``, each digested once and
catalogued as ``cat:batchOf`` the record, so an append costs O(batch) whatever the record's size.

:class:`BatchAppends` is a part of :class:`.graphs.GraphService` (its base class), kept apart to keep each file
short; it writes through the service's conditional :meth:`apply_edits`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence

from pyoxigraph import Triple

from .catalog import Catalog, CatalogEntry, GraphKind
from .commits import ConcurrentWrite, StaleWrite
from .config import Credential
from .errors import Conflict
from .graph_edits import GraphEdit, GraphRef


class BatchAppends(ABC):
    """Appending numbered or keyed batch graphs to a record (see the module docstring)."""

    _catalog: Catalog

    @abstractmethod
    def member(self, kind: GraphKind, path: str) -> GraphRef: ...

    @abstractmethod
    def find(self, ref: GraphRef) -> CatalogEntry | None: ...

    @abstractmethod
    def apply_edits(
        self,
        edits: list[GraphEdit],
        agent: Credential,
        *,
        precondition: Callable[[list[Triple]], None] | None = None,
        guards: Mapping[str, str | None] | None = None,
    ) -> list[CatalogEntry]: ...

    def next_batch(self, record: GraphRef, segment: str) -> GraphRef:
        """The graph the next numbered batch of ``record`` under ``segment`` would be (``{record}/{segment}/{n}``)."""
        number = self._catalog.next_batch_number(record.iri, segment)
        return self.member(record.kind, f"{record.identifier}/{segment}/{number}")

    def append(
        self,
        record: GraphRef,
        segment: str,
        triples: list[Triple],
        agent: Credential,
        *,
        key: str | None = None,
        title: str | None = None,
        guards: Mapping[str, str] | None = None,
        also: Sequence[GraphEdit] = (),
    ) -> CatalogEntry:
        """Append a batch to ``record``: the new graph ``{record}/{segment}/{key}``, digested once, catalogued
        as ``cat:batchOf`` the record. Costs O(batch), whatever the record's size.

        ``key`` defaults to the next number among the segment's batches; ``guards`` maps graph IRIs to the
        digests the caller's checks read (the append holds only while they are current); ``also`` are more graphs
        written in the same write (a batch's credential).
        """
        for _ in range(5):
            graph = (
                self.member(record.kind, f"{record.identifier}/{segment}/{key}")
                if key
                else self.next_batch(record, segment)
            )
            edit = GraphEdit(graph, insert=triples, title=title, batch_of=record.iri.value)
            try:
                return self.apply_edits([edit, *also], agent, guards=guards)[0]
            except ConcurrentWrite:
                if key is not None:
                    raise
        raise Conflict(
            f"could not number a new {segment} batch of <{record.iri.value}>: too many concurrent appends; retry"
        )

    def append_numbered(
        self,
        record: GraphRef,
        segment: str,
        build: Callable[[GraphRef], list[Triple]],
        agent: Credential,
        *,
        title: str,
        guards: Mapping[str, str] | None = None,
        also: Callable[[GraphRef, list[Triple]], list[GraphEdit]] | None = None,
    ) -> GraphRef:
        """Append the next numbered batch ``{record}/{segment}/{n}`` whose triples name it: ``build`` gets the new
        graph and makes its content; another writer taking ``n`` meanwhile makes it try ``n + 1``. ``title`` may
        say the number as ``{n}``; ``also`` gets the new graph and its triples and makes more graphs' edits, written
        in the same write (the batch's credential, which signs its triples)."""
        for _ in range(5):
            ref = self.next_batch(record, segment)
            triples = build(ref)
            try:
                self.append(
                    record,
                    segment,
                    triples,
                    agent,
                    key=ref.key,
                    title=title.replace("{n}", ref.key),
                    guards=guards,
                    also=also(ref, triples) if also else (),
                )
            except (ConcurrentWrite, StaleWrite):
                if self.find(ref) is None:
                    raise  # not the number: a guarded graph changed, which the caller must hear of
                continue
            return ref
        raise Conflict(
            f"could not number a new {segment} batch of <{record.iri.value}>: too many concurrent appends; retry"
        )
