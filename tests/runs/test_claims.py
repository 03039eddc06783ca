"""Two runners claiming the same probes at the same moment through one remote store (a real ``oxigraph serve``,
which applies concurrent updates without detecting their conflicts), or as two threads of one process through
one embedded store (whose new-graph writes are one checked load, core/commits.py): whatever the interleaving, no
probe is held by both, so none is run twice, and none is left unheld.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from service.core.catalog import GraphKind, now
from service.core.commits import INTENT_EXPIRY_S
from service.core.config import Credential
from service.core.graphs import GraphService
from service.core.namespaces import CATALOG, XSD
from service.core.store import ChangeSet, EmbeddedStore, RemoteStore, Store
from service.plan.model import Probe
from service.runs.claims import claim

from ..conftest import BASE_URL, EMBEDDED_ONLY, graphs_over

pytestmark = EMBEDDED_ONLY  # the point is two writers on one store of each kind; the fixture's backend is not used

ROUNDS = 40
PROBES = 6
OPERATOR = Credential(agent="theo", roles=frozenset({"evaluation_operator"}))


@pytest.fixture(params=["remote", "embedded"])
def two_writers(request: pytest.FixtureRequest, remote_url: str) -> Iterator[tuple[GraphService, GraphService, Store]]:
    """Two graph services and a store to look with: each over its own connection to one emptied remote store (as
    two processes are), or both over one new embedded store (as two runner threads of one process are)."""
    if request.param == "embedded":
        store = EmbeddedStore()
        yield graphs_over(store), graphs_over(store), store
        store.close()
        return
    httpx.post(
        f"{remote_url}/update", content=b"DROP ALL", headers={"Content-Type": "application/sparql-update"}
    ).raise_for_status()
    stores = [RemoteStore(f"{remote_url}/query", f"{remote_url}/update", f"{remote_url}/store") for _ in range(3)]
    yield graphs_over(stores[0]), graphs_over(stores[1]), stores[2]
    for store in stores:
        store.close()


def _probes(run: str) -> list[Probe]:
    return [
        Probe(f"{run}/probe/{n}", n, f"{run}/criterion", (), f"{run}/scenario", f"opening {n}", None, None)
        for n in range(1, PROBES + 1)
    ]


@pytest.mark.parametrize("count", [PROBES, PROBES // 2])
def test_two_runners_claiming_the_same_probes_at_once_never_both_hold_one(
    two_writers: tuple[GraphService, GraphService, Store], count: int
) -> None:
    """Each runner asks for ``count`` of the same probes: all of them (one gets them, the other none), or half
    (each gets three: the one that finds some taken reads the claims again and takes the others)."""
    both_held = []

    def claimer(
        graphs: GraphService,
        name: str,
        number: int,
        run: str,
        probes: list[Probe],
        start: threading.Barrier,
        won: dict[str, list[int]],
    ) -> None:
        start.wait()
        held = claim(graphs, "race", number, run, probes, count, name, timedelta(minutes=5), OPERATOR)
        won[name] = [p.number for p in held.won]

    for number in range(1, ROUNDS + 1):
        run = f"{BASE_URL}evaluations/race/runs/{number}"
        probes = _probes(run)
        start = threading.Barrier(2)
        won: dict[str, list[int]] = {}
        threads = [
            threading.Thread(target=claimer, args=(graphs, f"runner-{side}", number, run, probes, start, won))
            for side, graphs in zip("ab", two_writers[:2])
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        shared = set(won["runner-a"]) & set(won["runner-b"])
        if shared:
            both_held.append((number, sorted(shared)))
        # every probe is held by one of them: a race leaves none unclaimed that a third runner would then take
        assert sorted(won["runner-a"] + won["runner-b"]) == list(range(1, PROBES + 1)), (number, won)
        rows = two_writers[0].rows("run-claims", {"run": NamedNode(run), "catalog": two_writers[0].catalog_graph})
        holders = {row["probe"].value: row["claimant"].value for row in rows}
        assert len(rows) == PROBES == len(holders), (number, rows)
        for name, numbers in won.items():
            assert all(holders[f"{run}/probe/{n}"] == name for n in numbers), (number, name, holders)
    assert both_held == [], f"probes held by both runners (round, probes): {both_held}"


@pytest.mark.parametrize("age_s", [INTENT_EXPIRY_S + 1, 0])
def test_a_claim_graph_another_writer_marked_is_left_to_it_until_its_mark_lapses(
    two_writers: tuple[GraphService, GraphService, Store], age_s: float
) -> None:
    """A writer marks a claim graph (core/commits.py, step 1) before it commits: while its mark is live, another
    runner takes the other probes and leaves that one; a mark older than INTENT_EXPIRY_S is a writer killed before
    its commit, and the probe is claimed anyway and the mark removed."""
    graphs, _, store = two_writers
    number = 99 if age_s else 98
    run = f"{BASE_URL}evaluations/race/runs/{number}"
    dead = NamedNode(f"urn:uuid:00000000-0000-4000-8000-0000000000{number}")
    marked = graphs.member(GraphKind.EVALUATION, f"race/runs/{number}/claims/1").iri
    since = Literal((now() - timedelta(seconds=age_s)).isoformat(), datatype=NamedNode(XSD + "dateTime"))
    catalog = graphs.catalog_graph
    store.apply(
        ChangeSet(
            insert=[
                Quad(marked, NamedNode(CATALOG + "writing"), dead, catalog),
                Quad(dead, NamedNode(CATALOG + "intentSince"), since, catalog),
            ]
        )
    )
    held = claim(graphs, "race", number, run, _probes(run), PROBES, "runner-c", timedelta(minutes=5), OPERATOR)
    left = store.select(
        f"SELECT ?s ?p ?o WHERE {{ GRAPH ?catalog {{ {{ ?s ?p {dead} }} UNION {{ {dead} ?p ?o }} }} }}",
        {"catalog": catalog},
    )
    if age_s:
        assert [p.number for p in held.won] == list(range(1, PROBES + 1))
        assert left == []
    else:
        assert [p.number for p in held.won] == list(range(2, PROBES + 1))
        assert len(left) == 2
