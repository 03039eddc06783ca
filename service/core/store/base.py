"""The one store interface the service is written against; two backends implement it.

Every read goes through SPARQL 1.1 Query; every write is a :class:`ChangeSet` applied atomically,
or a bulk load into a graph that does not exist yet (see :meth:`Store.bulk_load_new_graph`).
Terms are pyoxigraph's value classes on both backends.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, QueryResultsFormat, QuerySolution, RdfFormat, Triple

from ..errors import StoreUnavailable

Term = NamedNode | BlankNode | Literal | Triple
Node = NamedNode | BlankNode | Literal
"""What a row of the service's own queries holds: none of them binds a quoted triple (RDF-star)."""
Row = dict[str, Node]
Bindings = Mapping[str, Term]


def solution_row(solution: QuerySolution, names: Sequence[str]) -> Row:
    """One solution as a row of its bound variables; a quoted triple is refused (the service reads none)."""
    row: Row = {}
    for name in names:
        term = solution[name]
        if isinstance(term, Triple):
            raise TypeError(f"?{name} is bound to a quoted triple, which the service's queries never read")
        if term is not None:
            row[name] = term
    return row


def subject_term(term: Node) -> NamedNode | BlankNode:
    """A row's term where a statement's subject goes: a literal is refused there, as pyoxigraph refuses it."""
    if isinstance(term, Literal):
        raise TypeError(f"a literal cannot be a statement's subject: {term}")
    return term


def iri_term(term: Node) -> NamedNode:
    """A row's term where only an IRI may go (a predicate, a graph name): anything else is refused, as
    pyoxigraph refuses it there."""
    if not isinstance(term, NamedNode):
        raise TypeError(f"not an IRI: {term}")
    return term


def row_triple(row: Row) -> Triple:
    """The triple a row of ``?s ?p ?o`` binds."""
    return Triple(subject_term(row["s"]), iri_term(row["p"]), row["o"])


@dataclass
class ChangeSet:
    """Writes that belong together: graphs dropped first, then quads deleted, then quads inserted."""

    drop_graphs: list[NamedNode] = field(default_factory=list)
    delete: list[Quad] = field(default_factory=list)
    insert: list[Quad] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.drop_graphs or self.delete or self.insert)


@dataclass(frozen=True)
class QueryAnswer:
    """A query's answer serialized for a client, with its media type."""

    body: bytes
    media_type: str


@dataclass(frozen=True)
class Dataset:
    """A SPARQL 1.1 Protocol dataset (``default-graph-uri``, ``named-graph-uri``): it replaces the query's own.

    An empty ``default_graphs`` is an empty default graph; an empty ``named_graphs`` means no named graphs
    (https://www.w3.org/TR/sparql11-protocol/#dataset).
    """

    default_graphs: tuple[NamedNode, ...] = ()
    named_graphs: tuple[NamedNode, ...] = ()


_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_bindings(bindings: Bindings | None) -> Bindings:
    """Refuse binding names that are not SPARQL variable names (they are never user text)."""
    check_names(bindings or {})
    return bindings or {}


def check_names(names: Iterable[str]) -> None:
    """Refuse names that are not SPARQL variable names."""
    for name in names:
        if not _VARIABLE.match(name):
            raise ValueError(f"not a SPARQL variable name: {name!r}")


class StoreAuthorizationFailed(StoreUnavailable):
    """The remote store refused the service's credentials, or none were configured (503: an operator must act)."""


class StoreLimitExceeded(StoreUnavailable):
    """The remote store hit one of its limits (request size, result rows): an answer would have been cut short."""


