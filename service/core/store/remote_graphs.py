"""Whole graphs read from a remote store completely or not at all.

:meth:`graph_triples` counts the graph, then reads it with one Graph Store Protocol GET; if that is refused or comes
back with another count, it pages ``SELECT ?s ?p ?o … ORDER BY … LIMIT page_size OFFSET …``. A page shorter than
asked while the count says more remains means a store limit cut it: :class:`StoreLimitExceeded`, never a short
answer.

:class:`WholeGraphReads` is a part of :class:`.remote.RemoteStore` (its base class), kept apart to keep each file
short.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

import httpx
from pyoxigraph import NamedNode, Quad, RdfFormat, Triple, parse, serialize

from ..errors import StoreUnavailable
from ..formats import written
from .base import Row, StoreLimitExceeded, bind, row_triple
from .engines import triples_without_node_ids

_COUNT = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
# The ordered sub-select is Virtuoso's documented way past its MaxSortedTopRows (an ORDER BY with OFFSET + LIMIT
# above 10,000 is refused: "SR353 ... Only 10000 are allowed"); the graph's IRI is written in, N-Triples escaped.
_PAGE = (
    "SELECT ?s ?p ?o WHERE { { SELECT ?s ?p ?o WHERE { GRAPH %s { ?s ?p ?o } } ORDER BY ?s ?p ?o } } LIMIT %d OFFSET %d"
)


class WholeGraphReads(ABC):
    """:meth:`graph_triples` and :meth:`export_graph` of a remote store (see the module docstring)."""

    _client: httpx.Client
    _store_url: str
    page_size: int
    _graph_store_reads: bool

    @abstractmethod
    def _rows(self, query: str, union: bool) -> list[Row]: ...

    @abstractmethod
    def _raise_for(self, url: str, response: httpx.Response) -> None: ...

    def _count(self, graph: NamedNode) -> int:
        rows = self._rows(bind(_COUNT, {"g": graph}), union=False)
        return int(rows[0]["n"].value) if rows and "n" in rows[0] else 0

    def _graph_store_get(self, graph: NamedNode) -> list[Triple] | None:
        """The whole graph by one GSP GET, or ``None`` when the store does not serve it that way."""
        try:
            response = self._client.get(
                self._store_url, params={"graph": graph.value}, headers={"Accept": RdfFormat.N_TRIPLES.media_type}
            )
        except httpx.HTTPError as error:
            raise StoreUnavailable(
                f"the remote store at {self._store_url} did not answer: {type(error).__name__}: {error}"
            ) from error
        if response.status_code in (401, 403):
            self._raise_for(self._store_url, response)
        if response.status_code != 200:
            return None
        try:
            return [quad.triple for quad in parse(response.content, format=RdfFormat.N_TRIPLES)]
        except SyntaxError:
            return None

    def _paged(self, graph: NamedNode, expected: int) -> list[Triple]:
        triples: list[Triple] = []
        while True:
            rows = self._rows(_PAGE % (graph, self.page_size, len(triples)), union=False)
            triples.extend(map(row_triple, rows))
            if len(rows) < self.page_size:
                break
        if len(triples) < expected and self._count(graph) > len(triples):
            raise StoreLimitExceeded(
                f"the remote store returned {len(triples)} of the {expected} triples of <{graph.value}> in pages of "
                f"{self.page_size}: a result limit of the store (e.g. Virtuoso's ResultSetMaxRows) cut a page short; "
                "lower CAIE_REMOTE_PAGE_SIZE below it"
            )
        return triples

    def graph_triples(self, graph: NamedNode) -> list[Triple]:
        expected = self._count(graph)
        if expected == 0:
            return []
        if self._graph_store_reads:
            whole = self._graph_store_get(graph)
            if whole is not None and (len(whole) == expected or len(whole) == self._count(graph)):
                return triples_without_node_ids(whole)
        return triples_without_node_ids(self._paged(graph, expected))

    def export_graph(self, graph: NamedNode, rdf_format: RdfFormat, prefixes: Mapping[str, str] | None = None) -> bytes:
        triples = self.graph_triples(graph)
        if rdf_format.supports_datasets:
            return written(
                serialize([Quad(t.subject, t.predicate, t.object, graph) for t in triples], format=rdf_format)
            )
        return written(serialize(triples, format=rdf_format, prefixes=dict(prefixes or {})))
