"""The store interface, run on both backends: the same behaviour from pyoxigraph and from oxigraph serve."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat

from service.core.catalog import Catalog
from service.core.errors import BadRequest
from service.core.store import ChangeSet, Store

G = NamedNode("http://caie.test/kg/one")
EX = "http://example.org/"


def quad(s: str, o: str | Literal, graph: NamedNode = G) -> Quad:
    obj = o if isinstance(o, Literal) else NamedNode(EX + o)
    return Quad(NamedNode(EX + s), NamedNode(EX + "p"), obj, graph)


def test_insert_then_read_back(store: Store) -> None:
    store.apply(ChangeSet(insert=[quad("a", "b"), quad("a", Literal('with "quotes"\nand a line'))]))
    assert store.graph_exists(G)
    assert len(store.graph_triples(G)) == 2
    rows = store.select("SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?o", {"g": G})
    assert [row["o"] for row in rows] == [NamedNode(EX + "b"), Literal('with "quotes"\nand a line')]


def test_change_set_drops_deletes_and_inserts_in_one_step(store: Store) -> None:
    other = NamedNode("http://caie.test/kg/two")
    store.apply(ChangeSet(insert=[quad("a", "b"), quad("c", "d"), quad("x", "y", other)]))
    store.apply(ChangeSet(drop_graphs=[G], delete=[quad("x", "y", other)], insert=[quad("e", "f")]))
    assert [t.subject.value for t in store.graph_triples(G)] == [EX + "e"]
    assert not store.graph_exists(other)


def test_bindings_fix_variables_and_are_never_pasted(store: Store) -> None:
    store.apply(ChangeSet(insert=[quad("a", Literal("x")), quad("b", Literal("y"))]))
    hostile = Literal('y" } } ; DROP ALL ; SELECT * { ?s ?p "')
    assert store.select("SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": G, "o": hostile}) == []
    assert store.ask("ASK WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": G, "o": Literal("y")})
    assert len(store.graph_triples(G)) == 2
    with pytest.raises(ValueError):
        store.select("SELECT ?s WHERE { ?s ?p ?o }", {"o) } DROP ALL #": Literal("x")})


def test_construct_and_union_default_graph(store: Store) -> None:
    store.apply(ChangeSet(insert=[quad("a", "b"), quad("c", "d", NamedNode("http://caie.test/kg/two"))]))
    assert store.construct("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }") == []
    assert len(store.construct("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", union=True)) == 2


def test_syntax_error_is_a_bad_request(store: Store) -> None:
    with pytest.raises(BadRequest):
        store.select("SELECT ?s WHERE { ?s ?p }")


def test_export_keeps_graph_name_in_dataset_formats(store: Store) -> None:
    store.apply(ChangeSet(insert=[quad("a", "b")]))
    assert G.value.encode() in store.export_graph(G, RdfFormat.N_QUADS)
    assert b"example.org" in store.export_graph(G, RdfFormat.TURTLE, {"ex": EX})


def test_unfinished_bulk_load_is_rolled_back_on_recovery(store: Store) -> None:
    catalog = Catalog(store, "http://caie.test/")
    catalog.begin_bulk_load(G)
    store.bulk_load_new_graph(G, b"<http://e/s> <http://e/p> <http://e/o> .", RdfFormat.N_TRIPLES, G.value)
    assert store.graph_exists(G)
    assert catalog.recover() == [G.value]
    assert not store.graph_exists(G)
    assert catalog.triples() == []
