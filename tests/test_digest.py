"""Graph digests: RDFC-1.0 canonical form, so blank node labels, order and syntax do not change them."""

from __future__ import annotations

import hashlib
import json

from pyld import jsonld
from pyoxigraph import NamedNode, Quad, RdfFormat, Store, Triple, parse, serialize

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


XSD = "http://www.w3.org/2001/XMLSchema#"


def one(obj: str) -> list:
    return triples(f"<http://e/s> <http://e/p> {obj} .", RdfFormat.N_TRIPLES)


def typed(lexical: str, datatype: str) -> str:
    return f'"{lexical}"^^<{XSD}{datatype}>'


SAME_VALUE = [
    # a store that gives decimals back as integers (Virtuoso), and other spellings of one number
    (typed("10", "integer"), typed("10.0", "decimal"), typed("+010", "int"), typed("10", "decimal")),
    (typed("1E3", "double"), typed("1000.0", "double"), typed("1000", "double"), typed("1.0e+3", "double")),
    (typed("0.5", "float"), typed(".5", "double")),  # 0.5 is exact in binary32
    (typed("1", "boolean"), typed("true", "boolean")),
    (typed("2026-08-01T12:00:00.500+02:00", "dateTime"), typed("2026-08-01T10:00:00.5Z", "dateTime")),
    (typed("2026-08-01T10:00:00+00:00", "dateTime"), typed("2026-08-01T10:00:00Z", "dateTime")),
    (typed("2026-12-31T23:30:00-01:00", "dateTime"), typed("2027-01-01T00:30:00Z", "dateTime")),
    (typed("2026-08-01T24:00:00Z", "dateTime"), typed("2026-08-02T00:00:00.000Z", "dateTime")),
    (typed("2026-08-01-00:00", "date"), typed("2026-08-01Z", "date")),
    (typed("PT36H", "duration"), typed("P1DT12H", "duration")),
    ('"hello"@EN-GB', '"hello"@en-gb'),
    (f'"plain"^^<{XSD}string>', '"plain"'),
]
DIFFERENT_VALUE = [
    (typed("10", "integer"), typed("10.5", "decimal")),
    (typed("10", "decimal"), typed("10", "double")),  # other primitive types: other values
    (typed("0.1", "float"), typed("0.1", "double")),  # binary32 0.1 is not binary64 0.1
    (typed("2026-08-01T10:00:00Z", "dateTime"), typed("2026-08-01T10:00:00", "dateTime")),  # no timezone
    (typed("2026-08-01T10:00:00+01:00", "dateTime"), typed("2026-08-01T10:00:00Z", "dateTime")),
    (typed("2026-08-01+05:00", "date"), typed("2026-08-01Z", "date")),  # a date keeps its timezone
    ('"hello"@en', '"hello"@fr'),
    (typed("TRUE", "boolean"), typed("true", "boolean")),  # not a boolean: stays as written
]


def test_value_equal_literals_digest_alike_whatever_their_spelling() -> None:
    for spellings in SAME_VALUE:
        digests = {graph_digest(one(s)) for s in spellings}
        assert len(digests) == 1, spellings


def test_value_different_literals_digest_differently() -> None:
    for a, b in DIFFERENT_VALUE:
        assert graph_digest(one(a)) != graph_digest(one(b)), (a, b)


def test_canonical_forms_are_xsd_canonical_forms() -> None:
    cases = {
        typed("+010.50", "decimal"): typed("10.5", "decimal"),
        typed("-0.0", "decimal"): typed("0", "decimal"),
        typed("7", "nonNegativeInteger"): typed("7", "decimal"),
        typed("1.5e-7", "double"): typed("1.5E-7", "double"),
        typed("-0", "double"): typed("-0.0E0", "double"),
        typed("+INF", "double"): typed("INF", "double"),
        typed("1e400", "double"): typed("INF", "double"),
        typed("0.1", "float"): typed("1.0000000149011612E-1", "double"),
        typed("0", "boolean"): typed("false", "boolean"),
        typed("10:00:00.50+01:00", "time"): typed("09:00:00.5Z", "time"),
        typed("2026+00:00", "gYear"): typed("2026Z", "gYear"),
        typed("P1Y13M", "yearMonthDuration"): typed("P2Y1M", "yearMonthDuration"),
        typed("2026-08-01T10:00:00+00:00", "dateTimeStamp"): typed("2026-08-01T10:00:00Z", "dateTime"),
        # not in the lexical space: as written
        typed("abc", "integer"): typed("abc", "integer"),
        typed("2026-02-30", "date"): typed("2026-02-30", "date"),
        typed("1.0", "integer"): typed("1.0", "integer"),
        typed(" 1", "decimal"): typed(" 1", "decimal"),
    }
    for written, canonical in cases.items():
        assert (
            canonical_nquads(one(written))
            == canonical_nquads(one(canonical))
            == f"<http://e/s> <http://e/p> {canonical} .\n".encode()
        ), written


def test_what_oxigraph_returns_digests_as_what_was_written() -> None:
    """A digest taken at write time over the client's spelling equals the one recomputed from the store."""
    spellings = [s for group in SAME_VALUE + DIFFERENT_VALUE for s in group] + [
        typed("300", "byte"),
        typed("1_000", "double"),
        typed("-Infinity", "float"),
        typed("nan", "double"),
        typed("16777217", "float"),
        typed("123456789012345678", "double"),
        typed("P0Y", "yearMonthDuration"),
        typed("-P0D", "duration"),
        typed("PT100000.250S", "dayTimeDuration"),
        typed("24:00:00", "time"),
        typed("---31-00:00", "gDay"),
        typed("--02-29", "gMonthDay"),
        typed("2024-03-01T00:30:00+01:00", "dateTime"),
        typed("-0005-01-01T10:00:00-10:00", "dateTime"),
        typed("2026-08-01T10:00:00", "dateTimeStamp"),
    ]
    written = [t for s in spellings for t in one(s)]
    store = Store()
    store.extend(Quad(t.subject, NamedNode(f"http://e/p{i}"), t.object) for i, t in enumerate(written))
    returned = {q.predicate.value: q.object for q in store}
    for i, t in enumerate(written):
        assert graph_digest([Triple(t.subject, t.predicate, returned[f"http://e/p{i}"])]) == graph_digest([t]), t.object
