"""The OpenAPI document is true (issue 8, item 6): schemathesis finds nothing, and /docs works offline.

schemathesis, a client no one here wrote, reads ``/openapi.json`` and sends what the document allows and what it
forbids, with ``--checks all``; its settings (``schemathesis.toml`` beside this file) name the operations whose
validity JSON Schema cannot state. One backend: the document does not depend on the store.
"""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from service.api.openapi import NEGOTIATED, RAW_BODIES

from ..conftest import Service
from ..pages_browser import keep_screenshot

pytestmark = pytest.mark.parametrize("store", ["embedded"], indirect=True)

CONFIG = Path(__file__).with_name("schemathesis.toml")
HOOKS = Path(__file__).with_name("schemathesis_hooks.py")
SEED = 1  # a fixed seed: the same run every time; each failure prints the curl command that repeats it
EXAMPLES = 3  # per operation in fuzzing; the coverage phase makes every case the schema defines, whatever this is


def schemathesis() -> str:
    """The ``schemathesis`` CLI installed beside this interpreter (the ``test`` extra)."""
    found = Path(sys.executable).with_name("schemathesis")
    if not found.exists():
        pytest.fail("the schemathesis CLI is missing: pip install -e '.[test]'")
    return str(found)


def passing_schemathesis(service: Service, source: str, *options: str, examples: int, seed: int) -> str:
    """``schemathesis run`` of ``source`` (the document's URL or file) against the service with every check and
    ``options`` (its phases, its base URL), asserted to find nothing; its output, for what a test reads further."""
    run = subprocess.run(
        [
            schemathesis(),
            "--config-file",
            str(CONFIG),
            "--no-color",
            "run",
            source,
            *options,
            "--checks",
            "all",
            # `all` adds a 10 s response-time limit (ST112), which a loaded machine broke once in a profiled run, and
            # the CLI cannot exclude it: raised to the request timeout, so only a request that times out anyway fails;
            # the service's speed is measured by bench/, not asserted here
            "--max-response-time",
            "30",
            "--header",
            f"Authorization: Bearer {service.tokens['admin']}",
            "--max-examples",
            str(examples),
            "--seed",
            str(seed),
            "--generation-database",
            "none",
            # one worker: with two, hypothesis's lambda descriptions (ast.parse) raced into SystemErrors
            "--request-timeout",
            "30",
            "--workers",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SCHEMATHESIS_HOOKS": str(HOOKS)},
        check=False,  # its exit status is asserted below, with its report
    )
    assert run.returncode == 0, run.stdout[-20_000:] + run.stderr[-2_000:]
    return run.stdout


def test_schemathesis_with_every_check_finds_no_failure(service: Service) -> None:
    # the examples and fuzzing phases; the stateful one is tests/api/test_fuzz_stateful.py's (on the worked example),
    # the coverage phase the hostile lane's (below)
    phases = ("--phases", "examples,fuzzing")
    passing_schemathesis(service, f"{service.url}/openapi.json", *phases, examples=EXAMPLES, seed=SEED)


@pytest.mark.hostile
def test_schemathesis_coverage_phase_with_every_check_finds_no_failure(service: Service) -> None:
    """Every boundary and negative case the document defines (about 3,700 requests, 30 s of the two cores): in
    `make test-hostile`, which CI runs, to keep `make test` within its 420 s (docs/api.md, "schemathesis")."""
    passing_schemathesis(service, f"{service.url}/openapi.json", "--phases", "coverage", examples=EXAMPLES, seed=SEED)


def _document(service: Service) -> dict[str, Any]:
    response = service.http.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_the_document_states_bearer_security_errors_and_media_types(service: Service) -> None:
    spec = _document(service)
    scheme = spec["components"]["securitySchemes"]["bearer"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert spec["security"] == [{"bearer": []}]
    paths = spec["paths"]
    put_graph = paths["/graphs/{kind}/{identifier}"]["put"]
    assert put_graph["security"] == [{"bearer": []}]  # a write needs a token
    assert {"401", "403", "404", "409", "413", "415", "422"} <= set(put_graph["responses"])
    assert put_graph["responses"]["401"]["content"]["application/problem+json"] == {
        "schema": {"$ref": "#/components/schemas/Problem"}
    }
    assert "WWW-Authenticate" in put_graph["responses"]["401"]["headers"]
    assert "text/turtle" in put_graph["requestBody"]["content"]  # the body the route reads itself
    get_evaluation = paths["/evaluations/{evaluation_id}"]["get"]
    assert get_evaluation["security"] == [{}, {"bearer": []}]  # reads are public here, a token optional
    assert {"404", "406"} <= set(get_evaluation["responses"])
    assert {"application/json", "text/html", "text/turtle"} <= set(get_evaluation["responses"]["200"]["content"])
    assert paths["/health"]["get"]["security"] == []
    every = [op for item in paths.values() for op in item.values()]
    assert not [
        op["operationId"]
        for op in every
        if any(p["in"] == "header" and p["name"].lower() == "authorization" for p in op.get("parameters", []))
    ]
    assert len({op["operationId"] for op in every}) == len(every)  # unique, though GET and HEAD share a handler
    # every error is problem details, or the same error as a page for a browser
    assert all(
        r["content"].keys() == {"application/problem+json", "text/html"}
        for op in every
        for status, r in op["responses"].items()
        if status >= "400"
    )


def test_central_tables_name_operations_of_the_document(service: Service) -> None:
    """A route renamed or removed shows here, not as a silently untrue document."""
    paths = _document(service)["paths"]
    stale = [key for key in [*NEGOTIATED, *RAW_BODIES] if key[0] not in paths.get(key[1], {})]
    assert not stale


def test_a_method_no_route_takes_is_405_with_every_method_of_the_path(service: Service) -> None:
    response = service.http.request("PATCH", "/evaluations", headers=service.auth())
    assert response.status_code == 405
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["allow"] == "GET, POST"
    response = service.http.request("DELETE", "/evaluations/e1/envelope/versions", headers=service.auth())
    assert (response.status_code, response.headers["allow"]) == (405, "POST")


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "/dcat?page=%C2%B2", None, 400),  # "²".isdigit() held and int("²") raised: 500
        ("POST", "/evaluations/e1/scenarios/%C2%B2/exclusion", {"reason": "r"}, 404),  # the same: 500
        # JSON read as UTF-32 that is not: FastAPI's own 400 was {"detail": ...}, not problem details
        ("POST", "/evaluations/e1/plans", b'\x00\x00\x00"\xff\xff\xff\xff', 400),
        (
            "POST",
            "/evaluations/e1/plans",
            {"strategy": "Equal", "budget": 1, "seed": 2**53},
            422,
        ),  # past 2^53: JS rounds
        (
            "GET",
            "/evaluations/e1/scenarios?offset=833433216549212258304",
            None,
            422,
        ),  # was the store's SPARQL syntax error
        ("GET", "/sparql?named-graph-uri=%C2%80", None, 400),  # no IRI, ignored when no query asked: the description
    ],
)
def test_what_schemathesis_found_stays_fixed(
    service: Service, method: str, path: str, body: object, status: int
) -> None:
    sent = (
        {"content": body, "headers": {**service.auth(), "Content-Type": "application/json"}}
        if isinstance(body, bytes)
        else {"json": body, "headers": service.auth()}
    )
    response = service.http.request(method, path, **sent)  # type: ignore[arg-type]  # sent is content or json with headers, as httpx takes them
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"