class Store(ABC):
    """A SPARQL 1.1 dataset of named graphs."""

    checked_load: ClassVar[bool] = False
    """Whether :meth:`load_if` runs its check and its load with no other write between them: true only of a store
    that one process alone writes (the embedded one); :mod:`service.core.commits` then needs no intents."""

    def load_if(self, check: Callable[[], bool], nquads: bytes) -> bool:
        """Load the N-Quads document ``nquads`` in one transaction if ``check()`` (a read of this store) says so;
        whether it was loaded. Only where :attr:`checked_load` says the store can."""
        raise NotImplementedError(f"a {type(self).__name__} cannot load under a check: see Store.checked_load")

    def attach_catalog(self, graph: NamedNode) -> None:
        """Name the deployment's catalog graph: a remote store then makes union queries over the catalogued
        graphs only (see :mod:`.remote`). The embedded store needs nothing."""

    @abstractmethod
    def select(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> list[Row]:
        """Rows of a SELECT query; ``bindings`` fix variables to terms; ``union`` makes the default graph the union of all graphs."""

    @abstractmethod
    def ask(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> bool:
        """The answer of an ASK query."""

    @abstractmethod
    def construct(self, query: str, bindings: Bindings | None = None, *, union: bool = False) -> list[Triple]:
        """The triples of a CONSTRUCT or DESCRIBE query."""

    @abstractmethod
    def answer(
        self,
        query: str,
        media_type: str,
        *,
        union: bool = True,
        dataset: Dataset | None = None,
        base_iri: str | None = None,
    ) -> QueryAnswer:
        """A client's query (any read-only form), serialized as ``media_type`` (results or RDF).

        ``dataset``, when given, replaces the query's ``FROM``/``FROM NAMED``; otherwise ``union`` makes the
        default graph the union of the graphs (pass ``False`` when the query names its own dataset).
        ``base_iri`` resolves the query's relative IRIs.
        """

    @abstractmethod
    def graph_triples(self, graph: NamedNode) -> list[Triple]:
        """All triples of one named graph."""

    @abstractmethod
    def export_graph(self, graph: NamedNode, rdf_format: RdfFormat, prefixes: Mapping[str, str] | None = None) -> bytes:
        """One named graph serialized (TriG and N-Quads keep the graph name)."""

    @abstractmethod
    def graph_exists(self, graph: NamedNode) -> bool:
        """Whether the named graph holds at least one triple."""

    @abstractmethod
    def apply(self, changes: ChangeSet) -> None:
        """Apply all of ``changes`` or none of them."""

    @abstractmethod
    def run_update(self, update: str) -> None:
        """Run one SPARQL 1.1 Update request (all its operations in one transaction); the service's own text only."""

    def stage(self, graph: NamedNode, triples: Sequence[Triple], max_update_triples: int) -> None:
        """Add ``triples`` to ``graph``, a staging graph outside every record, in requests the store takes.

        Not atomic: callers journal the staging graph first (see :mod:`service.core.graphs`), so a crash
        leaves only a graph that recovery drops. By default, INSERT DATA requests of ``max_update_triples``.
        """
        for start in range(0, len(triples), max_update_triples):
            chunk = triples[start : start + max_update_triples]
            self.apply(ChangeSet(insert=[Quad(t.subject, t.predicate, t.object, graph) for t in chunk]))

    @abstractmethod
    def bulk_load_new_graph(self, graph: NamedNode, data: bytes, rdf_format: RdfFormat, base_iri: str) -> None:
        """Load a large, already validated document into an empty graph, fast but not atomically.

        Callers journal the load first (see :mod:`service.core.catalog`) so that a crash is rolled back.
        """

    @abstractmethod
    def close(self) -> None:
        """Release the store."""


RESULTS_MEDIA: dict[str, QueryResultsFormat] = {
    "application/sparql-results+json": QueryResultsFormat.JSON,
    "application/sparql-results+xml": QueryResultsFormat.XML,
    "text/csv": QueryResultsFormat.CSV,
    "text/tab-separated-values": QueryResultsFormat.TSV,
}


def _where_brace(query: str) -> int:
    """Index of the ``{`` opening the outermost WHERE group, skipping comments, IRIs and strings."""
    index, length = 0, len(query)
    seen_where = False
    while index < length:
        char = query[index]
        if char == "#":
            end = query.find("\n", index)
            index = length if end < 0 else end
        elif char == "<" and not seen_where:
            end = query.find(">", index)
            index = length if end < 0 else end + 1
            continue
        elif char in "\"'":
            end = index + 1
            while end < length and query[end] != char:
                end += 2 if query[end] == "\\" else 1
            index = end + 1
            continue
        elif not seen_where and query[index : index + 5].upper() == "WHERE" and not query[index - 1 : index].isalnum():
            seen_where = True
            index += 5
            continue
        elif seen_where and char == "{":
            return index
        index += 1
    raise ValueError("a parameterized query needs an explicit WHERE { ... } clause")


def bind(query: str, bindings: Bindings | None) -> str:
    """The query with ``bindings`` as a VALUES block heading its outermost WHERE group.

    Terms are serialized by pyoxigraph (N-Triples syntax, escaped), so no caller text is ever pasted
    into the query; both backends bind the same way so a query means the same on both.
    """
    bindings = check_bindings(bindings)
    if not bindings:
        return query
    return bind_rows(query, list(bindings), [list(bindings.values())])


def bind_rows(query: str, names: Sequence[str], rows: Sequence[Sequence[Term]]) -> str:
    """The query with a VALUES block of several rows (each a term per name, in order) heading its outermost
    WHERE group, serialized as :func:`bind` does: the rows a query is asked about at once (e.g. a batch's pairs)."""
    check_names(names)
    if any(len(row) != len(names) for row in rows):
        raise ValueError(f"every VALUES row needs {len(names)} terms")
    header = " ".join(f"?{name}" for name in names)
    block = " ".join("(" + " ".join(str(term) for term in row) + ")" for row in rows)
    brace = _where_brace(query)
    return f"{query[: brace + 1]}\n  VALUES ({header}) {{ {block} }}\n{query[brace + 1 :]}"


def quads_block(quads: Sequence[Quad]) -> str:
    """Quads as the body of INSERT DATA / DELETE DATA, grouped by graph, in N-Triples term syntax."""
    by_graph: dict[str, list[str]] = {}
    for quad in quads:
        key = str(quad.graph_name) if isinstance(quad.graph_name, NamedNode) else ""
        by_graph.setdefault(key, []).append(f"{quad.subject} {quad.predicate} {quad.object} .")
    parts = []
    for graph, lines in by_graph.items():
        body = "\n".join(lines)
        parts.append(f"GRAPH {graph} {{\n{body}\n}}" if graph else body)
    return "\n".join(parts)


def _has_blank_node(term: Quad | Triple | Term) -> bool:
    if isinstance(term, BlankNode):
        return True
    if isinstance(term, (Quad, Triple)):
        return _has_blank_node(term.subject) or _has_blank_node(term.object)
    return False


def update_text(changes: ChangeSet) -> str:
    """One SPARQL 1.1 Update request that performs a change set (operations run in order)."""
    operations = [f"DROP SILENT GRAPH {graph}" for graph in changes.drop_graphs]
    if changes.delete:
        operations.append(f"DELETE DATA {{\n{quads_block(changes.delete)}\n}}")
    if changes.insert:
        if any(_has_blank_node(quad) for quad in changes.insert):
            # Virtuoso refuses blank nodes in INSERT DATA; a template's blank nodes are fresh per operation
            # and shared within it, which is what INSERT DATA means too.
            operations.append(f"INSERT {{\n{quads_block(changes.insert)}\n}} WHERE {{}}")
        else:
            operations.append(f"INSERT DATA {{\n{quads_block(changes.insert)}\n}}")
    return " ;\n".join(operations)
