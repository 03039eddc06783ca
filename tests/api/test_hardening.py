"""Hardening found on the way (issue 6), over real HTTP: credentials before bodies, paths that cannot be
IRIs, links and the page policy, the plan budget limit, plans that stop when nobody waits for them,
SIGTERM during long work, and plan digests that depend only on the plan's inputs.

The module runs on every backend; the checks answered before any store is read (a missing credential, a path
that cannot be an IRI) and the plan tests run on the embedded store only (:data:`EMBEDDED_ONLY`)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect
from pyoxigraph import Quad

from service.api import create_app
from service.core.config import Settings
from service.plan.testplan import create_plan

from ..conftest import ROLES, Service, settings_for
from ..pages_browser import console_errors
from ..plan.test_plans_api import PLAN, make_plan
from ..servers import app_server, caie_serve, free_port, wait_until_up
from ..test_cli import data_dir_with_worked_example
from ..test_envelope import example_evaluation
from .test_evaluations import ID

pytestmark = pytest.mark.backends("embedded", "remote", "virtuoso")

EMBEDDED_ONLY = pytest.mark.parametrize("store", ["embedded"], indirect=True)
LIMIT = Settings().max_plan_budget


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def is_problem(response: httpx.Response, status: int) -> bool:
    return response.status_code == status and response.headers["content-type"] == "application/problem+json"


# ------------------------------------------------------------------------------ credentials before bodies


def write_operations(service: Service) -> list[tuple[str, str]]:
    """Every write the API offers, from its own OpenAPI document; path parameters filled with text
    that is not a number, so a route that wants one would answer 422 if it looked before authenticating."""
    spec = service.http.get("/openapi.json").json()
    return [
        (method.upper(), re.sub(r"\{[^}]+\}", "x", path))
        for path, operations in spec["paths"].items()
        for method in operations
        if method not in ("get", "head", "options") and path != "/sparql"
    ]


@EMBEDDED_ONLY
def test_no_credential_is_401_before_any_body_or_path_validation(service: Service) -> None:
    writes = write_operations(service)
    assert ("POST", "/evaluations") in writes and ("POST", "/evaluations/x/plans") in writes and len(writes) >= 14
    bodies = {"invalid JSON": b"{not json", "missing fields": b"{}"}
    for (method, path), (what, body), headers in [
        (write, body, headers)
        for write in writes
        for body in bodies.items()
        for headers in ({}, {"Authorization": "Bearer not-a-known-token"})
    ]:
        answer = service.http.request(
            method, path, content=body, headers={"Content-Type": "application/json", **headers}
        )
        assert is_problem(answer, 401), (
            f"{method} {path} with {what} and {headers or 'no credential'}: {answer.status_code} {answer.text}"
        )
        assert answer.headers["www-authenticate"].startswith("Bearer")
    # with a credential, the body is validated as before; and a SPARQL query by POST stays public
    bad = service.http.post(
        "/evaluations", content=b"{not json", headers={"Content-Type": "application/json", **service.auth("theo")}
    )
    assert is_problem(bad, 422)
    query = service.http.post(
        "/sparql", data={"query": "ASK {}"}, headers={"Accept": "application/sparql-results+json"}
    )
    assert query.status_code == 200 and query.json()["boolean"] is True


# ------------------------------------------------------------------------------ paths that cannot be IRIs


@pytest.mark.parametrize(
    "path, named",
    [
        ("/evaluations/a%20b", "U+0020"),
        ("/evaluations/%3C%3E", "U+003C"),
        ("/graphs/kg/%22x", "U+0022"),
        ("/epo/%7Bbad%7D", "U+007B"),
        ("/a%20b/c", "U+0020"),
        ("/x%7Cy", "U+007C"),
        ("/x%5Ey", "U+005E"),
        ("/x%60y", "U+0060"),
        ("/x%5Cy", "U+005C"),
        ("/x%7Dy", "U+007D"),
        ("/x%3Ey", "U+003E"),
        ("/x%01y", "U+0001"),
        ("/x%7Fy", "U+007F"),
        ("/x%25zz", "'%' not followed by two hex digits"),
        ("/evaluations/a%20b/envelope", "U+0020"),
        ("/evaluations/a%20b/plans/1/probes", "U+0020"),
    ],
)
@EMBEDDED_ONLY
def test_a_path_that_cannot_be_an_iri_is_400_naming_the_character(service: Service, path: str, named: str) -> None:
    for accept in ("text/html", "text/turtle", "application/json"):
        answer = service.http.get(path, headers={"Accept": accept})
        assert is_problem(answer, 400), f"{path} ({accept}): {answer.status_code} {answer.text}"
        assert named in answer.json()["detail"] and "IRI" in answer.json()["detail"]


def test_iri_parameters_are_checked_and_valid_paths_still_resolve(service: Service) -> None:
    checks = {
        f"/evaluations/{ID}/scenarios?rule=a%20b": "U+0020",
        f"/evaluations/{ID}/scenarios?facet=hasVaccinationStatus%3Dhttp://x/%7B": "U+007B",
        f"/evaluations/{ID}/plans/1/probes?criterion=C%3C1": "U+003C",
    }
    for url, named in checks.items():
        answer = service.http.get(url)
        assert is_problem(answer, 400) and named in answer.json()["detail"], f"{url}: {answer.text}"
    # characters an IRI may hold (non-ASCII included) are not refused: such paths are just not published
    for path in ("/epo/NoSuchTerm", "/epo/%C3%A9t%C3%A9", "/x%2541"):
        assert is_problem(service.http.get(path, headers={"Accept": "text/turtle"}), 404), path


# ------------------------------------------------------------------------------ links and page policy

UNSAFE = [
    "javascript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:x",
    "http://caie.test//evil.example/x",
]
THING = "https://w3id.org/ob-caie/thing"


def page_with_unsafe_links(service: Service) -> httpx.Response:
    objects = " , ".join(f"<{iri}>" for iri in UNSAFE[:3]) + f" , <{UNSAFE[3]}> , <https://w3id.org/ob-caie/ont>"
    turtle = (
        f"<https://w3id.org/ob-caie/ont> a <http://www.w3.org/2002/07/owl#Ontology> .\n"
        f"<{THING}> <http://www.w3.org/2000/01/rdf-schema#seeAlso> {objects} ; "
        f"<http://www.w3.org/2000/01/rdf-schema#label> \"thing\" ."
    )
    stored = service.http.put(
        "/graphs/ontologies/links",
        content=turtle.encode(),
        headers={"Content-Type": "text/turtle", **service.auth("admin")},
    )
    assert stored.status_code == 201, stored.text
    return service.http.get("/thing", headers={"Accept": "text/html"})


def test_only_http_iris_become_links_and_every_answer_has_the_policy(service: Service) -> None:
    page = page_with_unsafe_links(service)
    assert page.status_code == 200
    hrefs = re.findall(r'href="([^"]*)"', page.text)
    assert hrefs and all(h.startswith(("http://", "https://", "/")) and not h.startswith("//") for h in hrefs), hrefs
    assert "/ont" in hrefs and "http://caie.test//evil.example/x" in hrefs  # ours, and on our own host
    for iri in UNSAFE[:3]:
        assert f'<span class="iri" title="{iri}">{iri}</span>' in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy  # scripts only as files of ours
    refused = service.http.post("/evaluations", json={})
    for answer in (
        page,
        service.http.get("/health"),
        service.http.get("/graphs", headers={"Accept": "text/html"}),
        refused,
        service.http.get("/a%20b"),
    ):
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["content-security-policy"] == policy
    docs = service.http.get("/docs")
    assert docs.status_code == 200 and "frame-ancestors 'none'" in docs.headers["content-security-policy"]
    assert "default-src 'none'" in docs.headers["content-security-policy"]  # Swagger UI ships in a package (no CDN)


@EMBEDDED_ONLY
def test_pages_render_in_a_browser_without_breaking_their_policy(service: Service, browser_page: Page) -> None:
    """A script or style the policy blocked is a console error, which fails the test (tests/pages_browser.py)."""
    page_with_unsafe_links(service)
    for path in ("/thing", "/graphs", "/"):
        browser_page.goto(service.url + path)
        expect(browser_page.locator("h1")).to_be_visible()
        assert browser_page.evaluate("getComputedStyle(document.body).maxWidth") != "none"  # the stylesheet applied
        assert console_errors(browser_page) == [], path


# ------------------------------------------------------------------------------ the plan budget limit


def test_a_budget_over_the_limit_is_422_naming_it(
    service: Service, tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    over = service.http.post(
        f"/evaluations/{ID}/plans", json={**PLAN, "budget": LIMIT + 1}, headers=service.auth("theo")
    )
    assert (
        is_problem(over, 422)
        and f"{LIMIT:,}" in over.json()["detail"]
        and "CAIE_MAX_PLAN_BUDGET" in over.json()["detail"]
    )
    monkeypatch.setenv("CAIE_MAX_PLAN_BUDGET", "50")
    assert Settings().max_plan_budget == 50
    app = create_app(settings_for(tokens, max_plan_budget=50), service.store)
    with app_server(app) as url:
        small = httpx.post(
            f"{url}/evaluations/{ID}/plans",
            json={**PLAN, "budget": 51},
            headers={"Authorization": f"Bearer {tokens['theo']}"},
        )
    assert is_problem(small, 422) and "at most 50" in small.json()["detail"]


# ------------------------------------------------------------------------------ plans nobody waits for


def threads_making_a_plan() -> int:
    """How many threads of this process (the service runs in it) are inside ``create_plan`` now."""
    code, count = create_plan.__code__, 0
    for frame in sys._current_frames().values():
        while frame is not None and frame.f_code is not code:
            frame = frame.f_back
        count += frame is not None
    return count


# ------------------------------------------------------------------------------ SIGTERM during long work


def serve(data: Path, port: int, tokens: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    credentials = {token: {"agent": agent, "roles": ROLES[agent]} for agent, token in tokens.items()}
    return caie_serve(
        port, credentials, "--base-url", "http://caie.test/", *extra, data=data, log=data.parent / "serve.log"
    )


def test_sigterm_stops_the_service_within_seconds_during_plan_creation(
    tmp_path: Path, tokens: dict[str, str], worked_example_quads: list[Quad]
) -> None:
    # the data directory as `caie serve --examples` leaves it, copied (its start would load and plan it all again)
    data, port = data_dir_with_worked_example(tmp_path / "data", worked_example_quads), free_port()
    process = serve(data, port, tokens)
    url = f"http://127.0.0.1:{port}"
    theo = {"Authorization": f"Bearer {tokens['theo']}"}
    try:
        wait_until_up(url + "/health", process, seconds=180)
        # a first, small plan compiles this process's scenario tables, so the long plan below is past them and in
        # its checkpointed derivation and sampling when the signal comes
        small = httpx.post(
            f"{url}/evaluations/measles/plans",
            json={**PLAN, "budget": 24, "strategy": "Equal"},
            headers=theo,
            timeout=600,
        )  # a compile: minutes on a busy machine
        assert small.status_code == 201, small.text
        answers: list[object] = []

        def long_request() -> None:
            try:
                answers.append(
                    httpx.post(
                        f"{url}/evaluations/measles/plans", json={**PLAN, "budget": LIMIT}, headers=theo, timeout=60
                    )
                )
            except httpx.HTTPError as error:
                answers.append(error)

        request = threading.Thread(target=long_request)
        request.start()
        working = wait_for(lambda: httpx.get(url + "/health").json()["requestsInProgress"] == 1 or bool(answers), 30)
        assert working and process.poll() is None and not answers  # the plan is in its long work, not done
        process.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        process.wait(timeout=10)
        assert time.monotonic() - sent < 10
        request.join(timeout=10)
        assert answers and not (isinstance(answers[0], httpx.Response) and answers[0].status_code == 201)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # the data directory opens again (with --examples, which finds everything loaded), and the stopped plan left
    # nothing behind: the worked example's plan and the small one
    port = free_port()
    again, url = serve(data, port, tokens, "--examples"), f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/health", again, seconds=120)
        health = httpx.get(url + "/health").json()
        assert health["status"] == "ok" and health["requestsInProgress"] == 0
        assert [p["number"] for p in httpx.get(url + "/evaluations/measles/plans").json()["plans"]] == [1, 2]
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=10)


# ------------------------------------------------------------------------------ plan digests, and plans nobody waits for


@EMBEDDED_ONLY
def test_same_inputs_same_digest_on_a_fresh_and_an_old_store_and_a_plan_stops_when_its_client_goes_away(
    signed: Service,
) -> None:
    # one signed-off store serves both: the plans that check the digest are the ones the abandoned plan is made
    # among, and the first of them compiles the scenario tables (no checkpoint inside) before the client below leaves
    small = {**PLAN, "budget": 40, "strategy": "Equal"}
    fresh = make_plan(signed, small)
    other_seed = make_plan(signed, {**small, "seed": 8})
    assert other_seed["digest"] != fresh["digest"]  # the digest depends on the plan's inputs

    outcome: list[BaseException] = []

    def impatient_client() -> None:
        try:
            httpx.post(
                f"{signed.url}/evaluations/{ID}/plans",
                json={**PLAN, "budget": LIMIT},
                headers=signed.auth("theo"),
                timeout=httpx.Timeout(60.0, read=2.0),
            )
        except httpx.ReadTimeout as gave_up:  # the client closes its connection
            outcome.append(gave_up)

    client = threading.Thread(target=impatient_client)
    client.start()
    assert wait_for(lambda: threads_making_a_plan() == 1, 10), "the plan was never started"
    client.join()
    assert outcome, "the plan finished before the client gave up: use a bigger budget"
    # it stops at its next checkpoint (seconds apart on a busy machine), long before it would have been
    # stored; a plan that ran to its end would be listed
    assert wait_for(lambda: threads_making_a_plan() == 0, 15), "the plan kept going after its client left"
    assert [p["number"] for p in signed.http.get(f"/evaluations/{ID}/plans").json()["plans"]] == [1, 2]

    other = signed.http.put(
        "/evaluations/other", json={**example_evaluation(), "id": "other"}, headers=signed.auth("theo")
    )
    assert other.status_code == 201, other.text
    # a later second (the client above waited 2 s before leaving), by another agent: neither may change the digest
    again = make_plan(signed, small, agent="admin")
    assert (fresh["number"], again["number"]) == (1, 3) and again["digest"] == fresh["digest"]
    # the record still says who made each plan and when; only the digest leaves that out
    rows = signed.http.get(
        "/sparql",
        params={
            "query": """
        PREFIX prov: <http://www.w3.org/ns/prov#>
        SELECT ?plan ?agent ?when WHERE { ?plan a <https://w3id.org/ob-caie/epo/TestPlan> ;
          prov:wasAttributedTo ?agent ; prov:generatedAtTime ?when } ORDER BY ?plan"""
        },
        headers={"Accept": "application/sparql-results+json"},
    ).json()["results"]["bindings"]
    made = {r["plan"]["value"].rsplit("/", 1)[-1]: (r["agent"]["value"], r["when"]["value"]) for r in rows}
    assert made["1"][0].endswith("/theo") and made["3"][0].endswith("/admin") and made["1"][1] != made["3"][1]
    # and the digest an approval recomputes from the stored plan is the one recorded
    approved = signed.http.post(f"/evaluations/{ID}/plans/3/approval", json={}, headers=signed.auth("annie"))
    assert approved.status_code == 201 and approved.json()["planDigest"] == fresh["digest"], approved.text


def test_a_literal_over_the_parsers_bound_is_a_413_problem_and_stores_nothing(service: Service, app_slot) -> None:
    """A 17 MiB literal (issue 23 §6) made pyoxigraph raise MemoryError, answered as a plain-text 500 at 4c0fccf; it is
    a problem+json 413 naming the cause, with a body limit above its size, and nothing is stored."""
    slot, _ = app_slot
    body = b'<http://example.org/s> <http://example.org/p> "' + b"a" * (17 * 1024 * 1024) + b'" .\n'
    with slot.serving(create_app(settings_for(service.tokens, max_body_bytes=20_000_000), service.store)):
        answer = service.http.put(
            "/graphs/ontologies/huge", content=body, headers={"Content-Type": "text/turtle", **service.auth("admin")}
        )
        assert answer.status_code == 413, answer.text[:300]
        assert answer.headers["content-type"].startswith("application/problem+json")
        assert "larger than the parser takes" in answer.json()["detail"]
        assert service.http.get("/graphs/ontologies/huge", headers={"Accept": "text/turtle"}).status_code == 404
