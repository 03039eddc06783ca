"""What the fixtures build on: the settings and the :class:`Service` a test talks to, and the store snapshots
many tests start from. Store contents (the specification files, a signed-off evaluation) are built once per
session and backend, then copied into each test's empty store: :func:`dump`, :func:`restore` and
:func:`restored`; :func:`kept_quads` keeps one run's contents for every xdist worker.

Plain functions and classes, not fixtures: tests/conftest.py holds the fixtures (and their scopes) and re-exports
these, which the test modules import from it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx
from caie_vaccine.worked_example import load_worked_example
from pyoxigraph import NamedNode, Quad, RdfFormat, Triple, parse, serialize

from service.composition import build_services
from service.core.bootstrap import load_spec_files
from service.core.config import Settings
from service.core.graphs import GraphService
from service.core.memo import kept
from service.core.store import ChangeSet, EmbeddedStore, RemoteStore, Store

from .virtuoso import VirtuosoStore

BASE_URL = "http://caie.test/"
ROLES = {
    "admin": ["admin"],
    "annie": ["domain_expert"],
    "theo": ["evaluation_operator"],
    "dana": ["organizational_expert"],
    "vera": ["viewer"],
    "nora": ["annotator"],
}


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


def kept_quads(name: str, key: str, build: Callable[[], bytes]) -> list[Quad]:
    """What ``build`` makes (N-Quads), once per test run, not once per xdist worker: kept in the run's cache
    directory (:func:`.conftest.pytest_configure`) under ``key``."""
    return list(parse(kept(name, key, build, bytes), format=RdfFormat.N_QUADS))


def load_specification() -> bytes:
    scratch = EmbeddedStore()
    load_spec_files(graphs_over(scratch, BASE_URL))
    nquads = serialize(dump(scratch), format=RdfFormat.N_QUADS)
    scratch.close()
    return nquads


def build_worked_example(spec: list[Quad]) -> bytes:
    scratch = EmbeddedStore()
    restore(scratch, spec)
    assert load_worked_example(graphs_over(scratch, BASE_URL))  # it loads into a store holding only the spec files
    assert not scratch.ask("ASK { ?s ?p ?o }"), "the default graph is not empty: the copy would miss it"
    # each graph as the store writes it out: 0.25 s of CPU, where dump() builds a row per quad first (2.8 s)
    graphs = [row["g"] for row in scratch.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")]
    nquads = b"".join(scratch.export_graph(graph, RdfFormat.N_QUADS) for graph in graphs)  # type: ignore[arg-type]  # a GRAPH variable binds only named nodes
    scratch.close()
    return nquads
