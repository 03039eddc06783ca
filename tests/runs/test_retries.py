"""Retrying a run's execution errors, over real HTTP against a real chat server process: a target down for every other
conversation (503) gives a run of 3 traces and 3 execution errors; once it recovers, ``POST …/runs/1/retries`` sends
those 3 probes again as new attempts of the same run, each with a trace, attributed to the operator who asked and
linked to the attempt it retries, which stays in the record with its error. The run's counts and the metrics then
count each probe once, and the error rate reads the latest attempts. A retry with nothing errored, against another
target version, by someone without the role or without a credential is refused and records nothing.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest
import rdflib

from service.api import create_app
from service.core.config import Credential
from service.runs.model import ExecutionSettings
from service.runs.records import start_run
from service.runs.runner import continue_run
from service.runs.targets import OpenAICompatible

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, dump, graphs_over, settings_for
from ..plan.test_pinned_inputs import select
from ..plan.test_second_domain_plan import ID
from ..servers import AppSlot
from .test_run_record import PROBES

pytestmark = EMBEDDED_ONLY
THEO = Credential(agent="theo", roles=frozenset({"evaluation_operator"}))
SETTINGS = ExecutionSettings(concurrency=2, timeout_s=10.0, retries=0)  # a 503 is an execution error at once
RUN = f"/evaluations/{ID}/runs/1"

ATTEMPTS = f"""
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    PREFIX prov: <http://www.w3.org/ns/prov#>
    SELECT ?attempt ?retried ?retry ?by ?at ?status WHERE {{
      GRAPH ?attempt {{ ?attempt epo:inRun <{BASE_URL}evaluations/{ID}/runs/1> ; epo:retries ?retried ;
                                 epo:inRetry ?retry ; epo:attemptNumber 2 . ?trace epo:traceOf ?attempt }}
      GRAPH ?retried {{ ?error a epo:ExecutionError ; epo:httpStatus ?status }}
      GRAPH ?retry {{ ?retry a epo:Retry ; prov:wasAssociatedWith ?by ; prov:startedAtTime ?at }}
    }}"""


@pytest.fixture
def half_failed(
    approved: Service, chat_server: str, app_slot: tuple[AppSlot, str], tokens: dict[str, str]
) -> Iterator[tuple[Service, str]]:
    """Run 1 of the approved plan against a chat server down for every other conversation (3 execution errors, 3
    traces), then the server recovered; the service over HTTP, allowed to call it. Yields it and the target body."""
    model = f"outage-{secrets.token_hex(4)}"
    target = OpenAICompatible(f"{chat_server}/v1", model)
    graphs = graphs_over(approved.store)
    run = start_run(graphs, ID, 1, target.version, SETTINGS, THEO, outside_boundary="a test server with an outage")
    done = continue_run(graphs, ID, run.number, target, SETTINGS, THEO)
    assert (done.run.cases, done.run.traces, done.run.errors, done.run.attempts) == (PROBES, 3, 3, PROBES)
    assert httpx.post(f"{chat_server}/recover/{model}").status_code == 200
    slot, url = app_slot
    app = create_app(settings_for(tokens, run_target_allowlist=[f"{chat_server}/v1"]), approved.store)
    with slot.serving(app), httpx.Client(base_url=url, timeout=60.0) as http:
        yield Service(http, approved.store, tokens, url), model
    assert app.state.services.jobs.wait(120), "a retry was still running"


def retried(service: Service) -> dict:
    """Run 1 once its retry job is no longer running."""
    for _ in range(600):
        run = service.http.get(RUN).json()
        if run["job"] is not None and run["job"]["state"] != "running":
            return run
        time.sleep(0.05)
    raise AssertionError(f"the retry of run 1 is still running: {run}")


def errors_of(service: Service) -> list[dict]:
    return service.http.get(f"/evaluations/{ID}/metrics", params={"run": 1}).json()["executionErrors"]


def test_a_retry_gives_each_errored_probe_a_new_attempt_and_keeps_the_first(
    half_failed: tuple[Service, str], chat_server: str
) -> None:
    service, model = half_failed
    target = {"kind": "openai-compatible", "baseUrl": f"{chat_server}/v1", "model": model}
    before = service.http.get(RUN).json()
    assert (before["executionErrors"], before["attempts"]) == (3, PROBES)
    assert [(e["kind"].rsplit("/", 1)[-1], e["errors"]) for e in errors_of(service)] == [("TargetHttpError", 3)]
    errored = {
        r["case"]
        for r in select(
            service,
            f"""PREFIX epo: <https://w3id.org/ob-caie/epo/>
        SELECT ?case WHERE {{ GRAPH ?case {{ ?case epo:inRun <{before['run']}> . ?e a epo:ExecutionError }} }}""",
        )
    }

    started = service.http.post(
        f"{RUN}/retries", json={"target": target, "settings": {"retries": 0}}, headers=service.auth("theo")
    )
    assert started.status_code == 202 and started.headers["Location"] == RUN, started.text
    run = retried(service)
    assert run["job"]["state"] == "finished", run
    assert (run["cases"], run["traces"], run["executionErrors"], run["attempts"], run["done"]) == (
        PROBES,
        PROBES,
        0,
        9,
        True,
    )

    # each errored case has its attempt 2, answered, by theo's retry; the first attempt keeps its error
    attempts = select(service, ATTEMPTS)
    assert {a["retried"] for a in attempts} == errored and {a["attempt"] for a in attempts} == {
        f"{c}/attempts/2" for c in errored
    }
    assert {(a["by"], a["status"]) for a in attempts} == {(f"{BASE_URL}agents/theo", "503")}
    listed = service.http.get(f"{RUN}/retries").json()["retries"]
    assert [
        (r["number"], r["by"], r["attempts"], r["traces"], r["executionErrors"], r["settings"]["retries"])
        for r in listed
    ] == [(1, f"{BASE_URL}agents/theo", 3, 3, 0, 0)]
    assert {a["retry"] for a in attempts} == {listed[0]["retry"]} and {a["at"] for a in attempts} == {listed[0]["at"]}
    first = min(errored)
    turtle = service.http.get("/" + first[len(BASE_URL) :], headers={"Accept": "text/turtle"})
    graph = rdflib.Graph().parse(data=turtle.text, format="turtle")
    assert (None, rdflib.RDF.type, rdflib.URIRef("https://w3id.org/ob-caie/epo/ExecutionError")) in graph

    # every read counts each probe once: no execution error left, the pass rates' cases are the plan's probes
    assert errors_of(service) == []
    probes = service.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    exercising = Counter(criterion for p in probes for criterion in p["exercises"])
    rates = service.http.get(f"/evaluations/{ID}/metrics", params={"run": 1}).json()["passRates"]
    assert rates and all(r["cases"] == exercising[r["criterion"]] for r in rates)
    traces = select(
        service,
        f"""PREFIX epo: <https://w3id.org/ob-caie/epo/>
        SELECT ?probe (COUNT(?trace) AS ?n) WHERE {{ GRAPH ?case {{ ?case epo:inRun <{run['run']}> ;
        epo:realizesProbe ?probe . ?trace epo:traceOf ?case }} }} GROUP BY ?probe""",
    )
    assert len(traces) == PROBES and {t["n"] for t in traces} == {"1"}

    # nothing errored is left: a second retry is refused, and says why
    again = service.http.post(f"{RUN}/retries", json={"target": target}, headers=service.auth("theo"))
    assert again.status_code == 409 and "no execution error to retry" in again.json()["detail"]


@pytest.mark.parametrize(
    ("agent", "model", "status", "phrase"),
    [
        (None, None, 401, "credential"),
        ("annie", None, 403, "lacks the role"),
        ("vera", None, 403, "lacks the role"),
        ("theo", "another-model", 409, "one run never mixes target versions"),
    ],
)
def test_a_retry_is_refused_without_the_role_or_for_another_target_version_and_records_nothing(
    half_failed: tuple[Service, str], chat_server: str, agent: str | None, model: str | None, status: int, phrase: str
) -> None:
    service, outage = half_failed
    before = len(dump(service.store))
    target = {"kind": "openai-compatible", "baseUrl": f"{chat_server}/v1", "model": model or outage}
    refused = service.http.post(f"{RUN}/retries", json={"target": target}, headers=service.auth(agent) if agent else {})
    assert (refused.status_code, phrase in refused.text) == (status, True), refused.text
    assert len(dump(service.store)) == before and service.http.get(f"{RUN}/retries").json()["retries"] == []
