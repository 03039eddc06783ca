"""Property tests (hypothesis) over what reads untrusted RDF before anything else does (issue 23, "a fuzzing suite").

- :func:`service.core.rdf.parse_triples` raises nothing but our 400 and 413, whatever bytes it is given, and what it
  accepts is within its limits; RDF/XML declaring a DTD or an entity is refused wherever the declaration is;
- the scanner that runs before any parser, :mod:`service.core.rdf_limits`, counts nesting exactly on Turtle, JSON-LD
  and RDF/XML documents built with a known depth and strings, comments, IRIs and attribute values full of brackets:
  a parser recurses on nesting (20,000 blank nodes deep killed the process), so a scanner that counted less would let
  a crash through, and one that counted more would refuse sane input. Each built document parses with pyoxigraph, so
  the generators write what a client could; on any bytes at all the scanner raises only our errors.

Examples are derandomized (the same run every time) and few enough for ``make test`` (tests/fuzzing.py).
"""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, RdfFormat, Triple, parse

from service.core.errors import BadRequest, PayloadTooLarge
from service.core.rdf import parse_triples
from service.core.rdf_limits import RdfLimits, check_before_parsing, nesting_depth

from .fuzzing import BASE, FUZZ, NOISE_STRINGS, TURTLE_ALPHABET

SMALL = RdfLimits(max_nesting=8, max_triples=20, max_literal_bytes=64, canonicalize_time_limit_s=5.0)
FORMATS = [
    RdfFormat.TURTLE,
    RdfFormat.TRIG,
    RdfFormat.N_TRIPLES,
    RdfFormat.N_QUADS,
    RdfFormat.JSON_LD,
    RdfFormat.RDF_XML,
]

# ------------------------------------------------------------------------------------------ parse_triples


@FUZZ
@given(
    data=st.one_of(st.binary(max_size=300), st.text(TURTLE_ALPHABET, max_size=300).map(str.encode)),
    rdf_format=st.sampled_from(FORMATS),
)
def test_parse_triples_raises_only_our_errors_and_keeps_its_limits(data: bytes, rdf_format: RdfFormat) -> None:
    try:
        triples = parse_triples(data, rdf_format, BASE, SMALL)
    except (BadRequest, PayloadTooLarge):
        return
    assert len(triples) <= SMALL.max_triples
    assert all(
        len(t.object.value.encode()) <= SMALL.max_literal_bytes for t in triples if isinstance(t.object, Literal)
    )


@FUZZ
@given(
    size=st.integers(65, 400),
    rdf_format=st.sampled_from([RdfFormat.TURTLE, RdfFormat.N_TRIPLES]),
    char=st.sampled_from(["a", "é", "\u4e2d", "\U0001f600"]),
)
def test_a_literal_over_the_limit_is_413_counted_in_utf8_bytes(size: int, rdf_format: RdfFormat, char: str) -> None:
    text = char * (size // len(char.encode()))
    document = f'<http://x/s> <http://x/p> "{text}" .\n'.encode()
    if len(text.encode()) <= SMALL.max_literal_bytes:
        assert parse_triples(document, rdf_format, BASE, SMALL)
    else:
        with pytest.raises(PayloadTooLarge):
            parse_triples(document, rdf_format, BASE, SMALL)


# ------------------------------------------------------------------------------------------ nesting, built with a known depth


@st.composite
def turtle_object(draw: st.DrawFn, depth: int, reified_only: bool = False) -> str:
    """A Turtle object nesting exactly ``depth`` levels, with brackets in its strings, comments and IRIs."""
    noise = draw(NOISE_STRINGS)
    if depth == 0:
        long_string = [] if reified_only else [f"'''{noise}\n'''"]  # not a reified triple's object to pyoxigraph
        return draw(
            st.sampled_from([f'"{noise}"', *long_string, "<http://x/o(1)>", "42", f'"{noise}"@en', "<http://x/a#b>"])
        )
    kind = "reified" if reified_only else draw(st.sampled_from(["list", "collection", "reified"]))
    inner = draw(turtle_object(depth - 1, kind == "reified"))
    comment = f"# {noise}\n" if draw(st.booleans()) else ""
    if kind == "list":
        return f'[ <http://x/p> {inner} ; {comment}<http://x/q> "{noise}" ]'
    if kind == "collection":
        return f"( <http://x/a> {comment}{inner} '{noise}' )"
    return f"<< <http://x/s> <http://x/p> {inner} >>"


@st.composite
def turtle_document(draw: st.DrawFn) -> tuple[bytes, int]:
    depths = draw(st.lists(st.integers(0, 12), min_size=1, max_size=4))
    statements = [f"<http://x/s{i}> <http://x/p> {draw(turtle_object(d))} ." for i, d in enumerate(depths)]
    return "\n".join(statements).encode(), max(depths)


def blank_depth(triples: list[Triple]) -> int:
    """The longest chain of blank nodes each the object of the one before, but along ``rdf:rest`` (a collection's
    length is not nesting): how deep the parsed graph nests, independent of any scanner."""
    children: dict[BlankNode, list[BlankNode]] = {}
    objects = set()
    for t in triples:
        if (
            isinstance(t.subject, BlankNode)
            and isinstance(t.object, BlankNode)
            and not t.predicate.value.endswith("#rest")
        ):
            children.setdefault(t.subject, []).append(t.object)
            objects.add(t.object)

    def down(node: BlankNode) -> int:
        return 1 + max((down(child) for child in children.get(node, [])), default=0)

    return max((down(node) for node in children if node not in objects), default=0)


@FUZZ
@given(document=turtle_document())
def test_the_turtle_scanner_counts_nesting_exactly(document: tuple[bytes, int]) -> None:
    data, depth = document
    triples = [q.triple for q in parse(data, format=RdfFormat.TURTLE, base_iri=BASE)]  # a document a client could send
    assert nesting_depth(data, RdfFormat.TURTLE) == depth
    assert nesting_depth(data, RdfFormat.TURTLE) >= blank_depth(triples)
    for rdf_format in (RdfFormat.TURTLE, RdfFormat.TRIG):
        check_before_parsing(data, rdf_format, RdfLimits(depth, 10_000, 10_000, 5.0))
        if depth:
            with pytest.raises(PayloadTooLarge):
                check_before_parsing(data, rdf_format, RdfLimits(depth - 1, 10_000, 10_000, 5.0))


@st.composite
def json_ld_document(draw: st.DrawFn) -> bytes:
    """A JSON-LD node nesting objects and arrays up to 14 deep, its strings full of brackets."""
    node: object = draw(NOISE_STRINGS)
    for level in range(draw(st.integers(0, 13))):
        noise = draw(NOISE_STRINGS)
        node = (
            [node, noise]
            if draw(st.booleans())
            else {"@id": f"http://x/n{level}", "http://x/p": node, "http://x/q": noise + "{["}
        )
    return json.dumps({"@id": "http://x/s", "http://x/p": node}).encode()


def _json_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_json_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_json_depth(v) for v in value), default=0)
    return 0


