"""Issue 23 §2 and §5: each route's body limit, queries nested too deep, and a query worker's crash, over real HTTP.

A 200 MB query body (declared, and chunked without a length) is refused with 413 after at most its limit is
read, while /health and another client's lookup answer; 3,000 nested braces are 400 by GET and POST, and through
a fast-lane front, whose other connections stay open; a JSON body over its limit is 413; a query that crashes
its worker (the same 3,000 braces with the nesting check set out of the way) is a 500 naming the crash.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from pyoxigraph import Quad

from service.api import create_app
from service.core.config import Settings

from ..conftest import EMBEDDED_ONLY, Service, restored, settings_for
from ..servers import AppSlot
from .test_fastlane import Connection, Served, alive, sparql, start, stop
from .test_fastlane import load as load_lane
from .test_protection import JSON, LOOKUP, load

MB = 1024 * 1024
ATTACK_BYTES = 200 * 1000 * 1000
DEEP = "SELECT * WHERE " + "{" * 3000 + " ?s ?p ?o " + "}" * 3000
MODERATE = "SELECT ?o WHERE " + "{" * 20 + " <http://example.org/s7> <http://example.org/p> ?o " + "}" * 20
QUERY = {"Content-Type": "application/sparql-query"}


def problem(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, object] = response.json()
    return body


@pytest.fixture
def data(
    service: Service, snapshots: dict[tuple[str, str], list[Quad]], app_slot: tuple[AppSlot, str]
) -> Iterator[Service]:
    """The service with the default body limits (1 MiB a query, 16 MiB JSON, 512 MiB a file), holding one graph
    of 1,000 triples."""
    slot, _ = app_slot
    loaded = restored(service, snapshots, "protection", load)
    settings = settings_for(service.tokens, max_body_bytes=Settings.model_fields["max_body_bytes"].default)
    with slot.serving(create_app(settings, loaded.store)):
        yield loaded


class Held:
    """A 200 MB body that does not exist: 64 KiB chunks made lazily, the stream held after its first chunk until
    ``release`` is set, so the test can ask the service for other things while the upload is under way."""

    def __init__(self) -> None:
        self.sent = 0
        self.started = threading.Event()
        self.release = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        chunk = b"#" * 65536
        while self.sent < ATTACK_BYTES:
            if self.sent == len(chunk):
                self.started.set()
                self.release.wait(30)
            part = chunk[: ATTACK_BYTES - self.sent]
            self.sent += len(part)
            yield part


@EMBEDDED_ONLY
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_200_mb_query_body_is_refused_while_health_and_lookups_answer(data: Service, declared: bool) -> None:
    body = Held()
    headers = {**QUERY, **({"Content-Length": str(ATTACK_BYTES)} if declared else {})}
    with ThreadPoolExecutor(1) as pool:
        upload = pool.submit(httpx.post, f"{data.url}/sparql", content=body, headers=headers, timeout=60)
        assert body.started.wait(30), "the upload did not start"
        try:
            health = httpx.get(f"{data.url}/health", timeout=1.0)  # the bound: /health within 1 s
            lookup = httpx.get(f"{data.url}/sparql", params={"query": LOOKUP}, headers=JSON, timeout=30)
        finally:
            body.release.set()
        refused = upload.result()
    assert health.status_code == 200
    assert lookup.status_code == 200 and lookup.json()["results"]["bindings"][0]["o"]["value"] == "v7"
    detail = problem(refused, 413)["detail"]
    assert "CAIE_QUERY_MAX_BODY_BYTES" in str(detail) and f"{MB:,}" in str(detail)
    assert body.sent < ATTACK_BYTES / 10, "the service read the body far past its limit"


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_query_nested_3000_deep_is_refused_before_it_is_parsed(data: Service, method: str) -> None:
    if method == "GET":
        response = data.http.get("/sparql", params={"query": DEEP}, headers=JSON)
    else:
        response = data.http.post("/sparql", content=DEEP, headers={**QUERY, **JSON})
    detail = str(problem(response, 400)["detail"])
    assert "CAIE_QUERY_MAX_NESTING" in detail and "128" in detail
    # the service is whole: the same query nested 20 deep answers
    moderate = data.http.get("/sparql", params={"query": MODERATE}, headers=JSON)
    assert moderate.status_code == 200, moderate.text
    assert moderate.json()["results"]["bindings"][0]["o"]["value"] == "v7"


def test_nesting_inside_strings_iris_and_comments_does_not_count(data: Service) -> None:
    hidden = "{" * 200 + "(" * 200
    query = (
        f'SELECT ?o WHERE {{ # {hidden}\n <http://example.org/s7> <http://example.org/p> ?o '
        f'FILTER(?o != "{hidden}" && ?o != """{hidden}""") }}'
    )
    response = data.http.post("/sparql", content=query, headers={**QUERY, **JSON})
    assert response.status_code == 200, response.text
    assert response.json()["results"]["bindings"][0]["o"]["value"] == "v7"


@pytest.fixture
def small_bodies(service: Service, app_slot: tuple[AppSlot, str]) -> Iterator[Service]:
    """The service with small body limits: 10 kB a query, 20 kB JSON, 2 MB a file."""
    slot, _ = app_slot
    settings = settings_for(service.tokens, query_max_body_bytes=10_000, json_max_body_bytes=20_000)
    with slot.serving(create_app(settings, service.store)):
        yield service


def evaluation(padding: int) -> bytes:
    return (
        b'{"id": "padded", "title": "' + b"x" * padding + b'", "description": "d", "useCase": "u", '
        b'"targetSystem": "t", "organization": "o"}'
    )


@EMBEDDED_ONLY
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_json_body_over_its_limit_is_413_and_nothing_is_recorded(small_bodies: Service, declared: bool) -> None:
    payload = evaluation(30_000)
    content = payload if declared else iter([payload[i : i + 4096] for i in range(0, len(payload), 4096)])
    response = small_bodies.http.post(
        "/evaluations", content=content, headers={"Content-Type": "application/json", **small_bodies.auth()}
    )
    detail = str(problem(response, 413)["detail"])
    assert "CAIE_JSON_MAX_BODY_BYTES" in detail and "20,000" in detail
    assert small_bodies.http.get("/evaluations/padded", headers=small_bodies.auth()).status_code == 404


@EMBEDDED_ONLY
def test_each_route_has_its_own_limit(small_bodies: Service) -> None:
    """A 15 kB query is over the query limit; a 50 kB graph upload, over the query and JSON limits, is a file."""
    query = "ASK {} " + "#" * 15_000
    assert "CAIE_QUERY_MAX_BODY_BYTES" in str(
        problem(small_bodies.http.post("/sparql", content=query, headers=QUERY), 413)["detail"]
    )
    form = small_bodies.http.post("/sparql", data={"query": query})
    assert "CAIE_QUERY_MAX_BODY_BYTES" in str(problem(form, 413)["detail"])
    triples = "".join(
        f'<http://example.org/s{i}> <http://example.org/p> "a value long enough {i}" .\n' for i in range(800)
    )
    graph = (
        "<http://example.org/g> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
        "<http://www.w3.org/2002/07/owl#Ontology> .\n" + triples
    ).encode()
    assert len(graph) > 50_000
    put = small_bodies.http.put(
        "/graphs/ontologies/wide",
        content=graph,
        headers={"Content-Type": "application/n-triples", **small_bodies.auth()},
    )
    assert put.status_code == 201, put.text


@pytest.fixture
def unchecked(data: Service, app_slot: tuple[AppSlot, str]) -> Iterator[Service]:
    """The service with the nesting check set out of the way, so a deep query reaches a query worker's parser."""
    slot, _ = app_slot
    settings = settings_for(data.tokens, query_max_nesting=1_000_000)
    with slot.serving(create_app(settings, data.store)):
        yield data


