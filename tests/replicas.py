"""Service replicas as real ``caie serve`` processes over one remote store, and the check that their
catalog still describes the store exactly (what many writers must never break)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
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

from .conftest import BASE_URL, REPO, ROLES
from .servers import _wait_until_up, free_port

T = TypeVar("T")


def caie_binary() -> str:
    """The ``caie`` entry point installed beside this interpreter (the one a deployment runs)."""
    candidate = Path(sys.executable).with_name("caie")
    if not candidate.exists():
        raise RuntimeError(f"{candidate} is missing: pip install -e . (make test does)")
    return str(candidate)


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
    credentials = {token: {"agent": agent, "roles": ROLES[agent]} for agent, token in tokens.items()}
    env = {
        **os.environ,
        "CAIE_STORE": "remote",
        "CAIE_REMOTE_QUERY_URL": f"{store_url}/query",
        "CAIE_REMOTE_UPDATE_URL": f"{store_url}/update",
        "CAIE_REMOTE_STORE_URL": f"{store_url}/store",
        "CAIE_BASE_URL": BASE_URL,
        "CAIE_TOKENS": json.dumps(credentials),
        **{f"CAIE_{name.upper()}": str(value) for name, value in settings.items()},
    }
    process = subprocess.Popen([caie_binary(), "serve", "--host", "127.0.0.1", "--port", str(port)],
                               env=env, cwd=REPO, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url + "/health", process, seconds=60)
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
            problems.append(f"<{graph}> is catalogued with digest {about[_DIGEST][0]}, its triples have {graph_digest(triples)}")
        if about[_TRIPLES] != [str(len(triples))]:
            problems.append(f"<{graph}> is catalogued with {about[_TRIPLES]} triples, the store has {len(triples)}")
        if len(about[_COMMIT]) > 1:
            problems.append(f"<{graph}> carries {len(about[_COMMIT])} commit tokens")
    for graph, about in sorted(statements.items()):
        problems += [f"<{graph}> still carries <{p}> {about[p]}" for p in (_CLAIM, *_JOURNAL) if about.get(p)]
    return problems
