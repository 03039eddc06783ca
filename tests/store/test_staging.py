"""Content larger than one update request may carry is staged in chunks and committed by one small request;
staged or stray content never counts as part of a record."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, serialize

from service.composition import build_services
from service.core.config import Credential, Settings
from service.core.digest import graph_digest
from service.core.store import ChangeSet, RemoteStore, Store

from ..conftest import BASE_URL

pytestmark = pytest.mark.backends("embedded", "remote", "virtuoso")

SYSTEM_ADMIN = {"agent": "admin", "roles": ["admin"]}
EPO = "https://w3id.org/ob-caie/epo/"
STAGING = BASE_URL + ".well-known/staging/"


def _ontology(triples: int) -> bytes:
    onto = NamedNode("http://example.org/big")
    quads = [
        Quad(
            onto,
            NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
            NamedNode("http://www.w3.org/2002/07/owl#Ontology"),
        )
    ]
    quads += [
        Quad(NamedNode(f"http://example.org/t{i}"), NamedNode("http://example.org/n"), Literal(str(i)))
        for i in range(triples - 1)
    ]
    return serialize([q.triple for q in quads], format=RdfFormat.N_TRIPLES)


@pytest.mark.parametrize("graph_store", ["GSP POST", "no Graph Store writes: INSERT DATA"])
@pytest.mark.parametrize("store", ["remote"], indirect=True)
def test_a_large_write_is_staged_in_chunks_and_committed_whole(store: Store, remote_url: str, graph_store: str) -> None:
    if graph_store != "GSP POST":  # a store URL that answers 404, as where a store offers no Graph Store Protocol
        store = RemoteStore(f"{remote_url}/query", f"{remote_url}/update", f"{remote_url}/no-graph-store")
    store.stage_chunk = 120  # type: ignore[attr-defined]  # the Store protocol has no stage_chunk; both backends under test do
    services = build_services(Settings(base_url=BASE_URL, remote_max_update_triples=50), store)
    ref = services.graphs.ref("ontologies", "big")
    result = services.graphs.write(ref, _ontology(400), RdfFormat.N_TRIPLES, Credential.model_validate(SYSTEM_ADMIN))
    stored = store.graph_triples(ref.iri)
    assert len(stored) == 400 == result.entry.triples
    assert graph_digest(stored) == result.entry.digest == services.catalog.entry(ref.iri).digest
    leftovers = store.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert not [row["g"].value for row in leftovers if row["g"].value.startswith(STAGING)]
    journal = store.select("SELECT ?g WHERE { GRAPH ?c { ?g <https://w3id.org/ob-caie/catalog/loadInProgress> ?l } }")
    assert journal == []


def test_statements_outside_the_record_never_count(store: Store) -> None:
    services = build_services(Settings(base_url=BASE_URL), store)
    evaluation = NamedNode(BASE_URL + "evaluations/e")

    def approval(graph: str, key: str) -> list[Quad]:
        node, result, where = (
            NamedNode(f"{BASE_URL}evaluations/e/approvals/{key}"),
            NamedNode(f"urn:r:{key}"),
            NamedNode(graph),
        )
        return [
            Quad(node, NamedNode(p), o, where)
            for p, o in [
                ("http://www.w3.org/1999/02/22-rdf-syntax-ns#type", NamedNode(EPO + "RelevanceAssessment")),
                (EPO + "inEvaluation", evaluation),
                ("http://www.w3.org/ns/earl#subject", NamedNode("urn:c")),
                ("http://www.w3.org/ns/earl#assertedBy", NamedNode(BASE_URL + "agents/annie")),
                (
                    "http://www.w3.org/ns/prov#generatedAtTime",
                    Literal("2026-12-01T00:00:00Z", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#dateTime")),
                ),
                ("http://www.w3.org/ns/earl#result", result),
            ]
        ] + [
            Quad(
                result,
                NamedNode("http://www.w3.org/ns/earl#outcome"),
                NamedNode("http://www.w3.org/ns/earl#passed"),
                where,
            )
        ]

    store.apply(
        ChangeSet(
            insert=approval(BASE_URL + "evaluations/e/approvals/k1", "k1")
            + approval(STAGING + "half-written", "k2")
            + approval(BASE_URL + "kg/elsewhere", "k3")
        )
    )
    listed = {row["approval"].value for row in services.graphs.rows("approvals", {"evaluation": evaluation})}
    assert listed == {BASE_URL + "evaluations/e/approvals/k1"}
