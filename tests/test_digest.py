"""Graph digests: RDFC-1.0 canonical form, so blank node labels, order and syntax do not change them."""

from __future__ import annotations

import hashlib
import json

from pyld import jsonld
from pyoxigraph import RdfFormat, parse, serialize

from service.core.digest import canonical_nquads, graph_digest

TURTLE = """
@prefix ex: <http://example.org/> .
ex:att ex:result [ ex:outcome ex:passed ; ex:info "tab\\there \\"quoted\\"\\nnew line é" ] ;
       ex:weight 2.5 ; ex:when "2026-08-01"^^<http://www.w3.org/2001/XMLSchema#date> ; ex:lang "bonjour"@fr .
[] ex:knows [ ex:name "anon" ] .
"""


def triples(text: str, rdf_format: RdfFormat = RdfFormat.TURTLE) -> list:
    return [quad.triple for quad in parse(text.encode(), format=rdf_format)]


def test_digest_ignores_blank_node_labels_order_and_syntax() -> None:
    original = triples(TURTLE)
    as_ntriples = canonical_nquads(original).decode().replace("_:c14n0", "_:zz").replace("_:c14n1", "_:yy")
    reordered = "\n".join(reversed(as_ntriples.strip().splitlines())) + "\n"
    assert graph_digest(triples(reordered, RdfFormat.N_TRIPLES)) == graph_digest(original)


def test_digest_changes_when_one_literal_changes() -> None:
    assert graph_digest(triples(TURTLE)) != graph_digest(triples(TURTLE.replace("anon", "anon2")))


def test_canonical_form_matches_an_independent_rdfc_implementation() -> None:
    """pyld's URDNA2015 (the algorithm RDFC-1.0 standardised) gives the same canonical N-Quads."""
    ours = canonical_nquads(triples(TURTLE))
    nquads = serialize(triples(TURTLE), format=RdfFormat.N_TRIPLES).decode()
    theirs = jsonld.normalize(
        jsonld.from_rdf(nquads, {"format": "application/n-quads"}),
        {"algorithm": "URDNA2015", "format": "application/n-quads"},
    )
    assert ours.decode() == theirs
    assert graph_digest(triples(TURTLE)) == hashlib.sha256(theirs.encode()).hexdigest()


def test_duplicate_statements_count_once() -> None:
    once = triples('<http://e/s> <http://e/p> "x" .', RdfFormat.N_TRIPLES)
    assert graph_digest(once + once) == graph_digest(once)
    assert json.dumps(graph_digest(once))
