"""Ontology documentation through HTTP: index pages, term pages, paging, VoID and DCAT.

Pages are read as a person would follow them: headings, the links' texts (labels, not IRIs) and targets,
and the "more" links, parsed from the HTML the service sends. The index and term pages run on both backends
(their reads are published queries over the store); paging, VoID and DCAT on the embedded store only.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from urllib.parse import urljoin

import pytest
import rdflib
from pyld import jsonld
from pyoxigraph import Quad
from rdflib.compare import isomorphic

from ..conftest import BASE_URL, Service
from ..test_envelope import load_spec
from .test_iri_walk import context_loader

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
VOID = rdflib.Namespace("http://rdfs.org/ns/void#")
DCAT = rdflib.Namespace("http://www.w3.org/ns/dcat#")
embedded_only = pytest.mark.parametrize("store", ["embedded"], indirect=True)


class Page(HTMLParser):
    """The parts of a page a reader looks at: the title, each section (``h2`` by id) with its heading, its links
    as (target, text) and its "more" link, and the links inside the class hierarchy diagram."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.title = ""
        self.headings: dict[str, str] = {}
        self.links: dict[str, list[tuple[str, str]]] = {}
        self.more: dict[str, str] = {}
        self.diagram: list[tuple[str, str]] = []
        self._section = "top"
        self._open: list[str] = []
        self._link: tuple[str, str] | None = None
        self._in_svg = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self._open.append(tag)
        if tag == "h2":
            self._section = found.get("id") or self._section
            self.headings[self._section] = ""
        elif tag == "svg":
            self._in_svg = True
        elif tag == "a" and found.get("href"):
            self._link = (found["href"] or "", "")
            if found.get("class") == "more":
                self.more[self._section] = found["href"] or ""

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1] == tag:
            self._open.pop()
        if tag == "svg":
            self._in_svg = False
        elif tag == "a" and self._link:
            target, text = self._link[0], self._link[1].strip()
            (self.diagram if self._in_svg else self.links.setdefault(self._section, [])).append((target, text))
            self._link = None

    def handle_data(self, data: str) -> None:
        if self._open and self._open[-1] == "title":
            return  # an SVG link's tooltip, not its text
        if self._link:
            self._link = (self._link[0], self._link[1] + data)
        elif self._open and self._open[-1] == "h1":
            self.title += data
        elif self._open and self._open[-1] == "h2":
            self.headings[self._section] += data

    def texts(self, section: str) -> dict[str, str]:
        """Link text to target in ``section``."""
        return {text: target for target, text in self.links.get(section, [])}


def page(service: Service, path: str) -> Page:
    answer = service.http.get(path, headers=BROWSER)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    return Page(answer.text)


def total(heading: str) -> int:
    """The total a section heading states: ``Classes (68)`` -> 68."""
    return int(heading.rsplit("(", 1)[1].rstrip(")"))


def walk(service: Service, path: str, section: str) -> tuple[list[str], int]:
    """Every link of ``section`` over its pages, following "more" from ``path``; and the total stated."""
    seen: list[str] = []
    current = page(service, path)
    stated = total(current.headings[section])
    while True:
        seen += [target for target, _ in current.links.get(section, []) if not target.startswith("?")]
        if section not in current.more:
            return seen, stated
        path = urljoin(path, current.more[section].split("#")[0])
        current = page(service, path)


def test_epo_index_lists_classes_and_properties_with_labels(service: Service, spec_quads: list[Quad]) -> None:
    load_spec(service.store, spec_quads)
    index = page(service, "/doc/ontologies/epo")
    assert index.title == "OB-CAIE Evaluation Process Ontology (EPO)"
    classes, properties = index.texts("classes"), index.texts("properties")
    assert classes["acceptance criterion"] == "/epo/AcceptanceCriterion"
    assert "/epo/Probe" in walk(service, "/doc/ontologies/epo", "classes")[0]  # on a later page as the EPO grows
    assert properties["allocated to"] == "/epo/allocatedTo"
    assert not any(text.startswith("https://") for text in classes), "links show labels, not IRIs"
    assert total(index.headings["classes"]) >= len(classes) > 40
    # The hierarchy diagram draws each class as a link under its superclass.
    assert ("/epo/AcceptanceCriterion", "acceptance criterion") in index.diagram
    catalog = service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"]
    epo = next(g for g in catalog if g["kind"] == "ontologies" and g["identifier"] == "epo")
    answer = service.http.get("/doc/ontologies/epo", headers=BROWSER).text
    assert epo["digest"] in answer and "0.1.0" in answer and "creativecommons.org/licenses/by-sa/4.0" in answer


