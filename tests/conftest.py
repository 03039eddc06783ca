"""Fixtures: every test that takes ``store`` or ``service`` runs on the embedded and the remote backend.

``embedded`` is pyoxigraph in memory; ``remote`` is a real ``oxigraph serve`` process reached over
SPARQL 1.1 HTTP; ``virtuoso`` is the remote backend on a real Virtuoso 7 (:func:`.virtuoso.virtuoso_server`).
A module opts its tests into Virtuoso too with ``pytestmark = pytest.mark.backends("embedded", "remote",
"virtuoso")`` (read by :func:`pytest_generate_tests`); the others run on ``embedded`` and ``remote`` only,
to keep ``make test`` within its time budget (docs/stores.md, "What runs on each engine in `make test`").
Where a module's point is domain logic rather than the store's transport (the plan tests), it runs on
:data:`EMBEDDED_ONLY` and marks the few tests that read and write through a remote store :data:`ALSO_REMOTE`
(a test's own ``backends`` marker wins over its module's). The service runs under uvicorn and tests talk to it over real HTTP: one uvicorn server
for the session, serving the app each test creates over its own empty store (:class:`.servers.AppSlot`).

Store contents that many tests start from (the specification files, a signed-off evaluation) are built
once per session and backend, then copied into each test's empty store: :func:`dump`, :func:`restore`
and :func:`restored`.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import httpx
import pytest
from caie_vaccine.worked_example import load_worked_example
from pyoxigraph import NamedNode, Quad, RdfFormat, Triple, parse, serialize
from rdflib import Graph

from service.api import create_app
from service.composition import build_services
from service.core.bootstrap import load_spec_files, spec_files
from service.core.config import Settings
from service.core.graphs import GraphService
from service.core.kg_shapes import kg_shapes as shapes_for
from service.core.kg_shapes import repository_shapes
from service.core.memo import CACHE_DIR_ENV, kept
from service.core.outbound import tls_context
from service.core.store import ChangeSet, EmbeddedStore, RemoteStore, Store

from .servers import AppSlot, app_server, free_port, oxigraph_server, stop_process, wait_until_up
from .virtuoso import VirtuosoServer, virtuoso_server

pytest_plugins = [
    "tests.pages_browser",  # the browser fixtures and page checks (Playwright on Debian's Chromium)
    "tests.record_fixtures",  # the evaluation records HTTP tests in several folders start from
]

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BASE_URL = "http://caie.test/"
ROLES = {
    "admin": ["admin"],
    "annie": ["domain_expert"],
    "theo": ["evaluation_operator"],
    "dana": ["organizational_expert"],
    "vera": ["viewer"],
    "nora": ["annotator"],
}


def unavailable(reason: str) -> NoReturn:
    """A test's need that is missing: skipped saying why on a developer's machine, failed under CI (``CI=true``),
    where the Makefile installs every need and a skip would hide a test that never ran."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (under CI every test must run)", pytrace=False)
    pytest.skip(reason)


def shared_path(*parts: str) -> Path:
    """A file under ../shared; skipped saying why (failed under CI) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        unavailable(f"{path} is absent: ../shared (caie-spec interop files) is not beside this checkout")
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


BACKENDS = ("embedded", "remote", "virtuoso")
DEFAULT_BACKENDS = ("embedded", "remote")
_LIST_GRAPHS = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"


EMBEDDED_ONLY = pytest.mark.backends("embedded")
"""For a module or test whose point does not depend on the store's transport (both stores run one query engine)."""
ALSO_REMOTE = pytest.mark.backends(*DEFAULT_BACKENDS)
"""For a test, in an :data:`EMBEDDED_ONLY` module, that covers what a remote store reads and writes differently."""


