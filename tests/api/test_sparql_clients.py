"""``/sparql`` driven by clients no one here wrote: SPARQLWrapper and rdflib's ``SPARQLStore``, on both backends.

Each single-graph count is checked against the graph's size as the catalog records it (the answer of the PUT
that wrote it), so an answer over the union (all graphs, the catalog too) cannot pass.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import pytest
import rdflib
from pyoxigraph import Quad
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import CSV, JSON, JSONLD, N3, POST, RDFXML, TSV, TURTLE, XML, SPARQLWrapper

from ..conftest import Service, restored

EX = "http://example.org/"
OWL = "http://www.w3.org/2002/07/owl#"
BIG = f"@prefix ex: <{EX}> . ex:big a <{OWL}Ontology> . ex:a ex:p ex:b , ex:c , ex:d ; ex:q 1 , 2 . ex:b ex:p ex:c ."
SMALL = f"@prefix ex: <{EX}> . ex:small a <{OWL}Ontology> . ex:s ex:p ex:o ; ex:q \"x\" ."
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
SELECT = f"SELECT ?o WHERE {{ <{EX}a> <{EX}p> ?o }} ORDER BY ?o"
CONSTRUCT = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"


@dataclass
class Loaded:
    service: Service
    sizes: dict[str, int]
    """Graph IRI to its triple count, as the catalog records it."""
    big: str
    """The larger graph's IRI."""

    @property
    def endpoint(self) -> str:
        return f"{self.service.url}/sparql"

    def wrapper(self, query: str, return_format: str) -> SPARQLWrapper:
        client = SPARQLWrapper(self.endpoint)
        client.setQuery(query)
        client.setReturnFormat(return_format)
        return client


def _load(service: Service) -> None:
    for name, data in (("big", BIG), ("small", SMALL)):
        response = service.http.put(
            f"/graphs/ontologies/{name}",
            content=data.encode(),
            headers={"Content-Type": "text/turtle", **service.auth()},
        )
        assert response.status_code == 201


@pytest.fixture
def loaded(service: Service, snapshots: dict[tuple[str, str], list[Quad]]) -> Loaded:
    """Two graphs (written over HTTP once per backend, then copied), with their sizes as the catalog lists them."""
    restored(service, snapshots, "sparql clients: big and small", _load)
    catalog = service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"]
    sizes = {entry["graph"]: entry["triples"] for entry in catalog if entry["identifier"] in ("big", "small")}
    assert sorted(sizes.values()) == [3, 7]
    return Loaded(service, sizes, max(sizes, key=sizes.__getitem__))


def _count(client: SPARQLWrapper) -> int:
    return int(client.queryAndConvert()["results"]["bindings"][0]["n"]["value"])  # type: ignore[index]  # queryAndConvert() is typed as any result format; this one is JSON


def test_sparqlwrapper_select_in_every_results_format(loaded: Loaded) -> None:
    expected = [f"{EX}b", f"{EX}c", f"{EX}d"]
    as_json = loaded.wrapper(SELECT, JSON).queryAndConvert()
    assert [row["o"]["value"] for row in as_json["results"]["bindings"]] == expected  # type: ignore[index]  # queryAndConvert() is typed as any result format; this one is JSON
    as_xml = loaded.wrapper(SELECT, XML).queryAndConvert()
    uris = [node.firstChild.data for node in as_xml.getElementsByTagName("uri")]  # type: ignore[union-attr]  # queryAndConvert() is typed as any result format; this one is XML
    assert uris == expected
    as_csv = loaded.wrapper(SELECT, CSV).queryAndConvert()
    assert list(csv.reader(io.StringIO(as_csv.decode()))) == [["o"], *([iri] for iri in expected)]  # type: ignore[union-attr]  # queryAndConvert() is typed as any result format; this one is CSV bytes
    client = loaded.wrapper(SELECT, TSV)
    client.setMethod(POST)
    assert client.queryAndConvert().decode().splitlines() == ["?o", *(f"<{iri}>" for iri in expected)]  # type: ignore[union-attr]  # queryAndConvert() is typed as any result format; this one is TSV bytes


def test_sparqlwrapper_construct_in_every_rdf_format(loaded: Loaded) -> None:
    size = loaded.sizes[loaded.big]
    construct = CONSTRUCT.replace("?g", f"<{loaded.big}>")
    turtle = loaded.wrapper(construct, TURTLE).queryAndConvert()
    assert len(rdflib.Graph().parse(data=turtle, format="turtle")) == size  # type: ignore[arg-type]  # queryAndConvert() is typed as any result format; this one is Turtle
    ntriples = loaded.wrapper(construct, N3)
    ntriples.addCustomHttpHeader("Accept", "application/n-triples")
    response = ntriples.query().response
    assert response.headers["Content-Type"] == "application/n-triples"
    assert len(rdflib.Graph().parse(data=response.read(), format="nt")) == size
    as_rdf_xml = loaded.wrapper(construct, RDFXML).queryAndConvert()
    assert isinstance(as_rdf_xml, rdflib.Graph) and len(as_rdf_xml) == size
    as_json_ld = loaded.wrapper(construct, JSONLD).queryAndConvert()
    assert isinstance(as_json_ld, rdflib.Graph) and len(as_json_ld) == size


def test_sparqlwrapper_dataset_from_query_and_protocol(loaded: Loaded) -> None:
    """``FROM``, ``addDefaultGraph`` and ``addNamedGraph`` each give one graph's count, not the union's."""
    for graph, size in loaded.sizes.items():
        assert _count(loaded.wrapper(f"SELECT (COUNT(*) AS ?n) FROM <{graph}> WHERE {{ ?s ?p ?o }}", JSON)) == size
        default = loaded.wrapper(COUNT, JSON)
        default.addDefaultGraph(graph)
        assert _count(default) == size
        named = loaded.wrapper("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }", JSON)
        named.addNamedGraph(graph)
        assert _count(named) == size
    union = _count(loaded.wrapper(COUNT, JSON))
    assert union > sum(loaded.sizes.values())  # no dataset: every graph, the catalog too


def test_rdflib_sparqlstore_graph_and_dataset(loaded: Loaded) -> None:
    store = SPARQLStore(loaded.endpoint, returnFormat="json")
    dataset = rdflib.Dataset(store, default_union=True)
    for graph, size in loaded.sizes.items():
        assert len(rdflib.Graph(store, identifier=rdflib.URIRef(graph))) == size
        rows = list(dataset.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"))
        assert int(rows[0][0]) == size  # type: ignore[index]  # rdflib types a result row as a Result or a bool; a SELECT's is a row
    graphs = {str(row[0]) for row in dataset.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")}  # type: ignore[index]  # rdflib types a result row as a Result or a bool; a SELECT's is a row
    assert set(loaded.sizes) < graphs
    assert len(dataset) > sum(loaded.sizes.values())
