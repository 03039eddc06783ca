"""The catalog's journal of bulk loads: a load is journaled (``cat:loadInProgress``) under a lease held by the
loading replica (``cat:loadOwner``, ``cat:leaseUntil``) and renewed while the load runs; :meth:`LoadJournal.recover`
drops the graphs of loads whose lease has lapsed.

:class:`LoadJournal` is a part of :class:`.catalog.Catalog` (its base class), kept apart to keep each file short;
the catalog module's docstring says why leases are timed by the service's clock, :func:`now`.
"""

from __future__ import annotations

import threading
import uuid
from abc import ABC, abstractmethod
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Self

from pyoxigraph import Literal, NamedNode, Quad

from .errors import Conflict, ServiceError
from .namespaces import CATALOG, XSD
from .store import ChangeSet, Store

DIGEST = NamedNode(CATALOG + "digest")
"""``cat:digest``: every catalogued graph has one; a load is journaled only for a graph without."""
_PENDING, _OWNER, _LEASE = (NamedNode(CATALOG + name) for name in ("loadInProgress", "loadOwner", "leaseUntil"))
_DATETIME = NamedNode(XSD + "dateTime")


class LoadJournal(ABC):
    """Journaled bulk loads of new graphs, under leases (see the module docstring)."""

    _store: Store
    graph: NamedNode
    """The catalog graph, where the journal is kept."""
    replica: str
    lease_s: float
    _running: set[str]

    @abstractmethod
    def _quad(self, subject: NamedNode, predicate: NamedNode, value: NamedNode | Literal) -> Quad: ...

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
            f"FILTER NOT EXISTS {{ GRAPH {self.graph} {{ {graph} {DIGEST} ?digest }} }} "
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
            f"FILTER NOT EXISTS {{ GRAPH {catalog} {{ {graph} {DIGEST} ?digest }} }} "
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

    def __init__(self, catalog: LoadJournal, graph: NamedNode, load: str) -> None:
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
