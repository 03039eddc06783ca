"""Every error is problem details (issue 23): no route answers a plain-text 500, whatever it is sent.

An unplanned exception, in a route or in a middleware, is a 500 problem naming only a trace id, which the log
holds with the traceback. And the walk: every operation of ``/openapi.json`` is sent hostile inputs, one at a time
over otherwise sensible ones (the worked example's evaluation and plan): each path and query parameter as bad
UTF-8, a huge or negative number, a non-digit digit, a bad IRI, a NUL; each body empty, not UTF-8, truncated, of
the wrong media type, and each JSON property of the wrong type, past 2^53 or a lone surrogate. Each answer must be
2xx, 3xx or 4xx, a 4xx with a problem body (or an error page for a browser): hostile input is the client's fault,
never a 500.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pyoxigraph import Quad
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from service.api import create_app
from service.core.store import Store

from ..conftest import Service, restore, settings_for
from ..servers import AppSlot

pytestmark = pytest.mark.parametrize("store", ["embedded"], indirect=True)

PROBLEM = "application/problem+json"
SECRET = "s3cr3t-in-the-exception-text"

# ------------------------------------------------------------------------------------------ unplanned errors


class FailingMiddleware:
    """A middleware that fails on one path, outside every exception handler of the app."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/middleware-fails":
            raise RuntimeError(f"connection string postgres://admin:{SECRET}@db")
        await self.app(scope, receive, send)


def failing_app(store: Store, tokens: dict[str, str]) -> FastAPI:
    app = create_app(settings_for(tokens), store)

    async def route_fails(_: Request) -> Response:
        raise KeyError(f"/home/service/{SECRET}")

    app.router.routes.insert(0, Route("/route-fails", route_fails))  # ahead of the catch-all that dereferences
    app.add_middleware(FailingMiddleware)  # innermost of the user middlewares: the security headers wrap it
    return app


@pytest.fixture
def failing(store: Store, tokens: dict[str, str], app_slot: tuple[AppSlot, str]) -> Iterator[httpx.Client]:
    slot, url = app_slot
    with slot.serving(failing_app(store, tokens)), httpx.Client(base_url=url, timeout=60) as http:
        yield http


