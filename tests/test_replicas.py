"""Many writers: real ``caie serve`` replicas over one real ``oxigraph serve``.

A replica killed with ``kill -9`` in the middle of a bulk load leaves no partial graph once its lease
has lapsed, while another replica's load that is still leased survives a restart's recovery; and two
replicas appending to one evaluation at once lose nothing and keep one digest per graph. One test stays
in-process (catalogs over one embedded store) to time leases finely: a running load renews its lease,
and a running replica reclaims a lapsed load of a graph it is asked to load.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
import pytest
from pyoxigraph import NamedNode, Quad, RdfFormat

from service.core import queries
from service.core.catalog import Catalog
from service.core.errors import Conflict
from service.core.namespaces import CATALOG, OWL, RDF
from service.core.store import EmbeddedStore, Store
from service.plan.allocation import Strategy
from service.plan.model import PlanRequest
from service.plan.testplan import create_plan

from .api.test_evaluations import ID, create, sign_off
from .conftest import BASE_URL, Service
from .replicas import Replica, catalog_matches_store, poll, remote_store, replica
from .servers import oxigraph_server
from .test_envelope import agent, load_spec

CATALOG_GRAPH = NamedNode(BASE_URL + "graphs")
BULK = {"bulk_threshold": 1000}
LARGE = 100_000
"""Triples of a graph whose load into the store takes long enough (a few tenths of a second, against polls 10 ms
apart) to be caught in the middle; each load also costs its replica, and the final check, a parse and a digest of
all of them, so no more."""


ENGINES = pytest.mark.engines
"""The replicas' tests on ``oxigraph serve`` (``make test-engines``); the in-process one stays in ``make test``."""


@pytest.fixture
def store_url() -> Iterator[str]:
    """A fresh ``oxigraph serve`` of its own: these tests kill and pause replicas writing to it."""
    with oxigraph_server() as url:
        yield url


def ontology_graph(identifier: str) -> NamedNode:
    return NamedNode(f"{BASE_URL}graphs/ontologies/{identifier}")


def large_ontology(identifier: str, triples: int = LARGE) -> bytes:
    """An ontology graph body (KG-free: no DSO check) of ``triples`` + 1 triples, as N-Triples."""
    head = f"<https://example.org/{identifier}> <{RDF}type> <{OWL}Ontology> .\n"
    body = "".join(
        f'<https://example.org/{identifier}/t{n}> <https://example.org/note> "note {n}" .\n' for n in range(triples)
    )
    return (head + body).encode()


def put_in_background(pool: ThreadPoolExecutor, to: Replica, identifier: str) -> Future[httpx.Response]:
    data = large_ontology(identifier)
    return pool.submit(
        to.http.put,
        f"/graphs/ontologies/{identifier}",
        content=data,
        headers={"Content-Type": "application/n-triples", **to.auth("admin")},
    )


def journal(store: Store, graph: NamedNode) -> dict[str, str]:
    """The bulk-load journal the catalog holds for ``graph``: local name of the term to its value."""
    rows = store.select(
        "SELECT ?p ?o WHERE { GRAPH ?catalog { ?graph ?p ?o } }", {"catalog": CATALOG_GRAPH, "graph": graph}
    )
    terms = ("loadInProgress", "loadOwner", "leaseUntil")
    return {
        row["p"].value.removeprefix(CATALOG): row["o"].value
        for row in rows
        if row["p"].value.removeprefix(CATALOG) in terms
    }


def catalogued(store: Store, graph: NamedNode) -> bool:
    return store.ask("ASK WHERE { GRAPH ?catalog { ?graph ?p ?o } }", {"catalog": CATALOG_GRAPH, "graph": graph})


def lapsed(lease: dict[str, str]) -> bool:
    return datetime.fromisoformat(lease["leaseUntil"]) < datetime.now(UTC)


@ENGINES
def test_kill_9_mid_load_leaves_no_partial_graph_and_a_leased_load_survives_restart(
    store_url: str, tokens: dict[str, str]
) -> None:
    store = remote_store(store_url)
    dead, paused = ontology_graph("dead"), ontology_graph("paused")
    with ThreadPoolExecutor(2) as pool:
        with replica(store_url, tokens, **BULK, bulk_lease_s=2) as first:
            put_in_background(pool, first, "dead")
            poll(lambda: journal(store, dead), "the first replica journals its bulk load")
            first.kill()
        abandoned = journal(store, dead)
        assert abandoned, "the load finished before kill -9: make LARGE larger"

        with replica(store_url, tokens, **BULK, bulk_lease_s=30) as third:
            loading = put_in_background(pool, third, "paused")
            live = poll(lambda: journal(store, paused), "the third replica journals its bulk load")
            os.kill(third.process.pid, signal.SIGSTOP)  # mid-load, like a long pause; its lease still runs
            try:
                poll(lambda: lapsed(abandoned), "the killed replica's lease lapses", seconds=10)
                with replica(store_url, tokens, **BULK, bulk_lease_s=2):  # a restart: recovery runs first
                    assert not store.graph_exists(dead) and not catalogued(store, dead)
                    assert journal(store, paused)["loadInProgress"] == live["loadInProgress"]
                    assert journal(store, paused)["loadOwner"] == live["loadOwner"] != abandoned["loadOwner"]
            finally:
                os.kill(third.process.pid, signal.SIGCONT)
            answer = loading.result(timeout=120)
            assert answer.status_code == 201, answer.text
            assert answer.json()["triples"] == LARGE + 1
    assert catalog_matches_store(store, CATALOG_GRAPH) == []
    store.close()


