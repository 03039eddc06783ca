"""Fixtures: every test that takes ``store`` or ``service`` runs on both backends.

``embedded`` is pyoxigraph in memory; ``remote`` is a real ``oxigraph serve`` process reached over
SPARQL 1.1 HTTP. The service runs under uvicorn and tests talk to it over real HTTP: one uvicorn server
for the session, serving the app each test creates over its own empty store (:class:`.servers.AppSlot`).

Store contents that many tests start from (the specification files, a signed-off evaluation) are built
once per session and backend, then copied into each test's empty store: :func:`dump`, :func:`restore`
and :func:`restored`.
"""

from __future__ import annotations

import json
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from pyoxigraph import NamedNode, Quad, RdfFormat, Triple, serialize

from service.api import create_app
from service.composition import build_services
from service.core.graphs import GraphService
from service.core.config import Settings
from service.core.store import ChangeSet, EmbeddedStore, RemoteStore, Store

from .servers import AppSlot, app_server, oxigraph_server

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
ALL_QUADS = "SELECT ?s ?p ?o ?g WHERE { GRAPH ?g { ?s ?p ?o } }"


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


def backend_of(store: Store) -> str:
    return "remote" if isinstance(store, RemoteStore) else "embedded"


@dataclass
class Service:
    """The running service: an httpx client on its URL, the store behind it, the tokens."""

    http: httpx.Client
    store: Store
    tokens: dict[str, str]
    url: str

    @property
    def backend(self) -> str:
        return backend_of(self.store)

    def auth(self, agent: str = "admin") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[agent]}"}


@pytest.fixture(scope="session")
def app_slot() -> Iterator[tuple[AppSlot, str]]:
    """One uvicorn server for the session, and the slot each test puts its app in; yields both and the URL."""
    slot = AppSlot()
    with app_server(slot) as url:
        yield slot, url


@pytest.fixture
def service(store: Store, tokens: dict[str, str], app_slot: tuple[AppSlot, str]) -> Iterator[Service]:
    """The service over real HTTP, on an empty store of each backend: a fresh app, served by the session's server."""
    slot, url = app_slot
    app = create_app(settings_for(tokens), store)
    with slot.serving(app), httpx.Client(base_url=url, timeout=60.0) as http:
        yield Service(http, store, tokens, url)


# ------------------------------------------------------------------------------------------- store snapshots


def dump(store: Store) -> list[Quad]:
    """Every quad of the store (all in named graphs: the service writes nothing to the default graph)."""
    assert not store.ask("ASK { ?s ?p ?o }"), "the default graph is not empty: a snapshot would miss it"
    return [Quad(r["s"], r["p"], r["o"], r["g"]) for r in store.select(ALL_QUADS)]  # type: ignore[arg-type]


def restore(store: Store, quads: Sequence[Quad]) -> None:
    """Put ``quads`` into an empty store: one transaction on the embedded backend; on a remote one, a Graph
    Store Protocol bulk load of N-Triples per graph (much faster than one big SPARQL Update)."""
    if not isinstance(store, RemoteStore):
        store.apply(ChangeSet(insert=list(quads)))
        return
    graphs: dict[NamedNode, list[Triple]] = defaultdict(list)
    for quad in quads:
        graphs[quad.graph_name].append(quad.triple)  # type: ignore[index]
    for graph, triples in graphs.items():
        store.bulk_load_new_graph(graph, serialize(triples, format=RdfFormat.N_TRIPLES), RdfFormat.N_TRIPLES, BASE_URL)


@pytest.fixture(scope="session")
def snapshots() -> dict[tuple[str, str], list[Quad]]:
    """Store contents by (backend, name), filled by :func:`restored`."""
    return {}


def restored(service: Service, snapshots: dict[tuple[str, str], list[Quad]], name: str,
             build: Callable[[Service], None]) -> Service:
    """``service`` (on its empty store) holding what ``build`` makes over HTTP.

    The first test per backend runs ``build`` (with every assertion in it) and keeps the store's quads;
    later tests on that backend get those quads copied into their store, without the HTTP round trips.
    """
    key = (service.backend, name)
    if key in snapshots:
        restore(service.store, snapshots[key])
    else:
        build(service)
        snapshots[key] = dump(service.store)
    return service


def graphs_over(store: Store, base_url: str = BASE_URL) -> GraphService:
    """The graph service over ``store``, built by the composition root the app and the CLI use."""
    return build_services(Settings(base_url=base_url), store, recover=False).graphs