def pytest_configure(config: pytest.Config) -> None:
    # Compiled scenario tables and KG validations shared by every process of this run (xdist workers, the CLI
    # and service processes tests start) and by nothing else: a run computes each once, never reads an earlier
    # run's.
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
    os.environ[CACHE_DIR_ENV] = str(Path(tempfile.gettempdir()) / f"caie-test-cache-{run}")
    config.addinivalue_line(
        "markers",
        "backends(*names): the store backends a module's tests run on "
        f"(of {', '.join(BACKENDS)}; default {', '.join(DEFAULT_BACKENDS)})",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``store`` by the closest ``backends`` marker; without one the fixture's own params apply
    (embedded and remote). An explicit ``parametrize("store", …)`` on the test wins over both."""
    marker = metafunc.definition.get_closest_marker("backends")
    if marker is None or "store" not in metafunc.fixturenames:
        return
    if any(
        m.args and "store" in str(m.args[0]).replace(" ", "").split(",")
        for m in metafunc.definition.iter_markers("parametrize")
    ):
        return
    unknown = set(marker.args) - set(BACKENDS)
    if unknown:
        raise ValueError(f"unknown store backends {sorted(unknown)}: use {BACKENDS}")
    # As a parametrize mark, so pytest's own hooks (which run after this one) parametrize by it and leave the
    # fixture's params out, exactly as for a module's ``pytestmark = pytest.mark.parametrize("store", …)``.
    metafunc.definition.add_marker(pytest.mark.parametrize("store", list(marker.args), indirect=True))


ENGINE_FIXTURES = frozenset({"remote_url", "virtuoso"})
"""The session's ``oxigraph serve`` and Virtuoso: a test using either is an engine test."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on a remote store (the ``store`` fixture's ``remote`` or ``virtuoso`` parameter, or the session's
    servers themselves) is an engine test: it runs with ``make test-engines``, which CI runs after ``make test``
    (docs/stores.md), so ``make test`` keeps its 420 s on the embedded store. A test that starts an engine of its
    own says so with ``pytest.mark.engines``. First, so that ``-m`` selects by the mark."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_remote = callspec is not None and callspec.params.get("store") in ("remote", "virtuoso")
        if on_remote or ENGINE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.engines)


class VirtuosoStore(RemoteStore):
    """The remote backend on the session's Virtuoso, as an operator configures it for Virtuoso's packaged limits:
    ``row_cap`` its ``ResultSetMaxRows`` (10,000). ``system_graphs`` are the graphs the fresh database held
    (Virtuoso's own); the tests never drop or read them."""

    def __init__(self, server: VirtuosoServer, system_graphs: frozenset[str]) -> None:
        super().__init__(server.query_url, server.update_url, server.store_url, row_cap=10_000)
        self.system_graphs = system_graphs

    def test_graphs(self) -> list[NamedNode]:
        """Every graph holding triples but Virtuoso's own."""
        rows = self.select(_LIST_GRAPHS)
        return [row["g"] for row in rows if row["g"].value not in self.system_graphs]  # type: ignore[misc]  # a GRAPH variable binds only named nodes

    def empty(self) -> None:
        """Drop every graph but Virtuoso's own, in one update request (``DROP ALL`` would drop those too)."""
        graphs = self.test_graphs()
        if graphs:
            self.run_update(" ;\n".join(f"DROP SILENT GRAPH {graph}" for graph in graphs))


@pytest.fixture(scope="session")
def virtuoso() -> Iterator[VirtuosoServer]:
    """A real Virtuoso 7 for the session (Debian's 7.2.5.1 with its packaged limits)."""
    with virtuoso_server() as server:
        yield server


@pytest.fixture(scope="session")
def virtuoso_system_graphs(virtuoso: VirtuosoServer) -> frozenset[str]:
    """The graphs Virtuoso holds before any test writes: its own, never dropped."""
    response = httpx.post(
        virtuoso.query_url,
        data={"query": _LIST_GRAPHS},
        headers={"Accept": "application/sparql-results+json"},
        timeout=60,
    )
    response.raise_for_status()
    return frozenset(row["g"]["value"] for row in response.json()["results"]["bindings"] if "g" in row)


