"""Fixtures: every test that takes ``store`` or ``client`` runs on both backends.

``embedded`` is pyoxigraph in memory; ``remote`` is a real ``oxigraph serve`` process reached over
SPARQL 1.1 HTTP. The service runs under uvicorn and tests talk to it over real HTTP.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from service.api import create_app
from service.composition import build_services
from service.core.graphs import GraphService
from service.core.config import Settings
from service.core.store import EmbeddedStore, RemoteStore, Store

from .servers import app_server, oxigraph_server

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BASE_URL = "http://caie.test/"
ROLES = {
    "admin": ["admin"],
    "annie": ["domain_expert"],
    "theo": ["evaluation_operator"],
    "dana": ["organizational_expert"],
    "vera": ["viewer"],
}


def shared_path(*parts: str) -> Path:
    """A file under ../shared, or skip the test saying why."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: ../shared (caie-spec interop files) is not beside this checkout")
    return path


@pytest.fixture(scope="session")
def tokens() -> dict[str, str]:
    """Agent name to a random bearer token, fresh each run."""
    return {agent: secrets.token_urlsafe(16) for agent in ROLES}


@pytest.fixture(scope="session")
def remote_url() -> Iterator[str]:
    with oxigraph_server() as url:
        yield url


def _remote(url: str) -> RemoteStore:
    return RemoteStore(f"{url}/query", f"{url}/update", f"{url}/store")


@pytest.fixture(params=["embedded", "remote"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    """An empty store of each backend."""
    if request.param == "embedded":
        backend: Store = EmbeddedStore()
    else:
        url = request.getfixturevalue("remote_url")
        httpx.post(f"{url}/update", content=b"DROP ALL", headers={"Content-Type": "application/sparql-update"}).raise_for_status()
        backend = _remote(url)
    yield backend
    backend.close()


def settings_for(tokens: dict[str, str], **overrides: object) -> Settings:
    credentials = {token: {"agent": agent, "roles": ROLES[agent]} for agent, token in tokens.items()}
    values: dict[str, object] = {"base_url": BASE_URL, "tokens": json.dumps(credentials), "max_body_bytes": 2_000_000}
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@dataclass
class Service:
    """The running service: an httpx client on its URL, the store behind it, the tokens."""

    http: httpx.Client
    store: Store
    tokens: dict[str, str]
    url: str

    def auth(self, agent: str = "admin") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[agent]}"}


@pytest.fixture
def service(store: Store, tokens: dict[str, str]) -> Iterator[Service]:
    """The service over real HTTP, on an empty store of each backend."""
    app = create_app(settings_for(tokens), store)
    with app_server(app) as url, httpx.Client(base_url=url, timeout=60.0) as http:
        yield Service(http, store, tokens, url)


def graphs_over(store: Store, base_url: str = BASE_URL) -> GraphService:
    """The graph service over ``store``, built by the composition root the app and the CLI use."""
    return build_services(Settings(base_url=base_url), store, recover=False).graphs
