"""The remote backend against a real ``oxigraph serve``: credentials (through an authenticating proxy the test
starts), errors with their meaning, the explicit union dataset, paged whole-graph reads and the detection of
a cut answer, blank nodes written and read back; and :func:`service.core.rdf.skolemize`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    Quad,
    QueryResultsFormat,
    RdfFormat,
    Triple,
    parse_query_results,
    serialize,
)

from service.api import create_app
from service.composition import build_services
from service.core.config import Credential, Settings
from service.core.errors import BadRequest, StoreUnavailable
from service.core.rdf import skolemize
from service.core.store import (
    ChangeSet,
    RemoteStore,
    StoreAuthorizationFailed,
    StoreLimitExceeded,
    open_store,
)
from service.core.store.engines import json_results_without_node_ids, triples_without_node_ids

from ..conftest import BASE_URL
from ..proxy import ProxyControl, authenticating_proxy
from ..servers import oxigraph_server

EX = "http://example.org/"
G = NamedNode("http://caie.test/kg/remote")
USER, PASSWORD, TOKEN = "caie", "s3cret-Pa55word", "t0ken-abcdefghijklmnop"
ADMIN = Credential.model_validate({"agent": "admin", "roles": ["admin"]})


def triples(n: int) -> list[Triple]:
    return [Triple(NamedNode(f"{EX}s{i}"), NamedNode(EX + "p"), Literal(f"value {i}")) for i in range(n)]


def in_graph(graph: NamedNode, content: list[Triple]) -> list[Quad]:
    return [Quad(t.subject, t.predicate, t.object, graph) for t in content]


def store_at(url: str, **options: object) -> RemoteStore:
    return RemoteStore(f"{url}/query", f"{url}/update", f"{url}/store", **options)  # type: ignore[arg-type]  # options are RemoteStore's keyword arguments, passed through


@pytest.fixture
def empty(remote_url: str) -> str:
    httpx.post(
        f"{remote_url}/update", content=b"DROP ALL", headers={"Content-Type": "application/sparql-update"}
    ).raise_for_status()
    return remote_url


@pytest.fixture
def proxy(empty: str) -> Iterator[tuple[str, ProxyControl]]:
    with authenticating_proxy(empty, user=USER, password=PASSWORD, token=TOKEN) as running:
        yield running


# ------------------------------------------------------------------------------------------- credentials


def test_without_credentials_the_store_refuses_and_says_so(proxy: tuple[str, ProxyControl]) -> None:
    url, _ = proxy
    store = store_at(url)
    with pytest.raises(StoreAuthorizationFailed, match="requires credentials"):
        store.ask("ASK { ?s ?p ?o }")
    store.close()
    wrong = store_at(url, username=USER, password="not-it")
    with pytest.raises(StoreAuthorizationFailed, match="refused the credentials") as refused:
        wrong.select("SELECT * WHERE { ?s ?p ?o }")
    assert "not-it" not in str(refused.value) and isinstance(refused.value, StoreUnavailable)
    wrong.close()


@pytest.mark.parametrize(
    "credentials",
    [
        {"username": USER, "password": PASSWORD},
        {"username": USER, "password": PASSWORD, "auth_scheme": "basic"},
        {"token": TOKEN},
    ],
)
def test_with_credentials_everything_works(proxy: tuple[str, ProxyControl], credentials: dict[str, str]) -> None:
    url, control = proxy
    store = store_at(url, **credentials)
    store.apply(ChangeSet(insert=in_graph(G, triples(3))))
    store.bulk_load_new_graph(
        NamedNode(G.value + "/bulk"), serialize(triples(4), format=RdfFormat.N_TRIPLES), RdfFormat.N_TRIPLES, G.value
    )
    assert len(store.graph_triples(G)) == 3
    assert len(store.graph_triples(NamedNode(G.value + "/bulk"))) == 4
    assert store.ask("ASK WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": G})
    assert len(store.select("SELECT ?s WHERE { ?s ?p ?o }", union=True)) == 7
    assert control.refused <= 1  # at most the first request, answering the challenge
    store.close()


def test_the_service_starts_on_a_store_that_needs_credentials(proxy: tuple[str, ProxyControl], tmp_path: Path) -> None:
    url, _ = proxy
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    endpoints = {
        "store": "remote",
        "remote_query_url": f"{url}/query",
        "remote_update_url": f"{url}/update",
        "remote_store_url": f"{url}/store",
        "base_url": BASE_URL,
    }
    settings = Settings(**endpoints, remote_user=USER, remote_password_file=secret)  # type: ignore[arg-type]  # endpoints is a dict of Settings' string fields
    with TestClient(create_app(settings)) as client:
        answer = client.get("/health")
    assert answer.status_code == 200 and answer.json()["status"] == "ok"
    with pytest.raises(StoreAuthorizationFailed, match="requires credentials"):
        create_app(Settings(**endpoints))  # type: ignore[arg-type]  # endpoints is a dict of Settings' string fields
    by_token = Settings(**endpoints, remote_token=TOKEN)  # type: ignore[arg-type]  # endpoints is a dict of Settings' string fields
    store = open_store(by_token)
    assert store.ask("ASK { }")
    store.close()
    assert TOKEN not in repr(by_token) and PASSWORD not in repr(settings) and TOKEN not in str(by_token.model_dump())


def test_credential_settings_are_checked() -> None:
    endpoints = {
        "store": "remote",
        "remote_query_url": "http://s/q",
        "remote_update_url": "http://s/u",
        "remote_store_url": "http://s/g",
    }
    with pytest.raises(ValueError, match="CAIE_REMOTE_PASSWORD"):
        open_store(Settings(**endpoints, remote_user=USER))  # type: ignore[arg-type]  # endpoints is a dict of Settings' string fields
    with pytest.raises(ValueError, match="CAIE_REMOTE_TOKEN"):
        open_store(Settings(**endpoints, remote_auth="bearer"))  # type: ignore[arg-type]  # endpoints is a dict of Settings' string fields
    with pytest.raises(ValueError, match="CAIE_REMOTE_PASSWORD_FILE") as missing:
        open_store(Settings(**endpoints, remote_user=USER, remote_password_file=Path("/nonexistent/pw")))  # type: ignore[arg-type]  # endpoints is a dict of Settings' string fields
    assert "nonexistent" in str(missing.value)


# ----------------------------------------------------------------------------------------------- errors


def test_a_syntax_error_carries_the_stores_text(empty: str) -> None:
    store = store_at(empty)
    with pytest.raises(BadRequest, match="syntax error") as error:
        store.select("SELECT ?s WHERE { ?s ?p }")
    assert "reported by the remote store" in error.value.message and len(error.value.message) < 700
    store.close()


def _answer(status: int, text: str) -> httpx.Response:
    return httpx.Response(status, text=text, request=httpx.Request("POST", "http://store/query"))


@pytest.mark.parametrize(
    ("status", "text", "kind", "words"),
    [
        (400, "Parser error: expected '}'", BadRequest, "syntax error"),
        (400, "The default-graph-uri parameter is not a valid IRI", BadRequest, "refused the request"),
        (400, "Virtuoso 37000 Error SP030: SPARQL compiler, line 1: syntax error at 'x'", BadRequest, "syntax error"),
        (413, "Request Entity Too Large", StoreLimitExceeded, "limit"),
        (500, "Virtuoso 42000 Error SQ200: generated SQL text has exceeded 10000 lines", StoreLimitExceeded, "limit"),
        (
            500,
            "SR353: Sorted TOP clause specifies more than 10001 rows to sort. Only 10000 are allowed.",
            StoreLimitExceeded,
            "limit",
        ),
        (401, "Unauthorized", StoreAuthorizationFailed, "requires credentials"),
        (403, "Forbidden", StoreAuthorizationFailed, "requires credentials"),
        (500, "Internal error: " + "x" * 2000, StoreUnavailable, "answered 500"),
        (502, "Bad gateway", StoreUnavailable, "answered 502"),
    ],
)
def test_store_answers_keep_their_meaning(status: int, text: str, kind: type[Exception], words: str) -> None:
    store = store_at("http://store")
    with pytest.raises(kind, match=words) as error:
        store._raise_for("http://store/query", _answer(status, text))
    assert type(error.value) is kind
    assert text[:40] in str(error.value) and len(str(error.value)) < 800
    store.close()


@pytest.mark.engines  # its own oxigraph serve
def test_a_stopped_store_is_unavailable() -> None:
    with oxigraph_server() as url:
        store = store_at(url)
        assert not store.ask("ASK { ?s ?p ?o }")
    with pytest.raises(StoreUnavailable, match="did not answer"):
        store.ask("ASK { ?s ?p ?o }")
    with pytest.raises(StoreUnavailable, match="did not answer"):
        store.graph_triples(G)
    store.close()


# ------------------------------------------------------------------------------------------------ dataset


def test_a_union_reads_only_catalogued_graphs(empty: str) -> None:
    store = store_at(empty)
    services = build_services(Settings(base_url=BASE_URL), store)
    store.attach_catalog(services.catalog.graph)  # what build_services is to do for every store
    ref = services.graphs.ref("ontologies", "catalogued")
    ontology = Triple(
        NamedNode(EX + "onto"),
        NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
        NamedNode("http://www.w3.org/2002/07/owl#Ontology"),
    )
    services.graphs.write(
        ref, serialize([ontology, *triples(2)], format=RdfFormat.N_TRIPLES), RdfFormat.N_TRIPLES, ADMIN
    )
    stray = NamedNode(BASE_URL + ".well-known/staging/stray")
    store.apply(
        ChangeSet(insert=in_graph(stray, [Triple(NamedNode(EX + "hidden"), NamedNode(EX + "p"), Literal("x"))]))
    )
    listed = {row["g"].value for row in store.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }", union=True)}
    assert listed == {ref.iri.value, services.catalog.graph.value}
    assert not store.ask("ASK { <http://example.org/hidden> ?p ?o }", union=True)
    assert store.ask("ASK { <http://example.org/s1> ?p ?o }", union=True)
    # Non-union queries name their graphs and reach uncatalogued ones (staging, journal) that way.
    assert store.ask("ASK WHERE { GRAPH ?g { <http://example.org/hidden> ?p ?o } }", {"g": stray})
    store.close()


def test_without_a_catalog_a_union_is_every_graph_but_the_engines(empty: str) -> None:
    store = store_at(empty)
    store.apply(
        ChangeSet(
            insert=[
                *in_graph(G, triples(2)),
                *in_graph(NamedNode("http://www.openlinksw.com/schemas/virtrdf#"), triples(1)),
            ]
        )
    )
    listed = {row["g"].value for row in store.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }", union=True)}
    assert listed == {G.value}
    store.close()


def test_rows_with_an_unbound_graph_variable_are_dropped() -> None:
    from service.core.store.engines import must_bind

    assert must_bind("SELECT DISTINCT ?g WHERE { GRAPH ?g { } }") == ["g"]
    assert must_bind("SELECT ?g WHERE { OPTIONAL { GRAPH ?g { ?s ?p ?o } } }") == []


# ------------------------------------------------------------------------------------------ paged reads


@pytest.mark.parametrize("graph_store_reads", [True, False])
def test_a_large_graph_reads_back_whole_in_pages(empty: str, graph_store_reads: bool) -> None:
    content = triples(2_500)
    store = store_at(empty, page_size=400, graph_store_reads=graph_store_reads)
    store.bulk_load_new_graph(G, serialize(content, format=RdfFormat.N_TRIPLES), RdfFormat.N_TRIPLES, G.value)
    stored = store.graph_triples(G)
    assert len(stored) == 2_500 and set(stored) == set(content)
    exported = store.export_graph(G, RdfFormat.N_QUADS)
    assert exported.count(b"\n") == 2_500
    assert store.graph_triples(NamedNode(G.value + "/absent")) == []
    store.close()


def test_an_answer_cut_by_a_store_limit_is_an_error_never_short(proxy: tuple[str, ProxyControl]) -> None:
    url, control = proxy
    content = triples(2_500)
    writer = store_at(url, token=TOKEN)
    writer.bulk_load_new_graph(G, serialize(content, format=RdfFormat.N_TRIPLES), RdfFormat.N_TRIPLES, G.value)
    control.row_cap = 1_000  # the store now silently cuts every answer to 1,000 rows / lines
    too_big_pages = store_at(url, token=TOKEN, page_size=2_000)
    with pytest.raises(StoreLimitExceeded, match="1000 of the 2500 triples"):
        too_big_pages.graph_triples(G)
    within = store_at(url, token=TOKEN, page_size=900)  # the GSP GET comes back cut; pages below the cap
    assert set(within.graph_triples(G)) == set(content)
    capped = store_at(url, token=TOKEN, page_size=900, row_cap=1_000)
    with pytest.raises(StoreLimitExceeded, match="row cap"):
        capped.construct("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": G})
    with pytest.raises(StoreLimitExceeded, match="row cap"):
        capped.select("SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": G})
    assert len(capped.select("SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 10", {"g": G})) == 10
    for store in (writer, too_big_pages, within, capped):
        store.close()


@pytest.mark.parametrize("status", [206, 200])
def test_an_anytime_answer_cut_short_is_an_error_never_short(proxy: tuple[str, ProxyControl], status: int) -> None:
    """Virtuoso answers a query that ran out of time with what it found so far, as a success (206, or 200 as its
    HTTPAnytimeStatus may say) marked by X-SQL-State S1TAT: no figure is computed from it."""
    url, control = proxy
    store = store_at(url, token=TOKEN)
    store.bulk_load_new_graph(G, serialize(triples(50), format=RdfFormat.N_TRIPLES), RdfFormat.N_TRIPLES, G.value)
    control.row_cap, control.anytime = 10, status
    with pytest.raises(StoreLimitExceeded, match="partial answer .*query interrupted by result timeout"):
        store.select("SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": G})
    control.anytime = None  # the same cut without the marks is not seen by the client: the row cap is its guard
    assert len(store.select("SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": G})) == 10
    store.close()


def test_page_size_must_stay_below_the_row_cap() -> None:
    with pytest.raises(ValueError, match="row cap"):
        store_at("http://store", page_size=10_000, row_cap=10_000)


# ------------------------------------------------------------------------------------------- blank nodes


def test_skolemize_is_consistent_within_a_write_and_fresh_across_writes() -> None:
    node = BlankNode()
    written = [
        Triple(NamedNode(EX + "s"), NamedNode(EX + "q"), node),
        Triple(node, NamedNode(EX + "p"), Literal("x")),
        Triple(NamedNode(EX + "t"), NamedNode(EX + "q"), BlankNode()),
    ]
    first, second = skolemize(written, BASE_URL), skolemize(written, BASE_URL)
    assert first[0].object == first[1].subject != first[2].object
    assert all(isinstance(t.subject, NamedNode) and not isinstance(t.object, BlankNode) for t in first)
    assert first[0].object.value.startswith(BASE_URL + ".well-known/genid/")
    assert first[0].object != second[0].object
    assert first[1].object == Literal("x") and skolemize(triples(2), BASE_URL) == triples(2)


def test_blank_nodes_are_written_as_a_template_and_read_back(empty: str) -> None:
    store = store_at(empty)
    node = BlankNode()
    written = [Triple(NamedNode(EX + "s"), NamedNode(EX + "q"), node), Triple(node, NamedNode(EX + "p"), Literal("x"))]
    store.apply(ChangeSet(insert=in_graph(G, written)))
    stored = store.graph_triples(G)
    assert len(stored) == 2
    by_predicate = {t.predicate.value: t for t in stored}
    assert by_predicate[EX + "q"].object == by_predicate[EX + "p"].subject
    assert isinstance(by_predicate[EX + "p"].subject, BlankNode)
    store.close()


def test_virtuoso_node_ids_read_as_blank_nodes() -> None:
    answer = {
        "head": {"vars": ["s", "o"]},
        "results": {
            "bindings": [
                {
                    "s": {"type": "uri", "value": "nodeID://b10007"},
                    "o": {"type": "literal", "value": "nodeID://b1 in text"},
                },
                {"s": {"type": "bnode", "value": "nodeID://b10007"}, "o": {"type": "uri", "value": "http://e/x"}},
            ]
        },
    }
    rows = list(
        parse_query_results(json_results_without_node_ids(json.dumps(answer).encode()), format=QueryResultsFormat.JSON)
    )
    assert rows[0]["s"] == rows[1]["s"] == BlankNode("b10007")
    assert rows[0]["o"] == Literal("nodeID://b1 in text")
    same = NamedNode("nodeID://b10007")
    assert triples_without_node_ids([Triple(same, NamedNode(EX + "p"), same)])[0].object == BlankNode("b10007")
