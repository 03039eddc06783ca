"""A client's SPARQL 1.1 Protocol query request: its parameters, form, dataset and answer.

The SPARQL 1.1 Protocol (https://www.w3.org/TR/sparql11-protocol/) §2.1 defines the query operation: one
``query``, zero or more ``default-graph-uri`` and ``named-graph-uri``. Its form (SELECT, ASK, CONSTRUCT,
DESCRIBE) decides which media types can answer it. :func:`execute` is the one place a client's query runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import NoReturn

from pyoxigraph import NamedNode

from .errors import BadRequest
from .formats import GRAPH_FORMATS, RDF_ALIASES, RESULT_ALIASES, RESULT_FORMATS, negotiate
from .store.base import Dataset, QueryAnswer, Store

_PROLOGUE = re.compile(
    r"""\s*(?:\#[^\n]*\n?               # a comment
        |BASE\s*<[^>]*>                 # BASE <iri>
        |PREFIX\s+[^\s:]*:\s*<[^>]*>    # PREFIX p: <iri>
        )""",
    re.IGNORECASE | re.VERBOSE,
)
_KEYWORD = re.compile(r"\s*([A-Za-z]+)")
_UPDATES = {"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"}

# What can hide a FROM from a scan: comments, strings (long ones first) and IRIs are skipped whole; braces
# count depth. At depth 0, outside those, FROM can only open a dataset clause (subqueries sit inside braces).
_TOKENS = re.compile(
    r"""(?P<skip>\#[^\n]*
        |\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
        |'''(?:[^'\\]|\\.|'(?!''))*'''
        |"(?:[^"\\\n]|\\.)*"
        |'(?:[^'\\\n]|\\.)*'
        |<[^<>"{}|^`\\\x00-\x20]*>)
       |(?P<open>\{)|(?P<close>\})
       |(?<![\w:?$.-])(?P<from>FROM)(?![\w:.-])""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)

QUERY = "query"
DEFAULT_GRAPH = "default-graph-uri"
NAMED_GRAPH = "named-graph-uri"


class QueryForm(Enum):
    SELECT = "SELECT"
    ASK = "ASK"
    CONSTRUCT = "CONSTRUCT"
    DESCRIBE = "DESCRIBE"

    @property
    def returns_graph(self) -> bool:
        return self in (QueryForm.CONSTRUCT, QueryForm.DESCRIBE)

    @property
    def media_types(self) -> tuple[str, ...]:
        """What can answer this form, the default first (SPARQL 1.1 CSV/TSV define no boolean answer)."""
        if self.returns_graph:
            return GRAPH_FORMATS
        if self is QueryForm.ASK:
            return ("application/sparql-results+json", "application/sparql-results+xml")
        return tuple(RESULT_FORMATS)


def refuse_update() -> NoReturn:
    """400: this endpoint does not offer the SPARQL 1.1 Protocol update operation."""
    raise BadRequest(
        "this SPARQL endpoint is read-only: updates are refused. "
        "Write graphs with PUT/POST /graphs/{kind}/{id} (SPARQL 1.1 Protocol §2.2 is not offered here)"
    )


def query_form(query: str) -> QueryForm:
    """The form of a query, or 400 for an update or text that is no query."""
    position = 0
    while True:
        match = _PROLOGUE.match(query, position)
        if not match or match.end() == position:
            break
        position = match.end()
    keyword = _KEYWORD.match(query, position)
    word = keyword.group(1).upper() if keyword else ""
    if word in _UPDATES:
        refuse_update()
    try:
        return QueryForm(word)
    except ValueError:
        raise BadRequest(
            f"not a SPARQL query: expected SELECT, ASK, CONSTRUCT or DESCRIBE, found {word or 'nothing'!r}"
        ) from None


def has_dataset_clause(query: str) -> bool:
    """Whether the query names its own dataset (``FROM`` or ``FROM NAMED``, SPARQL 1.1 Query §13.2)."""
    depth = 0
    for token in _TOKENS.finditer(query):
        if token.lastgroup == "open":
            depth += 1
        elif token.lastgroup == "close":
            depth = max(depth - 1, 0)
        elif token.lastgroup == "from" and depth == 0:
            return True
    return False


@dataclass(frozen=True)
class ProtocolQuery:
    """One query request: the text and the protocol dataset (``None`` when neither graph parameter is given)."""

    text: str
    dataset: Dataset | None


def _graphs(values: Sequence[str], parameter: str) -> tuple[NamedNode, ...]:
    graphs = []
    for value in values:
        try:
            graphs.append(NamedNode(value))
        except ValueError as error:
            raise BadRequest(f"{parameter} {value!r} is not an absolute IRI: {error}") from None
    return tuple(graphs)


def protocol_query(parameters: Mapping[str, Sequence[str]], body_query: str | None = None) -> ProtocolQuery | None:
    """The request the parameters make, ``None`` when they hold no query; 400 when they hold two or an update.

    ``parameters`` are every parameter of the request (URL and form body); ``body_query`` is a query sent as
    ``application/sparql-query``. Parameters the protocol does not define are ignored (clients add their own,
    e.g. SPARQLWrapper's ``format``).
    """
    if "update" in parameters:
        refuse_update()
    queries = [*parameters.get(QUERY, ()), *([body_query] if body_query is not None else [])]
    if len(queries) > 1:
        where = " (one in the body, one in the URL)" if body_query is not None else ""
        raise BadRequest(
            f"the request carries {len(queries)} queries{where}: send exactly one 'query' (SPARQL 1.1 Protocol §2.1)"
        )
    default, named = parameters.get(DEFAULT_GRAPH, ()), parameters.get(NAMED_GRAPH, ())
    # §2.1.4: given either parameter, the protocol dataset replaces the query's own; the other one is then empty.
    # Checked even without a query (then the service description answers): a graph that is no IRI is 400 either way.
    dataset = Dataset(_graphs(default, DEFAULT_GRAPH), _graphs(named, NAMED_GRAPH)) if default or named else None
    if not queries:
        return None
    return ProtocolQuery(queries[0], dataset)


def media_type_for(form: QueryForm, accept: str | None) -> str:
    """The answer's media type for the client's ``Accept``, or 406."""
    return negotiate(accept, form.media_types, aliases=RDF_ALIASES if form.returns_graph else RESULT_ALIASES)


def execute(store: Store, request: ProtocolQuery, accept: str | None, base_iri: str) -> QueryAnswer:
    """Run a client's query and serialize its answer: the one call every client query goes through.

    The dataset: the protocol's when given, else the query's ``FROM``/``FROM NAMED``, else the union of the
    store's graphs as the default graph (with every graph named). Relative IRIs resolve against ``base_iri``.
    """
    form = query_form(request.text)
    media = media_type_for(form, accept)
    union = request.dataset is None and not has_dataset_clause(request.text)
    return store.answer(request.text, media, union=union, dataset=request.dataset, base_iri=base_iri)
