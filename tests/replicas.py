"""Service replicas as real ``caie serve`` processes over one remote store, and the check that their
catalog still describes the store exactly (what many writers must never break)."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx
from pyoxigraph import NamedNode

from service.core.digest import graph_digest
from service.core.namespaces import CATALOG, VOID
from service.core.store import RemoteStore, Store

from .conftest import BASE_URL, ROLES
from .servers import caie_serve, free_port, stop_process, wait_until_up

T = TypeVar("T")


def credentials_for(tokens: dict[str, str]) -> dict[str, dict[str, object]]:
    """``CAIE_TOKENS`` for ``tokens`` (agent to token), each agent with its roles in :data:`.harness.ROLES`."""
    return {token: {"agent": agent, "roles": ROLES[agent]} for agent, token in tokens.items()}


def remote_settings(query_url: str, update_url: str, store_url: str, settings: dict[str, object]) -> dict[str, str]:
    """The variables of a ``caie serve`` on a remote store's endpoints; ``settings`` become ``CAIE_*`` variables."""
    return {
        "CAIE_STORE": "remote",
        "CAIE_REMOTE_QUERY_URL": query_url,
        "CAIE_REMOTE_UPDATE_URL": update_url,
        "CAIE_REMOTE_STORE_URL": store_url,
        "CAIE_BASE_URL": BASE_URL,
        **{f"CAIE_{name.upper()}": str(value) for name, value in settings.items()},
    }


def remote_store(store_url: str) -> RemoteStore:
    return RemoteStore(f"{store_url}/query", f"{store_url}/update", f"{store_url}/store")


@dataclass
class Replica:
    """One running ``caie serve`` process and a client on it."""

    process: subprocess.Popen[bytes]
    http: httpx.Client
    tokens: dict[str, str]

    def auth(self, agent: str = "admin") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[agent]}"}

    def kill(self) -> None:
        """``kill -9``: no shutdown hook, no finally block, no lease renewal runs after this."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


@contextmanager
def replica(store_url: str, tokens: dict[str, str], **settings: object) -> Iterator[Replica]:
    """A ``caie serve`` process on a free port over the ``oxigraph serve`` at ``store_url``.

    ``settings`` become ``CAIE_*`` variables (e.g. ``bulk_lease_s=2``); every replica shares the base URL,
    so all of them read and write one catalog.
    """
    port = free_port()
    log = Path(tempfile.gettempdir()) / f"caie-replica-{port}.log"
    environment = remote_settings(f"{store_url}/query", f"{store_url}/update", f"{store_url}/store", settings)
    process = caie_serve(port, credentials_for(tokens), log=log, **environment)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/health", process, seconds=60)
        with httpx.Client(base_url=url, timeout=120.0) as http:
            yield Replica(process, http, tokens)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)  # a test may have paused it
            process.terminate()
            process.wait(timeout=20)


def poll(probe: Callable[[], T | None], what: str, seconds: float = 60.0, every: float = 0.01) -> T:
    """The first truthy answer of ``probe``, asked every ``every`` seconds until the deadline."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer = probe()
        if answer:
            return answer
        time.sleep(every)
    raise AssertionError(f"not within {seconds} s: {what}")


_DIGEST, _TRIPLES = CATALOG + "digest", VOID + "triples"
_COMMIT, _CLAIM = CATALOG + "commit", CATALOG + "claim"
_JOURNAL = (CATALOG + "loadInProgress", CATALOG + "loadOwner", CATALOG + "leaseUntil")


