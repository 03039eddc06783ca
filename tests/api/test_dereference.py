"""Dereferencing published IRIs: HTML for people, RDF for machines, ``Vary: Accept``, 406 otherwise; one path,
one IRI (graphs under ``{base}graphs/``, the vocabulary at its w3id path); JSON-LD compacted with our context."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import rdflib
from caie_vaccine import VE
from pyld import jsonld
from pyoxigraph import Quad
from rdflib.compare import isomorphic

from service.api import create_app
from service.api.routers.resources import OFFERED
from service.core.bootstrap import load_spec_files
from service.core.iris import DEPLOYMENT_SEGMENTS
from service.core.namespaces import PREFIXES, VOCAB_BASE

from ..conftest import BASE_URL, REPO, Service, graphs_over, settings_for
from ..test_envelope import load_spec

TERM = "/epo/AcceptanceCriterion"
IRI = "https://w3id.org/ob-caie/epo/AcceptanceCriterion"
CONTEXT = BASE_URL + "contexts/ob-caie.jsonld"
embedded_only = pytest.mark.parametrize("store", ["embedded"], indirect=True)


def context_loader(service: Service) -> Callable[..., dict]:
    """A pyld document loader that fetches the deployment's contexts from the running service."""

    def load(url: str, options: dict | None = None) -> dict:
        assert url.startswith(BASE_URL), f"JSON-LD refers to a context elsewhere: {url}"
        answer = service.http.get("/" + url[len(BASE_URL) :])
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/ld+json")
        return {"contentType": "application/ld+json", "contextUrl": None, "documentUrl": url, "document": answer.json()}

    return load


def _load(service: Service) -> None:
    headers = {"Content-Type": "text/turtle", **service.auth()}
    body = (REPO / "ontologies/epo.ttl").read_bytes()
    assert service.http.put("/graphs/ontologies/epo", content=body, headers=headers).status_code == 201


