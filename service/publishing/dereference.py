"""Dereferencing: what the service answers for an IRI it publishes.

A request path ``/p`` names ``{base}p`` (data this deployment minted) or, failing that,
``https://w3id.org/ob-caie/p`` (our persistent vocabulary, which w3id redirects here). The answer is
the resource's description across all graphs: its own statements, the blank nodes they lead to, and
for an ontology IRI the whole ontology graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import NamedNode, Triple

from ..core.catalog import Catalog, GraphKind
from ..core.errors import NotFound
from ..core.namespaces import DCTERMS, RDFS, SKOS, VOCAB_BASE
from ..core.store import Store

_DESCRIBE = """
CONSTRUCT { ?resource ?p ?o . ?o ?p2 ?o2 . ?o2 ?p3 ?o3 }
WHERE {
  ?resource ?p ?o .
  OPTIONAL {
    FILTER isBlank(?o)
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
    """What is known about one IRI: its statements, and who points at it (for pages)."""

    iri: str
    triples: list[Triple]
    incoming: list[tuple[str, str]]
    is_document: bool

    def label(self) -> str:
        for predicate in (RDFS + "label", SKOS + "prefLabel", DCTERMS + "title"):
            for triple in self.triples:
                if triple.subject.value == self.iri and triple.predicate.value == predicate:
                    return triple.object.value
        return self.iri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1]


class Publisher:
    """Looks up the description of a published IRI."""

    def __init__(self, store: Store, catalog: Catalog) -> None:
        self._store = store
        self._catalog = catalog

    def candidates(self, path: str) -> list[str]:
        """The IRIs a request path may name, in the order they are tried."""
        path = path.lstrip("/")
        return [self._catalog.base_url + path, VOCAB_BASE + path]

    def describe(self, path: str) -> Description:
        # Only ontology and DSO graphs define an ontology; the rest of the catalog (every record batch) is not read.
        ontology_graphs = {e.defines_ontology: e.graph for kind in (GraphKind.ONTOLOGY, GraphKind.DSO)
                           for e in self._catalog.entries(kind=kind) if e.defines_ontology}
        for iri in self.candidates(path):
            resource = NamedNode(iri)
            if iri in ontology_graphs:
                triples = self._store.graph_triples(NamedNode(ontology_graphs[iri]))
                return Description(iri, triples, [], True)
            triples = self._store.construct(_DESCRIBE, {"resource": resource}, union=True)
            if triples:
                incoming = [
                    (row["subject"].value, row["predicate"].value)
                    for row in self._store.select(_INCOMING, {"resource": resource}, union=True)
                ]
                return Description(iri, triples, incoming, False)
        raise NotFound(f"nothing is published at {path!r} (looked up {' and '.join(self.candidates(path))})")

    def local_href(self, iri: str) -> str | None:
        """The path at this service that dereferences ``iri``, when it is one of ours."""
        for base in (self._catalog.base_url, VOCAB_BASE):
            if iri.startswith(base):
                return "/" + iri[len(base):]
        return None
