"""``POST /evaluations/imports`` over real HTTP on both backends: an outside record becomes a new evaluation,
checked against shapes/record.ttl and attributed to its importer; a refused import stores nothing."""

from __future__ import annotations

from decimal import Decimal

import httpx
import rdflib
from pyoxigraph import RdfFormat, parse, serialize
from rdflib.compare import isomorphic

from service.core.digest import blank_skolems, graph_digest

from ..conftest import BASE_URL, Service, shared_path
from ..test_envelope import snapshot

CAIE_RECORD = ("interop", "caie-spec", "explorer", "data", "measles-evaluation.ttl")
SOURCE = (
    "https://github.com/DynamicalSystemsGroup/caie-spec/blob/f8cbe4e7d7ab3f57a2103bfdfe13bacc5466be8a/"
    "explorer/data/measles-evaluation.ttl"
)
TURTLE = "text/turtle"
MINIMAL = b"""
@prefix epo:  <https://w3id.org/ob-caie/epo/> .
@prefix earl: <http://www.w3.org/ns/earl#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .
<https://other.example/records/r1/criteria/c1> a epo:AcceptanceCriterion ; epo:weight 2.5 .
<https://other.example/records/r1/attestations/1> a epo:Attestation ;
    earl:outcome earl:passed ; earl:assertedBy <https://other.example/agents/ann> ;
    prov:generatedAtTime "2026-08-11T09:10:00Z"^^xsd:dateTime .
"""
"""A record from another deployment: one criterion, one attestation, all the record shapes ask for."""


def import_record(
    service: Service, body: bytes, agent: str | None = "theo", media: str = TURTLE, **params: str
) -> httpx.Response:
    headers = {"Content-Type": media, **(service.auth(agent) if agent else {})}
    return service.http.post("/evaluations/imports", params=params, content=body, headers=headers)


def catalog(service: Service) -> dict[str, dict]:
    listed = service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"]
    return {g["graph"]: g for g in listed}


def by_value(graph: rdflib.Graph) -> rdflib.Graph:
    """The graph with each decimal spelled canonically: a store keeps a decimal's value, so ``1.0`` reads back as ``1``."""
    out = rdflib.Graph()
    for s, p, o in graph:
        if isinstance(o, rdflib.Literal) and isinstance(o.toPython(), Decimal):
            o = rdflib.Literal(str(o.toPython().normalize()), datatype=o.datatype)
        out.add((s, p, o))
    return out


def caie_record() -> bytes:
    return shared_path(*CAIE_RECORD).read_bytes()


def assert_refused(
    service: Service,
    body: bytes,
    status: int,
    words: str,
    agent: str | None = "theo",
    media: str = TURTLE,
    **params: str,
) -> dict:
    """The import is refused with ``status`` and a message containing ``words``; nothing is stored."""
    before = snapshot(service.store)
    answer = import_record(service, body, agent, media, **params)
    assert answer.status_code == status, (params, answer.text)
    assert answer.headers["content-type"] == "application/problem+json"
    problem = answer.json()
    assert words in problem["detail"], problem["detail"]
    assert snapshot(service.store) == before
    return problem


def test_caie_spec_record_imports_attributed_and_reads_back(service: Service) -> None:
    record = caie_record()
    answer = import_record(service, record, id="caie-measles", source=SOURCE)
    assert answer.status_code == 201, answer.text
    assert answer.headers["location"] == "/evaluations/caie-measles"
    made = answer.json()
    graph = BASE_URL + "evaluations/caie-measles"
    assert (made["graph"], made["importer"], made["source"], made["conforms"]) == (graph, "theo", SOURCE, True)

    entry = catalog(service)[graph]
    assert (entry["kind"], entry["loadedBy"], entry["digest"], entry["triples"]) == (
        "evaluations",
        "theo",
        made["digest"],
        made["triples"],
    )

    stored_nt = service.http.get(
        "/graphs/evaluations/caie-measles", headers={"Accept": "application/n-triples"}
    ).content
    assert graph_digest(parse(stored_nt, format=RdfFormat.N_TRIPLES)) == made["digest"]
    # A remote store holds blank nodes as skolem IRIs (RDF 1.1 §3.5); read them back as blank nodes.
    unskolemized = blank_skolems([q.triple for q in parse(stored_nt, format=RdfFormat.N_TRIPLES)])
    stored = rdflib.Graph().parse(data=serialize(unskolemized, format=RdfFormat.N_TRIPLES), format="nt")
    provenance = {(p, o) for _, p, o in stored.triples((rdflib.URIRef(graph), None, None))}
    assert provenance == {
        (rdflib.PROV.wasAttributedTo, rdflib.URIRef(BASE_URL + "agents/theo")),
        (rdflib.PROV.generatedAtTime, rdflib.Literal(made["importedAt"], datatype=rdflib.XSD.dateTime)),
        (rdflib.DCTERMS.source, rdflib.URIRef(SOURCE)),
        (rdflib.PROV.hadPrimarySource, rdflib.URIRef(SOURCE)),
    }
    stored.remove((rdflib.URIRef(graph), None, None))
    assert isomorphic(by_value(stored), by_value(rdflib.Graph().parse(data=record, format="turtle")))
    assert made["triples"] == len(stored) + len(provenance)

    again = assert_refused(service, record, 409, "already exists", id="caie-measles")
    assert "new id" in again["detail"]