@pytest.fixture(params=list(DEFAULT_BACKENDS))
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    """An empty store of each backend (``virtuoso`` only where a module asks for it: :func:`pytest_generate_tests`)."""
    backend: Store
    if request.param == "embedded":
        backend = EmbeddedStore()
    elif request.param == "remote":
        url = request.getfixturevalue("remote_url")
        httpx.post(
            f"{url}/update", content=b"DROP ALL", headers={"Content-Type": "application/sparql-update"}
        ).raise_for_status()
        backend = _remote(url)
    elif request.param == "virtuoso":
        backend = VirtuosoStore(request.getfixturevalue("virtuoso"), request.getfixturevalue("virtuoso_system_graphs"))
        backend.empty()
    else:
        raise ValueError(f"unknown store backend {request.param!r}")
    yield backend
    backend.close()


def settings_for(tokens: dict[str, str], **overrides: object) -> Settings:
    credentials = {token: {"agent": agent, "roles": ROLES[agent]} for agent, token in tokens.items()}
    values: dict[str, object] = {"base_url": BASE_URL, "tokens": json.dumps(credentials), "max_body_bytes": 2_000_000}
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]  # values mixes Settings' field types, which a dict[str, object] cannot say


def backend_of(store: Store) -> str:
    if isinstance(store, VirtuosoStore):
        return "virtuoso"
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
    # generous: a worker's first plan compiles the scenario tables, tens of seconds on a busy machine
    with slot.serving(app), httpx.Client(base_url=url, timeout=300.0, verify=tls_context()) as http:
        yield Service(http, store, tokens, url)
    # a run a test started in the background must not write into the store the next test restores
    assert app.state.services.jobs.wait(120), "a run job of this test was still running 120 s after it ended"


# ------------------------------------------------------------------------------------------- store snapshots


def dump(store: Store) -> list[Quad]:
    """Every quad of the store (all in named graphs: the service writes nothing to the default graph).

    On Virtuoso (no separate default graph: a query with no dataset reads every graph) each of the test's graphs
    is read whole, past its ``ResultSetMaxRows``; its own graphs are left out."""
    if isinstance(store, VirtuosoStore):
        graphs = store.test_graphs()
    else:
        assert not store.ask("ASK { ?s ?p ?o }"), "the default graph is not empty: a snapshot would miss it"
        # each graph read whole (a store's own read): rows of a SELECT over every quad cost 6 times as much
        graphs = [row["g"] for row in store.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { } }")]  # type: ignore[misc]  # a GRAPH variable binds only named nodes
    return [Quad(t.subject, t.predicate, t.object, graph) for graph in graphs for t in store.graph_triples(graph)]


def restore(store: Store, quads: Sequence[Quad]) -> None:
    """Put ``quads`` into an empty store: one transaction on the embedded backend; on a remote one, a Graph
    Store Protocol bulk load of N-Triples per graph (much faster than one big SPARQL Update)."""
    if not isinstance(store, RemoteStore):
        store.apply(ChangeSet(insert=list(quads)))
        return
    graphs: dict[NamedNode, list[Triple]] = defaultdict(list)
    for quad in quads:
        graphs[quad.graph_name].append(quad.triple)  # type: ignore[index]  # the service writes no default-graph quads: dump() asserts it
    for graph, triples in graphs.items():
        store.bulk_load_new_graph(graph, serialize(triples, format=RdfFormat.N_TRIPLES), RdfFormat.N_TRIPLES, BASE_URL)


@pytest.fixture(scope="session")
def snapshots() -> dict[tuple[str, str], list[Quad]]:
    """Store contents by (backend, name), filled by :func:`restored`."""
    return {}


def restored(
    service: Service, snapshots: dict[tuple[str, str], list[Quad]], name: str, build: Callable[[Service], None]
) -> Service:
    """``service`` (on its empty store) holding what ``build`` makes over HTTP.

    The first test per backend runs ``build`` (with every assertion in it) and keeps the store's quads;
    later tests on that backend get those quads copied into their store, without the HTTP round trips.
    """
    key = (service.backend, name)
    if key in snapshots:
        # emptied first: a snapshot built on another one restored here holds graphs the record rewrites (a run's
        # tallies), which a union of the two would hold twice
        service.store.run_update("DROP ALL")
        restore(service.store, snapshots[key])
    else:
        build(service)
        snapshots[key] = dump(service.store)
    return service


