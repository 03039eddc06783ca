"""Parsing request bodies and moving triples between pyoxigraph and rdflib (pySHACL, owlrl need rdflib)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime

import rdflib
from pyoxigraph import BlankNode, Literal, NamedNode, Quad, RdfFormat, Triple, parse, serialize

from .errors import BadRequest, PayloadTooLarge
from .namespaces import XSD
from .rdf_limits import DEFAULT_LIMITS, RdfLimits, check_before_parsing

RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


def local_name(iri: str) -> str:
    """A vocabulary term's local name, after its last ``/`` or ``#`` (a trailing ``/`` dropped), for labels, JSON
    names and a report's flat figures: never a record's identifier, which its ``dcterms:identifier`` gives."""
    return iri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1]


def integer(value: int) -> Literal:
    """``value`` as an ``xsd:integer`` literal."""
    return Literal(str(value), datatype=NamedNode(XSD + "integer"))


def date_time(value: datetime) -> Literal:
    """``value`` (timezone-aware) as an ``xsd:dateTime`` literal."""
    return Literal(value.isoformat(), datatype=NamedNode(XSD + "dateTime"))


def parse_triples(
    data: bytes, rdf_format: RdfFormat, base_iri: str, limits: RdfLimits = DEFAULT_LIMITS
) -> list[Triple]:
    """The triples of a one-graph document, or 400 naming the syntax error and where it is.

    TriG and N-Quads are accepted when every statement is in the default graph: a graph upload
    names its graph in the URL, not in the body. ``limits`` are checked before parsing (nesting, RDF/XML's
    DTDs: :mod:`.rdf_limits`) and while parsing (triples, literal size): 413 naming the limit, 400 for a DTD.
    """
    check_before_parsing(data, rdf_format, limits)
    triples: list[Triple] = []
    try:
        for quad in parse(data, format=rdf_format, base_iri=base_iri, without_named_graphs=True):
            if len(triples) == limits.max_triples:
                raise PayloadTooLarge(
                    f"the {rdf_format.name} body has more than {limits.max_triples} triples, "
                    "the most this deployment reads in one body (CAIE_RDF_MAX_TRIPLES)"
                )
            triple = quad.triple
            _check_literals(triple, limits.max_literal_bytes)
            triples.append(triple)
    except SyntaxError as error:
        raise BadRequest(f"the {rdf_format.name} body is not valid: {error}") from error
    except UnicodeDecodeError as error:
        raise BadRequest(f"the {rdf_format.name} body is not UTF-8: {error}") from error
    except MemoryError as error:  # the parser's buffer bound: one token (a literal, an IRI) over 16 MiB
        raise PayloadTooLarge(f"the {rdf_format.name} body has a term larger than the parser takes ({error})") from None
    return triples


def _check_literals(triple: Triple, limit: int) -> None:
    """413 if a literal of ``triple`` (or of a triple it quotes) is over ``limit`` bytes in UTF-8."""
    for term in (triple.subject, triple.object):
        if isinstance(term, Triple):
            _check_literals(term, limit)
        elif isinstance(term, Literal) and len(term.value) * 4 > limit:  # UTF-8 takes at most 4 bytes a character
            size = len(term.value.encode("utf-8"))
            if size > limit:
                raise PayloadTooLarge(
                    f"the body has a literal of {size} bytes; this deployment reads literals of at "
                    f"most {limit} bytes (CAIE_RDF_MAX_LITERAL_BYTES)"
                )


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


def skolemize(triples: Iterable[Triple], base: str) -> list[Triple]:
    """The triples with every blank node replaced by a fresh ``{base}.well-known/genid/{uuid}`` IRI (RDF 1.1 §3.5).

    One call is one write: a blank node label maps to one IRI throughout it (also inside quoted triples),
    and a later call mints new ones. Stores treat blank nodes differently (Virtuoso refuses them in
    INSERT DATA and relabels them as ``nodeID://…``); skolem IRIs mean the same on every store.
    """
    minted: dict[str, NamedNode] = {}

    def node(value: NamedNode | BlankNode | Triple) -> NamedNode | Triple:
        if isinstance(value, BlankNode):
            if value.value not in minted:
                minted[value.value] = NamedNode(f"{base}.well-known/genid/{uuid.uuid4().hex}")
            return minted[value.value]
        if isinstance(value, Triple):
            return Triple(node(value.subject), value.predicate, term(value.object))
        return value

    def term(value: NamedNode | BlankNode | Literal | Triple) -> NamedNode | Literal | Triple:
        return value if isinstance(value, Literal) else node(value)

    return [Triple(node(t.subject), t.predicate, term(t.object)) for t in triples]
