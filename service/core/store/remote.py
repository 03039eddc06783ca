"""The remote backend: any SPARQL 1.1 Query + Update + Graph Store Protocol endpoint, over httpx.

Each write is one SPARQL Update request, which Oxigraph, GraphDB and Virtuoso apply atomically
(https://www.w3.org/TR/sparql11-update/#updateServices leaves atomicity to the service).
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx
from pyoxigraph import (
    NamedNode,
    Quad,
    QueryBoolean,
    QueryResultsFormat,
    QuerySolutions,
    RdfFormat,
    Triple,
    parse,
    parse_query_results,
    serialize,
)

from ..errors import BadRequest, StoreUnavailable
from .base import Bindings, ChangeSet, QueryAnswer, Row, Store, bind, update_text

_RESULTS_JSON = "application/sparql-results+json"
_NTRIPLES = "application/n-triples"


class RemoteStore(Store):
    """A store reached over HTTP: ``query_url`` (SPARQL Query), ``update_url`` (Update), ``store_url`` (GSP)."""

    def __init__(self, query_url: str, update_url: str, store_url: str, *, timeout_s: float = 60.0) -> None:
        self._query_url = query_url
        self._update_url = update_url
        self._store_url = store_url
        self._client = httpx.Client(timeout=timeout_s)

    def _post(self, url: str, *, data: Mapping[str, object] | None = None, content: bytes | None = None,
              headers: Mapping[str, str] | None = None, params: Mapping[str, str] | None = None) -> httpx.Response:
        try:
            response = self._client.post(url, data=data, content=content, headers=headers, params=params)
        except httpx.HTTPError as error:
            raise StoreUnavailable(f"the remote store at {url} did not answer: {error}") from error
        if response.status_code == 400:
            raise BadRequest(f"SPARQL syntax error (reported by the remote store): {response.text.strip()[:500]}")
        if response.status_code >= 300:
            raise StoreUnavailable(f"the remote store at {url} answered {response.status_code}: {response.text.strip()[:500]}")
        return response

    def _dataset(self, union: bool) -> dict[str, list[str]]:
        """Protocol dataset for a union default graph: every named graph, as default and as named."""
        if not union:
            return {}
        graphs = [row["g"].value for row in self.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { } }")]
        return {"default-graph-uri": graphs, "named-graph-uri": graphs}

    def _query(self, query: str, accept: str, union: bool) -> httpx.Response:
        form: dict[str, object] = {"query": query, **self._dataset(union)}
        return self._post(self._query_url, data=form, headers={"Accept": accept})

    def select(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> list[Row]:
        response = self._query(bind(query, bindings), _RESULTS_JSON, union)
        solutions = parse_query_results(response.content, format=QueryResultsFormat.JSON)
        if not isinstance(solutions, QuerySolutions):
            raise TypeError("select() needs a SELECT query")
        names = [variable.value for variable in solutions.variables]
        return [{name: row[name] for name in names if row[name] is not None} for row in solutions]

    def ask(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> bool:
        response = self._query(bind(query, bindings), _RESULTS_JSON, union)
        answer = parse_query_results(response.content, format=QueryResultsFormat.JSON)
        if not isinstance(answer, QueryBoolean):
            raise TypeError("ask() needs an ASK query")
        return bool(answer)

    def construct(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> list[Triple]:
        response = self._query(bind(query, bindings), _NTRIPLES, union)
        return [quad.triple for quad in parse(response.content, format=RdfFormat.N_TRIPLES)]

    def answer(self, query: str, media_type: str, *, union: bool = True) -> QueryAnswer:
        response = self._query(query, media_type, union)
        return QueryAnswer(response.content, media_type)

    def graph_triples(self, graph: NamedNode) -> list[Triple]:
        return self.construct("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": graph})

    def export_graph(self, graph: NamedNode, rdf_format: RdfFormat, prefixes: Mapping[str, str] | None = None) -> bytes:
        triples = self.graph_triples(graph)
        if rdf_format.supports_datasets:
            return serialize([Quad(t.subject, t.predicate, t.object, graph) for t in triples], format=rdf_format)
        return serialize(triples, format=rdf_format, prefixes=dict(prefixes or {}))

    def graph_exists(self, graph: NamedNode) -> bool:
        return self.ask("ASK WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": graph})

    def apply(self, changes: ChangeSet) -> None:
        if not changes.is_empty():
            self.run_update(update_text(changes))

    def run_update(self, update: str) -> None:
        self._post(self._update_url, content=update.encode("utf-8"), headers={"Content-Type": "application/sparql-update"})

    def bulk_load_new_graph(self, graph: NamedNode, data: bytes, rdf_format: RdfFormat, base_iri: str) -> None:
        self._post(
            self._store_url,
            params={"graph": graph.value},
            content=data,
            headers={"Content-Type": rdf_format.media_type},
        )

    def close(self) -> None:
        self._client.close()