def graphs_over(store: Store, base_url: str = BASE_URL) -> GraphService:
    """The graph service over ``store``, built by the composition root the app and the CLI use."""
    return build_services(Settings(base_url=base_url), store, recover=False).graphs


# ------------------------------------------------------------------------------- contents many modules share
# Session fixtures here, not imported by the modules that use them: pytest keeps a fixture per module that
# imports it, so each importing module built (or started) its own.


def _kept_quads(name: str, key: str, build: Callable[[], bytes]) -> list[Quad]:
    """What ``build`` makes (N-Quads), once per test run, not once per xdist worker: kept in the run's cache
    directory (:func:`pytest_configure`) under ``key``."""
    return list(parse(kept(name, key, build, bytes), format=RdfFormat.N_QUADS))


def _load_specification() -> bytes:
    scratch = EmbeddedStore()
    load_spec_files(graphs_over(scratch, BASE_URL))
    nquads = serialize(dump(scratch), format=RdfFormat.N_QUADS)
    scratch.close()
    return nquads


@pytest.fixture(scope="session")
def spec_quads() -> list[Quad]:
    """The specification files (DSO, KGs, EPO, shapes) and their catalog, kept by the digest of the files: a load
    records its time and random commit ids in the catalog, so two processes' loads differ, and what is kept by
    these quads' digest (:func:`worked_example_quads`) was built again in every worker."""
    digest = hashlib.sha256()
    for spec in spec_files():
        digest.update(spec.path.read_bytes())
    return _kept_quads("specification", digest.hexdigest()[:16], _load_specification)


def _build_worked_example(spec: list[Quad]) -> bytes:
    scratch = EmbeddedStore()
    restore(scratch, spec)
    assert load_worked_example(graphs_over(scratch, BASE_URL))  # it loads into a store holding only the spec files
    assert not scratch.ask("ASK { ?s ?p ?o }"), "the default graph is not empty: the copy would miss it"
    # each graph as the store writes it out: 0.25 s of CPU, where dump() builds a row per quad first (2.8 s)
    graphs = [row["g"] for row in scratch.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")]
    nquads = b"".join(scratch.export_graph(graph, RdfFormat.N_QUADS) for graph in graphs)  # type: ignore[arg-type]  # a GRAPH variable binds only named nodes
    scratch.close()
    return nquads


@pytest.fixture(scope="session")
def worked_example_quads(spec_quads: list[Quad]) -> list[Quad]:
    """The specification files and the worked example (envelope signed off, plan 1 approved), as ``caie serve
    --examples`` loads them, kept by the digest of the spec files it starts from (the code cannot change within a
    run), then copied into each test's store or data directory: the scenario tables are compiled once, here."""
    key = hashlib.sha256(serialize(spec_quads, format=RdfFormat.N_QUADS)).hexdigest()[:16]
    return _kept_quads("worked-example", key, lambda: _build_worked_example(spec_quads))


@pytest.fixture(scope="session")
def chat_server() -> Iterator[str]:
    """The base URL of a running tests/runs/chat_server.py (OpenAI-compatible API under ``/v1``)."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "tests.runs.chat_server:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/health", process)
        yield url
    finally:
        stop_process(process, grace_s=5)


@pytest.fixture(scope="module")
def dso() -> Graph:
    """The vaccine-education DSO, from the repository's file."""
    return Graph().parse(REPO / "ontologies" / "dso" / "vaccine-education.ttl")


@pytest.fixture(scope="module")
def kg_shapes(dso: Graph) -> Graph:
    """The generic KG shapes and those the DSO declares (epo:knowledgeGraphShapes), from the repository's files."""
    return shapes_for(dso, repository_shapes)
