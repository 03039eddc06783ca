"""RDF input limits (issue 23 §1, §3, §6) over real HTTP on both backends: nesting, DTDs and entities, literal
size, triple count and canonicalization time, on every path that reads RDF (graphs, imports, a scope sent as RDF);
each refusal is a problem+json naming its limit, stores nothing, and /health answers meanwhile. Plus the byte
scanner on tricky input, and the out-of-process canonicalization against the in-process one."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

import httpx
import pytest
from pyoxigraph import RdfFormat, parse

from service.api import create_app
from service.core.digest import graph_digest
from service.core.rdf_limits import nesting_depth

from ..conftest import Service, settings_for
from ..test_envelope import snapshot

P = "http://example.org/p"
ONTOLOGY = (
    b"<http://example.org/o> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
    b"<http://www.w3.org/2002/07/owl#Ontology> .\n"
)


def nested(depth: int) -> bytes:
    """Turtle with blank-node property lists ``depth`` deep (about 21 bytes a level)."""
    return (
        b"@prefix e: <http://example.org/> .\n"
        + ONTOLOGY
        + b"e:s e:p "
        + b"[ e:p " * depth
        + b"e:o"
        + b" ]" * depth
        + b" .\n"
    )


def billion_laughs(levels: int = 9) -> bytes:
    """RDF/XML whose one literal expands to 10**levels 'lol's through nested entities (under 1 KB)."""
    entities = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels + 1))
    return (
        f'<?xml version="1.0"?><!DOCTYPE r [{entities}]><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-'
        f'syntax-ns#" xmlns:e="http://example.org/"><rdf:Description rdf:about="http://example.org/s"><e:p>'
        f'&l{levels};</e:p></rdf:Description></rdf:RDF>'
    ).encode()


def chain(length: int) -> bytes:
    """N-Triples of ``length`` blank nodes in a row, all alike to RDFC-1.0 but for their place: its costly case."""
    return ONTOLOGY + b"".join(b"_:b%d <%s> _:b%d .\n" % (i, P.encode(), i + 1) for i in range(length))


@contextmanager
def served(service: Service, app_slot, **settings: object) -> Iterator[None]:
    slot, _ = app_slot
    with slot.serving(create_app(settings_for(service.tokens, **settings), service.store)):
        yield


def while_health_answers(service: Service, call: Callable[[], httpx.Response]) -> httpx.Response:
    """``call``'s answer, asking /health all the while it runs (and once after): each must answer 200."""
    answers: list[httpx.Response] = []
    worker = threading.Thread(target=lambda: answers.append(call()))
    worker.start()
    with httpx.Client(base_url=service.url, timeout=10.0) as other:
        while worker.is_alive():
            assert other.get("/health").status_code == 200
            worker.join(0.05)
        assert other.get("/health").status_code == 200
    [answer] = answers
    return answer


def assert_problem(answer: httpx.Response, status: int, *words: str) -> None:
    assert answer.status_code == status, answer.text[:500]
    assert answer.headers["content-type"].startswith("application/problem+json")
    for word in words:
        assert word in answer.json()["detail"], answer.json()["detail"]


def put_graph(service: Service, body: bytes, media: str = "text/turtle", name: str = "limited") -> httpx.Response:
    return service.http.put(
        f"/graphs/ontologies/{name}", content=body, headers={"Content-Type": media, **service.auth("admin")}
    )


def import_record(service: Service, body: bytes, media: str = "text/turtle") -> httpx.Response:
    return service.http.post(
        "/evaluations/imports",
        params={"id": "limited"},
        content=body,
        headers={"Content-Type": media, **service.auth("admin")},
    )


def put_scope(service: Service, body: bytes, media: str = "text/turtle") -> httpx.Response:
    return service.http.put(
        "/evaluations/limited", content=body, headers={"Content-Type": media, **service.auth("admin")}
    )


PATHS = {"graph": put_graph, "import": import_record, "scope": put_scope}


# ----------------------------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("depth", [20_000, 2_000])
def test_deeply_nested_blank_nodes_are_a_413_naming_the_limit_and_health_answers(service: Service, depth: int) -> None:
    """At 4c0fccf 20,000 levels (420 KB) killed the process and 2,000 (42 KB) held it in canonicalization for
    minutes; now both are refused before parsing."""
    body = nested(depth)
    before = snapshot(service.store)
    for path in PATHS.values():
        answer = while_health_answers(service, partial(path, service, body))
        assert_problem(answer, 413, f"{depth} deep", "at most 256", "CAIE_RDF_MAX_NESTING")
    assert snapshot(service.store) == before


