"""Every IRI the worked example mints dereferences: HTML, Turtle and JSON-LD, 406 for what cannot be given.

The measles example is loaded, signed off, planned, the plan approved and a scenario excluded; then every IRI
under the deployment base and the w3id base (subjects and graph names, found through ``/sparql``) is walked.
Every IRI is read as Turtle (and must describe itself; a vocabulary term must carry a label and a definition).
Every format is then checked on IRIs that between them show every kind of IRI (the path with its numbers taken
out) and every predicate and class the Turtle of any IRI uses, since one code path renders each format: for
:data:`PER_KIND` IRIs of each kind, and for the first IRI whose Turtle brings a predicate or class not yet seen
in a document of its sort (a whole graph, or a description), the JSON-LD is read with its published context by
Oxigraph's JSON-LD parser and must give the Turtle's triples with no term left uncompacted, and the HTML page
must show the IRI's label and definition; for the :data:`PER_KIND` IRIs of each kind pyld, a JSON-LD processor
no one here wrote, fetches the context from the service and must agree too, and a PDF is refused with 406.
Embedded backend only: what is tested is the publishing, not the store.
"""

from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from html.parser import HTMLParser

import httpx
import pytest
import rdflib
from pyld import jsonld
from pyoxigraph import BlankNode, NamedNode, Quad, RdfFormat, Triple, parse

from service.core.namespaces import DCTERMS, OWL, RDF, RDFS, SKOS, VOCAB_BASE

from ..conftest import BASE_URL, Service, restored
from ..test_envelope import load_spec
from .test_dereference import CONTEXT, context_loader
from .test_evaluations import ID, create, sign_off

pytestmark = pytest.mark.parametrize("store", ["embedded"], indirect=True)

PLAN = {"strategy": "Equal", "budget": 24, "seed": 7, "reviewSample": 20}
PER_KIND = 3
LABELS = (RDFS + "label", SKOS + "prefLabel", DCTERMS + "title")
DEFINITIONS = (RDFS + "comment", SKOS + "definition")
RDF_TYPE = RDF + "type"
TERM_TYPES = {
    OWL + "Class",
    OWL + "ObjectProperty",
    OWL + "DatatypeProperty",
    OWL + "AnnotationProperty",
    RDF + "Property",
    RDFS + "Class",
    SKOS + "Concept",
}
MINTED = f"""
SELECT DISTINCT ?iri WHERE {{
  {{ GRAPH ?g {{ ?iri ?p ?o }} }} UNION {{ GRAPH ?iri {{ ?s ?p ?o }} }}
  FILTER(isIRI(?iri) && (STRSTARTS(STR(?iri), "{BASE_URL}") || STRSTARTS(STR(?iri), "{VOCAB_BASE}")))
}}"""


@pytest.fixture
def example(service: Service, spec_quads: list[Quad], snapshots: dict) -> Service:
    """The measles example, signed off, with an approved plan and one excluded scenario."""

    def build(fresh: Service) -> None:
        load_spec(fresh.store, spec_quads)
        create(fresh)
        sign_off(fresh)
        made = fresh.http.post(f"/evaluations/{ID}/plans", json=PLAN, headers=fresh.auth("theo"))
        assert made.status_code == 201, made.text
        approved = fresh.http.post(f"/evaluations/{ID}/plans/1/approval", json={}, headers=fresh.auth("annie"))
        assert approved.status_code == 201, approved.text
        probe = fresh.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 1}).json()["items"][0]
        excluded = fresh.http.post(
            f"/evaluations/{ID}/scenarios/{probe['scenario'].rsplit('/', 1)[-1]}/exclusion",
            json={"reason": "not a real commute"},
            headers=fresh.auth("annie"),
        )
        assert excluded.status_code == 201, excluded.text

    return restored(service, snapshots, "measles example planned, approved, one exclusion", build)


@functools.cache
def _context(url: str) -> dict[str, str]:
    return httpx.get(url + "/contexts/ob-caie.jsonld").json()["@context"]