def test_term_page_shows_label_definition_superclass_and_properties(service: Service, spec_quads: list[Quad]) -> None:
    load_spec(service.store, spec_quads)
    person = page(service, "/dso/vaccine-education/Person")
    assert person.title == "person"
    answer = service.http.get("/dso/vaccine-education/Person", headers=BROWSER).text
    assert "A human being whose situation a scenario describes" in answer
    properties = person.links["properties"]
    assert ("/dso/vaccine-education/hasAgeGroup", "has age group") in properties
    assert ("/dso/vaccine-education/AgeGroup", "age group") in properties  # its range, by label
    subclasses = next(section for section, heading in person.headings.items() if heading.startswith("Subclasses"))
    assert person.texts(subclasses)["persona"] == "/dso/vaccine-education/Persona"

    persona = page(service, "/dso/vaccine-education/Persona")
    superclasses = next(section for section, heading in persona.headings.items() if heading == "Superclasses")
    assert persona.texts(superclasses)["person"] == "/dso/vaccine-education/Person"

    property_page = page(service, "/dso/vaccine-education/hasAgeGroup")
    by_heading = {heading: section for section, heading in property_page.headings.items()}
    assert property_page.texts(by_heading["Domain"])["person"] == "/dso/vaccine-education/Person"
    assert property_page.texts(by_heading["Range"])["age group"] == "/dso/vaccine-education/AgeGroup"
    assert "/doc/dso/vaccine-education" in dict(property_page.links["top"]), "the page links to its ontology's index"


@embedded_only
def test_more_links_page_through_every_term_and_instance(service: Service, spec_quads: list[Quad]) -> None:
    load_spec(service.store, spec_quads)
    properties, stated = walk(service, "/doc/ontologies/epo", "properties")
    assert stated > 50, "the EPO's properties span more than one page"
    assert len(properties) == len(set(properties)) == stated, "every property once, none cut off"

    # The EPO's ontology IRI is what each of its terms is rdfs:isDefinedBy: more links than a term page shows at once.
    defined = next(
        section for section, heading in page(service, "/epo").headings.items() if heading.startswith("Terms it defines")
    )
    terms, stated = walk(service, "/epo", defined)
    assert stated > 25 and len(terms) == len(set(terms)) == stated
    assert "/epo/AcceptanceCriterion" in terms

    refused = service.http.get("/doc/ontologies/epo", params={"list": "properties", "page": "0"}, headers=BROWSER)
    assert refused.status_code == 400 and refused.headers["content-type"].startswith("text/html")
    assert service.http.get("/doc/evaluations/e1", headers=BROWSER).status_code == 404
    assert service.http.get("/doc/ontologies/epo", headers={"Accept": "text/turtle"}).status_code == 406


@embedded_only
def test_void_and_dcat_are_rdf_in_every_syntax(service: Service, spec_quads: list[Quad]) -> None:
    load_spec(service.store, spec_quads)
    catalog = service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"]
    void_turtle = service.http.get("/.well-known/void", headers={"Accept": "text/turtle"})
    assert void_turtle.headers["content-type"].startswith("text/turtle") and "Accept" in void_turtle.headers["vary"]
    void = rdflib.Graph().parse(data=void_turtle.text, format="turtle")
    dataset = rdflib.URIRef(BASE_URL + ".well-known/void#dataset")
    assert (dataset, rdflib.RDF.type, VOID.Dataset) in void
    assert void.value(dataset, VOID.sparqlEndpoint) == rdflib.URIRef(BASE_URL + "sparql")
    subsets = set(void.objects(dataset, VOID.subset))
    assert len(subsets) == len(catalog)
    assert int(void.value(dataset, VOID.triples)) == sum(int(void.value(s, VOID.triples)) for s in subsets) > 1000

    as_jsonld = service.http.get("/.well-known/void", headers={"Accept": "application/ld+json"})
    nquads = jsonld.to_rdf(
        json.loads(as_jsonld.text), {"format": "application/n-quads", "documentLoader": context_loader(service)}
    )
    assert isomorphic(rdflib.Graph().parse(data=nquads, format="nt"), void)

    dcat = rdflib.Graph().parse(data=service.http.get("/dcat", headers={"Accept": "text/turtle"}).text, format="turtle")
    catalogs = list(dcat.subjects(rdflib.RDF.type, DCAT.Catalog))
    assert len(catalogs) == 1 and len(set(dcat.objects(catalogs[0], DCAT.dataset))) == len(catalog)
    assert not list(dcat.triples((None, rdflib.URIRef("https://w3id.org/ob-caie/catalog/commit"), None)))
    for path in ("/dcat", "/.well-known/void"):
        listing = page(service, path)
        assert len([t for t, _ in listing.links["top"] if t.startswith("/graphs/")]) >= len(catalog)