def test_caie_spec_record_without_a_weight_is_refused(service: Service) -> None:
    """The counterexample: criterion a1 of the caie-spec record loses its weight, which the record shapes require."""
    record = caie_record()
    broken = record.replace(
        b'epo:weight 2 ; epo:weightRationale "a resident who does not', b'epo:weightRationale "a resident who does not'
    )
    assert broken != record
    problem = assert_refused(service, broken, 422, "does not conform to the record shapes", id="caie-measles")
    [violation] = problem["errors"]
    assert violation["focus_node"] == "<https://w3id.org/og-caie/evaluation/measles#a1>"
    assert "exactly one weight" in violation["message"]
    assert "caie-measles" not in str(catalog(service))


def test_record_without_an_attestation_time_is_refused(service: Service) -> None:
    broken = MINIMAL.replace(b' ;\n    prov:generatedAtTime "2026-08-11T09:10:00Z"^^xsd:dateTime', b"")
    assert broken != MINIMAL
    problem = assert_refused(
        service, broken, 422, "attestations/1>: an attestation must have exactly one time", id="r1"
    )
    assert [v["path"] for v in problem["errors"]] == ["<http://www.w3.org/ns/prov#generatedAtTime>"]
    assert catalog(service) == {}


def test_only_operators_and_admins_import_and_credentials_come_first(service: Service) -> None:
    assert_refused(service, b"not RDF", 401, "needs a credential", agent=None)
    for agent in ("annie", "dana", "vera"):
        assert_refused(
            service,
            b"not RDF",
            403,
            "importing an evaluation record needs the role admin or evaluation_operator",
            agent=agent,
            id="r1",
        )
    as_jsonld = serialize(list(parse(MINIMAL, format=RdfFormat.TURTLE)), format=RdfFormat.JSON_LD)
    answer = import_record(service, as_jsonld, "admin", "application/ld+json", id="r1")
    assert answer.status_code == 201, answer.text
    assert (answer.json()["importer"], answer.json()["source"], answer.json()["triples"]) == ("admin", None, 6 + 2)


def test_bad_imports_say_what_is_wrong_and_store_nothing(service: Service) -> None:
    claimed = (
        MINIMAL
        + f"<{BASE_URL}evaluations/r1> <http://www.w3.org/ns/prov#wasAttributedTo> <{BASE_URL}agents/dana> .".encode()
    )
    cases: list[tuple[bytes, str, int, str, dict[str, str]]] = [
        (MINIMAL, TURTLE, 422, "query.id: Field required", {}),
        (MINIMAL, TURTLE, 400, "invalid graph identifier", {"id": "bad id"}),
        (MINIMAL, TURTLE, 400, "not an absolute http(s) IRI", {"id": "r1", "source": "javascript:alert(1)"}),
        (MINIMAL, TURTLE, 400, "not an absolute http(s) IRI", {"id": "r1", "source": "records/r1.ttl"}),
        (MINIMAL, TURTLE, 400, "not an absolute http(s) IRI", {"id": "r1", "source": "https://other.example/a b"}),
        (MINIMAL, "application/pdf", 415, "cannot read application/pdf", {"id": "r1"}),
        (b"<https://other.example/a> <https://other.example/p>", TURTLE, 400, "not valid", {"id": "r1"}),
        (b"", TURTLE, 422, "the record is empty", {"id": "r1"}),
        (claimed, TURTLE, 422, "the import records who imported it", {"id": "r1"}),
    ]
    for body, media, status, words, params in cases:
        assert_refused(service, body, status, words, media=media, **params)
    assert catalog(service) == {}
