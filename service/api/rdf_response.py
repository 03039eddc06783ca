"""Serializing triples into an HTTP response in a negotiated RDF syntax."""

from __future__ import annotations

from fastapi import Response
from pyoxigraph import NamedNode, Quad, Triple, serialize

from ..core.formats import RDF_FORMATS
from ..core.namespaces import PREFIXES


def rdf_response(triples: list[Triple], media_type: str, graph: NamedNode | None = None) -> Response:
    """``triples`` as ``media_type``; dataset syntaxes put them in ``graph``."""
    rdf_format = RDF_FORMATS[media_type]
    if rdf_format.supports_datasets and graph is not None:
        body = serialize([Quad(t.subject, t.predicate, t.object, graph) for t in triples], format=rdf_format)
    elif rdf_format.supports_datasets:
        body = serialize([Quad(t.subject, t.predicate, t.object) for t in triples], format=rdf_format)
    else:
        body = serialize(triples, format=rdf_format, prefixes=PREFIXES)
    return Response(body, media_type=media_type, headers={"Vary": "Accept"})