@EMBEDDED_ONLY
def test_a_crashed_query_worker_is_reported_as_a_crash(unchecked: Service) -> None:
    """3,000 nested braces overflow the parser's stack in the worker (SIGSEGV): a crash, no memory limit."""
    body = problem(unchecked.http.post("/sparql", content=DEEP, headers={**QUERY, **JSON}), 500)
    assert body["title"] == "QueryWorkerCrashed"
    assert "crashed" in str(body["detail"]) and "SIGSEGV" in str(body["detail"])
    assert "limit" not in body and "memory" not in str(body["detail"]).lower()
    lookup = unchecked.http.get("/sparql", params={"query": LOOKUP}, headers=JSON)
    assert lookup.status_code == 200 and lookup.json()["results"]["bindings"][0]["o"]["value"] == "v7"


def one_front(served: Served) -> None:
    """Wait for the front forked after the write (the main process forks it lazily, and it answers a probe first)."""
    deadline = time.monotonic() + 10
    while not served.fronts() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)


@pytest.fixture(scope="module")
def lane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``caie serve`` with one fast-lane front, on the embedded store holding 1,000 triples."""
    served = start(tmp_path_factory.mktemp("limits") / "lane", CAIE_FAST_LANE_PROCESSES="1")
    try:
        load_lane(served)
        yield served
    finally:
        stop(served)


def test_a_deep_query_through_the_fast_lane_drops_no_other_connection(lane: Served) -> None:
    """One front: the other client's keep-alive connection and the deep query are both on it. Before the check,
    the front's parser overflowed its stack and the front died with the other client's connection."""
    one_front(lane)
    other, attacker = Connection(lane), Connection(lane)
    try:
        assert other.send("GET", sparql(LOOKUP), JSON).startswith(b"HTTP/1.1 200")
        front = other.holder()
        assert front is not None and front != lane.process.pid, "the lookup was not answered by a front"
        refused = attacker.send("GET", sparql(DEEP), JSON)
        assert refused.startswith(b"HTTP/1.1 400") and b"CAIE_QUERY_MAX_NESTING" in refused
        again = other.send("GET", sparql(LOOKUP), JSON)
        assert again.startswith(b"HTTP/1.1 200") and b'"v7"' in again
        assert alive(front)
    finally:
        other.close()
        attacker.close()


def test_a_200_mb_url_is_refused_while_health_and_lookups_answer(lane: Served) -> None:
    """The front hands the long head to the main process, which stops reading it at the query's limit: 414."""
    attacker = socket.create_connection(("127.0.0.1", lane.port), timeout=30)
    sent = 0
    try:
        attacker.sendall(b"GET /sparql?query=ASK%7B%7D%23")
        chunk = b"a" * 65536
        health = None
        try:
            while sent < ATTACK_BYTES:
                attacker.sendall(chunk)
                sent += len(chunk)
                if health is None and sent >= MB // 2:  # under way, not yet at the limit
                    health = httpx.get(f"{lane.url}/health", timeout=1.0)
                    lookup = httpx.get(f"{lane.url}/sparql", params={"query": LOOKUP}, headers=JSON, timeout=30)
        except OSError:  # the service closed the connection: what it answered is in the socket
            pass
        answer = b""
        while part := attacker.recv(65536):
            answer += part
    finally:
        attacker.close()
    assert health is not None and health.status_code == 200
    assert lookup.status_code == 200 and lookup.json()["results"]["bindings"][0]["o"]["value"] == "v7"
    assert answer.startswith(b"HTTP/1.1 414"), answer[:200]
    assert b"application/problem+json" in answer and b"CAIE_QUERY_MAX_BODY_BYTES" in answer
    assert sent < ATTACK_BYTES / 10, "the service read the URL far past its limit"
