"""Parsing request bodies and moving triples between pyoxigraph and rdflib (pySHACL, owlrl need rdflib)."""

from __future__ import annotations

from collections.abc import Iterable

import rdflib
from pyoxigraph import Quad, RdfFormat, Triple, parse, serialize

from .errors import BadRequest


def parse_triples(data: bytes, rdf_format: RdfFormat, base_iri: str) -> list[Triple]:
    """The triples of a one-graph document, or 400 naming the syntax error and where it is.

    TriG and N-Quads are accepted when every statement is in the default graph: a graph upload
    names its graph in the URL, not in the body.
    """
    try:
        return [quad.triple for quad in parse(data, format=rdf_format, base_iri=base_iri, without_named_graphs=True)]
    except SyntaxError as error:
        raise BadRequest(f"the {rdf_format.name} body is not valid: {error}") from error
    except UnicodeDecodeError as error:
        raise BadRequest(f"the {rdf_format.name} body is not UTF-8: {error}") from error


def to_rdflib(statements: Iterable[Triple | Quad]) -> rdflib.Graph:
    """An rdflib graph holding the statements' triples."""
    triples = [s.triple if isinstance(s, Quad) else s for s in statements]
    graph = rdflib.Graph()
    if triples:
        graph.parse(data=serialize(triples, format=RdfFormat.N_TRIPLES), format="nt")
    return graph


def from_rdflib(graph: rdflib.Graph) -> list[Triple]:
    """The triples of an rdflib graph as pyoxigraph values."""
    data = graph.serialize(format="nt", encoding="utf-8")
    return [quad.triple for quad in parse(data, format=RdfFormat.N_TRIPLES)]
