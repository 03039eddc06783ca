"""``Idempotency-Key`` (issue 23 §8, docs/api.md): a replayed recording POST gets the first answer and records
nothing, over real HTTP on both backends, whichever replica answers and after a restart.

At 4c0fccf a determinations POST sent twice was stored twice. The determinations are counted by a SPARQL query
sent to ``/sparql``, as a user would count them.
"""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from service.api import create_app

from ..conftest import Service, dump, settings_for
from ..judgments.test_judgments_api import probes
from ..plan.test_second_domain_plan import ID
from ..runs.test_run_record import finished
from ..servers import app_server

MANUAL = """
    PREFIX earl: <http://www.w3.org/ns/earl#>
    PREFIX epo:  <https://w3id.org/ob-caie/epo/>
    SELECT (COUNT(DISTINCT ?determination) AS ?n) WHERE {
      GRAPH ?batch { ?determination a epo:Determination ; earl:mode earl:manual ; earl:assertedBy ?judge }
      FILTER(STRENDS(STR(?judge), ?who))
    }"""
RUNS = """
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    SELECT (COUNT(DISTINCT ?run) AS ?n) WHERE { GRAPH ?run { ?run a epo:Run } }"""
ONTOLOGY = b"@prefix owl: <http://www.w3.org/2002/07/owl#> .\n<https://example.org/o> a owl:Ontology .\n"
MORE = ONTOLOGY + b"<https://example.org/o> owl:versionInfo \"2\" .\n"
TRIPLES = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <http://caie.test/graphs/ontologies/o> { ?s ?p ?o } }"
RECORDS = (
    "SELECT (COUNT(DISTINCT ?r) AS ?n) WHERE { GRAPH ?r { ?r a <https://w3id.org/ob-caie/catalog/IdempotencyRecord> } }"
)


def count(http: httpx.Client, query: str, **values: str) -> int:
    """The one number a counting query answers, asked over ``/sparql`` (``values``: string literals substituted)."""
    for name, value in values.items():
        query = query.replace(f"?{name}", json.dumps(value))
    answer = http.get("/sparql", params={"query": query}, headers={"Accept": "application/sparql-results+json"})
    assert answer.status_code == 200, answer.text
    return int(answer.json()["results"]["bindings"][0]["n"]["value"])


def keyed(service: Service, agent: str, key: str) -> dict[str, str]:
    return {**service.auth(agent), "Idempotency-Key": key}


def test_a_replayed_determination_is_stored_once_and_gets_the_first_answer(judged: Service) -> None:
    url = f"/evaluations/{ID}/runs/1/determinations"
    probe = probes(judged, "hanging")[0]["probe"]
    body = {
        "determinations": [
            {
                "probe": probe,
                "criterion": "hanging",
                "outcome": "failed",
                "rationale": "says nothing about tying the net up",
            }
        ]
    }
    key = str(uuid.uuid4())
    annie = count(judged.http, MANUAL, who="/annie")

    first = judged.http.post(url, json=body, headers=keyed(judged, "annie", key))
    assert first.status_code == 201, first.text
    assert "Idempotency-Replayed" not in first.headers
    again = judged.http.post(url, json=body, headers=keyed(judged, "annie", key))
    assert (again.status_code, again.json(), again.headers["Idempotency-Replayed"]) == (201, first.json(), "true")
    assert again.headers["Content-Type"] == first.headers["Content-Type"]
    assert count(judged.http, MANUAL, who="/annie") == annie + 1

    # another replica over the same store (a fresh app) replays it too
    with (
        app_server(create_app(settings_for(judged.tokens), judged.store)) as other,
        httpx.Client(base_url=other) as http,
    ):
        replica = http.post(url, json=body, headers=keyed(judged, "annie", key))
    assert (replica.status_code, replica.json(), replica.headers["Idempotency-Replayed"]) == (201, first.json(), "true")

    # the same key with another body: 422 naming the key, nothing stored
    before = len(dump(judged.store))
    other_body = {"determinations": [{**body["determinations"][0], "outcome": "passed"}]}
    refused = judged.http.post(url, json=other_body, headers=keyed(judged, "annie", key))
    assert refused.status_code == 422, refused.text
    assert refused.headers["Content-Type"] == "application/problem+json" and key in refused.json()["detail"]
    assert len(dump(judged.store)) == before
    assert count(judged.http, MANUAL, who="/annie") == annie + 1

    # the same key from another agent is that agent's own
    nora = count(judged.http, MANUAL, who="/nora")
    theirs = judged.http.post(url, json=body, headers=keyed(judged, "nora", key))
    assert theirs.status_code == 201 and "Idempotency-Replayed" not in theirs.headers, theirs.text
    assert count(judged.http, MANUAL, who="/nora") == nora + 1

    # without a key, nothing changes: each POST records
    for _ in range(2):
        plain = judged.http.post(url, json=body, headers=judged.auth("annie"))
        assert plain.status_code == 201 and "Idempotency-Replayed" not in plain.headers, plain.text
    assert count(judged.http, MANUAL, who="/annie") == annie + 3


