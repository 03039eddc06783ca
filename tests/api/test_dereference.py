"""Dereferencing published IRIs: HTML for people, RDF for machines, ``Vary: Accept``, 406 otherwise."""

from __future__ import annotations

import json

import rdflib
from pyld import jsonld
from rdflib.compare import isomorphic

from service.core.bootstrap import load_spec_files

from ..conftest import BASE_URL, REPO, Service
from ..conftest import graphs_over


TERM = "/epo/AcceptanceCriterion"
IRI = "https://w3id.org/ob-caie/epo/AcceptanceCriterion"


def _load(service: Service) -> None:
    headers = {"Content-Type": "text/turtle", **service.auth()}
    body = (REPO / "ontologies/epo.ttl").read_bytes()
    assert service.http.put("/graphs/ontologies/epo", content=body, headers=headers).status_code == 201


def test_term_in_turtle_json_ld_and_html(service: Service) -> None:
    _load(service)
    turtle = service.http.get(TERM, headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200 and turtle.headers["content-type"].startswith("text/turtle")
    assert "Accept" in turtle.headers["vary"]  # with Origin: CORS (docs/sparql.md)
    from_turtle = rdflib.Graph().parse(data=turtle.text, format="turtle")
    assert (rdflib.URIRef(IRI), rdflib.RDF.type, rdflib.OWL.Class) in from_turtle
    assert from_turtle.value(rdflib.URIRef(IRI), rdflib.RDFS.comment) is not None

    as_jsonld = service.http.get(TERM, headers={"Accept": "application/ld+json"})
    assert as_jsonld.headers["content-type"].startswith("application/ld+json")
    expanded = jsonld.expand(json.loads(as_jsonld.text))
    nquads = jsonld.to_rdf(expanded, {"format": "application/n-quads"})
    assert isomorphic(rdflib.Graph().parse(data=nquads, format="nt"), from_turtle)

    page = service.http.get(TERM, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.headers["content-type"].startswith("text/html") and "Accept" in page.headers["vary"]
    label = str(from_turtle.value(rdflib.URIRef(IRI), rdflib.RDFS.label))
    assert f"<h1>{label}</h1>" in page.text


def test_ontology_iri_gives_the_whole_ontology(service: Service) -> None:
    _load(service)
    whole = rdflib.Graph().parse(data=service.http.get("/epo", headers={"Accept": "text/turtle"}).text, format="turtle")
    assert len(whole) > 200
    page = service.http.get("/epo", headers={"Accept": "text/html"})
    assert "AcceptanceCriterion" in page.text


def test_unacceptable_and_unknown(service: Service) -> None:
    _load(service)
    refused = service.http.get(TERM, headers={"Accept": "application/pdf"})
    assert refused.status_code == 406 and "text/turtle" in refused.json()["detail"]
    missing = service.http.get("/epo/NoSuchTerm", headers={"Accept": "text/turtle"})
    assert missing.status_code == 404 and "NoSuchTerm" in missing.json()["detail"]


def test_minted_graph_iri_dereferences_to_its_catalog_record(service: Service) -> None:
    body = b"<http://example.org/a> <http://example.org/p> 1 ."
    imported = service.http.post("/evaluations/imports", params={"id": "e1"}, content=body,
                                 headers={"Content-Type": "text/turtle", **service.auth()})
    assert imported.status_code == 201, imported.text
    record = rdflib.Graph().parse(data=service.http.get("/evaluations/e1", headers={"Accept": "text/turtle"}).text, format="turtle")
    size = rdflib.Literal(imported.json()["triples"])
    assert (rdflib.URIRef("http://caie.test/evaluations/e1"), rdflib.URIRef("http://rdfs.org/ns/void#triples"), size) in record


def test_specification_files_load_once(service: Service) -> None:
    """What ``make run`` does at every start: the first start loads every file, a restart loads none."""
    graphs = graphs_over(service.store, BASE_URL)
    assert load_spec_files(graphs) >= 8
    assert load_spec_files(graphs) == 0
    kinds = {g["kind"] for g in service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"]}
    assert kinds == {"ontologies", "dso", "kg", "shapes"}
