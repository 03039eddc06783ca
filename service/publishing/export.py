"""An evaluation's whole record as one dataset: the head graph and every graph appended to it.

This is what a third party downloads to recompute the published numbers with any SPARQL 1.1 engine:
each graph keeps its name (TriG or N-Quads), and the catalog's entries for those graphs (digests,
who, when) come along in the catalog graph, so tampering with a downloaded copy shows.
"""

from __future__ import annotations

from pyoxigraph import NamedNode, Quad

from ..core import queries
from ..core.catalog import Catalog
from ..core.errors import NotFound
from ..core.store import Store


def record_quads(store: Store, catalog: Catalog, record: NamedNode) -> list[Quad]:
    """Every quad of ``record`` and its graphs, plus their catalog entries; 404 when nothing is catalogued."""
    rows = store.select(queries.load("record-graphs"), {"catalog": catalog.graph, "record": record})
    if not rows:
        raise NotFound(f"no evaluation record <{record.value}>")
    quads: list[Quad] = []
    for row in rows:
        graph = row["graph"]
        assert isinstance(graph, NamedNode)
        quads += [Quad(t.subject, t.predicate, t.object, graph) for t in store.graph_triples(graph)]
        quads += catalog.current_quads(graph)
    return quads
