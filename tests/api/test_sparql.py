"""``/sparql``: the SPARQL 1.1 Protocol query operation, read-only, on both backends."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest
from pyoxigraph import RdfFormat, parse

from ..conftest import Service


DATA = (b"@prefix ex: <http://example.org/> . ex:a ex:p ex:b , ex:c ; ex:label \"A, with comma\" . "
        b"ex:q a <http://www.w3.org/2002/07/owl#Ontology> .")
SELECT = "SELECT ?o WHERE { <http://example.org/a> <http://example.org/p> ?o } ORDER BY ?o"


@pytest.fixture
def loaded(service: Service) -> Service:
    response = service.http.put("/graphs/ontologies/q", content=DATA, headers={"Content-Type": "text/turtle", **service.auth()})
    assert response.status_code == 201
    return service


def test_select_in_every_results_format(loaded: Service) -> None:
    as_json = loaded.http.get("/sparql", params={"query": SELECT}, headers={"Accept": "application/sparql-results+json"})
    assert [b["o"]["value"] for b in as_json.json()["results"]["bindings"]] == ["http://example.org/b", "http://example.org/c"]
    as_xml = loaded.http.get("/sparql", params={"query": SELECT}, headers={"Accept": "application/sparql-results+xml"})
    assert len(ET.fromstring(as_xml.content).findall(".//{http://www.w3.org/2005/sparql-results#}result")) == 2
    as_csv = loaded.http.post("/sparql", data={"query": SELECT}, headers={"Accept": "text/csv"})
    assert list(csv.reader(io.StringIO(as_csv.text)))[1:] == [["http://example.org/b"], ["http://example.org/c"]]
    as_tsv = loaded.http.post("/sparql", content=SELECT, headers={"Content-Type": "application/sparql-query", "Accept": "text/tab-separated-values"})
    assert as_tsv.text.splitlines()[1:] == ["<http://example.org/b>", "<http://example.org/c>"]
    assert as_json.headers["vary"] == "Accept"


def test_default_graph_is_the_union_and_ask_works(loaded: Service) -> None:
    answer = loaded.http.get("/sparql", params={"query": "ASK { ?s <http://example.org/label> \"A, with comma\" }"},
                             headers={"Accept": "application/json"})
    assert answer.json()["boolean"] is True


def test_construct_in_turtle_and_json_ld(loaded: Service) -> None:
    query = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <http://caie.test/ontologies/q> { ?s ?p ?o } FILTER(?s = <http://example.org/a>) }"
    turtle = loaded.http.get("/sparql", params={"query": query}, headers={"Accept": "text/turtle"})
    assert len(list(parse(turtle.content, format=RdfFormat.TURTLE))) == 3
    jsonld = loaded.http.get("/sparql", params={"query": query}, headers={"Accept": "application/ld+json"})
    assert len(list(parse(jsonld.content, format=RdfFormat.JSON_LD))) == 3
    assert loaded.http.get("/sparql", params={"query": query}, headers={"Accept": "text/csv"}).status_code == 406


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
def test_updates_are_refused_and_change_nothing(loaded: Service, request_kwargs: dict) -> None:
    kwargs = dict(request_kwargs)
    response = loaded.http.request(kwargs.pop("method", "GET"), "/sparql", **kwargs)
    assert response.status_code == 400
    assert "read-only" in response.json()["detail"]
    assert loaded.http.get("/graphs/ontologies/q").status_code == 200
    assert len(loaded.store.construct("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", union=True)) >= 3


def test_bad_queries_name_the_problem(loaded: Service) -> None:
    broken = loaded.http.get("/sparql", params={"query": "SELECT ?s WHERE { ?s ?p }"})
    assert broken.status_code == 400 and "syntax" in broken.json()["detail"].lower()
    missing = loaded.http.get("/sparql")
    assert missing.status_code == 400 and "give a query" in missing.json()["detail"]
    wrong_type = loaded.http.post("/sparql", content=b"{}", headers={"Content-Type": "application/json"})
    assert wrong_type.status_code == 415
    assert json.loads(wrong_type.text)["status"] == 415
