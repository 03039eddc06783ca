"""Every attack of issue 23, replayed against a live ``caie serve`` (``make test-hostile``, outside ``make test``).

One service for the module, on an on-disk copy of the worked example, with two fast-lane fronts, a run-target
allow-list naming one local port and a key allow-list naming one variable; a secret (``SECRET_PW``) is planted in
its environment. Each attack runs :func:`.live.watched`: /health answers within 1 s throughout, another client's
lookup succeeds, and the main process's memory comes back within 200 MB. Each answer is problem details with the
status the issue asks for, and nothing is stored.
"""

from __future__ import annotations

import json
import secrets
import socket
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

import httpx
import pytest
from pyoxigraph import Quad

from ..test_cli import data_dir_with_worked_example
from .live import Live, Trap, raw_post, start, stop, watched

pytestmark = pytest.mark.hostile

PROBLEM = "application/problem+json"
SECRET = secrets.token_hex(16)
KEY_ENV = "CAIE_HOSTILE_KEY"
GRAPHS = "SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"


@pytest.fixture(scope="module")
def traps() -> Iterator[tuple[Trap, Trap]]:
    """The allow-listed target's port, and another one nothing may reach."""
    allowed, elsewhere = Trap(), Trap()
    yield allowed, elsewhere
    allowed.close()
    elsewhere.close()


@pytest.fixture(scope="module")
def live(
    tmp_path_factory: pytest.TempPathFactory,
    tokens: dict[str, str],
    worked_example_quads: list[Quad],
    traps: tuple[Trap, Trap],
) -> Iterator[Live]:
    data = data_dir_with_worked_example(tmp_path_factory.mktemp("hostile") / "data", worked_example_quads)
    allowed, _ = traps
    served = start(
        data,
        tokens,
        CAIE_RUN_TARGET_ALLOWLIST=json.dumps([f"http://127.0.0.1:{allowed.port}"]),
        CAIE_KEY_ENVS=json.dumps([KEY_ENV]),
        SECRET_PW=SECRET,
        **{KEY_ENV: "not-a-secret"},
    )
    try:
        yield served
    finally:
        stop(served)


def is_problem(response: httpx.Response, *statuses: int) -> bool:
    return (
        response.status_code in statuses
        and response.headers.get("content-type") == PROBLEM
        and response.json().get("status") == response.status_code
    )


def count(live: Live, query: str) -> int:
    answer = httpx.get(
        live.url + "/sparql", params={"query": query}, timeout=60, headers={"Accept": "application/sparql-results+json"}
    )
    assert answer.status_code == 200, answer.text
    return int(answer.json()["results"]["bindings"][0]["n"]["value"])


def put_graph(live: Live, name: str, body: bytes, media: str, timeout: float = 300) -> httpx.Response:
    return httpx.put(
        f"{live.url}/graphs/ontologies/{name}",
        content=body,
        timeout=timeout,
        headers={**live.auth(), "Content-Type": media},
    )


def nested_blank_nodes(depth: int) -> bytes:
    return b"<http://x/s> <http://x/p> " + b"[ <http://x/p> " * depth + b"<http://x/o>" + b" ]" * depth + b" .\n"


# ------------------------------------------------------------------------------------------ §1 deep blank nodes


@pytest.mark.parametrize("depth", [20_000, 2_000])
def test_blank_nodes_nested_deep_are_413_and_the_service_stays_up(live: Live, depth: int) -> None:
    before = count(live, GRAPHS)
    with watched(live):
        answer = put_graph(live, f"deep{depth}", nested_blank_nodes(depth), "text/turtle")
    assert is_problem(answer, 413), answer.text
    assert live.process.poll() is None
    assert count(live, GRAPHS) == before


# ------------------------------------------------------------------------------------------ §2 a big query body


def test_200_mb_query_bodies_are_413_at_the_edge(live: Live) -> None:
    with watched(live), ThreadPoolExecutor(4) as pool:
        declared = [pool.submit(raw_post, live, "/sparql", 200 << 20, "application/sparql-query") for _ in range(3)]
        streamed = pool.submit(raw_post, live, "/sparql", 200 << 20, "application/sparql-query", chunked=True)
        answers = [future.result() for future in [*declared, streamed]]
    for status, body in answers:
        assert status == 413, body[:300]
        assert json.loads(body)["status"] == 413


# ------------------------------------------------------------------------------------------ §3 billion laughs

LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol0 "lol">\n'
    + "".join(f' <!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">\n' for n in range(1, 10))
    + ']>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://x/">'
    '<rdf:Description rdf:about="http://x/s"><ex:p>&lol9;</ex:p></rdf:Description></rdf:RDF>'
).encode()


@pytest.mark.parametrize("target", ["graph", "import", "scope"])
def test_nine_levels_of_entities_are_refused_on_every_path(live: Live, target: str) -> None:
    headers = {**live.auth(), "Content-Type": "application/rdf+xml"}
    before = count(live, GRAPHS)
    with watched(live):
        if target == "graph":
            answer = put_graph(live, "laughs", LAUGHS, "application/rdf+xml")
        elif target == "import":
            answer = httpx.post(
                f"{live.url}/evaluations/imports?id=laughs", content=LAUGHS, headers=headers, timeout=300
            )
        else:
            answer = httpx.put(f"{live.url}/evaluations/laughs", content=LAUGHS, headers=headers, timeout=300)
    assert is_problem(answer, 400, 413), answer.text
    assert "entit" in answer.json()["detail"].lower() or "DOCTYPE" in answer.json()["detail"]
    assert count(live, GRAPHS) == before


# ------------------------------------------------------------------------------------------ §4 outbound calls


def run_body(base_url: str, **target: str) -> dict[str, object]:
    return {
        "plan": 1,
        "target": {"kind": "openai-compatible", "baseUrl": base_url, "model": "m", **target},
        "settings": {"timeoutSeconds": 2, "retries": 0},
    }


def test_a_target_url_with_user_info_is_422_and_nothing_is_sent(live: Live, traps: tuple[Trap, Trap]) -> None:
    allowed, elsewhere = traps
    runs = len(httpx.get(f"{live.url}/evaluations/measles/runs", timeout=60).json()["runs"])
    url = f"http://127.0.0.1:{allowed.port}@127.0.0.1:{elsewhere.port}/v1"
    with watched(live):
        answer = httpx.post(
            f"{live.url}/evaluations/measles/runs", json=run_body(url), headers=live.auth("theo"), timeout=60
        )
        time.sleep(2)  # a run started anyway would be calling by now
    assert is_problem(answer, 422), answer.text
    assert not elsewhere.received and not allowed.received
    assert len(httpx.get(f"{live.url}/evaluations/measles/runs", timeout=60).json()["runs"]) == runs


def test_an_unlisted_api_key_env_is_422_and_the_secret_never_leaves(live: Live, traps: tuple[Trap, Trap]) -> None:
    allowed, _ = traps
    target = f"http://127.0.0.1:{allowed.port}/v1"
    with watched(live):
        run = httpx.post(
            f"{live.url}/evaluations/measles/runs",
            json=run_body(target, apiKeyEnv="SECRET_PW"),
            headers=live.auth("theo"),
            timeout=60,
        )
        judge = httpx.post(
            f"{live.url}/evaluations/measles/runs/1/model-judgments",
            timeout=60,
            json={"target": run_body(target, apiKeyEnv="SECRET_PW")["target"], "criteria": ["c1"]},
            headers=live.auth("theo"),
        )
        time.sleep(2)
    assert is_problem(run, 422) and "SECRET_PW" in run.json()["detail"], run.text
    assert is_problem(judge, 422) and "SECRET_PW" in judge.json()["detail"], judge.text
    assert not any(SECRET.encode() in sent for sent in allowed.received)


# ------------------------------------------------------------------------------------------ §5 deeply nested queries

BRACES = "SELECT * WHERE " + "{" * 3_000 + " ?s ?p ?o " + "}" * 3_000


def test_3000_braces_are_400_before_parsing_and_other_connections_survive(live: Live) -> None:
    other = socket.create_connection(("127.0.0.1", live.port), timeout=30)  # another client's, kept alive
    lookup = (
        f"GET /sparql?query={quote('ASK {}')} HTTP/1.1\r\nHost: other\r\n"
        "Accept: application/sparql-results+json\r\n\r\n"
    ).encode()

    def ask() -> bytes:
        other.sendall(lookup)
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            part = other.recv(65536)
            assert part, "the other client's connection was dropped"
            answer += part
        return answer

    assert ask().startswith(b"HTTP/1.1 200")
    with watched(live):
        by_get = httpx.get(f"{live.url}/sparql", params={"query": BRACES}, timeout=60)
        by_post = httpx.post(
            f"{live.url}/sparql", content=BRACES, timeout=60, headers={"Content-Type": "application/sparql-query"}
        )
    assert is_problem(by_get, 400) and "CAIE_QUERY_MAX_NESTING" in by_get.json()["detail"], by_get.text
    assert is_problem(by_post, 400), by_post.text
    assert ask().startswith(b"HTTP/1.1 200")
    other.close()


