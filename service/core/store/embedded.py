"""The embedded backend: pyoxigraph on disk (or in memory for tests), in this process.

pyoxigraph 0.5 facts this module relies on: ``extend``, ``load`` and ``update`` are each one transaction;
``bulk_load`` is not; RocksDB lets one process open a directory read-write.
"""

from __future__ import annotations

import mmap
import struct
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pyoxigraph import (
    NamedNode,
    QueryBoolean,
    QuerySolutions,
    QueryTriples,
    RdfFormat,
    Triple,
    serialize,
)
from pyoxigraph import (
    Store as OxStore,
)

from ..errors import BadRequest, StoreUnavailable
from ..formats import RDF_FORMATS, written
from .base import RESULTS_MEDIA, Bindings, ChangeSet, Dataset, QueryAnswer, Row, Store, bind, solution_row, update_text

_GENERATION = struct.Struct("=Q")


class EmbeddedStore(Store):
    """pyoxigraph ``Store`` in ``directory``, or in memory when ``directory`` is ``None``."""

    checked_load = True  # every write of this process takes one lock, and only this process writes the directory

    def __init__(self, directory: Path | None = None) -> None:
        try:
            if directory is None:
                self._store = OxStore()
            else:
                directory.mkdir(parents=True, exist_ok=True)
                self._store = OxStore(str(directory))
        except OSError as error:
            raise StoreUnavailable(f"cannot open the embedded store at {directory}: {error}") from error
        self._writes = threading.Lock()
        self.generation = 0
        """Counts writes: a forked query worker older than this answers from a stale copy (service.core.guarded)."""
        # A shared anonymous page: a process forked from this one reads the generation as it is now, not as copied.
        self._published = mmap.mmap(-1, _GENERATION.size, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        # The generation moves on with every write, even a failed one: a bulk load is not atomic.
        with self._writes:
            try:
                yield
            finally:
                self.generation += 1
                _GENERATION.pack_into(self._published, 0, self.generation)  # before the write's answer is sent

    def published_generation(self) -> int:
        """:attr:`generation` as the process that writes last published it, read from shared memory: in a process
        forked from it (a fast-lane front, service.core.guarded.fastlane) it moves on with every later write."""
        return int(_GENERATION.unpack_from(self._published)[0])

    def writes_paused(self) -> threading.Lock:
        """The write lock: while it is held no write is in progress, so a process forked then inherits no store
        lock held mid-write."""
        return self._writes

    def _run(self, query: str, bindings: Bindings | None, union: bool) -> QuerySolutions | QueryBoolean | QueryTriples:
        try:
            return self._store.query(bind(query, bindings), use_default_graph_as_union=union)
        except SyntaxError as error:
            raise BadRequest(f"SPARQL syntax error: {error}") from error

    def select(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> list[Row]:
        solutions = self._run(query, bindings, union)
        if not isinstance(solutions, QuerySolutions):
            raise TypeError("select() needs a SELECT query")
        names = [variable.value for variable in solutions.variables]
        return [solution_row(row, names) for row in solutions]

    def ask(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> bool:
        return bool(self._run(query, bindings, union))

    def construct(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> list[Triple]:
        triples = self._run(query, bindings, union)
        if not isinstance(triples, QueryTriples):
            raise TypeError("construct() needs a CONSTRUCT or DESCRIBE query")
        return list(triples)

    def answer(
        self,
        query: str,
        media_type: str,
        *,
        union: bool = True,
        dataset: Dataset | None = None,
        base_iri: str | None = None,
    ) -> QueryAnswer:
        # pyoxigraph takes a query's FROM unless told a union or a dataset, and then ignores it: the caller decides.
        options: dict[str, Any] = (
            {"use_default_graph_as_union": union}
            if dataset is None
            else {"default_graph": list(dataset.default_graphs), "named_graphs": list(dataset.named_graphs)}
        )
        try:
            result = self._store.query(query, base_iri=base_iri, **options)
        except SyntaxError as error:
            raise BadRequest(f"SPARQL syntax error: {error}") from error
        if isinstance(result, QueryTriples):
            return QueryAnswer(written(result.serialize(format=RDF_FORMATS[media_type])), media_type)
        return QueryAnswer(written(result.serialize(format=RESULTS_MEDIA[media_type])), media_type)

    def graph_triples(self, graph: NamedNode) -> list[Triple]:
        return [quad.triple for quad in self._store.quads_for_pattern(None, None, None, graph)]

    def export_graph(self, graph: NamedNode, rdf_format: RdfFormat, prefixes: Mapping[str, str] | None = None) -> bytes:
        if rdf_format.supports_datasets:
            return written(serialize(self._store.quads_for_pattern(None, None, None, graph), format=rdf_format))
        return written(self._store.dump(format=rdf_format, from_graph=graph, prefixes=dict(prefixes or {})))

    def graph_exists(self, graph: NamedNode) -> bool:
        return any(True for _ in self._store.quads_for_pattern(None, None, None, graph))

    def apply(self, changes: ChangeSet) -> None:
        if changes.is_empty():
            return
        with self._writing():
            try:
                if changes.drop_graphs or changes.delete:
                    self._store.update(update_text(changes))
                else:
                    self._store.extend(changes.insert)
            except OSError as error:
                raise StoreUnavailable(f"the embedded store refused the write: {error}") from error

    def run_update(self, update: str) -> None:
        with self._writing():
            try:
                self._store.update(update)
            except OSError as error:
                raise StoreUnavailable(f"the embedded store refused the write: {error}") from error

    def load_if(self, check: Callable[[], bool], nquads: bytes) -> bool:
        """Load the N-Quads document ``nquads`` in one transaction if ``check()`` (a read of this store) says so;
        whether it was loaded. Its blank nodes are new ones, as an update's ``INSERT`` makes them.

        ``check`` runs under the lock every write of this store takes, so no write comes between it and the
        load: a conditional write of new graphs needs no intents (service.core.commits), since only this
        process writes this directory. The load parses and writes without holding the GIL."""
        with self._writing():
            if not check():
                return False
            try:
                self._store.load(nquads, format=RdfFormat.N_QUADS)
            except OSError as error:
                raise StoreUnavailable(f"the embedded store refused the write: {error}") from error
            return True

    def bulk_load_new_graph(self, graph: NamedNode, data: bytes, rdf_format: RdfFormat, base_iri: str) -> None:
        with self._writing():
            self._store.bulk_load(data, format=rdf_format, base_iri=base_iri, to_graph=graph)
            self._store.flush()

    def close(self) -> None:
        self._store.flush()
        del self._store