def test_a_running_load_keeps_its_lease_and_a_lapsed_one_is_reclaimed_without_a_restart() -> None:
    store = EmbeddedStore()
    running, crashed = ontology_graph("running"), ontology_graph("crashed")
    loader, dead, other = (Catalog(store, BASE_URL, lease_s=0.3) for _ in range(3))
    with loader.bulk_load(running):
        first = journal(store, running)["leaseUntil"]
        poll(lambda: lapsed({"leaseUntil": first}), "the first lease's end passes", seconds=5)
        renewed = datetime.fromisoformat(journal(store, running)["leaseUntil"])
        assert renewed > datetime.fromisoformat(first) and other.recover() == []
        with pytest.raises(Conflict, match="being created by another request"):
            other.begin_bulk_load(running)

    dead.begin_bulk_load(crashed)  # a replica that died after journaling: nothing renews its lease
    store.bulk_load_new_graph(crashed, large_ontology("crashed", 10), RdfFormat.N_TRIPLES, crashed.value)
    with pytest.raises(Conflict):
        other.begin_bulk_load(crashed)
    poll(lambda: lapsed(journal(store, crashed)), "the dead replica's lease lapses", seconds=5)
    with other.bulk_load(crashed) as load:
        assert not store.graph_exists(crashed) and journal(store, crashed)["loadOwner"] == other.replica
        load.finish()


APPENDS = 200
"""Approvals and exclusions sent to two replicas at once, half each, from eight client threads."""


def append_one(n: int, replicas: tuple[Replica, Replica], scenarios: list[str]) -> tuple[str, str, int]:
    """The ``n``-th append: an assessment of the DSO's appropriateness (the one approval a signed-off envelope
    still takes) or a scenario exclusion, to replica ``n % 2``; its kind, the IRI the service minted, and how
    many 409s the client met (and retried) first."""
    to = replicas[n % 2]
    assessment = (n // 2) % 2 == 0
    conflicts = 0
    while True:
        if assessment:
            answer = to.http.post(
                f"/evaluations/{ID}/dso/appropriateness",
                json={"appropriate": n % 3 > 0, "rationale": f"assessment {n}"},
                headers=to.auth("annie"),
            )
        else:
            answer = to.http.post(
                f"/evaluations/{ID}/scenarios/{scenarios[n % len(scenarios)]}/exclusion",
                json={"reason": f"exclusion {n}"},
                headers=to.auth("annie"),
            )
        if answer.status_code != 409 or conflicts == 10:
            break
        conflicts += 1  # a conflict changed nothing: the client sends it again, as the 409 says
    assert answer.status_code == 201, answer.text
    return (
        ("assessment", answer.json()["@id"], conflicts)
        if assessment
        else ("exclusion", answer.json()["exclusion"], conflicts)
    )


@ENGINES
def test_two_replicas_appending_at_once_lose_nothing(
    store_url: str, tokens: dict[str, str], spec_quads: list[Quad]
) -> None:
    store = remote_store(store_url)
    graphs = load_spec(store, spec_quads)  # the specification files as `caie serve --examples` loads them, copied
    with replica(store_url, tokens) as one, replica(store_url, tokens) as two:
        create(Service(one.http, store, tokens, str(one.http.base_url)))
        sign_off(Service(two.http, store, tokens, str(two.http.base_url)))
        # the plan whose scenarios the appends exclude, made here over the same store: this process keeps the
        # compiled scenario tables its other tests use, where a replica would compile them afresh
        create_plan(graphs, ID, PlanRequest(Strategy.EQUAL, 40, seed=1, review_sample=100), agent("theo"))
        page = two.http.get(f"/evaluations/{ID}/scenarios", params={"limit": 50}).json()
        scenarios = [item["scenario"].rsplit("/", 1)[-1] for item in page["items"]]
        earlier = [a["@id"] for a in one.http.get(f"/evaluations/{ID}/approvals").json()["approvals"]]

        with ThreadPoolExecutor(8) as pool:
            sent = list(pool.map(lambda n: append_one(n, (one, two), scenarios), range(APPENDS)))

        assessed = [iri for kind, iri, _ in sent if kind == "assessment"]
        excluded = [iri for kind, iri, _ in sent if kind == "exclusion"]
        assert (
            len(set(assessed)) == len(assessed) == APPENDS // 2 and len(set(excluded)) == len(excluded) == APPENDS // 2
        )
        for reader in (one, two):
            listed = [a["@id"] for a in reader.http.get(f"/evaluations/{ID}/approvals").json()["approvals"]]
            assert len(listed) == len(set(listed)) == len(earlier) + len(assessed)
            assert set(listed) == set(earlier) | set(assessed)
        rows = store.select(
            queries.load("scenario-exclusions"), {"evaluation": NamedNode(f"{BASE_URL}evaluations/{ID}")}
        )
        assert sorted(row["exclusion"].value for row in rows) == sorted(excluded)
        retried = sum(conflicts for *_, conflicts in sent)
        print(f"{APPENDS} appends over two replicas: {retried} answered 409 first and were sent again")
    assert catalog_matches_store(store, CATALOG_GRAPH) == []
    store.close()
