"""The remote backend: any SPARQL 1.1 Query + Update + Graph Store Protocol endpoint, over httpx.

Each write is one SPARQL Update request, which Oxigraph, GraphDB and Virtuoso apply atomically
(https://www.w3.org/TR/sparql11-update/#updateServices leaves atomicity to the service).

What this module does so that answers do not depend on the engine behind it (engines' own ways are read
in :mod:`.engines`; credentials are :mod:`.remote_auth`):

* **Credentials.** HTTP Basic, HTTP Digest or a bearer token (``auth``), set once on the httpx client.
  They never appear in a message: errors name the URL and the store's answer only.
* **Errors with their meaning.** The store's own text (trimmed to 500 characters) is carried in the
  message: a 400 is a :class:`BadRequest`, said to be a syntax error only when the store says so; 401/403
  is :class:`StoreAuthorizationFailed`; 413, or a text saying a limit was exceeded, is
  :class:`StoreLimitExceeded`; other 5xx and connection errors are :class:`StoreUnavailable` (all 503
  except the 400).
* **The dataset is explicit.** A *union* query is sent with the catalogued graphs (those with a
  ``cat:digest`` in the catalog graph, and the catalog graph itself) as both ``default-graph-uri`` and
  ``named-graph-uri``, read from the catalog for each union query (one read of one graph's index; no
  cache, so a graph another replica just committed is seen at once). Graphs that are not catalogued
  (staging graphs, bulk loads in progress, a store's own system graphs) are therefore never part of a
  union answer. A non-union query is sent with no dataset when it names graphs (``GRAPH``, ``FROM``): the service's
  own queries name their graphs (bound from the catalog or by the caller), and reach staging and journal
  graphs that way; one that names none is sent with an empty default graph, since with no dataset
  Virtuoso reads every graph (its own too) as the default graph. Until a
  catalog is attached (:meth:`RemoteStore.attach_catalog`; :func:`..open_store` does it from the base
  URL) a union is over every named graph the store lists. Rows in which a ``GRAPH ?g`` variable came
  back unbound (Virtuoso answers ``GRAPH ?g { }`` with one such row) are dropped when the query has no
  OPTIONAL or UNION that could leave it unbound legitimately.
* **Blank nodes read back.** Virtuoso returns blank nodes as ``nodeID://…`` IRIs (or bnode values with
  that prefix); they are turned into blank nodes labelled by their id before parsing, consistently
  within one answer. What the service writes has none (:func:`service.core.rdf.skolemize`).
* **Whole graphs are read completely or not at all** (:mod:`.remote_graphs`: a Graph Store Protocol GET checked
  against a count, else pages). ``row_cap`` (Virtuoso: its ``ResultSetMaxRows``) refuses any SELECT or CONSTRUCT
  answer of exactly that many rows, since it cannot be told from a cut one; ``page_size`` must stay below it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

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

from ..errors import StoreUnavailable
from ..formats import written
from ..guarded.limits import QueryLimits
from ..guarded.remote import limited_request
from ..namespaces import CATALOG
from ..outbound import tls_context
from .base import (
    RESULTS_MEDIA,
    Bindings,
    ChangeSet,
    Dataset,
    QueryAnswer,
    Row,
    Store,
    StoreLimitExceeded,
    Term,
    bind,
    solution_row,
    update_text,
)
from .engines import (
    ENGINE_GRAPHS,
    json_results_without_node_ids,
    must_bind,
    store_error,
    triples_without_node_ids,
)
from .remote_auth import NegotiatedAuth
from .remote_graphs import WholeGraphReads

_RESULTS_JSON = "application/sparql-results+json"
_NTRIPLES = "application/n-triples"
_WRITTEN_HERE = {"application/n-quads": RdfFormat.N_QUADS, "application/trig": RdfFormat.TRIG}
"""Graph answers asked of the engine as N-Triples and written here, in the default graph."""

_NO_GRAPH_STORE_WRITES = (404, 405, 415, 501)
"""Statuses of a GSP POST that mean the store offers no Graph Store writes at that URL (not an error)."""
_NAMES_A_GRAPH = re.compile(r"\b(GRAPH|FROM)\b", re.IGNORECASE)
EMPTY_DEFAULT_GRAPH = "urn:x-ob-caie:empty-default-graph"
"""The default graph a non-union query that names no graph is sent with: an IRI no one writes to."""

_CATALOGUED = "SELECT DISTINCT ?g WHERE { GRAPH %s { ?g <" + CATALOG + "digest> ?digest } }"
_GRAPH_NAMES = "SELECT DISTINCT ?g WHERE { GRAPH ?g { } }"
_GRAPHS_WITH_TRIPLES = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"


class RemoteStore(WholeGraphReads, Store):
    """A store reached over HTTP: ``query_url`` (SPARQL Query), ``update_url`` (Update), ``store_url`` (GSP).

    ``username`` and ``password`` authenticate by HTTP Basic or Digest (``auth_scheme`` "basic" or "digest";
    unset: whichever the store asks for), ``token`` by a bearer token (``auth_scheme`` "bearer"). ``catalog`` is the deployment's catalog graph (see the module
    docstring). ``page_size`` bounds each page of a whole-graph read; ``row_cap`` is the store's own
    result row limit when it has one; ``graph_store_reads`` lets whole graphs be read by GSP GET first;
    ``stage_chunk`` bounds each GSP POST of content staged for a large write (:meth:`stage`).
    """

    def __init__(
        self,
        query_url: str,
        update_url: str,
        store_url: str,
        *,
        timeout_s: float = 60.0,
        username: str | None = None,
        password: str | None = None,
        token: str | None = None,
        auth_scheme: str | None = None,
        catalog: str | None = None,
        page_size: int = 5_000,
        row_cap: int | None = None,
        graph_store_reads: bool = True,
        stage_chunk: int = 10_000,
    ) -> None:
        if page_size < 1 or (row_cap is not None and page_size >= row_cap):
            raise ValueError("page_size must be at least 1 and below the store's row cap")
        self._query_url = query_url
        self._update_url = update_url
        self._store_url = store_url
        if auth_scheme not in (None, "basic", "digest", "bearer"):
            raise ValueError(f"unknown remote store auth scheme {auth_scheme!r}: basic, digest or bearer")
        auth: httpx.Auth | None = None
        headers: dict[str, str] = {}
        if auth_scheme == "bearer" or (auth_scheme is None and token is not None):
            if token is None:
                raise ValueError("bearer authentication needs a token")
            headers["Authorization"] = f"Bearer {token}"
        elif username is not None:
            if password is None:
                raise ValueError("a remote store user needs a password")
            auth = NegotiatedAuth(username, password, auth_scheme)
        elif auth_scheme is not None:
            raise ValueError(f"{auth_scheme} authentication needs a user and a password")
        self._has_credentials = bool(headers) or auth is not None
        self._client = httpx.Client(timeout=timeout_s, auth=auth, headers=headers, verify=tls_context())
        self._catalog: NamedNode | None = NamedNode(catalog) if catalog else None
        self.page_size = page_size
        self.row_cap = row_cap
        self._graph_store_reads = graph_store_reads
        self._graph_store_writes = bool(store_url)
        self.stage_chunk = stage_chunk

    def attach_catalog(self, graph: NamedNode) -> None:
        self._catalog = graph

    # ------------------------------------------------------------------------------------ HTTP and errors

    def _send(
        self, method: str, url: str, *, limits: QueryLimits | None = None, tolerate: Sequence[int] = (), **kwargs: Any
    ) -> httpx.Response:
        """The store's response; an error status raises, but for those in ``tolerate`` (the caller's to read)."""
        try:
            # A client's query carries its limits: the answer is streamed and dropped at the size limit.
            response = (
                self._client.request(method, url, **kwargs)
                if limits is None
                else limited_request(self._client, method, url, limits, **kwargs)
            )
        except httpx.HTTPError as error:
            raise StoreUnavailable(
                f"the remote store at {url} did not answer: {type(error).__name__}: {error}"
            ) from error
        if response.status_code >= 300 and response.status_code not in tolerate:
            self._raise_for(url, response)
        if response.status_code == 206 or response.headers.get("x-sql-state") == "S1TAT":
            # Virtuoso's "anytime" answer: cut short at its time or row limit and sent as a success (206, or 200
            # when HTTPAnytimeStatus says so); a figure computed from it would look better than the record
            raise StoreLimitExceeded(
                f"the remote store at {url} sent a partial answer ({response.status_code}, "
                f"{response.headers.get('x-sql-message', 'X-SQL-State S1TAT').strip()}): "
                "narrow the query or raise the store's limits"
            )
        return response

    def _raise_for(self, url: str, response: httpx.Response) -> None:
        raise store_error(url, response, self._has_credentials)

    # ---------------------------------------------------------------------------------------- datasets

    def _catalogued(self) -> list[str]:
        """The graphs a union query reads: the catalogued ones and the catalog (every listed graph until one is attached)."""
        if self._catalog is None:
            # Oxigraph lists graph names cheaply; Virtuoso answers that with one unbound row (dropped by _rows).
            rows = self._rows(_GRAPH_NAMES, union=False) or self._rows(_GRAPHS_WITH_TRIPLES, union=False)
            names = {row["g"].value for row in rows if isinstance(row.get("g"), NamedNode)}
            return sorted(name for name in names if not name.startswith(ENGINE_GRAPHS))
        rows = self._rows(_CATALOGUED % self._catalog, union=False)
        return sorted({self._catalog.value} | {row["g"].value for row in rows if isinstance(row.get("g"), NamedNode)})

    def _dataset(self, union: bool, query: str) -> dict[str, list[str]]:
        """Protocol dataset for a union default graph: the catalogued graphs, as default and as named.

        A non-union query that names no graph (no ``GRAPH``, no ``FROM``) is sent with an empty default graph
        (:data:`EMPTY_DEFAULT_GRAPH`, never written): the service writes nothing to a store's default graph,
        and with no dataset Virtuoso reads every graph, its own included, as the default graph. A query
        naming graphs is sent with no dataset, so it reaches every graph it names.
        """
        if not union:
            return {} if _NAMES_A_GRAPH.search(query) else {"default-graph-uri": [EMPTY_DEFAULT_GRAPH]}
        graphs = self._catalogued()
        return {"default-graph-uri": graphs, "named-graph-uri": graphs}

    def _query(self, query: str, accept: str, union: bool) -> httpx.Response:
        form: dict[str, Any] = {"query": query, **self._dataset(union, query)}
        return self._send("POST", self._query_url, data=form, headers={"Accept": accept})

    def _check_cap(self, count: int, what: str) -> None:
        if self.row_cap is not None and count >= self.row_cap:
            raise StoreLimitExceeded(
                f"the remote store returned {count} {what}, its row cap (CAIE_REMOTE_ROW_CAP="
                f"{self.row_cap}): the answer may have been cut short; narrow the query"
            )

    def _rows(self, query: str, union: bool) -> list[Row]:
        response = self._query(query, _RESULTS_JSON, union)
        solutions = parse_query_results(json_results_without_node_ids(response.content), format=QueryResultsFormat.JSON)
        if not isinstance(solutions, QuerySolutions):
            raise TypeError("select() needs a SELECT query")
        names = [variable.value for variable in solutions.variables]
        rows = [solution_row(row, names) for row in solutions]
        self._check_cap(len(rows), "rows")
        announced = response.headers.get("x-sparql-maxrows")  # Virtuoso's sign that it applied ResultSetMaxRows
        if announced is not None and announced.isdigit() and len(rows) >= int(announced):
            raise StoreLimitExceeded(
                f"the remote store cut the answer at its row limit ({announced} rows, "
                "X-SPARQL-MaxRows): narrow the query or raise the store's limit"
            )
        required = [name for name in must_bind(query) if name in names]
        return [row for row in rows if all(name in row for name in required)] if required else rows

    # ------------------------------------------------------------------------------------------- reads

    def select(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> list[Row]:
        return self._rows(bind(query, bindings), union)

    def ask(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> bool:
        response = self._query(bind(query, bindings), _RESULTS_JSON, union)
        answer = parse_query_results(response.content, format=QueryResultsFormat.JSON)
        if not isinstance(answer, QueryBoolean):
            raise TypeError("ask() needs an ASK query")
        return bool(answer)

    def construct(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> list[Triple]:
        response = self._query(bind(query, bindings), _NTRIPLES, union)
        triples = triples_without_node_ids(
            [quad.triple for quad in parse(response.content, format=RdfFormat.N_TRIPLES)]
        )
        self._check_cap(len(triples), "triples")
        return triples

    def _client_query(
        self, query: str, accept: str, union: bool, dataset: Dataset | None, limits: QueryLimits | None = None
    ) -> httpx.Response:
        """A client's query with the protocol dataset passed through, else as :meth:`_dataset` says."""
        if dataset is None:
            parameters = self._dataset(union, query)
        else:
            # An empty default graph is named explicitly: with none given, Virtuoso reads every graph as the default.
            default = [graph.value for graph in dataset.default_graphs] or [EMPTY_DEFAULT_GRAPH]
            parameters = {
                "default-graph-uri": default,
                "named-graph-uri": [graph.value for graph in dataset.named_graphs],
            }
        form: dict[str, Any] = {"query": query, **parameters}
        return self._send("POST", self._query_url, data=form, headers={"Accept": accept}, limits=limits)

    def answer(
        self,
        query: str,
        media_type: str,
        *,
        union: bool = True,
        dataset: Dataset | None = None,
        base_iri: str | None = None,
        limits: QueryLimits | None = None,
    ) -> QueryAnswer:
        # The protocol has no base IRI parameter; a BASE on the first line keeps the engine's line numbers right.
        text = f"BASE <{base_iri}> {query}" if base_iri else query
        # Results other than JSON, and N-Quads/TriG of a graph, are written here from JSON or N-Triples: engines
        # write them differently (Virtuoso's TSV gives an IRI as "http://…", not <http://…>) or not at all.
        asked = (
            _RESULTS_JSON if media_type in RESULTS_MEDIA else _NTRIPLES if media_type in _WRITTEN_HERE else media_type
        )
        content = self._client_query(text, asked, union, dataset, limits).content
        if asked == _RESULTS_JSON:
            content = json_results_without_node_ids(content)
        if asked == media_type:
            return QueryAnswer(content, media_type)
        if asked == _RESULTS_JSON:
            results = parse_query_results(content, format=QueryResultsFormat.JSON)
            return QueryAnswer(written(results.serialize(format=RESULTS_MEDIA[media_type])), media_type)
        triples = triples_without_node_ids([quad.triple for quad in parse(content, format=RdfFormat.N_TRIPLES)])
        quads = [Quad(t.subject, t.predicate, t.object) for t in triples]
        return QueryAnswer(written(serialize(quads, format=_WRITTEN_HERE[media_type])), media_type)

    def graph_exists(self, graph: NamedNode) -> bool:
        return self.ask("ASK WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": graph})

    # ------------------------------------------------------------------------------------------ writes

    def apply(self, changes: ChangeSet) -> None:
        if not changes.is_empty():
            self.run_update(update_text(changes))

    def run_update(self, update: str) -> None:
        self._send(
            "POST",
            self._update_url,
            content=update.encode("utf-8"),
            headers={"Content-Type": "application/sparql-update"},
        )

    def stage(self, graph: NamedNode, triples: Sequence[Triple], max_update_triples: int) -> None:
        """GSP POSTs of ``stage_chunk`` triples (Virtuoso loads 10,000 that way faster than 500 by INSERT DATA,
        which it compiles to SQL); INSERT DATA requests when the store offers no Graph Store writes."""
        for start in range(0, len(triples), self.stage_chunk):
            if not self._graph_store_writes:
                super().stage(graph, triples[start:], max_update_triples)
                return
            data = serialize(triples[start : start + self.stage_chunk], format=RdfFormat.N_TRIPLES)
            response = self._send(
                "POST",
                self._store_url,
                params={"graph": graph.value},
                content=data,
                headers={"Content-Type": RdfFormat.N_TRIPLES.media_type},
                tolerate=_NO_GRAPH_STORE_WRITES,
            )
            if response.status_code in _NO_GRAPH_STORE_WRITES:
                self._graph_store_writes = False  # this chunk was not loaded: INSERT DATA takes it from here
                super().stage(graph, triples[start:], max_update_triples)
                return

    def bulk_load_new_graph(self, graph: NamedNode, data: bytes, rdf_format: RdfFormat, base_iri: str) -> None:
        self._send(
            "POST",
            self._store_url,
            params={"graph": graph.value},
            content=data,
            headers={"Content-Type": rdf_format.media_type},
        )

    def close(self) -> None:
        self._client.close()


__all__ = ["RemoteStore", "Term", "json_results_without_node_ids", "triples_without_node_ids"]
