"""Which shapes a knowledge graph is validated with: the generic ``shapes/kg-dso.ttl`` and the shapes its own DSO
declares (docs/domain.md "What a DSO declares").

A DSO names its knowledge graphs' shapes on its ontology node, ``epo:knowledgeGraphShapes <shapes ontology IRI>``
(the ``owl:Ontology`` IRI a shapes graph declares); a DSO that names none has its KGs checked by the generic shapes
only. The shapes are found where the caller keeps them: the store's shapes graphs for a KG write
(:func:`stored_shapes`), the repository's ``shapes/`` files for ``caie validate`` and tests (:func:`repository_shapes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from itertools import groupby
from pathlib import Path
from typing import Protocol

from pyoxigraph import NamedNode
from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF

from .catalog import CatalogEntry, GraphKind
from .digest import blank_skolems
from .errors import Unprocessable
from .namespaces import EPO
from .rdf import to_rdflib
from .store import Row, Term, row_triple
from .validation import SHAPES_DIR

GENERIC = SHAPES_DIR / "kg-dso.ttl"
KG_SHAPES = URIRef(EPO + "knowledgeGraphShapes")

Find = Callable[[str], Graph | None]
"""Shapes by their ontology IRI, or ``None`` where the caller has none."""


def declared(dso: Graph) -> list[str]:
    """The shapes ontologies the DSO's ontology node names for its knowledge graphs, sorted."""
    return sorted(
        {str(shapes) for onto in dso.subjects(RDF.type, OWL.Ontology) for shapes in dso.objects(onto, KG_SHAPES)}
    )


@cache
def _file(path: Path) -> Graph:
    return Graph().parse(path, format="turtle")


def kg_shapes(dso: Graph, find: Find) -> Graph:
    """The generic shapes and every shapes graph the DSO declares, as one graph; 422 naming a declared shapes
    ontology ``find`` does not have (a KG is never checked by less than its DSO asks)."""
    shapes = Graph()
    shapes += _file(GENERIC)
    for iri in declared(dso):
        found = find(iri)
        if found is None:
            raise Unprocessable(
                f"the DSO declares the knowledge-graph shapes <{iri}> (epo:knowledgeGraphShapes), but no "
                "loaded shapes graph defines them: load them under /graphs/shapes/{id} first"
            )
        shapes += found
    return shapes


def repository_shapes(iri: str) -> Graph | None:
    """The repository's ``shapes/*.ttl`` file declaring ``iri`` as its ``owl:Ontology``, parsed once."""
    for path in sorted(SHAPES_DIR.glob("*.ttl")):
        graph = _file(path)
        if (URIRef(iri), RDF.type, OWL.Ontology) in graph:
            return graph
    return None


class Stored(Protocol):
    """What :func:`stored_shapes` reads of a :class:`~.graphs.GraphService` (named here, not imported: the service
    calls this module)."""

    def rows(self, name: str, bindings: Mapping[str, Term]) -> list[Row]: ...

    def find_graph(self, iri: str) -> CatalogEntry | None: ...


def stored_shapes(graphs: Stored) -> Find:
    """Shapes from the store: the shapes graph (catalog kind ``shapes``) declaring the ontology, read whole, its
    skolem IRIs read as the blank nodes they stand for (shapes' property nodes and lists, as written)."""

    def find(iri: str) -> Graph | None:
        rows = graphs.rows("shapes-graphs-defining", {"shapes": NamedNode(iri)})
        for graph, triples in groupby(rows, key=lambda row: row["graph"].value):
            entry = graphs.find_graph(graph)
            if entry is not None and entry.kind is GraphKind.SHAPES:
                return to_rdflib(blank_skolems([row_triple(row) for row in triples]))
        return None

    return find