class _Assets(HTMLParser):
    """Every URL a page loads: script and image sources, stylesheet and icon links."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        url = found.get("src") if tag in ("script", "img") else found.get("href") if tag == "link" else None
        if url:
            self.urls.append(url)


def test_docs_render_from_local_assets_only(service: Service) -> None:
    page = service.http.get("/docs")
    assert page.status_code == 200 and "swagger-ui" in page.text
    assets = _Assets()
    assets.feed(page.text)
    assert assets.urls and all(url.startswith("/") and not url.startswith("//") for url in assets.urls), assets.urls
    for url in assets.urls:
        assert service.http.get(url).status_code == 200, url
    policy = page.headers["content-security-policy"]
    assert "script-src 'self' 'sha256-" in policy and "http" not in policy and "unsafe" not in policy
    assert "url: '/openapi.json'" in page.text


def test_swagger_ui_renders_every_operation_in_chromium_without_console_errors(
    service: Service, browser_page: Page
) -> None:
    browser_page.goto(f"{service.url}/docs")
    expect(browser_page.locator(".opblock")).to_have_count(
        sum(len(item) for item in _document(service)["paths"].values())
    )
    expect(browser_page.locator(".btn.authorize")).to_be_visible()  # the bearer scheme, to log in with
    keep_screenshot(browser_page, "docs")
