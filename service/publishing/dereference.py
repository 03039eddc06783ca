"""Dereferencing: what the service answers for an IRI it publishes.

One path, one IRI (:func:`service.core.iris.iri_for_path`): a path under a deployment segment
(``graphs/``, ``evaluations/``, ``agents/`` …) names ``{base}{path}``; any other path names
``https://w3id.org/ob-caie/{path}``, our persistent vocabulary, which w3id redirects here. What an IRI gives:

- an ontology IRI (a catalogued ontology or DSO graph declares it): the whole ontology graph;
- a graph IRI (the IRI of a catalogued graph: a record, a plan, a batch, the scenarios graph, a DSO …): its
  statements (the catalog entry among them) and, as RDF, the graph's content too;
- any other IRI: its statements across all graphs, with the blank nodes and the IRI's own ``#`` IRIs they lead
  to (two levels), so ``…/scenarios/7`` carries ``…/scenarios/7#person``.

docs/publishing.md has the rule and how w3id reaches a deployment.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import NamedNode, Triple

from ..core import iris
from ..core.catalog import Catalog, GraphKind
from ..core.errors import NotFound
from ..core.namespaces import DCTERMS, RDFS, SKOS, VOCAB_BASE
from ..core.rdf import local_name
from ..core.store import Store

_DESCRIBE = """
CONSTRUCT { ?resource ?p ?o . ?o ?p2 ?o2 . ?o2 ?p3 ?o3 }
WHERE {
  ?resource ?p ?o .
  OPTIONAL {
    FILTER (isBlank(?o) || STRSTARTS(STR(?o), CONCAT(STR(?resource), "#")))
    ?o ?p2 ?o2 .
    OPTIONAL { FILTER isBlank(?o2) ?o2 ?p3 ?o3 }
  }
}
"""

_INCOMING = """
SELECT DISTINCT ?subject ?predicate
WHERE { ?subject ?predicate ?resource . FILTER isIRI(?subject) }
ORDER BY ?predicate ?subject
LIMIT 200
"""


@dataclass(frozen=True)
class Description:
    """What is known about one IRI: its statements, who points at it (for pages), and the graph it names."""

    iri: str
    triples: list[Triple]
    incoming: list[tuple[str, str]]
    is_document: bool
    """Whether ``triples`` is a whole ontology graph (its page lists the terms)."""
    graph: NamedNode | None = None
    """The catalogued graph this IRI names, whose content RDF answers add (:meth:`Publisher.document`)."""

    def label(self) -> str:
        for predicate in (RDFS + "label", SKOS + "prefLabel", DCTERMS + "title"):
            for triple in self.triples:
                subject, value = triple.subject, triple.object
                if (
                    isinstance(subject, NamedNode)
                    and subject.value == self.iri
                    and triple.predicate.value == predicate
                    and not isinstance(value, Triple)
                ):
                    return value.value
        return local_name(self.iri)


class Publisher:
    """Looks up the description of a published IRI."""

    def __init__(self, store: Store, catalog: Catalog) -> None:
        self._store = store
        self._catalog = catalog

    def iri(self, path: str) -> str:
        """The one IRI a request path names."""
        return iris.iri_for_path(self._catalog.base_url, VOCAB_BASE, path)

    def describe(self, path: str) -> Description:
        iri = self.iri(path)
        resource = NamedNode(iri)
        if not iris.is_deployment_path(path.lstrip("/")):
            # Only ontology and DSO graphs define an ontology; the rest of the catalog (every record batch) is not read.
            ontology_graphs = {
                e.defines_ontology: e.graph
                for kind in (GraphKind.ONTOLOGY, GraphKind.DSO)
                for e in self._catalog.entries(kind=kind)
                if e.defines_ontology
            }
            if iri in ontology_graphs:
                return Description(iri, self._store.graph_triples(NamedNode(ontology_graphs[iri])), [], True)
        graph = resource if self._names_graph(iri) else None
        triples = self._store.construct(_DESCRIBE, {"resource": resource}, union=True)
        if not triples and graph is None:
            raise NotFound(f"nothing is published at {path!r} (the IRI {iri})")
        incoming = [
            (row["subject"].value, row["predicate"].value)
            for row in self._store.select(_INCOMING, {"resource": resource}, union=True)
        ]
        return Description(iri, triples, incoming, False, graph)

    def _names_graph(self, iri: str) -> bool:
        """Whether ``iri`` is a catalogued graph (vocabulary IRIs never are: they are not under the base)."""
        return iri.startswith(self._catalog.base_url) and self._catalog.entry(NamedNode(iri)) is not None

    def document(self, description: Description) -> list[Triple]:
        """What an RDF answer holds: the description and, for a graph IRI, the graph's content."""
        if description.graph is None:
            return description.triples
        return list(dict.fromkeys(self._store.graph_triples(description.graph) + description.triples))

    def local_href(self, iri: str) -> str | None:
        """The path at this service that dereferences ``iri`` (with its fragment), when it is one of ours."""
        path = iris.path_for_iri(self._catalog.base_url, VOCAB_BASE, iri)
        if path is None:
            return None
        _, hash_sign, fragment = iri.partition("#")
        return path + hash_sign + fragment