def catalog_matches_store(store: Store, catalog_graph: NamedNode) -> list[str]:
    """How the catalog and the store disagree; empty when the catalog describes the store exactly.

    Every catalogued graph has one digest, equal to the digest of the triples the store returns (so an
    entry whose graph is gone must describe it as empty), and one size equal to their number; every graph
    holding triples is catalogued; no write left a claim, a second commit token, or a bulk-load journal
    entry behind.
    """
    statements: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for row in store.select("SELECT ?g ?p ?o WHERE { GRAPH ?catalog { ?g ?p ?o } }", {"catalog": catalog_graph}):
        statements[row["g"].value][row["p"].value].append(row["o"].value)
    stored = {row["g"].value for row in store.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")}
    stored.discard(catalog_graph.value)
    catalogued = {graph for graph, about in statements.items() if _DIGEST in about}
    problems = [f"<{graph}> holds triples but has no catalog entry" for graph in sorted(stored - catalogued)]
    for graph in sorted(catalogued):
        about = statements[graph]
        triples = store.graph_triples(NamedNode(graph))
        if len(about[_DIGEST]) != 1:
            problems.append(f"<{graph}> has {len(about[_DIGEST])} digests: {sorted(about[_DIGEST])}")
        elif about[_DIGEST][0] != graph_digest(triples):
            problems.append(
                f"<{graph}> is catalogued with digest {about[_DIGEST][0]}, its triples have {graph_digest(triples)}"
            )
        if about[_TRIPLES] != [str(len(triples))]:
            problems.append(f"<{graph}> is catalogued with {about[_TRIPLES]} triples, the store has {len(triples)}")
        if len(about[_COMMIT]) > 1:
            problems.append(f"<{graph}> carries {len(about[_COMMIT])} commit tokens")
    for graph, about in sorted(statements.items()):
        problems += [f"<{graph}> still carries <{p}> {about[p]}" for p in (_CLAIM, *_JOURNAL) if about.get(p)]
    return problems


# ------------------------------------------------------------------ a service process over any SPARQL store


@dataclass
class ServiceProcess(Replica):
    """A ``caie serve`` process over a remote store named by its three endpoint URLs, its stderr kept."""

    url: str = ""
    stderr_path: Path | None = None

    def stderr(self) -> str:
        """What the process wrote to stderr so far (its last 4,000 characters)."""
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")[-4000:]


class ServiceDidNotStart(RuntimeError):
    """``caie serve`` exited or never answered; the message carries its stderr."""


def start_service(
    query_url: str,
    update_url: str,
    store_url: str,
    tokens: dict[str, str],
    log_dir: Path,
    *,
    examples: bool = False,
    **settings: object,
) -> tuple[subprocess.Popen[bytes], str, Path]:
    """Start ``caie serve`` (with ``--examples`` if asked) over the given endpoints; returns at once with the
    process, its URL and the file its stderr goes to. ``settings`` become ``CAIE_*`` variables."""
    port = free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    stderr_path = log_dir / f"caie-serve-{port}.log"
    options = ["--examples"] if examples else []
    environment = remote_settings(query_url, update_url, store_url, settings)
    process = caie_serve(port, credentials_for(tokens), *options, log=stderr_path, **environment)
    return process, f"http://127.0.0.1:{port}", stderr_path


def wait_for_service(
    process: subprocess.Popen[bytes], url: str, stderr_path: Path, tokens: dict[str, str], seconds: float
) -> ServiceProcess:
    """The started service once ``/health`` answers; :class:`ServiceDidNotStart` with its stderr otherwise
    (the process is then stopped)."""
    try:
        wait_until_up(url + "/health", process, seconds=seconds)
    except RuntimeError as error:
        stop_process(process)
        text = stderr_path.read_text(encoding="utf-8", errors="replace")[-4000:]
        raise ServiceDidNotStart(f"{error}; its stderr:\n{text}") from None
    return ServiceProcess(process, httpx.Client(base_url=url, timeout=300.0), tokens, url, stderr_path)


def store_graphs(store: Store) -> set[str]:
    """Every named graph holding a triple, as the store lists them (a non-union query: no dataset sent)."""
    return {row["g"].value for row in store.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")}


def catalog_matches_store_ignoring(store: Store, catalog_graph: NamedNode, ignored: set[str]) -> list[str]:
    """:func:`catalog_matches_store`, leaving out what it says about ``ignored`` graphs (a store's own system
    graphs, which Virtuoso lists as holding triples and no catalog describes)."""
    return [
        problem
        for problem in catalog_matches_store(store, catalog_graph)
        if not any(problem.startswith(f"<{graph}> ") for graph in ignored)
    ]