# ------------------------------------------------------------------------------------------ §6 a 17 MB literal


@pytest.mark.parametrize("media", ["text/turtle", "application/n-triples"])
def test_a_17_mb_literal_is_413(live: Live, media: str) -> None:
    body = b'<http://x/s> <http://x/p> "' + b"a" * (17 << 20) + b'" .\n'
    before = count(live, GRAPHS)
    with watched(live):
        answer = put_graph(live, "literal", body, media)
    assert is_problem(answer, 413), answer.text[:500]
    assert count(live, GRAPHS) == before


# ------------------------------------------------------------------------------------------ §7 another's attestation


def first_probe(live: Live) -> dict[str, str]:
    probes = httpx.get(f"{live.url}/evaluations/measles/plans/1/probes", params={"limit": 1}, timeout=60)
    assert probes.status_code == 200, probes.text
    return probes.json()["items"][0]


def test_another_experts_supersession_is_403_and_nothing_is_stored(live: Live) -> None:
    criterion = first_probe(live)["criterion"]
    url = f"{live.url}/evaluations/measles/runs/1/attestations"
    mine = {
        "criterion": criterion,
        "outcome": "cantTell",
        "rationale": "too few replies to judge",
        "sufficiency": "insufficient",
        "appropriateness": "appropriate",
    }
    made = httpx.post(url, json=mine, headers=live.auth("annie"), timeout=60)
    if made.status_code == 409:  # annie attested it already: hers is the current one
        listed = httpx.get(f"{live.url}/evaluations/measles/attestations", timeout=60).json()["attestations"]
        attestation = next(a["attestation"] for a in listed if a["current"] and a["criterion"].endswith(criterion))
    else:
        assert made.status_code == 201, made.text
        attestation = made.json()["attestation"]
    count_before = len(httpx.get(f"{live.url}/evaluations/measles/attestations", timeout=60).json()["attestations"])
    with watched(live):
        answer = httpx.post(
            url,
            headers=live.auth("erin"),
            timeout=60,
            json={
                **mine,
                "rationale": "I read them otherwise",
                "supersedes": attestation,
                "reason": "a second reading",
            },
        )
    assert is_problem(answer, 403), answer.text
    listed = httpx.get(f"{live.url}/evaluations/measles/attestations", timeout=60).json()["attestations"]
    assert len(listed) == count_before


# ------------------------------------------------------------------------------------------ §8 a replayed POST

MANUAL = """PREFIX earl: <http://www.w3.org/ns/earl#>
SELECT (COUNT(DISTINCT ?d) AS ?n) WHERE { GRAPH ?b { ?d earl:mode earl:manual ; earl:assertedBy ?who }
FILTER(STRENDS(STR(?who), "/annie")) }"""


def test_a_replayed_post_with_an_idempotency_key_returns_the_first_answer_and_stores_once(live: Live) -> None:
    probe = first_probe(live)
    url = f"{live.url}/evaluations/measles/runs/1/determinations"
    body = {
        "determinations": [
            {
                "probe": probe["probe"],
                "criterion": probe["criterion"],
                "outcome": "failed",
                "rationale": "the reply gives no source",
            }
        ]
    }
    headers = {**live.auth("annie"), "Idempotency-Key": str(uuid.uuid4())}
    before = count(live, MANUAL)
    with watched(live), ThreadPoolExecutor(4) as pool:
        first = httpx.post(url, json=body, headers=headers, timeout=60)
        replays = list(pool.map(lambda _: httpx.post(url, json=body, headers=headers, timeout=60), range(8)))
        changed = httpx.post(
            url,
            json={"determinations": [{**body["determinations"][0], "outcome": "passed"}]},
            headers=headers,
            timeout=60,
        )
    assert first.status_code == 201, first.text
    assert all((r.status_code, r.json()) == (201, first.json()) for r in replays), [r.text for r in replays]
    assert is_problem(changed, 422), changed.text
    assert count(live, MANUAL) == before + 1


# ------------------------------------------------------------------------------------------ and still there


def test_the_service_is_still_whole_after_every_attack(live: Live) -> None:
    assert live.process.poll() is None
    assert httpx.get(f"{live.url}/health", timeout=5).json()["status"] == "ok"
    assert (
        httpx.get(f"{live.url}/evaluations/measles", timeout=60, headers={"Accept": "application/json"}).status_code
        == 200
    )