def test_nesting_up_to_the_limit_loads_and_one_level_more_is_refused(service: Service, app_slot) -> None:
    collection = (
        b"@prefix e: <http://example.org/> .\n"
        + ONTOLOGY
        + b"e:s e:list ("
        + b"".join(b" e:i%d" % i for i in range(100))
        + b" ) .\n"
    )
    with served(service, app_slot, rdf_max_nesting=50):
        loaded = put_graph(service, nested(50))
        assert loaded.status_code == 201, loaded.text
        assert loaded.json()["triples"] == 1 + 51  # the ontology, then one triple a level and the innermost
        listed = put_graph(service, collection, name="listed")
        assert listed.status_code == 201, listed.text
        assert listed.json()["triples"] == 1 + 1 + 2 * 100  # e:s e:list, then rdf:first and rdf:rest per item
        before = snapshot(service.store)
        assert_problem(put_graph(service, nested(51), name="deeper"), 413, "51 deep", "at most 50")
        assert snapshot(service.store) == before


@pytest.mark.parametrize(
    "media, body",
    [
        (
            "application/ld+json",
            b'{"@id": "http://example.org/s", '
            + b'"http://example.org/p": {' * 2_000
            + b'"@id": "http://example.org/o"'
            + b"}" * 2_001,
        ),
        (
            "application/rdf+xml",
            b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://example.org/">'
            + b'<rdf:Description rdf:about="http://example.org/s">'
            + b"<e:p><rdf:Description>" * 2_000
            + b"</rdf:Description></e:p>" * 2_000
            + b"</rdf:Description></rdf:RDF>",
        ),
    ],
    ids=["json-ld", "rdf-xml"],
)
def test_deeply_nested_json_ld_and_rdf_xml_are_refused(service: Service, media: str, body: bytes) -> None:
    """pyoxigraph's JSON-LD parser aborted the process at 20,000 nested objects; nesting RDF/XML took quadratic time."""
    before = snapshot(service.store)
    for path in PATHS.values():
        assert_problem(while_health_answers(service, partial(path, service, body, media)), 413, "CAIE_RDF_MAX_NESTING")
    assert snapshot(service.store) == before


# ------------------------------------------------------------------------------------------- DTDs, entities


def test_a_billion_laughs_is_refused_on_every_path_and_stores_nothing(service: Service) -> None:
    """614 bytes took 64 s and 6.4 GB at 4c0fccf, then a 500; on a graph, an import and a scope alike."""
    body = billion_laughs()
    assert len(body) < 1024  # the was 614 bytes, with shorter names
    before = snapshot(service.store)
    for path in PATHS.values():
        answer = while_health_answers(service, partial(path, service, body, "application/rdf+xml"))
        assert_problem(answer, 400, "<!DOCTYPE", "<!ENTITY")
    # an entity declared with no DOCTYPE around it, and one in the other alias of RDF/XML
    assert_problem(put_graph(service, b'<!ENTITY x "y"><rdf:RDF/>', "application/xml"), 400, "<!ENTITY")
    assert snapshot(service.store) == before


# ------------------------------------------------------------------------------------ literals and triples


def test_a_17_mb_literal_is_a_413_on_an_import(service: Service, app_slot) -> None:
    body = b'<http://example.org/s> <http://example.org/p> "' + b"a" * (17 * 1024 * 1024) + b'" .\n'
    before = snapshot(service.store)
    with served(service, app_slot, max_body_bytes=20_000_000):
        assert_problem(import_record(service, body), 413)
    assert snapshot(service.store) == before


