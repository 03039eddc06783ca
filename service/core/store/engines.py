"""What engines do differently, and how the remote backend reads it back the same way.

Virtuoso writes blank nodes as ``nodeID://…`` terms and booleans as ``1``/``0`` in JSON results, keeps system
graphs beside the data, and answers ``GRAPH ?g { }`` with an unbound ``?g``; engines word their errors each their
own way. Used by :mod:`.remote`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import httpx
from pyoxigraph import BlankNode, NamedNode, Triple

from ..errors import BadRequest, StoreUnavailable
from .base import StoreAuthorizationFailed, StoreLimitExceeded

_NODE_ID = "nodeID://"
_BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"
_BOOLEAN_LEXICAL = {"1": "true", "0": "false"}
_MESSAGE_CHARS = 500

_SYNTAX = re.compile(r"syntax|pars(e|er|ing) error|unexpected|expected |lexical|SP030", re.IGNORECASE)
_LIMIT = re.compile(
    r"exceed|too (large|long|many|big)|limit (reached|exceeded)|maximum|max(imum)? ?rows|"
    r"result ?set ?max ?rows|more than \d+ rows|only \d+ (are )?allowed|out of memory|timeout|timed out",
    re.IGNORECASE,
)
_GRAPH_VARIABLE = re.compile(r"\bGRAPH\s+[?$]([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
_MAY_LEAVE_UNBOUND = re.compile(r"\b(OPTIONAL|UNION)\b", re.IGNORECASE)

ENGINE_GRAPHS = (
    "http://www.openlinksw.com/",  # Virtuoso: virtrdf#, schemas, …
    "http://localuriqaserver/",
    "http://www.w3.org/ns/ldp#",
    "http://www.w3.org/2002/07/owl#",
    "http://www.w3.org/2000/01/rdf-schema#",
    "http://www.ontotext.com/",  # GraphDB's pseudo-graphs (explicit, implicit)
)
"""Graphs engines keep for themselves; without a catalog, a union leaves them out (with one, only catalogued graphs count)."""


def store_text(response: httpx.Response) -> str:
    text = " ".join(response.text.split())
    return text if len(text) <= _MESSAGE_CHARS else text[:_MESSAGE_CHARS] + "…"


def _node_id(value: str) -> str:
    """A blank node label for a ``nodeID://…`` value (letters, digits, ``_`` and ``-`` only)."""
    label = re.sub(r"[^A-Za-z0-9_-]", "_", value.removeprefix(_NODE_ID))
    return "n" + label if not label or not label[0].isalnum() else label


def _fix_json_term(term: dict[str, Any]) -> None:
    kind, value = term.get("type"), term.get("value", "")
    if term.get("datatype") == _BOOLEAN and value in _BOOLEAN_LEXICAL:
        # Virtuoso answers a stored or xsd:boolean-cast boolean as 1/0; code and clients compare the canonical form
        term["value"] = _BOOLEAN_LEXICAL[value]
    elif kind == "uri" and isinstance(value, str) and value.startswith(_NODE_ID):
        term["type"], term["value"] = "bnode", _node_id(value)
    elif kind == "bnode" and isinstance(value, str) and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", value):
        term["value"] = _node_id(value)
    elif kind == "triple" and isinstance(value, dict):
        for part in value.values():
            if isinstance(part, dict):
                _fix_json_term(part)


def json_results_without_node_ids(content: bytes) -> bytes:
    """SPARQL JSON results with Virtuoso's ``nodeID://`` terms turned into blank nodes and its ``1``/``0``
    booleans into ``true``/``false`` (unchanged otherwise). A boolean an expression computes (``EXISTS``, a
    comparison) comes back from Virtuoso as the integer 1 or 0: a query casts it with ``xsd:boolean(…)``."""
    if _NODE_ID.encode() not in content and _BOOLEAN.encode() not in content:
        return content
    document = json.loads(content)
    for row in document.get("results", {}).get("bindings", []):
        for term in row.values():
            _fix_json_term(term)
    return json.dumps(document).encode("utf-8")


def _unnode_id(term: Any) -> Any:
    if isinstance(term, NamedNode) and term.value.startswith(_NODE_ID):
        return BlankNode(_node_id(term.value))
    if isinstance(term, Triple):
        return Triple(_unnode_id(term.subject), term.predicate, _unnode_id(term.object))
    return term


def triples_without_node_ids(triples: Sequence[Triple]) -> list[Triple]:
    """Triples with ``nodeID://…`` IRIs read back as blank nodes."""
    return [Triple(_unnode_id(t.subject), t.predicate, _unnode_id(t.object)) for t in triples]


def must_bind(query: str) -> list[str]:
    """Variables the query's GRAPH patterns must bind (none when OPTIONAL or UNION could leave one unbound)."""
    if _MAY_LEAVE_UNBOUND.search(query):
        return []
    return sorted(set(_GRAPH_VARIABLE.findall(query)))


def store_error(url: str, response: httpx.Response, has_credentials: bool) -> Exception:
    """The error a store's error response means, its own text carried (trimmed), credentials never."""
    status, text = response.status_code, store_text(response)
    said = f"the remote store at {url} answered {status}: {text}"
    if status in (401, 403):
        if has_credentials:
            return StoreAuthorizationFailed(
                f"the remote store refused the credentials ({status}); check CAIE_REMOTE_USER/PASSWORD/TOKEN: {said}"
            )
        return StoreAuthorizationFailed(
            f"the remote store requires credentials ({status}) and none are configured (CAIE_REMOTE_AUTH): {said}"
        )
    if status == 413:
        return StoreLimitExceeded(f"a request exceeded a limit of the remote store: {said}")
    if status == 400:
        if _SYNTAX.search(text):
            return BadRequest(f"SPARQL syntax error (reported by the remote store): {text}")
        if _LIMIT.search(text):
            return StoreLimitExceeded(f"a request exceeded a limit of the remote store: {said}")
        return BadRequest(f"the remote store refused the request: {text}")
    if _LIMIT.search(text):
        return StoreLimitExceeded(f"a request exceeded a limit of the remote store: {said}")
    if 400 <= status < 500 and _SYNTAX.search(text):
        return BadRequest(f"SPARQL syntax error (reported by the remote store): {text}")
    return StoreUnavailable(said)
