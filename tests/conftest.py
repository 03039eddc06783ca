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
once per session and backend, then copied into each test's empty store: :func:`.harness.dump`,
:func:`.harness.restore` and :func:`.harness.restored`, with the :class:`.harness.Service` and its settings,
re-exported here for the test modules that import them from conftest.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import httpx
import pytest
from pyoxigraph import Quad, RdfFormat, serialize
from rdflib import Graph

from service.api import create_app
from service.core.bootstrap import spec_files
from service.core.kg_shapes import kg_shapes as shapes_for
from service.core.kg_shapes import repository_shapes
from service.core.memo import CACHE_DIR_ENV
from service.core.outbound import tls_context
from service.core.store import EmbeddedStore, RemoteStore, Store

from .epo_terms import CAIE_EPO_FILE, EPO_FILE
from .harness import (
    BASE_URL,
    ROLES,
    Service,
    build_worked_example,
    dump,
    graphs_over,
    kept_quads,
    load_specification,
    restore,
    restored,
    settings_for,
)
from .scheduling import longest_first
from .servers import AppSlot, app_server, free_port, oxigraph_server, stop_process, wait_until_up
from .virtuoso import LIST_GRAPHS, VirtuosoServer, VirtuosoStore, virtuoso_server

pytest_plugins = [
    "tests.pages_browser",  # the browser fixtures and page checks (Playwright on Debian's Chromium)
    "tests.record_fixtures",  # the evaluation records HTTP tests in several folders start from
]

__all__ = [  # what the test modules import from conftest (dump, restore, restored and the rest from .harness)
    "ALSO_REMOTE",
    "BASE_URL",
    "EMBEDDED_ONLY",
    "REPO",
    "ROLES",
    "Service",
    "dump",
    "graphs_over",
    "restore",
    "restored",
    "settings_for",
    "shared_path",
    "unavailable",
]

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


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
        own says so with ``pytest.mark.engines``. First, so that ``-m`` selects by the mark. Then the longest modules go
    first (:mod:`.scheduling`)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_remote = callspec is not None and callspec.params.get("store") in ("remote", "virtuoso")
        if on_remote or ENGINE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.engines)
    longest_first(items, REPO)


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
        data={"query": LIST_GRAPHS},
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


@pytest.fixture(scope="session")
def snapshots() -> dict[tuple[str, str], list[Quad]]:
    """Store contents by (backend, name), filled by :func:`restored`."""
    return {}


# ------------------------------------------------------------------------------- contents many modules share
# Session fixtures here, not imported by the modules that use them: pytest keeps a fixture per module that
# imports it, so each importing module built (or started) its own.


@pytest.fixture(scope="session")
def spec_quads() -> list[Quad]:
    """The specification files (DSO, KGs, EPO, shapes) and their catalog, kept by the digest of the files: a load
    records its time and random commit ids in the catalog, so two processes' loads differ, and what is kept by
    these quads' digest (:func:`worked_example_quads`) was built again in every worker."""
    digest = hashlib.sha256()
    for spec in spec_files():
        digest.update(spec.path.read_bytes())
    return kept_quads("specification", digest.hexdigest()[:16], load_specification)


@pytest.fixture(scope="session")
def worked_example_quads(spec_quads: list[Quad]) -> list[Quad]:
    """The specification files and the worked example (envelope signed off, plan 1 approved), as ``caie serve
    --examples`` loads them, kept by the digest of the spec files it starts from (the code cannot change within a
    run), then copied into each test's store or data directory: the scenario tables are compiled once, here."""
    key = hashlib.sha256(serialize(spec_quads, format=RdfFormat.N_QUADS)).hexdigest()[:16]
    return kept_quads("worked-example", key, lambda: build_worked_example(spec_quads))


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


@pytest.fixture(scope="session")
def epo() -> Graph:
    """The published EPO (ontologies/epo.ttl), parsed once for the session: its tests only read it."""
    g = Graph()
    g.parse(EPO_FILE, format="turtle")
    return g


@pytest.fixture(scope="session")
def caie_epo() -> Graph:
    """The caie-spec EPO from ../shared, parsed once for the session: the alignment tests only read it."""
    if not CAIE_EPO_FILE.is_file():
        unavailable(f"caie-spec EPO not found at {CAIE_EPO_FILE}; the alignment tests need the shared interop folder")
    g = Graph()
    g.parse(CAIE_EPO_FILE, format="turtle")
    return g