def test_epo_terms_and_ontology_dereference(service: Service) -> None:
    """One EPO load per backend: a term in Turtle, JSON-LD and HTML; the ontology IRI gives the whole ontology;
    406 for an unacceptable type, 404 for an unknown term; HEAD answers like GET without a body."""
    _load(service)
    turtle = service.http.get(TERM, headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200 and turtle.headers["content-type"].startswith("text/turtle")
    assert "Accept" in turtle.headers["vary"]  # with Origin: CORS (docs/sparql.md)
    from_turtle = rdflib.Graph().parse(data=turtle.text, format="turtle")
    assert (rdflib.URIRef(IRI), rdflib.RDF.type, rdflib.OWL.Class) in from_turtle
    assert from_turtle.value(rdflib.URIRef(IRI), rdflib.RDFS.comment) is not None

    as_jsonld = service.http.get(TERM, headers={"Accept": "application/ld+json"})
    assert as_jsonld.headers["content-type"].startswith("application/ld+json")
    compacted = json.loads(as_jsonld.text)
    assert compacted["@context"] == CONTEXT and compacted["@id"] == "epo:AcceptanceCriterion"
    assert compacted["@type"] == "owl:Class" and "rdfs:label" in compacted
    expanded = jsonld.expand(compacted, {"documentLoader": context_loader(service)})
    nquads = jsonld.to_rdf(expanded, {"format": "application/n-quads"})
    assert isomorphic(rdflib.Graph().parse(data=nquads, format="nt"), from_turtle)

    page = service.http.get(TERM, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.headers["content-type"].startswith("text/html") and "Accept" in page.headers["vary"]
    label = str(from_turtle.value(rdflib.URIRef(IRI), rdflib.RDFS.label))
    assert f"<h1>{label}</h1>" in page.text

    # the ontology IRI gives the whole ontology
    whole = rdflib.Graph().parse(data=service.http.get("/epo", headers={"Accept": "text/turtle"}).text, format="turtle")
    assert len(whole) > 200
    page = service.http.get("/epo", headers={"Accept": "text/html"})
    assert "AcceptanceCriterion" in page.text

    # unacceptable and unknown
    refused = service.http.get(TERM, headers={"Accept": "application/pdf"})
    assert refused.status_code == 406 and "text/turtle" in refused.json()["detail"]
    missing = service.http.get("/epo/NoSuchTerm", headers={"Accept": "text/turtle"})
    assert missing.status_code == 404 and "NoSuchTerm" in missing.json()["detail"]

    # HEAD answers like GET without a body
    head = service.http.head(TERM, headers={"Accept": "text/turtle"})
    assert head.status_code == 200 and head.content == b"" and head.headers["content-type"].startswith("text/turtle")
    assert service.http.head("/epo/NoSuchTerm", headers={"Accept": "text/turtle"}).status_code == 404


def test_minted_graph_iri_dereferences_to_its_catalog_record(service: Service) -> None:
    body = b"<http://example.org/a> <http://example.org/p> 1 ."
    imported = service.http.post(
        "/evaluations/imports",
        params={"id": "e1"},
        content=body,
        headers={"Content-Type": "text/turtle", **service.auth()},
    )
    assert imported.status_code == 201, imported.text
    record = rdflib.Graph().parse(
        data=service.http.get("/evaluations/e1", headers={"Accept": "text/turtle"}).text, format="turtle"
    )
    size = rdflib.Literal(imported.json()["triples"])
    assert (
        rdflib.URIRef("http://caie.test/evaluations/e1"),
        rdflib.URIRef("http://rdfs.org/ns/void#triples"),
        size,
    ) in record


def test_specification_files_load_once(service: Service) -> None:
    """What ``make run`` does at every start: the first start loads every file, a restart loads none."""
    graphs = graphs_over(service.store, BASE_URL)
    assert load_spec_files(graphs) >= 8
    assert load_spec_files(graphs) == 0
    kinds = {g["kind"] for g in service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"]}
    assert kinds == {"ontologies", "dso", "kg", "shapes", "templates", "judges"}


@embedded_only
def test_published_context_names_every_namespace(service: Service) -> None:
    served = service.http.get("/contexts/ob-caie.jsonld")
    assert served.status_code == 200 and served.headers["content-type"].startswith("application/ld+json")
    assert PREFIXES.items() <= served.json()["@context"].items()
    evaluation = service.http.get("/contexts/evaluation.jsonld").json()["@context"]
    assert evaluation["epo"] == PREFIXES["epo"] and evaluation["@version"] == 1.1
    # an installed domain package's prefix (caie.prefixes) is in both, though neither file names it
    assert served.json()["@context"]["ve"] == evaluation["ve"] == VE
    assert service.http.get("/contexts/nothing.jsonld").status_code == 404


@embedded_only
def test_graph_iris_and_vocabulary_iris_are_apart(service: Service, spec_quads: list[Quad]) -> None:
    """The paths minted under both bases before (the catalog, the DSO, the KGs, the shapes graphs) now give the
    vocabulary's IRI; each graph is under ``{base}graphs/``, where its IRI is its Graph Store resource."""
    load_spec(service.store, spec_quads)
    catalog = service.http.get("/graphs", headers={"Accept": "application/json"}).json()
    assert catalog["catalog"] == BASE_URL + "graphs"
    graphs = {g["graph"] for g in catalog["graphs"]}
    templates = len(list((REPO / "ontologies" / "templates").glob("*.ttl")))  # one opening-turn set per language
    judges = len(list((REPO / "examples" / "judges").glob("*.ttl")))  # the worked example's judging rules
    assert len(graphs) == 12 + templates + judges and all(
        g.startswith(BASE_URL + "graphs/") for g in graphs
    )  # 2 ontologies, 1 DSO, 4 KGs, 5 shapes
    for path, kind in (
        ("dso/vaccine-education", rdflib.OWL.Ontology),
        ("catalog", rdflib.OWL.Ontology),
        ("shapes/record", rdflib.OWL.Ontology),
        ("kg/kenya", rdflib.DCAT.Dataset),
    ):
        answer = service.http.get(f"/{path}", headers={"Accept": "text/turtle"})
        assert answer.status_code == 200, path
        described = rdflib.Graph().parse(data=answer.text, format="turtle")
        assert (rdflib.URIRef(VOCAB_BASE + path), rdflib.RDF.type, kind) in described, path
        graph = f"/graphs/{'ontologies/catalog' if path == 'catalog' else path}"
        content = rdflib.Graph().parse(data=service.http.get(graph, headers={"Accept": "text/turtle"}).text)
        assert (rdflib.URIRef(VOCAB_BASE + path), rdflib.RDF.type, kind) in content, graph
        page = service.http.get(graph, headers={"Accept": "text/html"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html"), graph
        assert BASE_URL + graph[1:] in page.text and "Accept" in page.headers["vary"]
    whole = service.http.get("/dso/vaccine-education", headers={"Accept": "application/n-triples"}).text
    assert whole.count("\n") > 500  # the ontology IRI gives the whole DSO


@embedded_only
def test_no_route_shadows_the_vocabulary(service: Service, spec_quads: list[Quad], tokens: dict[str, str]) -> None:
    """The rule holds for the running app: the first path segments it routes (other than the catch-all) and the
    ones the deployment mints under are never a first segment of the vocabulary's IRIs."""
    app = create_app(settings_for(tokens), service.store)
    paths = {*app.openapi()["paths"], *(getattr(route, "path", None) or "/" for route in app.routes)}
    routed = {path.split("/")[1] for path in paths if path not in ("/", "/{path}", "/{path:path}")}
    assert {"graphs", "evaluations", "sparql", "docs"} <= routed
    vocabulary = {
        q.subject.value[len(VOCAB_BASE) :].split("/")[0] for q in spec_quads if q.subject.value.startswith(VOCAB_BASE)
    }
    assert vocabulary >= {"epo", "catalog", "dso", "kg", "shapes"}
    assert not vocabulary & (routed | DEPLOYMENT_SEGMENTS), vocabulary & (routed | DEPLOYMENT_SEGMENTS)


def test_w3id_htaccess_sends_every_syntax_we_write_to_the_same_path() -> None:
    """docs/w3id/.htaccess: a 303 to the same path for HTML, for each RDF syntax the service offers, and for the rest."""
    rules = (REPO / "docs/w3id/.htaccess").read_text()
    for media in OFFERED:
        assert f"%{{HTTP_ACCEPT}} {media.replace('+', chr(92) + '+')}" in rules, media
    redirects = [line for line in rules.splitlines() if line.startswith("RewriteRule")]
    assert redirects[-1] == "RewriteRule ^(.+)$ https://caie.example.org/$1 [R=303,L]"
    assert all(line.endswith("[R=303,L]") and "https://caie.example.org/" in line for line in redirects)