def published_context(service: Service) -> dict[str, str]:
    """The prefixes of the published context, as the service serves it."""
    return _context(service.url)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def page_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def kinds(iris: list[str]) -> dict[str, list[str]]:
    """IRIs by kind: the deployment's by path shape (numbers and keys out), the vocabulary's by namespace."""
    grouped: dict[str, list[str]] = defaultdict(list)
    for iri in sorted(iris):
        if iri.startswith(BASE_URL):
            kind = re.sub(r"/(\d+|[0-9a-f]{16,})(?=/|#|$)", "/N", iri[len(BASE_URL) :])
            kind = re.sub(r"/(approvals|exclusions)/[^/#]+", r"/\1/K", kind)
            kind = re.sub(
                r"/(criteria|allocations|dimensions|requirements|assumptions|out-of-scope)/[^#]+", r"/\1/X", kind
            )
        else:
            kind = iri[len(VOCAB_BASE) :].rsplit("/", 1)[0] + "/*" if "/" in iri[len(VOCAB_BASE) :] else "ontology"
        grouped[kind].append(iri)
    return grouped


def get(service: Service, iri: str, accept: str) -> httpx.Response:
    document = iri.split("#", 1)[0]
    path = document[len(BASE_URL) :] if document.startswith(BASE_URL) else document[len(VOCAB_BASE) :]
    return service.http.get("/" + path, headers={"Accept": accept})


def as_turtle(service: Service, iri: str, documents: dict[str, list[Triple]]) -> list[Triple]:
    """``iri`` as Turtle: its triples, which describe it; a vocabulary term has a label and a definition.

    ``documents`` keeps each document's triples by URL: a ``#`` IRI is read with its document, once."""
    document = iri.split("#", 1)[0]
    if document not in documents:
        turtle = get(service, iri, "text/turtle")
        assert turtle.status_code == 200, f"{iri}: {turtle.status_code} {turtle.text[:300]}"
        assert turtle.headers["content-type"].startswith("text/turtle") and "Accept" in turtle.headers["vary"], iri
        documents[document] = [q.triple for q in parse(turtle.content, format=RdfFormat.TURTLE)]
    triples = documents[document]
    node = NamedNode(iri)
    # a graph under /graphs/ gives exactly its content there (its Graph Store read); other IRIs describe themselves
    assert triples and (iri.startswith(BASE_URL + "graphs/") or any(node in (t.subject, t.object) for t in triples)), (
        iri
    )
    own = [t for t in triples if t.subject == node]
    if iri.startswith(VOCAB_BASE) and any(t.predicate.value == RDF_TYPE and t.object.value in TERM_TYPES for t in own):
        assert label_of(own) is not None and definition_of(own) is not None, f"term {iri} lacks a label or a definition"
    return triples


def label_of(own: list[Triple]) -> str | None:
    return next((t.object.value for p in LABELS for t in own if t.predicate.value == p), None)


def definition_of(own: list[Triple]) -> str | None:
    return next((t.object.value for p in DEFINITIONS for t in own if t.predicate.value == p), None)


def vocabulary(triples: list[Triple]) -> set[str]:
    """The predicates and classes ``triples`` use: what a JSON-LD context must compact and a page must show."""
    return {t.predicate.value for t in triples} | {t.object.value for t in triples if t.predicate.value == RDF_TYPE}


def check(service: Service, iri: str, triples: list[Triple], sampled: bool) -> None:
    """``iri`` as JSON-LD (compacted, the published context by IRI) and HTML, alike its Turtle ``triples``.

    The JSON-LD is expanded by Oxigraph's parser with the published context put in place of its IRI. For a
    ``sampled`` IRI, pyld also expands it with the context fetched from the service, and a PDF is refused
    with 406 (negotiation is one code path for every IRI)."""
    node = NamedNode(iri)
    as_jsonld = get(service, iri, "application/ld+json")
    assert as_jsonld.status_code == 200 and as_jsonld.headers["content-type"].startswith("application/ld+json"), iri
    document = json.loads(as_jsonld.text)
    assert document["@context"] == CONTEXT, f"{iri}: JSON-LD not compacted with the published context"
    namespaces = tuple(published_context(service).values())
    assert not any(key.startswith(namespaces) for item in document.get("@graph", [document]) for key in item), iri
    inlined = json.dumps({**document, "@context": published_context(service)}).encode()
    readings = [[q.triple for q in parse(inlined, format=RdfFormat.JSON_LD)]]
    if sampled:
        nquads = jsonld.to_rdf(document, {"format": "application/n-quads", "documentLoader": context_loader(service)})
        readings.append([q.triple for q in parse(nquads.encode(), format=RdfFormat.N_QUADS)])
    for from_jsonld in readings:
        assert len(set(from_jsonld)) == len(set(triples)) and ground(from_jsonld) == ground(triples), (
            f"{iri}: JSON-LD and Turtle differ"
        )

    page = get(service, iri, "text/html,application/xhtml+xml,*/*;q=0.8")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html"), iri
    assert "Accept" in page.headers["vary"], iri
    text = page_text(page.text)
    own = [t for t in triples if t.subject == node]
    label, definition = label_of(own), definition_of(own)
    for shown in (label, definition):
        if shown is not None and "#" not in iri:  # a '#' IRI is shown on its document's page
            assert " ".join(shown.split()) in text, f"{iri}: the page does not show {shown!r}"

    if sampled:
        refused = get(service, iri, "application/pdf")
        assert refused.status_code == 406 and "text/turtle" in refused.text, iri


