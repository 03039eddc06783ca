"""Step 4 in the record, over real HTTP: a run of an approved plan (the bed-nets test domain's 6 probes:
the run's mechanics do not depend on the domain, and its plan is the cheapest to make) against the
demonstration chatbot records one case per probe (conversation, turns, responses, trace, the target's
fingerprint), read back with the published queries; continuing it records nothing twice; and every bad start
is refused by name with nothing stored. Then the same through ``caie run`` as a process on an on-disk store,
killed with ``kill -9`` mid-run against a slow target and started again: it resumes, and no probe is
recorded twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import rdflib
from caie_vaccine.demo import DEMO_RELEASE, DEMO_VERSION
from pyoxigraph import NamedNode

from service.core.config import Credential
from service.core.errors import Conflict, Unprocessable
from service.core.store import EmbeddedStore
from service.runs.cases import record_cases
from service.runs.model import CaseTrace, Exchange, ExecutionSettings, Turn
from service.runs.records import run_view, start_run
from service.runs.runner import continue_run
from service.runs.targets import MissingCredential, OpenAICompatible

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, dump, graphs_over, restore
from ..plan.test_pinned_inputs import select
from ..plan.test_second_domain_plan import ID

pytestmark = EMBEDDED_ONLY
OPERATOR = "theo"
DEMO = {"kind": "demo"}


def approve(service: Service) -> None:
    approved = service.http.post(f"/evaluations/{ID}/plans/1/approval", json={}, headers=service.auth("annie"))
    assert approved.status_code == 201, approved.text


PROBES = 6


def finished(service: Service, number: int, traces: int | None = None) -> dict:
    """Run ``number`` once the job this service started for it has finished (polled: the job runs in the
    background); a failed job, or one that ended with other than ``traces`` traces, fails the test saying what the
    job and the run record hold."""
    deadline = time.monotonic() + 300  # generous: a busy two-core machine runs the demo slowly
    while time.monotonic() < deadline:
        run = service.http.get(f"/evaluations/{ID}/runs/{number}").json()
        job = run["job"]
        assert job is not None, f"run {number} has no job in this service, though it was started here: {run}"
        if job["state"] == "finished":
            assert traces is None or run["traces"] == traces, (
                f"run {number}'s job finished with {run['traces']} traces, not {traces}: {run}; the record's runs: "
                f"{service.http.get(f'/evaluations/{ID}/runs').text[:3000]}"
            )
            return run
        assert job["state"] == "running", f"run {number}'s job failed: {job}"
        time.sleep(0.05)
    raise AssertionError(f"run {number} still running: {run}")


CASES = f"""
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    PREFIX prov: <http://www.w3.org/ns/prov#>
    SELECT ?probe (COUNT(DISTINCT ?case) AS ?cases) (SAMPLE(?text) AS ?reply) (SAMPLE(?fingerprint) AS ?target)
           (SAMPLE(?input) AS ?sent) WHERE {{
      GRAPH ?case {{ ?case epo:inRun <{BASE_URL}evaluations/{ID}/runs/1> ; epo:realizesProbe ?probe .
                    ?turn epo:inConversation ?case ; epo:inputText ?input .
                    ?response prov:wasGeneratedBy ?turn ; epo:responseText ?text .
                    ?trace epo:traceOf ?case ; epo:targetFingerprint ?fingerprint }}
    }} GROUP BY ?probe"""


def test_a_run_records_every_probe_once_and_continuing_it_adds_nothing(approved: Service) -> None:
    started = approved.http.post(
        f"/evaluations/{ID}/runs", json={"plan": 1, "target": DEMO}, headers=approved.auth(OPERATOR)
    )
    assert started.status_code == 202, started.text
    assert started.headers["Location"] == f"/evaluations/{ID}/runs/1"
    run = finished(approved, 1)
    assert run["job"]["state"] == "finished", run
    assert (run["probes"], run["cases"], run["traces"], run["executionErrors"], run["done"]) == (
        PROBES,
        PROBES,
        PROBES,
        0,
        True,
    )
    assert run["targetFingerprint"] == DEMO_VERSION.fingerprint and run["targetConfiguration"]["adapter"] == "demo"
    probes = approved.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    cases = {row["probe"]: row for row in select(approved, CASES)}
    assert cases.keys() == {p["probe"] for p in probes}
    for probe in probes:
        case = cases[probe["probe"]]
        assert case["cases"] == "1" and case["sent"] == probe["openingPrompt"] and case["reply"].strip()
        assert case["target"] == DEMO_VERSION.fingerprint
    listed = approved.http.get(f"/evaluations/{ID}/runs").json()["runs"]
    assert [r["number"] for r in listed] == [1] and listed[0]["cases"] == PROBES

    again = approved.http.post(
        f"/evaluations/{ID}/runs/1/continuation", json={"target": DEMO}, headers=approved.auth(OPERATOR)
    )
    assert again.status_code == 202, again.text
    assert finished(approved, 1)["cases"] == PROBES
    assert all(row["cases"] == "1" for row in select(approved, CASES))


def test_bad_starts_are_refused_by_name_and_store_nothing(approved: Service) -> None:
    before = len(dump(approved.store))
    url = f"/evaluations/{ID}/runs"
    cases = [
        ({"plan": 1, "target": DEMO}, None, 401, "credential"),
        ({"plan": 1, "target": DEMO}, "annie", 403, "lacks the role"),
        ({"plan": 9, "target": DEMO}, OPERATOR, 404, "no plan 9"),
        (
            {"plan": 1, "target": {"kind": "openai-compatible", "baseUrl": "http://169.254.169.254/v1", "model": "m"}},
            OPERATOR,
            422,
            "169.254.169.254",
        ),
        (
            {
                "plan": 1,
                "target": {
                    "kind": "openai-compatible",
                    "baseUrl": "http://127.0.0.1:9/v1",
                    "model": "m",
                    "apiKey": "sk-secret",
                },
            },
            OPERATOR,
            422,
            "apiKey",
        ),
        ({"plan": 1, "target": DEMO, "settings": {"concurrency": 0}}, OPERATOR, 422, "concurrency"),
        ({"plan": 1, "target": {"kind": "telnet"}}, OPERATOR, 422, "kind"),
    ]
    for body, agent, status, phrase in cases:
        answer = approved.http.post(url, json=body, headers=approved.auth(agent) if agent else {})
        assert (answer.status_code, phrase in answer.text) == (status, True), (body, answer.text)
    assert len(dump(approved.store)) == before
    assert approved.http.get(url).json()["runs"] == []


def test_a_plan_not_approved_does_not_run(planned: Service) -> None:
    refused = planned.http.post(
        f"/evaluations/{ID}/runs", json={"plan": 1, "target": DEMO}, headers=planned.auth(OPERATOR)
    )
    assert refused.status_code == 409 and "no domain expert has approved the plan" in refused.text
    assert planned.http.get(f"/evaluations/{ID}/runs").json()["runs"] == []


def test_one_run_never_mixes_target_versions_nor_takes_a_probe_of_another_plan(approved: Service) -> None:
    graphs = graphs_over(approved.store)
    operator = Credential(agent=OPERATOR, roles=frozenset({"evaluation_operator"}))
    run = start_run(graphs, ID, 1, DEMO_VERSION, ExecutionSettings(), operator)
    other = OpenAICompatible("http://127.0.0.1:9/v1", "another-model")
    with pytest.raises(Conflict, match=f"pinned to target version {DEMO_VERSION.fingerprint}"):
        continue_run(graphs, ID, run.number, other, ExecutionSettings(), operator)
    now = Exchange("hello", started=datetime.now(UTC), ended=datetime.now(UTC), latency_s=0.1)
    stranger = CaseTrace(
        f"{BASE_URL}evaluations/{ID}/plans/1/probes/999",
        DEMO_VERSION.fingerprint,
        (Turn("user", "hi"), Turn("assistant", "hello")),
        (now,),
    )
    with pytest.raises(Unprocessable, match="probes/999"):
        record_cases(graphs, ID, run.number, [stranger], operator)
    probe = approved.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 1}).json()["items"][0]["probe"]
    foreign = CaseTrace(probe, other.version.fingerprint, (Turn("user", "hi"), Turn("assistant", "hello")), (now,))
    with pytest.raises(Conflict, match="never mixes target versions"):
        record_cases(graphs, ID, run.number, [foreign], operator)
    assert graphs_over(approved.store).rows("run-recorded-probes", {"run": NamedNode(run.iri)}) == []


def test_caie_run_killed_mid_run_resumes_without_duplicates(
    approved: Service, chat_server: str, tmp_path: Path
) -> None:
    data = tmp_path / "store"
    store = EmbeddedStore(data)
    restore(store, dump(approved.store))
    store.close()
    env = {**os.environ, "CAIE_BASE_URL": BASE_URL}
    command = [
        sys.executable,
        "-m",
        "service.cli",
        "run",
        ID,
        "--data-dir",
        str(data),
        "--openai-base-url",
        f"{chat_server}/v1",
        "--model",
        "slow",
        "--concurrency",
        "1",
        "--timeout",
        "5",
        "--lease",
        "2",
        "--outside-boundary",
        "a slow test server",
    ]
    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert first.stderr is not None
    for line in first.stderr:  # "run 1: k/6 cases recorded", a line per write (a case per 0.3 s): kill it at 2
        if "cases recorded" in line and int(line.split(":")[1].split("/")[0]) >= 2:
            break
    first.send_signal(signal.SIGKILL)
    first.wait()
    partial = _cases(data)
    assert 2 <= partial < PROBES, partial
    second = subprocess.run([*command, "--run", "1"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert second.returncode == 0, second.stderr
    assert f"ran {PROBES - partial}" in second.stdout and f"{PROBES} of {PROBES} probes" in second.stdout
    store = EmbeddedStore(data)
    rows = store.select(CASES.replace(f"<{BASE_URL}evaluations/{ID}/runs/1>", "?run"))
    store.close()
    assert len(rows) == PROBES and all(row["cases"].value == "1" for row in rows)


def _cases(data: Path) -> int:
    """Cases in the store at ``data`` (no process holds it now)."""
    store = EmbeddedStore(data)
    try:
        rows = store.select(
            "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?c a <https://w3id.org/ob-caie/epo/Conversation> } }"
        )
        return int(rows[0]["n"].value)
    finally:
        store.close()


ERRORS = """
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    SELECT ?probe ?kind ?status ?attempts ?turn WHERE {
      GRAPH ?case { ?case epo:inRun ?run ; epo:realizesProbe ?probe .
                    ?error a epo:ExecutionError ; epo:errorKind ?kind ; epo:requestAttempts ?attempts ;
                           epo:errorIn ?turn .
                    OPTIONAL { ?error epo:httpStatus ?status }
                    FILTER NOT EXISTS { ?trace epo:traceOf ?case } }
    }"""


@pytest.mark.parametrize(
    ("model", "kind", "status", "attempts"),
    [
        ("broken", "TargetHttpError", "500", "2"),
        ("slow", "Timeout", None, "2"),
        ("malformed", "MalformedResponse", None, "1"),
    ],
)
def test_a_target_that_fails_gives_execution_errors_recorded_apart(
    approved: Service, chat_server: str, model: str, kind: str, status: str | None, attempts: str
) -> None:
    """Against a real chat server answering 500, too slowly or with a body that is no completion, every probe
    ends in an execution error of that kind (transient ones retried once, a malformed body not), with no trace
    and no response: nothing a judge could take for an outcome."""
    graphs = graphs_over(approved.store)
    operator = Credential(agent=OPERATOR, roles=frozenset({"evaluation_operator"}))
    target = OpenAICompatible(f"{chat_server}/v1", model)
    # only the slow target is meant to time out: the others get time enough on a loaded machine
    settings = ExecutionSettings(concurrency=3, timeout_s=0.1 if kind == "Timeout" else 10.0, retries=1, backoff_s=0.0)
    run = start_run(graphs, ID, 1, target.version, settings, operator, outside_boundary="a failing test server")
    done = continue_run(graphs, ID, run.number, target, settings, operator)
    assert (done.run.cases, done.run.traces, done.run.errors) == (PROBES, 0, PROBES)
    rows = [r for r in select(approved, ERRORS) if r["turn"].startswith(run.iri)]
    assert len(rows) == PROBES and all(r["turn"].endswith("/turns/1") for r in rows)
    assert {(r["kind"].rsplit("/", 1)[-1], r.get("status"), r["attempts"]) for r in rows} == {(kind, status, attempts)}
    assert not select(
        approved,
        f"""PREFIX epo: <https://w3id.org/ob-caie/epo/>
        SELECT ?response WHERE {{ GRAPH ?case {{ ?case epo:inRun <{run.iri}> . ?response a epo:Response }} }}""",
    )


def test_a_runner_that_fails_hands_its_claims_back_so_the_run_continues_at_once(
    approved: Service, closed_port_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runner stopped by its target's missing key hands back the claims it took (each lease ended, none left for
    the next runner to wait out); continued with the key, the run gets every case (execution errors: nothing
    listens at the target's port)."""
    graphs = graphs_over(approved.store)
    operator = Credential(agent=OPERATOR, roles=frozenset({"evaluation_operator"}))
    monkeypatch.delenv("CAIE_TEST_RUNNER_KEY", raising=False)
    target = OpenAICompatible(closed_port_url, "bednets-bot 9", api_key_env="CAIE_TEST_RUNNER_KEY")
    settings = ExecutionSettings(concurrency=2, timeout_s=5.0, retries=0)
    run = start_run(graphs, ID, 1, target.version, settings, operator, outside_boundary="a target that is down")
    with pytest.raises(MissingCredential, match="CAIE_TEST_RUNNER_KEY"):
        continue_run(graphs, ID, run.number, target, settings, operator)
    claims = graphs.rows("run-claims", {"run": NamedNode(run.iri), "catalog": graphs.catalog_graph})
    assert claims and all(datetime.fromisoformat(c["leaseExpires"].value) <= datetime.now(UTC) for c in claims)
    assert run_view(graphs, ID, run.number).cases == 0

    monkeypatch.setenv("CAIE_TEST_RUNNER_KEY", "k")
    done = continue_run(graphs, ID, run.number, target, settings, operator)
    assert (done.ran, done.run.cases, done.run.errors) == (PROBES, PROBES, PROBES)


