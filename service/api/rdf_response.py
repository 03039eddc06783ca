"""Serializing triples into an HTTP response in a negotiated RDF syntax; JSON-LD compacted with our context.

The published JSON-LD context (``contexts/ob-caie.jsonld``, served at ``/contexts/ob-caie.jsonld``) names the
namespaces of :func:`service.core.plugins.prefixes` (the engine's and each installed domain's); a JSON-LD answer is compacted with it by pyld and
refers to it by IRI, so a client sees ``epo:Probe`` and ``rdfs:label`` instead of expanded full IRIs.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from fastapi import Response
from pyld import jsonld
from pyoxigraph import NamedNode, Quad, RdfFormat, Triple, serialize

from ..core.formats import RDF_FORMATS, written
from ..core.namespaces import RDF
from ..core.plugins import domain_prefixes, prefixes

JSON_LD = "application/ld+json"
CONTEXTS = Path(__file__).resolve().parent / "contexts"
CONTEXT_NAME = "ob-caie.jsonld"


def context_iri(base_url: str) -> str:
    """Where a deployment serves the published context."""
    return f"{base_url}contexts/{CONTEXT_NAME}"


def published_context(name: str) -> dict[str, object] | None:
    """The JSON-LD context file ``name`` with every installed domain's prefixes added (``caie.prefixes``: the
    files name the engine's only), or ``None`` when there is no such context."""
    return _merged(name) if name in _published() else None


@cache
def _published() -> frozenset[str]:
    return frozenset(path.name for path in CONTEXTS.glob("*.jsonld"))


@cache
def _merged(name: str) -> dict[str, object]:
    """One published file, merged once (kept per file: names are checked against the files first)."""
    document: dict[str, object] = json.loads((CONTEXTS / name).read_text(encoding="utf-8"))
    terms = document["@context"]
    assert isinstance(terms, dict)
    document["@context"] = {
        **{k: v for k, v in terms.items() if k.startswith("@")},
        **domain_prefixes(),
        **{k: v for k, v in terms.items() if not k.startswith("@")},
    }
    return document


def _context() -> dict[str, object]:
    context = published_context(CONTEXT_NAME)
    assert context is not None
    return context


_RDF_TYPE = RDF + "type"


def _types_as_type(nodes: list[dict[str, object]]) -> list[dict[str, object]]:
    """``rdf:type`` as ``@type`` in expanded node objects (what JSON-LD's own RDF reading does), in place."""
    for node in nodes:
        types = node.get(_RDF_TYPE)
        if isinstance(types, list) and all(isinstance(t, dict) and set(t) == {"@id"} for t in types):
            node["@type"] = [t["@id"] for t in types]
            del node[_RDF_TYPE]
        if isinstance(graph := node.get("@graph"), list):
            _types_as_type(graph)
    return nodes


def compacted(expanded: bytes, context: str | None) -> bytes:
    """Expanded JSON-LD compacted with the published context; ``@context`` is its IRI when given (else inline)."""
    document = jsonld.compact(_types_as_type(json.loads(expanded)), _context())
    if context is not None:
        document["@context"] = context
    return json.dumps(document, ensure_ascii=False).encode()


def rdf_response(
    triples: list[Triple], media_type: str, graph: NamedNode | None = None, context: str | None = None
) -> Response:
    """``triples`` as ``media_type``; dataset syntaxes put them in ``graph``; JSON-LD refers to ``context``."""
    rdf_format = RDF_FORMATS[media_type]
    if rdf_format.supports_datasets:
        body = written(
            serialize(
                [
                    Quad(t.subject, t.predicate, t.object, graph)
                    if graph is not None
                    else Quad(t.subject, t.predicate, t.object)
                    for t in triples
                ],
                format=rdf_format,
            )
        )
    else:
        body = written(serialize(triples, format=rdf_format, prefixes=prefixes()))
    if rdf_format == RdfFormat.JSON_LD:
        body = compacted(body, context)
    return Response(body, media_type=media_type, headers={"Vary": "Accept"})
