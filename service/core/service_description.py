"""The W3C SPARQL 1.1 Service Description of ``/sparql`` (https://www.w3.org/TR/sparql11-service-description/).

Served on ``GET /sparql`` without a query (§2). It states what a client cannot guess: the result formats,
that the default graph is the union of the graphs only when a request gives no dataset, and where the
named graphs are listed (the catalog graph, also served as the DCAT catalog at ``/graphs``).
"""

from __future__ import annotations

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from .namespaces import DCTERMS, RDF, RDFS, SD

FORMATS = "http://www.w3.org/ns/formats/"
RESULT_FORMATS = (
    "SPARQL_Results_JSON",
    "SPARQL_Results_XML",
    "SPARQL_Results_CSV",
    "SPARQL_Results_TSV",
    "Turtle",
    "N-Triples",
    "RDF_XML",
    "JSON-LD",
    "N-Quads",
    "TriG",
)
"""The unique format IRIs (https://www.w3.org/ns/formats/) of every answer ``/sparql`` writes."""

SERVICE_COMMENT = (
    "Read-only SPARQL 1.1 Query endpoint (SPARQL 1.1 Protocol: GET, POST form, POST application/sparql-query). "
    "The dataset of a request is, in this order: the protocol's default-graph-uri and named-graph-uri parameters "
    "when either is given (a missing one is empty); else the query's FROM and FROM NAMED (FROM without FROM NAMED: "
    "no named graphs); else, and only then, the default graph is the union of every catalogued graph "
    "(sd:UnionDefaultGraph) and every catalogued graph is a named graph. Relative IRIs in a query resolve "
    "against this endpoint's IRI. Updates are refused: graphs are written through /graphs."
)
DATASET_COMMENT = (
    "With no dataset in the request: the union of every catalogued graph as the default graph, and each as a "
    "named graph. The catalog graph lists them (dcat:Dataset entries with their size and digest); "
    "GET /graphs serves it as a DCAT catalog."
)


def service_description(endpoint: str, catalog_graph: NamedNode, catalog_page: str) -> list[Triple]:
    """The description of the endpoint at ``endpoint``, whose graphs ``catalog_graph`` lists (also at ``catalog_page``)."""
    service, dataset, default_graph = NamedNode(endpoint), NamedNode(endpoint + "#dataset"), BlankNode()
    catalog = BlankNode()

    def sd(name: str) -> NamedNode:
        return NamedNode(SD + name)

    a = NamedNode(RDF + "type")
    comment = NamedNode(RDFS + "comment")
    triples = [
        Triple(service, a, sd("Service")),
        Triple(service, sd("endpoint"), service),
        Triple(service, sd("supportedLanguage"), sd("SPARQL11Query")),
        Triple(service, sd("feature"), sd("UnionDefaultGraph")),
        Triple(service, sd("defaultEntailmentRegime"), NamedNode("http://www.w3.org/ns/entailment/Simple")),
        Triple(service, NamedNode(DCTERMS + "title"), Literal("OB-CAIE SPARQL endpoint")),
        Triple(service, comment, Literal(SERVICE_COMMENT, language="en")),
        Triple(service, sd("defaultDataset"), dataset),
        Triple(dataset, a, sd("Dataset")),
        Triple(dataset, comment, Literal(DATASET_COMMENT, language="en")),
        Triple(dataset, sd("defaultGraph"), default_graph),
        Triple(default_graph, a, sd("Graph")),
        Triple(default_graph, comment, Literal("The union of every catalogued graph.", language="en")),
        Triple(dataset, sd("namedGraph"), catalog),
        Triple(catalog, a, sd("NamedGraph")),
        Triple(catalog, sd("name"), catalog_graph),
        Triple(catalog, comment, Literal("The catalog: one entry per named graph of the dataset.", language="en")),
        Triple(dataset, NamedNode(RDFS + "seeAlso"), NamedNode(catalog_page)),
    ]
    triples += [Triple(service, sd("resultFormat"), NamedNode(FORMATS + name)) for name in RESULT_FORMATS]
    return triples