def ground(triples: list[Triple]) -> set[Triple]:
    """The triples without blank nodes (those are compared by count: their labels differ between parses)."""
    return {t for t in triples if not isinstance(t.subject, BlankNode) and not isinstance(t.object, BlankNode)}


def test_every_minted_iri_dereferences(example: Service) -> None:
    found = example.http.get("/sparql", params={"query": MINTED}, headers={"Accept": "application/sparql-results+json"})
    assert found.status_code == 200, found.text
    minted = [row["iri"]["value"] for row in found.json()["results"]["bindings"]]
    grouped = kinds(minted)
    expected = {
        "graphs",
        "graphs/ontologies/epo",
        "graphs/dso/vaccine-education",
        "graphs/kg/kenya",
        "graphs/shapes/record",
        "agents/annie",
        f"evaluations/{ID}",
        f"evaluations/{ID}/scenarios",
        f"evaluations/{ID}/plans/N",
        f"evaluations/{ID}/plans/N/probes/N",
        f"evaluations/{ID}/scenarios/N",
        f"evaluations/{ID}/scenarios/N#person",
        f"evaluations/{ID}/approvals/K",
        f"evaluations/{ID}/exclusions/K",
        f"evaluations/{ID}/envelope/v1/criteria/X",
        "ontology",
        "epo/*",
        "dso/vaccine-education/*",
        "kg/kenya/*",
    }
    assert expected <= set(grouped), sorted(expected - set(grouped))
    documents: dict[str, list[Triple]] = {}
    seen: dict[bool, set[str]] = {True: set(), False: set()}  # in whole graphs (Graph Store reads), in descriptions
    for iris in grouped.values():
        sampled = set(iris[:: max(1, len(iris) // PER_KIND)][:PER_KIND])
        for iri in iris:
            triples = as_turtle(example, iri, documents)
            used, before = vocabulary(triples), seen[iri.startswith(BASE_URL + "graphs/")]
            if iri in sampled or not used <= before:
                before |= used
                check(example, iri, triples, sampled=iri in sampled)


def test_plan_and_scenarios_iris_negotiate_json_stays_json(example: Service) -> None:
    for path in (f"/evaluations/{ID}/plans/1", f"/evaluations/{ID}/scenarios", f"/evaluations/{ID}"):
        as_json = example.http.get(path, headers={"Accept": "application/json"})
        assert as_json.status_code == 200 and as_json.headers["content-type"].startswith("application/json"), path
        assert "Accept" in as_json.headers["vary"], path
        assert example.http.get(path).headers["content-type"].startswith("application/json"), path  # */*
        turtle = example.http.get(path, headers={"Accept": "text/turtle"})
        graph = rdflib.Graph().parse(data=turtle.text, format="turtle")
        assert (rdflib.URIRef(BASE_URL + path[1:]), rdflib.VOID.triples, None) in graph, path  # its catalog entry
        assert example.http.get(path, headers={"Accept": "application/pdf"}).status_code == 406, path
    plan = rdflib.Graph().parse(
        data=example.http.get(f"/evaluations/{ID}/plans/1", headers={"Accept": "text/turtle"}).text
    )
    probes = set(plan.subjects(rdflib.RDF.type, rdflib.URIRef("https://w3id.org/ob-caie/epo/Probe")))
    assert len(probes) == PLAN["budget"]  # the plan's IRI is its graph's: RDF gives the graph's content