@FUZZ
@given(data=json_ld_document())
def test_the_json_ld_scanner_counts_nesting_exactly(data: bytes) -> None:
    list(parse(data, format=RdfFormat.JSON_LD, base_iri=BASE))
    expected = _json_depth(json.loads(data))  # Python's own reading of the nesting
    assert nesting_depth(data, RdfFormat.JSON_LD) == expected
    with pytest.raises(PayloadTooLarge):
        check_before_parsing(data, RdfFormat.JSON_LD, RdfLimits(expected - 1, 10_000, 10_000, 5.0))
    check_before_parsing(data, RdfFormat.JSON_LD, RdfLimits(expected, 10_000, 10_000, 5.0))


RDF_XML_HEAD = (
    '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://x/">'
)


@st.composite
def rdf_xml_document(draw: st.DrawFn) -> bytes:
    """RDF/XML nesting up to 21 elements, with comments, CDATA, empty elements and attribute values holding ``>``
    and ``/>`` that a tag scanner must not read as tags."""
    body = ""
    for level in range(draw(st.integers(0, 10))):
        noise = draw(st.sampled_from(["&lt;a&gt;", "a>b", "x/>y", "'", "plain"]))
        extra = draw(
            st.sampled_from(
                [
                    "",
                    "<!-- <ex:a><ex:b> -->",
                    "<ex:c><![CDATA[<ex:d><ex:e>]]></ex:c>",
                    '<ex:r rdf:resource="http://x/o"/>',
                ]
            )
        )
        inner = f"<ex:p>{body}</ex:p>" if body else ""
        body = f'<rdf:Description rdf:about="http://x/n{level}" ex:q="{noise}">{extra}{inner}</rdf:Description>'
    return f"{RDF_XML_HEAD}{body}</rdf:RDF>".encode()


def _xml_depth(element: ElementTree.Element) -> int:
    return 1 + max((_xml_depth(child) for child in element), default=0)


@FUZZ
@given(data=rdf_xml_document())
def test_the_rdf_xml_scanner_counts_elements_and_never_less_than_a_parent(data: bytes) -> None:
    list(parse(data, format=RdfFormat.RDF_XML, base_iri=BASE))
    real = _xml_depth(ElementTree.fromstring(data))  # Python's XML parser's reading
    counted = nesting_depth(data, RdfFormat.RDF_XML)
    assert real - 1 <= counted <= real  # only a leaf can be an empty element (<x/>), which nests nothing
    with pytest.raises(PayloadTooLarge):
        check_before_parsing(data, RdfFormat.RDF_XML, RdfLimits(counted - 1, 10_000, 10_000, 5.0))
    check_before_parsing(data, RdfFormat.RDF_XML, RdfLimits(counted, 10_000, 10_000, 5.0))


@FUZZ
@given(
    prefix=st.text(max_size=40),
    keyword=st.sampled_from(["DOCTYPE", "doctype", "ENTITY", "Entity"]),
    space=st.sampled_from(["", " ", "\n\t"]),
    rest=st.text(max_size=40),
)
def test_rdf_xml_declaring_a_dtd_or_entity_is_refused_wherever_it_is(
    prefix: str, keyword: str, space: str, rest: str
) -> None:
    data = f"{prefix}<!{space}{keyword} lol '{rest}'>{RDF_XML_HEAD}</rdf:RDF>".encode("utf-8", "surrogatepass")
    with pytest.raises(BadRequest):
        parse_triples(data, RdfFormat.RDF_XML, BASE, SMALL)


@FUZZ
@given(data=st.binary(max_size=400), rdf_format=st.sampled_from(FORMATS), most=st.integers(0, 6))
def test_the_rdf_scanner_raises_only_our_errors(data: bytes, rdf_format: RdfFormat, most: int) -> None:
    try:
        check_before_parsing(data, rdf_format, RdfLimits(most, 10, 10, 1.0))
    except (BadRequest, PayloadTooLarge):
        pass
    nesting_depth(data, rdf_format)  # an unbalanced body counts below zero, which no limit refuses: the parser does
