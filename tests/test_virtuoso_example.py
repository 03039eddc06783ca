"""The service as an operator runs it on Virtuoso 7 (issue 7, "Done when"): real ``caie serve`` processes
over a real Virtuoso (:func:`tests.virtuoso.virtuoso_server`, its packaged limits).

1. ``caie serve --examples`` on Virtuoso starts, and the worked example's envelope digest, plan allocation,
   frame sizes, plan digest and scenario counts equal those of the same example on the embedded store; so do
   its steps 4 and 5 (``examples/vaccine/caie_vaccine/worked_example.py`` ``run_and_judge``): the run on the demonstration chatbot
   (probes, cases, traces, execution errors), every determination (the rule judges' and the domain expert's:
   criterion, probe, turn, outcome, mode, judge, rationale) and the attestations (outcome, aggregated outcome,
   sufficiency, which is current, the one correction superseding the first).
1b. A further correction over REST (``POST …/runs/1/attestations`` superseding the current attestation, with
   a reason) answers and lists the same on Virtuoso as on the embedded store.
2. A 50,000-triple graph written through the service reads back whole, with the digest it was sent with
   and the one the catalog records.
3. ``kill -9`` of the service while it writes such a graph leaves no trace once a restart has recovered.

One Virtuoso and one service process for the module (tests 2 and 3 reuse the example's service; test 3
kills it and starts another). Skipped only when ``virtuoso-t`` is absent outside CI. What tests 1 and 1b
compare, and the embedded example they are compared with: tests/worked_example_answers.py.

Test 3 reads what it checks by naming graphs (the catalog's journal, the staging graph, the target), not by
scanning every graph: after tests 1 and 2 (about 200,000 quads), Virtuoso 7.2.5 with its packaged limits refused
``SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }`` with 500 "SR171: Transaction timed out" (about 60 s each)
for over 300 s, and did so still after ``txn_killall(1)``, with ``status('')`` showing no lock waits and no
pending transaction: a scan too slow for the engine's limits at that size, not a lock left by the killed write
(docs/stores.md). In a script that wrote one 50,000-triple graph before the killed write, the scan answered in
2 to 18 s.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyoxigraph import NamedNode, RdfFormat, parse

from service.core.digest import graph_digest
from service.core.namespaces import CATALOG, OWL, RDF
from service.core.store import RemoteStore

from .conftest import BASE_URL
from .replicas import ServiceDidNotStart, ServiceProcess, poll, start_service, wait_for_service
from .servers import stop_process
from .virtuoso import VirtuosoServer, virtuoso_server
from .worked_example_answers import correct, embedded_example, example_answers

# About 2 minutes of real processes on Virtuoso (110 s alone): run by `make test-engines`, apart from `make test`'s 420 s.
pytestmark = pytest.mark.engines

CATALOG_GRAPH = NamedNode(BASE_URL + "graphs")
BIG = 50_000
"""Triples of the large graph (an owl:Ontology declaration and 49,999 notes)."""
EXAMPLE_START_S = 1500.0
"""Deadline for ``caie serve --examples`` to answer: spec files, scenarios, a 300-probe plan, its run, the rule
judges and the attestations. Steps 4 and 5 alone took 410 s on Virtuoso (6.6 s embedded) on the shared machine
(load average 8): the run's case writes are single updates of up to 660,000 characters, which Virtuoso compiles to
SQL (about 28 s each, 283 s of the run's 365 s)."""
LEASE_S = 3.0
SETTINGS = {"remote_row_cap": 10_000, "bulk_lease_s": LEASE_S, "remote_timeout_s": 600}
"""Virtuoso's ResultSetMaxRows as the row cap (an answer that long is refused as possibly cut), a short
bulk-load lease so a restart can recover a killed write soon, and a request timeout above the 60 s default: under
load one of the run's case writes took longer, and the service stopped with "did not answer: ReadTimeout"."""


@dataclass
class Started:
    """The example's service on Virtuoso, or why it did not start; the embedded example's answers."""

    virtuoso: VirtuosoServer
    store: RemoteStore
    log_dir: Path
    tokens: dict[str, str]
    service: ServiceProcess | None
    failure: str | None
    embedded: dict[str, Any]
    embedded_correction: dict[str, Any]


@pytest.fixture(scope="module")
def started(tokens: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Started]:
    """One Virtuoso; ``caie serve --examples`` on it (the embedded example is built while it starts)."""
    log_dir = tmp_path_factory.mktemp("virtuoso-example")
    with virtuoso_server() as virtuoso:
        store = RemoteStore(virtuoso.query_url, virtuoso.update_url, virtuoso.store_url, row_cap=10_000)
        process, url, stderr_path = start_service(
            virtuoso.query_url, virtuoso.update_url, virtuoso.store_url, tokens, log_dir, examples=True, **SETTINGS
        )
        service, failure, state = None, None, None
        try:
            embedded, embedded_correction = embedded_example(tokens)
            try:
                service = wait_for_service(process, url, stderr_path, tokens, EXAMPLE_START_S)
            except ServiceDidNotStart as error:
                failure = f"{error}\n{virtuoso.diagnosis()}"
            state = Started(virtuoso, store, log_dir, tokens, service, failure, embedded, embedded_correction)
            yield state
        finally:
            stop_process(process)
            if state is not None and state.service is not None:  # one the tests started after it (a restart)
                stop_process(state.service.process)
            store.close()


@pytest.fixture
def service(started: Started) -> ServiceProcess:
    """The running service on Virtuoso: the example's while it runs, else a fresh one (without the example)."""
    if started.service is not None and started.service.process.poll() is None:
        return started.service
    return start_plain(started, "caie serve (no examples) did not start on Virtuoso")


def start_plain(started: Started, failure: str) -> ServiceProcess:
    """A ``caie serve`` without the example on the module's Virtuoso, as ``started.service`` (stopped with it)."""
    v = started.virtuoso
    process, url, stderr_path = start_service(
        v.query_url, v.update_url, v.store_url, started.tokens, started.log_dir, **SETTINGS
    )
    try:
        started.service = wait_for_service(process, url, stderr_path, started.tokens, 120.0)
    except ServiceDidNotStart as error:
        pytest.fail(f"{failure}: {error}\n{v.diagnosis()}", pytrace=False)
    return started.service


def big_ontology(identifier: str, triples: int = BIG) -> bytes:
    """An ontology graph of exactly ``triples`` triples, as N-Triples (an ontology: no DSO check)."""
    head = f"<https://example.org/{identifier}> <{RDF}type> <{OWL}Ontology> .\n"
    body = "".join(
        f'<https://example.org/{identifier}/t{n}> <https://example.org/note> "note {n}" .\n' for n in range(triples - 1)
    )
    return (head + body).encode()


def put(service: ServiceProcess, identifier: str, data: bytes) -> httpx.Response:
    return service.http.put(
        f"/graphs/ontologies/{identifier}",
        content=data,
        headers={"Content-Type": "application/n-triples", **service.auth("admin")},
    )


# ---------------------------------------------------------------------------------------------- 1


def example_service(started: Started) -> ServiceProcess:
    if started.service is None:
        pytest.fail(f"caie serve --examples did not start on Virtuoso: {started.failure}", pytrace=False)
    return started.service


def virtuoso_get(service: ServiceProcess) -> Any:
    def get(path: str, params: dict[str, Any]) -> Any:
        answer = service.http.get(path, params=params)
        assert answer.status_code == 200, f"Virtuoso {path}: {answer.status_code} {answer.text}"
        return answer.json()

    return get


def test_the_worked_example_on_virtuoso_equals_the_embedded_one(started: Started) -> None:
    on_virtuoso = example_answers(virtuoso_get(example_service(started)))
    assert on_virtuoso["approved"] is True and on_virtuoso["probes"] == 300
    # steps 4 and 5 as the worked example takes them: one run of the 300 probes, all answered; rule judges and one
    # determination by the domain expert; every criterion with determinations attested, the first one corrected
    assert [run[1:6] for run in on_virtuoso["runs"]] == [(300, 300, 300, 0, True)]
    assert {mode for *_, mode, _judge, _version, _rationale in on_virtuoso["determinations"]} == {"automatic", "manual"}
    corrected = [a for a in on_virtuoso["attestations"] if a[7]]
    assert len(corrected) == 1 and corrected[0][1] == "cantTell" and corrected[0][6] is True
    assert sum(1 for a in on_virtuoso["attestations"] if not a[6]) == 1, "only the corrected attestation is not current"
    for key, expected in started.embedded.items():
        assert on_virtuoso[key] == expected, f"{key}: Virtuoso {on_virtuoso[key]!r}, embedded {expected!r}"
    # No catalog-against-store check here: scanning every graph timed out, and reading each catalogued graph by name
    # (over 600: a case and a claim graph per probe) left Virtuoso answering nothing for the rest of the module (docs/stores.md, session 18).


def test_a_correction_over_rest_on_virtuoso_equals_the_embedded_one(started: Started) -> None:
    service = example_service(started)

    def post(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        answer = service.http.post(path, json=body, headers=service.auth("annie"))
        return answer.status_code, answer.json()

    on_virtuoso = correct(virtuoso_get(service), post)
    assert on_virtuoso["status"] == 201 and on_virtuoso["current"] is True and on_virtuoso["supersedes the current one"]
    assert on_virtuoso == started.embedded_correction


# ---------------------------------------------------------------------------------------------- 2


def test_a_50000_triple_graph_is_written_and_read_back_whole_with_its_digest(
    started: Started, service: ServiceProcess
) -> None:
    data = big_ontology("big")
    sent = graph_digest(parse(data, format=RdfFormat.N_TRIPLES))
    began = time.monotonic()
    written = put(service, "big", data)
    print(f"PUT of {BIG:,} triples: {time.monotonic() - began:.1f} s")
    assert written.status_code == 201, written.text
    assert written.json()["triples"] == BIG and written.json()["digest"] == sent

    read = service.http.get("/graphs/ontologies/big", headers={"Accept": "application/n-triples"})
    assert read.status_code == 200, read.text
    back = list(parse(read.content, format=RdfFormat.N_TRIPLES))
    print(f"PUT and GET of {BIG:,} triples: {time.monotonic() - began:.1f} s")
    assert len(back) == BIG
    listed = {
        g["graph"]: g for g in service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"]
    }
    entry = listed[BASE_URL + "graphs/ontologies/big"]
    assert (graph_digest(back), entry["digest"], entry["triples"]) == (sent, sent, BIG)


# ---------------------------------------------------------------------------------------------- 3


def journaled(store: RemoteStore) -> set[str]:
    """Graphs the catalog journals as being loaded (a staging graph is journaled before its first chunk)."""
    return {
        row["g"].value
        for row in store.select(
            "SELECT DISTINCT ?g WHERE { GRAPH ?catalog { ?g ?journal ?o } }",
            {"catalog": CATALOG_GRAPH, "journal": NamedNode(CATALOG + "loadInProgress")},
        )
    }


def leases(store: RemoteStore) -> list[datetime]:
    return [
        datetime.fromisoformat(row["lease"].value)
        for row in store.select(
            "SELECT ?lease WHERE { GRAPH ?catalog { ?g ?p ?lease } }",
            {"catalog": CATALOG_GRAPH, "p": NamedNode(CATALOG + "leaseUntil")},
        )
    ]


def test_kill_9_during_a_50000_triple_write_leaves_no_trace_after_a_restart(
    started: Started, service: ServiceProcess
) -> None:
    store, target = started.store, BASE_URL + "graphs/ontologies/dead"
    data = big_ontology("dead")
    catalog_before = set(store.graph_triples(CATALOG_GRAPH))
    with ThreadPoolExecutor(1) as pool:
        writing = pool.submit(put, service, "dead", data)
        caught = poll(
            lambda: journaled(store), "the write journals its staging graph or its load", seconds=60, every=0.05
        )
        service.kill()
        try:
            answer = writing.result(timeout=30)
            pytest.fail(f"the write finished before kill -9 ({answer.status_code}): it was caught too late: {caught}")
        except httpx.HTTPError:
            pass  # the connection died with the process
    # Reads name their graph (the catalog's journal, each staging graph): Virtuoso answers those at once after the
    # kill, where a scan of every graph may be refused for minutes (the module's notes).
    left = journaled(store)
    assert left, "kill -9 mid-write left nothing in flight: the poll saw a state the commit had already removed"
    poll(
        lambda: all(lease < datetime.now(UTC) for lease in leases(store)),
        "the killed write's lease lapses",
        seconds=LEASE_S + 30,
        every=0.2,
    )

    restarted_at = time.monotonic()
    restarted = start_plain(started, "the restart on Virtuoso failed")
    print(f"kill -9 caught {caught}; restarted and recovered in {time.monotonic() - restarted_at:.1f} s")

    traced = left | {target}
    assert journaled(store) == set()
    for graph in traced:
        assert not store.ask("ASK WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": NamedNode(graph)}), f"<{graph}> holds triples"
        about = store.select(
            "SELECT ?p ?o WHERE { GRAPH ?catalog { ?g ?p ?o } }", {"catalog": CATALOG_GRAPH, "g": NamedNode(graph)}
        )
        assert about == [], f"the catalog still says of <{graph}>: {about}"
    assert restarted.http.get("/graphs/ontologies/dead").status_code == 404
    assert set(store.graph_triples(CATALOG_GRAPH)) == catalog_before, "the catalog is not as it was before the write"