def test_an_error_is_not_remembered_so_the_fixed_request_records(judged: Service) -> None:
    url = f"/evaluations/{ID}/runs/1/determinations"
    probe = probes(judged, "hanging")[0]["probe"]
    good = {"probe": probe, "criterion": "hanging", "outcome": "failed", "rationale": "no tying"}
    key = str(uuid.uuid4())
    annie = count(judged.http, MANUAL, who="/annie")
    wrong = judged.http.post(
        url, json={"determinations": [{**good, "outcome": "maybe"}]}, headers=keyed(judged, "annie", key)
    )
    assert wrong.status_code == 422 and "outcome" in wrong.text, wrong.text
    assert (
        judged.http.post(url, json={"determinations": [good]}, headers=keyed(judged, "annie", "not a key")).status_code
        == 400
    )  # a space is not in a key
    fixed = judged.http.post(url, json={"determinations": [good]}, headers=keyed(judged, "annie", key))
    assert fixed.status_code == 201 and "Idempotency-Replayed" not in fixed.headers, fixed.text
    assert count(judged.http, MANUAL, who="/annie") == annie + 1


def test_requests_with_one_key_at_the_same_moment_record_once(judged: Service) -> None:
    url = f"/evaluations/{ID}/runs/1/determinations"
    probe = probes(judged, "where")[0]["probe"]
    body = {"determinations": [{"probe": probe, "criterion": "where", "outcome": "passed", "rationale": "names it"}]}
    headers = keyed(judged, "annie", str(uuid.uuid4()))
    annie = count(judged.http, MANUAL, who="/annie")
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: judged.http.post(url, json=body, headers=headers), range(4)))
    firsts = [a for a in answers if a.status_code == 201 and "Idempotency-Replayed" not in a.headers]
    assert len(firsts) == 1, [(a.status_code, a.text) for a in answers]
    for answer in answers:
        if answer.status_code == 409:  # the first was still running: said so, by name
            assert "in progress" in answer.json()["detail"], answer.text
        elif answer is not firsts[0]:
            assert (answer.status_code, answer.json()) == (201, firsts[0].json()), answer.text
    assert count(judged.http, MANUAL, who="/annie") == annie + 1


def test_a_replayed_run_start_starts_no_run(judged: Service) -> None:
    headers = keyed(judged, "theo", str(uuid.uuid4()))
    runs = count(judged.http, RUNS)
    body = {"plan": 1, "target": {"kind": "demo"}}
    started = judged.http.post(f"/evaluations/{ID}/runs", json=body, headers=headers)
    assert started.status_code == 202, started.text
    finished(judged, runs + 1)
    again = judged.http.post(f"/evaluations/{ID}/runs", json=body, headers=headers)
    assert (again.status_code, again.json(), again.headers["Idempotency-Replayed"]) == (202, started.json(), "true")
    assert count(judged.http, RUNS) == runs + 1
    assert judged.http.get(f"/evaluations/{ID}/runs/{runs + 2}").status_code == 404


def test_a_replay_after_a_restart_on_the_same_data_dir_gets_the_first_answer(
    tokens: dict[str, str], tmp_path: Path
) -> None:
    settings = settings_for(tokens, data_dir=tmp_path / "data")
    headers = {"Authorization": f"Bearer {tokens['admin']}", "Content-Type": "text/turtle", "Idempotency-Key": "k-1"}
    answers = []
    for _ in range(2):  # the service, then the service restarted on its data directory
        app = create_app(settings)
        try:
            with app_server(app) as url, httpx.Client(base_url=url) as http:
                answers.append(http.post("/graphs/ontologies/o", content=ONTOLOGY, headers=headers))
        finally:
            app.state.services.close()
    first, again = answers
    assert first.status_code == 201 and "Idempotency-Replayed" not in first.headers, first.text
    assert (again.status_code, again.json(), again.headers["Idempotency-Replayed"]) == (201, first.json(), "true")
    assert again.headers["Location"] == first.headers["Location"]


@pytest.mark.parametrize("store", ["embedded", "virtuoso"], indirect=True)  # Virtuoso: its dateTime comparison
def test_a_key_past_its_ttl_is_forgotten_and_purged(service: Service) -> None:
    app = create_app(settings_for(service.tokens, idempotency_ttl_s=0.001), service.store)
    admin = {**service.auth("admin"), "Content-Type": "text/turtle"}
    with app_server(app) as url, httpx.Client(base_url=url) as http:
        # expired at once: the second is a new request (another body or not), the third purges the first's record
        for body, key in ((ONTOLOGY, "k-1"), (MORE, "k-1"), (MORE, "k-2")):
            answer = http.post("/graphs/ontologies/o", content=body, headers={**admin, "Idempotency-Key": key})
            assert answer.status_code in (200, 201) and "Idempotency-Replayed" not in answer.headers, answer.text
        assert count(http, TRIPLES) == 2
        assert count(http, RECORDS) == 1  # k-2's


@pytest.mark.parametrize("store", ["embedded", "remote", "virtuoso"], indirect=True)
def test_a_replay_is_the_first_answer_byte_for_byte_on_every_engine(service: Service) -> None:
    headers = {**service.auth("admin"), "Content-Type": "text/turtle", "Idempotency-Key": "k-1"}
    title = {"title": "Moustiquaires – Ghana \"2\" \\ ✓"}  # non-ASCII, quotes, a backslash: kept as sent
    first = service.http.post("/graphs/ontologies/o", content=ONTOLOGY, headers=headers, params=title)
    again = service.http.post("/graphs/ontologies/o", content=ONTOLOGY, headers=headers, params=title)
    assert first.status_code == 201 and first.json()["title"] == title["title"], first.text
    assert (again.status_code, again.content, again.headers["Idempotency-Replayed"]) == (201, first.content, "true")
    # the query string is part of the request: the same key with another title is another request
    other = service.http.post("/graphs/ontologies/o", content=ONTOLOGY, headers=headers, params={"title": "other"})
    assert other.status_code == 422 and "k-1" in other.json()["detail"], other.text