def test_a_run_and_its_cases_dereference_for_people_and_rdf_clients(approved: Service) -> None:
    started = approved.http.post(
        f"/evaluations/{ID}/runs", json={"plan": 1, "target": DEMO}, headers=approved.auth(OPERATOR)
    )
    assert started.status_code == 202 and finished(approved, 1)["done"]
    run = f"/evaluations/{ID}/runs/1"
    page = approved.http.get(run, headers={"Accept": "text/html"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html") and "Run" in page.text
    turtle = approved.http.get(f"{run}/cases/1", headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200 and "responseText" in turtle.text
    assert approved.http.get(run, headers={"Accept": "application/json"}).json()["cases"] == PROBES


def test_a_target_outside_the_scopes_version_boundary_runs_only_when_recorded_so_and_its_report_says_so(
    approved: Service,
) -> None:
    graphs = graphs_over(approved.store)
    operator = Credential(agent=OPERATOR, roles=frozenset({"evaluation_operator"}))
    other = OpenAICompatible("http://127.0.0.1:9/v1", "bednets-chatbot 0.2.0").version
    before = len(dump(approved.store))
    with pytest.raises(
        Unprocessable
    ) as refused:  # the bed-nets scope's boundary is the demonstration chatbot's release
        start_run(graphs, ID, 1, other, ExecutionSettings(), operator)
    assert "'bednets-chatbot 0.2.0'" in str(refused.value) and f"(modelRelease '{DEMO_RELEASE}')" in str(refused.value)
    inside = approved.http.post(
        f"/evaluations/{ID}/runs",
        json={"plan": 1, "target": DEMO, "outsideBoundary": "why not"},
        headers=approved.auth(OPERATOR),
    )
    assert inside.status_code == 422 and "inside the scope's version boundary" in inside.text  # never marked by mistake
    assert len(dump(approved.store)) == before

    reason = "the next release, tried before the scope moves to it"
    run = start_run(graphs, ID, 1, other, ExecutionSettings(), operator, outside_boundary=reason)
    boundary = f"{BASE_URL}evaluations/{ID}/target/version-boundary"
    assert [
        (r["boundary"].value, r["reason"].value) for r in graphs.rows("run-boundary", {"run": NamedNode(run.iri)})
    ] == [(boundary, reason)]

    body = {
        "run": run.number,
        "limitations": ["not the scope's release"],
        "recommendations": ["run the scope's release"],
        "fitness": "NotFit",
    }
    made = approved.http.post(f"/evaluations/{ID}/reports", json=body, headers=approved.auth(OPERATOR))
    assert made.status_code == 201, made.text
    assert made.json()["tested"] == {
        "system": other.system,
        "modelRelease": "bednets-chatbot 0.2.0",
        "outsideBoundary": True,
        "reason": reason,
    }
    report = made.json()["report"]
    page = approved.http.get(f"/evaluations/{ID}/reports/{made.json()['number']}/page").text
    warning = page[page.index('id="outside-boundary"') : page.index("</div>", page.index('id="outside-boundary"'))]
    assert "Outside the scope" in warning and "bednets-chatbot 0.2.0" in warning and DEMO_RELEASE in warning
    assert reason in warning
    turtle = approved.http.get("/" + report[len(BASE_URL) :], headers={"Accept": "text/turtle"}).text
    graph = rdflib.Graph().parse(data=turtle, format="turtle")
    epo = rdflib.Namespace("https://w3id.org/ob-caie/epo/")
    assert (rdflib.URIRef(report), epo.outsideVersionBoundary, rdflib.URIRef(boundary)) in graph
    assert str(graph.value(rdflib.URIRef(report), epo.outsideBoundaryReason)) == reason
    assert str(graph.value(rdflib.URIRef(report), epo.testedRelease)) == "bednets-chatbot 0.2.0"
    checked = approved.http.get(f"/evaluations/{ID}/reports/{made.json()['number']}/verify").json()
    assert checked["holds"] is True, checked["differences"]
    assert [f["stored"] for f in checked["figures"] if f["figure"] == "target"] == [
        f"bednets-chatbot 0.2.0; outside the boundary: {reason}"
    ]
