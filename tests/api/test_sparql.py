"""``/sparql`` and ``/rdf-graph-store``: the SPARQL 1.1 Protocol query operation and Graph Store reads.

Where the point is the store (datasets, base IRI, answers, graph reads) a test runs on both backends; protocol
mechanics that do not reach the store (parameters, service description, methods, CORS) run on the embedded one.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import httpx
import pytest
import rdflib
from pyoxigraph import Quad, RdfFormat, parse

from service.api import create_app
from service.core.store import Store

from ..conftest import BASE_URL, Service, dump, restored, settings_for
from ..servers import AppSlot

DATA = (
    b"@prefix ex: <http://example.org/> . ex:a ex:p ex:b , ex:c ; ex:label \"A, with comma\" . "
    b"ex:q a <http://www.w3.org/2002/07/owl#Ontology> ."
)
OTHER = b"@prefix ex: <http://example.org/> . ex:r a <http://www.w3.org/2002/07/owl#Ontology> . ex:x ex:p ex:y ."
SELECT = "SELECT ?o WHERE { <http://example.org/a> <http://example.org/p> ?o } ORDER BY ?o"
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
COUNT_BY_GRAPH = "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"
SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")
EMBEDDED = pytest.mark.parametrize("store", ["embedded"], indirect=True)


def _put(service: Service, name: str, data: bytes) -> str:
    response = service.http.put(
        f"/graphs/ontologies/{name}", content=data, headers={"Content-Type": "text/turtle", **service.auth()}
    )
    assert response.status_code == 201
    return response.json()["graph"]


def _load_q(service: Service) -> None:
    _put(service, "q", DATA)


@pytest.fixture
def loaded(service: Service, snapshots: dict[tuple[str, str], list[Quad]]) -> Service:
    """The service holding one ontology graph (written over HTTP once per backend, then copied)."""
    return restored(service, snapshots, "sparql: ontology q", _load_q)


def test_select_in_every_results_format(loaded: Service) -> None:
    as_json = loaded.http.get(
        "/sparql", params={"query": SELECT}, headers={"Accept": "application/sparql-results+json"}
    )
    assert [b["o"]["value"] for b in as_json.json()["results"]["bindings"]] == [
        "http://example.org/b",
        "http://example.org/c",
    ]
    as_xml = loaded.http.get("/sparql", params={"query": SELECT}, headers={"Accept": "application/sparql-results+xml"})
    assert len(ET.fromstring(as_xml.content).findall(".//{http://www.w3.org/2005/sparql-results#}result")) == 2
    as_csv = loaded.http.post("/sparql", data={"query": SELECT}, headers={"Accept": "text/csv"})
    assert list(csv.reader(io.StringIO(as_csv.text)))[1:] == [["http://example.org/b"], ["http://example.org/c"]]
    as_tsv = loaded.http.post(
        "/sparql",
        content=SELECT,
        headers={"Content-Type": "application/sparql-query", "Accept": "text/tab-separated-values"},
    )
    assert as_tsv.text.splitlines()[1:] == ["<http://example.org/b>", "<http://example.org/c>"]
    assert "Accept" in as_json.headers["vary"]


def test_default_graph_is_the_union_and_ask_works(loaded: Service) -> None:
    answer = loaded.http.get(
        "/sparql",
        params={"query": "ASK { ?s <http://example.org/label> \"A, with comma\" }"},
        headers={"Accept": "application/json"},
    )
    assert answer.json()["boolean"] is True


def test_construct_in_every_rdf_format(loaded: Service) -> None:
    query = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } FILTER(?s = <http://example.org/a>) }"
    for media, rdf_format in (
        ("text/turtle", RdfFormat.TURTLE),
        ("application/ld+json", RdfFormat.JSON_LD),
        ("application/n-triples", RdfFormat.N_TRIPLES),
        ("application/rdf+xml", RdfFormat.RDF_XML),
        ("application/n-quads", RdfFormat.N_QUADS),
        ("application/trig", RdfFormat.TRIG),
    ):
        answer = loaded.http.get("/sparql", params={"query": query}, headers={"Accept": media})
        assert answer.headers["content-type"].startswith(media)
        assert len(list(parse(answer.content, format=rdf_format))) == 3, media


def _rows(answer: httpx.Response) -> set[tuple[tuple[str, str], ...]]:
    assert answer.status_code == 200, answer.text
    return {
        tuple(sorted((name, term["value"]) for name, term in row.items()))
        for row in answer.json()["results"]["bindings"]
    }


def _copy_to_raw_server(service: Service, raw: httpx.Client) -> None:
    """Make the plain ``oxigraph serve`` behind ``raw`` hold what the service's store holds (remote: it is that store)."""
    if service.backend != "remote":
        raw.post(
            "/update", content=b"DROP ALL", headers={"Content-Type": "application/sparql-update"}
        ).raise_for_status()
        quads = "".join(f"{quad} .\n" for quad in dump(service.store)).encode()
        raw.post("/store", content=quads, headers={"Content-Type": "application/n-quads"}).raise_for_status()


