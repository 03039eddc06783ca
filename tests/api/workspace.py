"""A person's browser for the sign-in tests, over real HTTP, and the people and sample pages they use.

httpx keeps cookies, but never sends a ``Secure`` one back over ``http://127.0.0.1``, which browsers treat as a
secure origin; :class:`Visitor` keeps them as a browser does there (and shows each ``Set-Cookie`` as sent).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.cookies import Morsel, SimpleCookie

import httpx
from argon2 import PasswordHasher
from fastapi import APIRouter, FastAPI
from fastapi.responses import PlainTextResponse, Response

from service.api import create_app
from service.api.sessions import FormWriter, SignedIn
from service.core.catalog import GraphKind
from service.core.outbound import tls_context
from service.core.roles import require_graph_writer
from service.core.store import Store

from ..conftest import settings_for
from ..servers import AppSlot

PASSWORDS = {"ada": "ada's long password", "annie": "annie's long password", "admin": "admin's long password"}
PEOPLE = [
    {
        "agent": "ada",
        "username": "ada",
        "password": PASSWORDS["ada"],
        "roles": ["annotator"],
        "name": "Ada Lovelace",
        "languages": ["en", "fr"],
    },
    {"agent": "annie", "username": "Annie", "password": PASSWORDS["annie"], "roles": ["domain_expert"]},
    {"agent": "admin", "username": "admin", "password": PASSWORDS["admin"], "roles": ["admin"]},
]
_QUICK = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


def quick_hashes(people: list[dict]) -> list[dict]:
    """``people`` with each ``password`` given as a ``password_hash`` of argon2 at its lowest cost. The page tests sign
    in hundreds of times, and at the production cost each check takes a quarter second of a core: minutes of the
    suite. A hash carries its own cost, so the service checks these as it checks any; the ``password`` entries and
    the production cost are what tests/api/test_sign_in.py tests."""
    return [
        {key: value for key, value in entry.items() if key != "password"}
        | {"password_hash": _QUICK.hash(entry["password"])}
        for entry in people
    ]


SAMPLE_FORM = "/sample/ontology-writer"
SAMPLE_PAGE = "/sample/signed-in"


def sample_routes(app: FastAPI) -> None:
    """A form that asks the domain's own role check (who may write an ontology graph) and a signed-in-only page,
    ahead of the catch-all, as the workspace's pages will be."""
    router = APIRouter()

    @router.post(SAMPLE_FORM)
    async def sample_form(person: FormWriter) -> Response:
        require_graph_writer(person.credential, GraphKind.ONTOLOGY)
        return Response(status_code=204)

    @router.get(SAMPLE_PAGE)
    async def sample_page(person: SignedIn) -> PlainTextResponse:
        return PlainTextResponse(person.agent)

    app.router.routes[:0] = router.routes


class ManualClock:
    """A clock that moves only when told: sessions' and sign-in limits' ages (called: seconds, monotonic), and the
    records' dates (:meth:`utc`: a deployment's ``services.clock``), without waiting."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def utc(self) -> datetime:
        """The time as a record is dated by it (``start`` read as seconds since the epoch), UTC as the service's."""
        return datetime.fromtimestamp(self.now, UTC)


@contextmanager
def dated_by_hand(slot: AppSlot) -> Iterator[ManualClock]:
    """A manual clock, at the current time, dating the records of the app ``slot`` serves for the block (set as
    its services' clock, as a deployment's is; the one before is given back): advanced where a test would sleep
    for a later date."""
    app = slot.app
    assert isinstance(app, FastAPI), "no app is being served"
    clock, before = ManualClock(time.time()), app.state.services.clock
    app.state.services.clock = clock.utc
    try:
        yield clock
    finally:
        app.state.services.clock = before


@contextmanager
def served(
    store: Store,
    tokens: dict[str, str],
    app_slot: tuple[AppSlot, str],
    clock: ManualClock | None = None,
    **overrides: object,
) -> Iterator[str]:
    """The service with :data:`PEOPLE` and the sample routes, over real HTTP (its sessions and sign-in limits on
    ``clock`` if given); yields its URL."""
    slot, url = app_slot
    app = create_app(settings_for(tokens, people=json.dumps(PEOPLE), **overrides), store)
    if clock is not None:
        app.state.workspace.sessions.clock = app.state.workspace.limits.clock = clock
    sample_routes(app)
    with slot.serving(app):
        yield url


def hidden(page: str, name: str, form: str = "") -> str:
    """A hidden field's value, in the form of class ``form`` if given (a page may hold several forms)."""
    if form:
        page = page[page.index(f'<form class="{form}"') :]
    found = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)">', page)
    assert found, f"no hidden {name} in the page"
    return found.group(1)


def shown_error(page: str) -> str:
    found = re.search(r'<p class="error"[^>]*>([^<]*)</p>', page)
    return found.group(1) if found else ""


class Visitor:
    """A browser: cookies kept as on a secure origin, ``Accept: text/html``; ``address`` is its loopback address."""

    def __init__(self, url: str, address: str = "127.0.0.1") -> None:
        self.http = httpx.Client(
            base_url=url,
            transport=httpx.HTTPTransport(local_address=address, verify=tls_context()),
            headers={"Accept": "text/html"},
            timeout=120,
        )
        self.jar: dict[str, str] = {}
        self.sent: dict[str, Morsel[str]] = {}

    def request(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))  # type: ignore[call-overload]  # kwargs are **object; headers, when given, are a mapping
        if self.jar:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.jar.items())
        response = self.http.request(method, path, headers=headers, **kwargs)  # type: ignore[arg-type]  # kwargs are httpx's own request arguments, passed through
        self.http.cookies.clear()
        for raw in response.headers.get_list("set-cookie"):
            cookie: SimpleCookie = SimpleCookie()
            cookie.load(raw)
            for name, morsel in cookie.items():
                self.sent[name] = morsel
                if morsel["max-age"] == "0":
                    self.jar.pop(name, None)
                else:
                    self.jar[name] = morsel.value
        return response

    def get(self, path: str, **kwargs: object) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: object) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def sign_in(self, username: str, password: str, next_path: str = "") -> httpx.Response:
        """The sign-in page, then its form sent as a browser sends it."""
        page = self.get("/sign-in" + (f"?next={next_path}" if next_path else ""))
        assert page.status_code == 200, page.text
        return self.post(
            "/sign-in",
            data={
                "csrf_token": hidden(page.text, "csrf_token", "sign-in"),
                "next": hidden(page.text, "next"),
                "username": username,
                "password": password,
            },
        )

    def csrf(self) -> str:
        """The signed-in session's token, from the sign-out form every page carries."""
        return hidden(self.get("/graphs").text, "csrf_token")

    def close(self) -> None:
        self.http.close()


@contextmanager
def visitor(url: str, address: str = "127.0.0.1") -> Iterator[Visitor]:
    browser = Visitor(url, address)
    try:
        yield browser
    finally:
        browser.close()