def test_a_literal_over_the_deployments_limit_is_a_413_naming_it(service: Service, app_slot) -> None:
    def body(size: int) -> bytes:
        return ONTOLOGY + b'<http://example.org/s> <http://example.org/p> "' + "é".encode() * (size // 2) + b'" .\n'

    with served(service, app_slot, rdf_max_literal_bytes=1_000):
        assert put_graph(service, body(1_000)).status_code == 201  # 500 characters, 1,000 bytes: at the limit
        before = snapshot(service.store)
        for path in PATHS.values():
            assert_problem(path(service, body(1_002)), 413, "1002 bytes", "at most 1000", "CAIE_RDF_MAX_LITERAL_BYTES")
        assert snapshot(service.store) == before


def test_more_triples_than_the_limit_is_a_413_naming_it(service: Service, app_slot) -> None:
    def body(count: int) -> bytes:
        return ONTOLOGY + b"".join(b"<http://example.org/s> <%s> %d .\n" % (P.encode(), i) for i in range(count - 1))

    with served(service, app_slot, rdf_max_triples=10):
        loaded = put_graph(service, body(10))
        assert loaded.status_code == 201, loaded.text
        assert loaded.json()["triples"] == 10
        before = snapshot(service.store)
        for path in PATHS.values():
            assert_problem(path(service, body(11)), 413, "more than 10 triples", "CAIE_RDF_MAX_TRIPLES")
        assert snapshot(service.store) == before


# ---------------------------------------------------------------------------------------- canonicalization


def test_canonicalization_past_its_time_limit_is_a_422_and_health_answers(service: Service, app_slot) -> None:
    """A chain of 1,500 blank nodes nests nothing and takes minutes to canonicalize; the child doing it is killed."""
    before = snapshot(service.store)
    with served(service, app_slot, canonicalize_time_limit_s=1.0):
        answer = while_health_answers(service, lambda: put_graph(service, chain(1_500), "application/n-triples"))
        assert_problem(answer, 422, "1 s", "CAIE_CANONICALIZE_TIME_LIMIT_S")
        assert snapshot(service.store) == before
        # blank nodes that differ from one another are canonicalized as before, whatever the limit
        distinct = ONTOLOGY + b"".join(b'_:b%d <%s> "%d" .\n' % (i, P.encode(), i) for i in range(1_500))
        assert put_graph(service, distinct, "application/n-triples").status_code == 201


def test_a_graph_canonicalized_in_a_child_has_the_digest_computed_in_process(service: Service) -> None:
    """A ring of blank nodes alike (so relabelled out of process) gets the digest the in-process relabelling gives."""
    ring = ONTOLOGY + b"".join(b"_:b%d <%s> _:b%d .\n" % (i, P.encode(), (i + 1) % 12) for i in range(12))
    answer = put_graph(service, ring, "application/n-triples")
    assert answer.status_code == 201, answer.text
    in_process = graph_digest(parse(ring, format=RdfFormat.N_TRIPLES))
    assert answer.json()["digest"] == in_process
    relabelled = ring.replace(b"_:b", b"_:other")  # other labels, same graph
    assert graph_digest(parse(relabelled, format=RdfFormat.N_TRIPLES), 30.0) == in_process


# --------------------------------------------------------------------------------------------- the scanner


@pytest.mark.parametrize(
    "text, depth",
    [
        ('<s> <p> [ <p> [ <p> "x" ] ] .', 2),
        ('<s> <p> "[[[ ((( {{{" .', 0),
        ("<s> <p> '[[[' , '(' .", 0),
        ('<s> <p> """a "" [[[ \\""" ((( \n ]]] """ .', 0),
        ("<s> <p> '''[[[ ''' .", 0),
        ('<s> <p> "esc \\" [[[" .', 0),
        ("<http://e.org/[(#x> <p> <o> . # [[[ ((( \n<s> <p> ( ( 1 ) ) .", 2),
        ("e:a\\( <p> [ <p> e:b\\[ ] .", 1),
        ("<< << <s> <p> <o> >> <p> <o> >> <p> <o> .", 2),
        ("<g> { <s> <p> [ <p> <o> ] }", 2),
        ("<s> <p> ( [ <p> ( ) ] ) .", 3),
    ],
)
def test_the_turtle_scanner_counts_only_what_nests(text: str, depth: int) -> None:
    assert nesting_depth(text.encode(), RdfFormat.TURTLE) == depth


def test_the_json_ld_and_rdf_xml_scanners_skip_strings_attributes_and_comments() -> None:
    assert nesting_depth(b'{"@id": "x[{", "p": [{"a": "\\"{["}]}', RdfFormat.JSON_LD) == 3
    xml = (
        b'<?xml version="1.0"?><!-- <a><a><a> --><r:RDF a="x>y" b=\'/>\'><r:D><e:p/>'
        b"<e:q><![CDATA[<a><b>]]></e:q></r:D></r:RDF>"
    )
    assert nesting_depth(xml, RdfFormat.RDF_XML) == 3