def test_dataset_answers_as_a_raw_oxigraph_serve(loaded: Service, remote_url: str) -> None:
    """FROM, FROM NAMED and the protocol's graph parameters (which replace them) mean what they mean to the engine."""
    service = loaded
    a, b = f"{BASE_URL}graphs/ontologies/q", _put(service, "r", OTHER)
    cases: list[tuple[str, dict[str, list[str]]]] = [
        (f"SELECT (COUNT(*) AS ?n) FROM <{a}> WHERE {{ ?s ?p ?o }}", {}),
        (
            f"SELECT (COUNT(*) AS ?n) FROM <{a}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
            {},
        ),  # no FROM NAMED: no named graphs
        (COUNT_BY_GRAPH.replace("WHERE", f"FROM NAMED <{b}> WHERE"), {}),
        (COUNT_BY_GRAPH.replace("WHERE", f"FROM <{a}> FROM NAMED <{a}> FROM NAMED <{b}> WHERE"), {}),
        (f"SELECT (COUNT(*) AS ?n) FROM <{a}> WHERE {{ ?s ?p ?o }}", {"default-graph-uri": [b]}),  # the protocol wins
        (COUNT, {"default-graph-uri": [a, b]}),
        (COUNT_BY_GRAPH, {"named-graph-uri": [a]}),
        (COUNT_BY_GRAPH, {"default-graph-uri": [a]}),  # no named-graph-uri: no named graphs
        (COUNT, {"named-graph-uri": [a]}),  # no default-graph-uri: an empty default graph
    ]
    accept = {"Accept": "application/sparql-results+json"}
    with httpx.Client(base_url=remote_url, timeout=60.0) as raw:
        _copy_to_raw_server(service, raw)
        for query, parameters in cases:
            ours = service.http.get("/sparql", params={"query": query, **parameters}, headers=accept)
            theirs = raw.get("/query", params={"query": query, **parameters}, headers=accept)
            assert _rows(ours) == _rows(theirs), (query, parameters)
    # with no dataset at all, and only then, the default graph is the union (the catalog included)
    union = service.http.post("/sparql", data={"query": COUNT}, headers=accept)
    named = service.http.post("/sparql", data={"query": COUNT_BY_GRAPH}, headers=accept)
    graphs = {dict(row)["g"]: int(dict(row)["n"]) for row in _rows(named)}
    assert {a, b} < set(graphs) and int(dict(_rows(union).pop())["n"]) == sum(graphs.values())
    hidden = (
        'SELECT (COUNT(*) AS ?n) # FROM <urn:x>\nWHERE { ?s ?p ?o FILTER(STR(?o) != "FROM <urn:x>") }'  # no dataset
    )
    assert _rows(service.http.get("/sparql", params={"query": hidden}, headers=accept)) == _rows(union)


def test_relative_iris_resolve_against_the_endpoint(loaded: Service) -> None:
    query = "SELECT ?x (COUNT(*) AS ?n) WHERE { BIND(<graphs/ontologies/q> AS ?x) GRAPH ?x { ?s ?p ?o } } GROUP BY ?x"
    answer = loaded.http.post(
        "/sparql", content=query, headers={"Content-Type": "application/sparql-query", "Accept": "application/json"}
    )
    assert _rows(answer) == {(("n", "4"), ("x", f"{BASE_URL}graphs/ontologies/q"))}
    own_base = loaded.http.get(
        "/sparql",
        params={"query": "BASE <http://other.example/d/> SELECT ?x WHERE { BIND(<e> AS ?x) }"},
        headers={"Accept": "application/json"},
    )
    assert _rows(own_base) == {(("x", "http://other.example/d/e"),)}