@pytest.mark.parametrize("path", ["/route-fails", "/middleware-fails"])
def test_an_unplanned_error_is_a_500_problem_naming_a_trace_id_the_log_holds(
    failing: httpx.Client, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        response = failing.get(path, headers={"Accept": "application/json"})
    assert response.status_code == 500
    assert response.headers["content-type"] == PROBLEM
    assert response.headers["x-content-type-options"] == "nosniff"
    body = response.json()
    assert (body["status"], body["title"]) == (500, "InternalServerError")
    assert SECRET not in response.text and "Error" not in body["detail"]  # neither the text nor the class
    trace = re.fullmatch(r"urn:uuid:([0-9a-f-]{36})", body["instance"])
    assert trace and trace[1] in body["detail"]
    logged = [r for r in caplog.records if trace[1] in r.getMessage()]
    assert logged and logged[0].exc_info and SECRET in str(logged[0].exc_info[1])


def test_a_browser_gets_the_unplanned_error_as_a_page(failing: httpx.Client) -> None:
    for path in ("/route-fails", "/middleware-fails"):
        response = failing.get(path, headers={"Accept": "text/html"})
        assert response.status_code == 500
        assert response.headers["content-type"].startswith("text/html")
        assert "trace id" in response.text and SECRET not in response.text
        assert "default-src 'none'" in response.headers["content-security-policy"]


# ------------------------------------------------------------------------------------------ the walk


@pytest.fixture
def example(service: Service, worked_example_quads: list[Quad]) -> Service:
    """The worked example (envelope signed off, plan 1 approved): sensible values reach past the 404s."""
    restore(service.store, worked_example_quads)
    return service


SENSIBLE = {
    "evaluation_id": "measles",
    "number": "1",
    "kind": "dso",
    "identifier": "vaccine-education",
    "criterion_id": "C1",
    "scenario": "s1",
    "comparison": "version",
    "reference_evaluation": "measles",
    "reference_number": "1",
    "name": "ob-caie.jsonld",
    "path": "evaluations/measles",
}
"""Path parameters the worked example has, by name; the hostile value replaces one of them at a time."""

HOSTILE_SEGMENTS = [
    "%FF%FE",
    "99999999999999999999999999",
    "-1",
    "%C2%B2",
    "x" * 3000,
    "a%00b",
    "a%20b",
    "..%2F..%2Fetc",
]
"""Percent-encoded as sent: bad UTF-8, past 64 bits, negative, a digit int() reads but isdigit() does not tell
apart (superscript two), too long for a name, NUL, a space (no IRI), an encoded traversal."""
HOSTILE_VALUES = [
    "",
    "%FF",
    "99999999999999999999999999",
    "-1",
    "1e999",
    "http%3A%2F%2Fa%20b%2F",
    "%3C%3E%22",
    "%00",
    "%C2%B2",
]
"""Query parameter values, likewise: empty, bad UTF-8, huge, negative, infinite, a bad IRI, IRI delimiters, NUL."""
HOSTILE_JSON: list[Any] = [2**70, -(2**53) - 1, "http://a b/<>", [[[]]], {"@id": 1}, "\udcff", None, "", 1e308]
"""JSON property values: past 2^64 and 2^53, a bad IRI, nested lists, an object, a lone surrogate (valid JSON
text, no Unicode), null, empty, the largest double."""

RDF_BODIES = [
    b"<http://a b/> <http://x/p> <http://x/o> .",
    b"@prefix : <",
    b'<http://x/s> <http://x/p> "1"^^<',
    b'{"@context": "http://example.org/remote-context", "@id": "http://x/s"}',
    (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><rdf:RDF '
        b'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="http://x/&b;"/>'
        b'</rdf:RDF>'
    ),
]
TEXT_BODIES = [b"[]", b"null", b'{"a":', b'{"x": 1e999}', b'a,b\n"unterminated', b"\n\n{}\n", b'"\\udcff"']
ODD_ACCEPTS = ["text/html", "application/x-nothing", "*/*;q=zero", "text/turtle;q=1, text/html;q=0"]


@dataclass(frozen=True)
class Case:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None = None

    def send(self, http: httpx.Client) -> httpx.Response:
        return http.request(self.method, self.url, headers=self.headers, content=self.body)


def _schema(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return _schema(spec, schema[key][0])
    return schema


def sensible_json(spec: dict[str, Any], schema: dict[str, Any], depth: int = 0) -> Any:
    """A value of the schema's types (the first alternative of each), for the walk to vary one property of."""
    schema = _schema(spec, schema)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        if depth > 3:
            return {}
        return {name: sensible_json(spec, sub, depth + 1) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [sensible_json(spec, schema.get("items", {}), depth + 1)] if depth <= 3 else []
    return {"integer": 1, "number": 1.5, "boolean": True, "null": None}.get(str(kind), "x")


def surrogates(value: Any) -> Any:
    """``value`` with each of its texts a lone surrogate, however deep: any text the service takes may hold one."""
    if isinstance(value, dict):
        return {key: surrogates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [surrogates(item) for item in value]
    return "\udcff" if isinstance(value, str) else value


def some(values: list[Any], count: int, turn: int) -> list[Any]:
    """``count`` of ``values``, starting at ``turn``: each operation gets a few, the walk gets them all."""
    return [values[(turn + i) % len(values)] for i in range(min(count, len(values)))]


def cases(spec: dict[str, Any], auth: dict[str, str]) -> Iterator[Case]:
    """The walk's requests, for every operation of ``spec``: one hostile input each, reads first (a write the
    walk makes, such as a sign-off, does not change what the reads meet)."""
    operations = [
        (template, method.upper(), operation)
        for template, item in spec["paths"].items()
        for method, operation in item.items()
    ]
    operations.sort(key=lambda o: o[1] not in ("GET", "HEAD"))
    for turn, (template, method, operation) in enumerate(operations):
        parameters = operation.get("parameters", [])
        path_names = [p["name"] for p in parameters if p["in"] == "path"]
        query_names = [p["name"] for p in parameters if p["in"] == "query"]
        content = operation.get("requestBody", {}).get("content", {})
        media = next(iter(content), None)
        base = {**auth, **({"Content-Type": media} if media else {})}
        whole = sensible_json(spec, content[media]["schema"]) if media == "application/json" else None
        sensible_body = json.dumps(whole).encode() if whole is not None else b"" if media else None

        def url(path: dict[str, str], query: str = "", template: str = template) -> str:  # this operation's, bound
            filled = re.sub(r"\{(\w+)\}", lambda m: path[m[1]], template)
            return filled + (f"?{query}" if query else "")

        sensible = {name: SENSIBLE[name] for name in path_names}
        for name in path_names:
            for value in some(HOSTILE_SEGMENTS, 3, turn):
                yield Case(method, url({**sensible, name: value}), base, sensible_body)
        for name in query_names:
            for value in some(HOSTILE_VALUES, 2, turn + len(name)):
                yield Case(method, url(sensible, f"{name}={value}"), base, sensible_body)
            yield Case(method, url(sensible, f"{name}=a&{name}=b&{name}"), base, sensible_body)
        if method in ("GET", "HEAD"):
            for accept in some(ODD_ACCEPTS, 1, turn):
                yield Case(method, url(sensible), {**base, "Accept": accept})
        if media is None:
            continue
        target, types = url(sensible), list(content)
        bodies = [b"", b"\xff\xfe\xfd\x00", *TEXT_BODIES, *(RDF_BODIES if media != "application/json" else [])]
        for index, body in enumerate(bodies):
            yield Case(method, target, {**auth, "Content-Type": types[(turn + index) % len(types)]}, body)
        yield Case(method, target, {**auth, "Content-Type": "application/x-nothing"}, b"x")
        yield Case(method, target, auth, b"x")  # no Content-Type
        yield Case(method, target, {**auth, "Content-Type": f"{media}; charset=latin-1"}, "\u00e9".encode("latin-1"))
        for index, name in enumerate(whole if isinstance(whole, dict) else []):
            for value in [surrogates(whole[name]), *some(HOSTILE_JSON, 1, turn + index)]:
                yield Case(method, target, base, json.dumps({**whole, name: value}).encode())


def fault(case: Case, response: httpx.Response) -> str | None:
    """What is wrong with ``response`` to ``case``, or ``None``."""
    status, media = response.status_code, response.headers.get("content-type", "").split(";")[0]
    if status >= 500:
        return f"{status} {media}: {response.text[:300]}"
    if status < 400:
        return None
    if media == "text/html" and "text/html" in case.headers.get("Accept", ""):
        return None
    if media != PROBLEM:
        return f"{status} as {media or 'no media type'}: {response.text[:300]}"
    if case.method == "HEAD":
        return None
    body = response.json()
    if body.get("status") != status or not body.get("title") or not isinstance(body.get("detail"), str):
        return f"{status}: not a problem body: {response.text[:300]}"
    return None


def test_no_operation_answers_hostile_input_with_a_server_error_or_a_bare_error(example: Service) -> None:
    spec = example.http.get("/openapi.json").json()
    walked = list(cases(spec, example.auth()))
    assert len({(c.method, re.sub(r"\?.*", "", c.url)) for c in walked}) > 60  # every operation, walked
    faults = []
    for case in walked:
        try:
            response = case.send(example.http)
        except httpx.HTTPError as error:
            faults.append(f"{case.method} {case.url[:200]}: no answer ({error!r})")
            continue
        found = fault(case, response)
        if found:
            faults.append(
                f"{case.method} {case.url[:200]} {case.headers.get('Content-Type')} {case.body!r:.80}: {found}"
            )
    assert not faults, f"{len(faults)} of {len(walked)} requests:\n" + "\n".join(faults[:60])
