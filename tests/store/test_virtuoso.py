"""The remote store on a real Virtuoso 7 (Debian's 7.2.5.1, its packaged limits): issue 7's findings as tests.

One Virtuoso per session (:func:`tests.virtuoso.virtuoso_server`, about 2 s to start). Tests never empty the
store (``DROP ALL`` would drop Virtuoso's own system graphs): each writes graphs under its own fresh IRI.

The other tests assert what the service must do on Virtuoso (issue 7): bounded writes, blank nodes, listings
without system graphs, reads not cut at ResultSetMaxRows, digests over values, credentials. Tests
named ``test_engine_*`` pin down facts about Virtuoso itself (docs/stores.md cites them) over plain HTTP.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Quad, RdfFormat, Triple, serialize

from service.composition import build_services
from service.core.config import Credential, Settings
from service.core.digest import graph_digest
from service.core.store import ChangeSet, RemoteStore

from ..virtuoso import VirtuosoServer, virtuoso_server

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
ADMIN = Credential.model_validate({"agent": "admin", "roles": ["admin"]})
SPARQL_UPDATE = {"Content-Type": "application/sparql-update"}
# Graphs Virtuoso 7.2.5 holds in a fresh database (seen in a GRAPH ?g listing of an empty instance).
SYSTEM_GRAPHS = ("http://www.openlinksw.com/schemas/virtrdf#", "http://localuriqaserver/", "http://www.w3.org/ns/ldp#")


@pytest.fixture(scope="session")
def virtuoso() -> Iterator[VirtuosoServer]:
    with virtuoso_server() as server:
        yield server


@pytest.fixture
def vstore(virtuoso: VirtuosoServer) -> Iterator[RemoteStore]:
    store = RemoteStore(virtuoso.query_url, virtuoso.update_url, virtuoso.store_url)
    yield store
    store.close()


def fresh(kind: str = "g") -> str:
    return f"http://caie.test/virtuoso/{kind}/{uuid.uuid4().hex}"


def triples(n: int) -> list[Triple]:
    return [Triple(NamedNode(f"{EX}s{i}"), NamedNode(EX + "p"), Literal(f"value {i}")) for i in range(n)]


def in_graph(graph: NamedNode, content: list[Triple]) -> list[Quad]:
    return [Quad(t.subject, t.predicate, t.object, graph) for t in content]


def count(virtuoso: VirtuosoServer, graph: str) -> int:
    response = httpx.post(
        virtuoso.query_url,
        data={"query": f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"},
        headers={"Accept": "text/csv"},
    )
    response.raise_for_status()
    return int(response.text.split()[-1])


def update(virtuoso: VirtuosoServer, text: str) -> httpx.Response:
    return httpx.post(virtuoso.update_url, content=text.encode(), headers=SPARQL_UPDATE, timeout=60)


# ------------------------------------------------------------------------------------------ the engine itself


def test_engine_fresh_instance_takes_small_writes_through_the_remote_store(vstore: RemoteStore) -> None:
    graph = NamedNode(fresh())
    vstore.apply(ChangeSet(insert=in_graph(graph, triples(3))))
    assert sorted(vstore.graph_triples(graph), key=str) == sorted(triples(3), key=str)


def test_engine_insert_data_is_refused_above_about_1000_triples(virtuoso: VirtuosoServer) -> None:
    """Why one big INSERT DATA cannot carry a change set: 1,000 triples go in, 1,500 are refused whole."""
    for n, accepted in ((1000, True), (1500, False)):
        graph = fresh()
        body = " ".join(f"<{EX}s{i}> <{EX}p> \"v{i}\" ." for i in range(n))
        response = update(virtuoso, f"INSERT DATA {{ GRAPH <{graph}> {{ {body} }} }}")
        assert (response.status_code == 200) is accepted, response.text[:300]
        assert count(virtuoso, graph) == (n if accepted else 0)
        if not accepted:
            assert "exceeded 10000 lines" in response.text


def test_engine_one_update_request_is_not_atomic(virtuoso: VirtuosoServer) -> None:
    """A request whose second operation fails answers 500, yet its first operation stays applied."""
    graph, never_created = fresh(), fresh()
    response = update(
        virtuoso, f"INSERT DATA {{ GRAPH <{graph}> {{ <{EX}a> <{EX}p> 1 }} }} ;\nDROP GRAPH <{never_created}>"
    )
    assert response.status_code == 500 and "SPARUL_DROP" in response.text
    assert count(virtuoso, graph) == 1


def test_engine_numeric_literals_come_back_as_other_terms(virtuoso: VirtuosoServer) -> None:
    """Virtuoso stores values, not terms: "10"^^xsd:decimal, "010"^^xsd:integer and "1.0E1"^^xsd:double become one
    term of value 10 (which one differs from run to run: "10"^^xsd:integer or "10.0"^^xsd:double, both seen);
    "1.50"^^xsd:decimal comes back "1.5"; language tags are lower-cased."""
    graph = fresh()
    written = f'"10"^^<{XSD}decimal>, "010"^^<{XSD}integer>, "1.0E1"^^<{XSD}double>, "1.50"^^<{XSD}decimal>, "x"@en-GB'
    assert update(virtuoso, f"INSERT DATA {{ GRAPH <{graph}> {{ <{EX}s> <{EX}p> {written} }} }}").status_code == 200
    response = httpx.post(
        virtuoso.query_url,
        data={"query": f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"},
        headers={"Accept": "application/n-triples"},
    )
    objects = sorted(line.split("\t")[2].removesuffix(" .") for line in response.text.splitlines() if line.strip())
    ten = [term for term in objects if term in (f'"10"^^<{XSD}integer>', f'"10.0"^^<{XSD}double>')]
    assert len(ten) == 1 and sorted(set(objects) - set(ten)) == sorted([f'"1.5"^^<{XSD}decimal>', '"x"@en-gb'])
    assert len(objects) == 3


def test_engine_truncates_reads_at_result_set_max_rows(virtuoso: VirtuosoServer) -> None:
    """20,000 triples stored; CONSTRUCT and a GSP GET answer 200 with 10,001 of them and no sign of the cut.
    SELECT answers 10,000 rows with the header X-SPARQL-MaxRows: 10000."""
    graph = fresh()
    body = serialize(triples(20_000), format=RdfFormat.N_TRIPLES)
    response = httpx.post(
        virtuoso.store_url,
        params={"graph": graph},
        content=body,
        headers={"Content-Type": "application/n-triples"},
        timeout=60,
    )
    assert response.status_code == 201
    assert count(virtuoso, graph) == 20_000
    construct = httpx.post(
        virtuoso.query_url,
        data={"query": f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"},
        headers={"Accept": "application/n-triples"},
        timeout=60,
    )
    gsp = httpx.get(
        virtuoso.store_url, params={"graph": graph}, headers={"Accept": "application/n-triples"}, timeout=60
    )
    for answer in (construct, gsp):
        assert answer.status_code == 200
        assert len([line for line in answer.text.splitlines() if line.strip()]) == 10_001
    select = httpx.post(
        virtuoso.query_url,
        data={"query": f"SELECT * WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"},
        headers={"Accept": "text/csv"},
        timeout=60,
    )
    assert len(select.text.splitlines()) - 1 == 10_000 and select.headers["X-SPARQL-MaxRows"] == "10000"


# -------------------------------------------------------------------------------------- what the service needs


def test_a_5000_triple_graph_written_through_the_service_reads_back_whole(vstore: RemoteStore) -> None:
    services = build_services(Settings(base_url=fresh("base") + "/"), vstore)
    ref = services.graphs.ref("ontologies", "five-thousand")
    content = triples(4_999) + [
        Triple(
            NamedNode(EX + "onto"),
            NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
            NamedNode("http://www.w3.org/2002/07/owl#Ontology"),
        )
    ]
    result = services.graphs.write(ref, serialize(content, format=RdfFormat.N_TRIPLES), RdfFormat.N_TRIPLES, ADMIN)
    stored = vstore.graph_triples(ref.iri)
    assert len(stored) == 5_000 == result.entry.triples
    assert set(stored) == set(content)
    assert graph_digest(stored) == graph_digest(content) == result.entry.digest


def test_a_blank_node_is_written_and_read_back(vstore: RemoteStore) -> None:
    graph = NamedNode(fresh())
    node = BlankNode()
    written = [Triple(NamedNode(EX + "s"), NamedNode(EX + "q"), node), Triple(node, NamedNode(EX + "p"), Literal("x"))]
    vstore.apply(ChangeSet(insert=in_graph(graph, written)))
    stored = vstore.graph_triples(graph)
    assert len(stored) == 2
    assert graph_digest(stored) == graph_digest(written)
    rows = vstore.select("SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": graph})
    assert len(rows) == 2


def test_a_blank_node_made_by_the_store_reads_back(virtuoso: VirtuosoServer, vstore: RemoteStore) -> None:
    """A blank node the store mints (INSERT … WHERE) comes back as ``nodeID://…`` in JSON results; reading it
    must not break. CONSTRUCT (N-Triples) gives ``_:b…`` labels and parses."""
    graph = fresh()
    response = update(virtuoso, f'INSERT {{ GRAPH <{graph}> {{ <{EX}s> <{EX}q> _:n . _:n <{EX}p> "x" }} }} WHERE {{}}')
    assert response.status_code == 200
    stored = vstore.graph_triples(NamedNode(graph))
    assert len(stored) == 2
    assert stored[0].object == stored[1].subject or stored[1].object == stored[0].subject
    rows = vstore.select("SELECT ?s ?o WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": NamedNode(graph)})
    assert len(rows) == 2


def test_listing_graphs_yields_only_the_services_graphs(vstore: RemoteStore) -> None:
    graph = NamedNode(fresh())
    vstore.apply(ChangeSet(insert=in_graph(graph, triples(2))))
    rows = vstore.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }", union=True)
    assert all("g" in row for row in rows)
    listed = {row["g"].value for row in rows}
    assert graph.value in listed
    assert not [g for g in listed if g.startswith(SYSTEM_GRAPHS)]
    assert all(g.startswith("http://caie.test/") for g in listed)
    assert vstore.ask("ASK { ?s ?p ?o }", union=True)


def test_a_20000_triple_graph_is_not_cut_to_10000(vstore: RemoteStore) -> None:
    graph = NamedNode(fresh())
    content = triples(20_000)
    vstore.bulk_load_new_graph(graph, serialize(content, format=RdfFormat.N_TRIPLES), RdfFormat.N_TRIPLES, graph.value)
    stored = vstore.graph_triples(graph)
    assert len(stored) == 20_000
    assert set(stored) == set(content)


def test_a_decimal_round_trip_keeps_the_digest(vstore: RemoteStore) -> None:
    graph = NamedNode(fresh())
    written = [
        Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), Literal("10", datatype=NamedNode(XSD + "decimal"))),
        Triple(NamedNode(EX + "s"), NamedNode(EX + "q"), Literal("1.50", datatype=NamedNode(XSD + "decimal"))),
    ]
    vstore.apply(ChangeSet(insert=in_graph(graph, written)))
    returned = vstore.graph_triples(graph)
    assert graph_digest(returned) == graph_digest(written)


def test_the_authenticated_endpoints_with_credentials(virtuoso: VirtuosoServer) -> None:
    store = RemoteStore(
        virtuoso.auth_url,
        virtuoso.auth_url,
        virtuoso.auth_store_url,
        username=virtuoso.user,
        password=virtuoso.password,
    )
    graph = NamedNode(fresh())
    try:
        store.apply(ChangeSet(insert=in_graph(graph, triples(2))))
        store.bulk_load_new_graph(
            NamedNode(graph.value + "/bulk"),
            serialize(triples(3), format=RdfFormat.N_TRIPLES),
            RdfFormat.N_TRIPLES,
            graph.value,
        )
        assert len(store.graph_triples(graph)) == 2
        assert len(store.graph_triples(NamedNode(graph.value + "/bulk"))) == 3
    finally:
        store.close()