@EMBEDDED
def test_one_query_per_request_and_unknown_parameters_ignored(loaded: Service) -> None:
    two = loaded.http.get("/sparql", params=[("query", SELECT), ("query", "ASK {}")])
    assert two.status_code == 400 and "2 queries" in two.json()["detail"]
    form = loaded.http.post(
        "/sparql",
        content=b"query=ASK%7B%7D&query=ASK%7B%7D",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 400 and "2 queries" in form.json()["detail"]
    both = loaded.http.post(
        "/sparql", params={"query": SELECT}, content="ASK {}", headers={"Content-Type": "application/sparql-query"}
    )
    assert both.status_code == 400 and "body" in both.json()["detail"]
    bad_graph = loaded.http.get("/sparql", params={"query": COUNT, "default-graph-uri": "not an iri"})
    assert bad_graph.status_code == 400 and "default-graph-uri" in bad_graph.json()["detail"]
    extra = loaded.http.get(
        "/sparql", params={"query": SELECT, "format": "json", "output": "json"}, headers={"Accept": "application/json"}
    )
    assert extra.status_code == 200 and len(extra.json()["results"]["bindings"]) == 2


@pytest.mark.parametrize(
    "request_kwargs",
    [
        {"params": {"query": "PREFIX ex: <http://example.org/> # comment\nINSERT DATA { ex:x ex:p ex:y }"}},
        {"params": {"update": "DROP ALL"}},
        {"method": "POST", "data": {"update": "DROP ALL"}},
        {"method": "POST", "content": "DROP ALL", "headers": {"Content-Type": "application/sparql-update"}},
        {"method": "POST", "content": "CLEAR DEFAULT", "headers": {"Content-Type": "application/sparql-query"}},
    ],
)
@EMBEDDED
def test_updates_are_refused_and_change_nothing(loaded: Service, request_kwargs: dict) -> None:
    kwargs = dict(request_kwargs)
    response = loaded.http.request(kwargs.pop("method", "GET"), "/sparql", **kwargs)
    assert response.status_code == 400
    assert "read-only" in response.json()["detail"]
    assert loaded.http.get("/graphs/ontologies/q").status_code == 200
    assert len(loaded.store.construct("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", union=True)) >= 3


def test_bad_queries_and_formats_get_their_status(loaded: Service) -> None:
    broken = loaded.http.get("/sparql", params={"query": "SELECT ?s WHERE { ?s ?p }"})
    assert broken.status_code == 400 and "syntax" in broken.json()["detail"].lower()
    wrong_type = loaded.http.post("/sparql", content=b"{}", headers={"Content-Type": "application/json"})
    assert wrong_type.status_code == 415 and json.loads(wrong_type.text)["status"] == 415
    for query, accept in (
        (SELECT, "text/turtle"),
        ("ASK {}", "text/csv"),
        ("CONSTRUCT WHERE { ?s ?p ?o }", "text/csv"),
    ):
        refused = loaded.http.get("/sparql", params={"query": query}, headers={"Accept": accept})
        assert refused.status_code == 406 and "available" in refused.json()["detail"], (query, accept)


@EMBEDDED
def test_service_description(service: Service) -> None:
    default = service.http.get("/sparql")
    assert default.status_code == 200 and default.headers["content-type"].startswith("text/turtle")
    endpoint = rdflib.URIRef(f"{BASE_URL}sparql")
    for media, syntax in (
        ("text/turtle", "turtle"),
        ("application/ld+json", "json-ld"),
        ("application/rdf+xml", "xml"),
        ("application/n-triples", "nt"),
    ):
        graph = rdflib.Graph().parse(data=service.http.get("/sparql", headers={"Accept": media}).content, format=syntax)
        assert (endpoint, rdflib.RDF.type, SD.Service) in graph and (endpoint, SD.endpoint, endpoint) in graph, media
    assert (endpoint, SD.feature, SD.UnionDefaultGraph) in graph
    assert (endpoint, SD.resultFormat, rdflib.URIRef("http://www.w3.org/ns/formats/SPARQL_Results_CSV")) in graph
    assert "only then" in str(graph.value(endpoint, rdflib.RDFS.comment))
    dataset = graph.value(endpoint, SD.defaultDataset)
    names = {graph.value(named, SD.name) for named in graph.objects(dataset, SD.namedGraph)}
    assert names == {
        rdflib.URIRef(service.http.get("/graphs", headers={"Accept": "application/json"}).json()["catalog"])
    }
    browser = service.http.get("/sparql", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert browser.status_code == 303 and browser.headers["location"] == "/query"
    assert service.http.get("/sparql", headers={"Accept": "application/sparql-results+json"}).status_code == 406


@EMBEDDED
def test_head_options_and_other_methods(loaded: Service) -> None:
    head = loaded.http.head("/sparql", params={"query": SELECT}, headers={"Accept": "text/csv"})
    assert head.status_code == 200 and head.headers["content-type"].startswith("text/csv") and head.content == b""
    assert loaded.http.head("/sparql").headers["content-type"].startswith("text/turtle")
    for path, allow in (("/sparql", "GET, HEAD, POST, OPTIONS"), ("/rdf-graph-store", "GET, HEAD, OPTIONS")):
        options = loaded.http.options(path)
        assert options.status_code == 204 and options.headers["allow"] == allow
        for method in ("PUT", "DELETE", "PATCH", *(["POST"] if "POST" not in allow else [])):
            refused = loaded.http.request(method, path, params={"graph": f"{BASE_URL}x"}, headers=loaded.auth())
            assert refused.status_code == 405 and refused.headers["allow"] == allow, (path, method)
    anonymous = loaded.http.put("/rdf-graph-store", params={"graph": f"{BASE_URL}x"}, content=b"")
    assert anonymous.status_code == 405


@pytest.fixture
def private(store: Store, tokens: dict[str, str], app_slot: tuple[AppSlot, str]) -> Iterator[httpx.Client]:
    """The service with reads needing a token (``CAIE_PUBLIC_READS=false``), for CORS from one origin."""
    slot, url = app_slot
    app = create_app(settings_for(tokens, public_reads=False, cors_origins=["https://app.example"]), store)
    with slot.serving(app), httpx.Client(base_url=url, timeout=60.0) as http:
        yield http


@EMBEDDED
def test_cors_preflight_and_reads_needing_a_token(private: httpx.Client, tokens: dict[str, str]) -> None:
    preflight = private.options(
        "/sparql",
        headers={
            "Origin": "https://app.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert "access-control-allow-credentials" not in preflight.headers
    stranger = private.options(
        "/sparql", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}
    )
    assert "access-control-allow-origin" not in stranger.headers
    origin = {"Origin": "https://app.example"}
    for path, params in (("/sparql", {"query": SELECT}), ("/rdf-graph-store", {"default": ""})):
        anonymous = private.get(path, params=params, headers=origin)
        assert (
            anonymous.status_code == 401 and anonymous.headers["access-control-allow-origin"] == "https://app.example"
        )
        allowed = private.get(path, params=params, headers={**origin, "Authorization": f"Bearer {tokens['vera']}"})
        assert allowed.status_code == 200 and "Origin" in allowed.headers["vary"]


def test_graph_store_reads(loaded: Service) -> None:
    entry = next(
        e
        for e in loaded.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"]
        if e["identifier"] == "q"
    )
    turtle = loaded.http.get("/rdf-graph-store", params={"graph": entry["graph"]})
    assert turtle.headers["content-type"].startswith("text/turtle") and "Accept" in turtle.headers["vary"]
    assert len(rdflib.Graph().parse(data=turtle.text, format="turtle")) == entry["triples"]
    quads = loaded.http.get(
        "/rdf-graph-store", params={"graph": entry["graph"]}, headers={"Accept": "application/n-quads"}
    )
    assert {quad.graph_name.value for quad in parse(quads.content, format=RdfFormat.N_QUADS)} == {entry["graph"]}
    head = loaded.http.head("/rdf-graph-store", params={"graph": entry["graph"]})
    assert head.status_code == 200 and head.content == b"" and head.headers["content-type"].startswith("text/turtle")
    default = loaded.http.get("/rdf-graph-store", params={"default": ""}, headers={"Accept": "application/n-triples"})
    union = loaded.http.get("/sparql", params={"query": COUNT}, headers={"Accept": "application/json"})
    assert len(list(parse(default.content, format=RdfFormat.N_TRIPLES))) == int(dict(_rows(union).pop())["n"])
    missing = loaded.http.get("/rdf-graph-store", params={"graph": f"{BASE_URL}graphs/ontologies/none"})
    assert missing.status_code == 404 and "no graph" in missing.json()["detail"]
    for params in ({}, {"default": "", "graph": entry["graph"]}):
        assert loaded.http.get("/rdf-graph-store", params=params).status_code == 400
    assert (
        loaded.http.get("/rdf-graph-store", params={"default": ""}, headers={"Accept": "text/csv"}).status_code == 406
    )
