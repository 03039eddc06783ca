"""The evidence for attesting a criterion (service/workspace/evidence.py), on the worked example, checked against
what the REST routes and the SPARQL endpoint return: the criterion as the envelope states it, the conversations
whose probes bear on it (the plan's probes listing), every verdict on them (the determinations listing), the
attestations with their supersession (the attestations listing), each judge's agreement with people (the
judge-agreement route), and the grading reference (the DSO's statements about what the criterion bears on).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest
from pyoxigraph import Quad

from service.core.errors import BadRequest, NotFound
from service.workspace import criterion_evidence

from ..conftest import EMBEDDED_ONLY, Service, graphs_over, restore

pytestmark = EMBEDDED_ONLY  # what it shows is the evidence a record holds, not the store's transport
CRITERIA = "http://caie.test/evaluations/measles/envelope/v1/criteria/"
WINDOWS = """
    PREFIX ve: <https://w3id.org/ob-caie/dso/vaccine-education/>
    PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
    SELECT ?measure ?window ?label WHERE {
      GRAPH <http://caie.test/graphs/dso/vaccine-education> {
        ?measure ve:hasTimeWindow ?window . ?window rdfs:label ?label FILTER(LANG(?label) = "en") }
    }"""


@pytest.fixture
def example(service: Service, worked_example_quads: list[Quad]) -> Service:
    restore(service.store, worked_example_quads)
    return service


def get(service: Service, path: str, **params: object) -> dict:
    answer = service.http.get(path, params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_evidence_on_a_criterion_is_what_the_record_says(example: Service) -> None:
    evidence = criterion_evidence(graphs_over(example.store), "measles", "c04", limit=5, offset=5)
    criterion = next(c for c in get(example, "/evaluations/measles/envelope")["criteria"] if c["id"] == "c04")
    assert (evidence.run, evidence.criterion.iri, evidence.criterion.statement, evidence.criterion.expected) == (
        1,
        CRITERIA + "c04",
        criterion["statement"],
        criterion["expectedResult"],
    )

    probes = get(example, "/evaluations/measles/plans/1/probes", limit=1000)["items"]
    bearing = sorted(p["number"] for p in probes if CRITERIA + "c04" in p["exercises"])
    assert evidence.total == len(bearing) and [c.probe for c in evidence.conversations] == bearing[5:10]
    assert all(c.turns and c.turns[0].text and c.turns[0].reply for c in evidence.conversations)

    # each determiner's latest verdict on each reply, as the determinations listing gives every verdict
    listed = get(example, "/evaluations/measles/determinations", criterion=CRITERIA + "c04")["determinations"]
    latest: dict[tuple[str, str | None, str, str], tuple[datetime, str, str]] = {}
    for d in listed:
        key = (d["judge"], d.get("version"), d["probe"], d["turn"])
        said = (datetime.fromisoformat(d["at"]), d["determination"], d["outcome"])
        latest[key] = max(latest.get(key, said), said)
    shown = {p["probe"] for p in probes if p["number"] in bearing[5:10]}
    assert {v.determination for c in evidence.conversations for v in c.verdicts} == {
        said[1] for key, said in latest.items() if key[2] in shown
    }
    kinds = {d["judge"]: "person" if d["mode"].endswith("#manual") else "automated" for d in listed}
    assert Counter((kinds[key[0]], said[2]) for key, said in latest.items()) == Counter(
        {(kind, outcome): n for kind, outcome, n in evidence.outcomes}
    )
    assert ("person", "http://www.w3.org/ns/earl#failed") in {(k, o) for k, o, _ in evidence.outcomes}

    attested = [
        a
        for a in get(example, "/evaluations/measles/attestations")["attestations"]
        if a["criterion"] == CRITERIA + "c04"
    ]
    assert [(a.iri, a.current) for a in evidence.attestations] == [(a["attestation"], a["current"]) for a in attested]
    assert evidence.current is not None and evidence.current.iri == attested[-1]["attestation"]

    agreeing = get(example, "/evaluations/measles/judge-agreement", criterion=CRITERIA + "c04")["judges"]
    assert (
        sorted((a.judge, a.version, a.units, a.value) for a in evidence.agreement)
        == sorted((j["judge"], j["version"], j["units"], j["value"]) for j in agreeing)
        and agreeing
    )

    # the grading reference: the DSO's post-exposure measures, each with its time window as the DSO labels it
    answer = example.http.get(
        "/sparql", params={"query": WINDOWS}, headers={"Accept": "application/sparql-results+json"}
    )
    windows = {(b["measure"]["value"], b["label"]["value"]) for b in answer.json()["results"]["bindings"]}
    stated = {(f.concept, f.value_label) for f in evidence.reference if f.property.endswith("/hasTimeWindow")}
    assert stated and stated <= windows and len(stated) == 2  # vaccine within 72 hours, immunoglobulin within 6 days
    assert {f.concept for f in evidence.reference} <= {
        "https://w3id.org/ob-caie/dso/vaccine-education/" + c.split(":", 1)[1] for c in criterion["concepts"]
    }


def test_a_superseded_attestation_shows_with_its_reason_and_pages_are_bounded(example: Service) -> None:
    graphs = graphs_over(example.store)
    evidence = criterion_evidence(graphs, "measles", "c08", run_number=1)
    listed = [
        a
        for a in get(example, "/evaluations/measles/attestations")["attestations"]
        if a["criterion"] == CRITERIA + "c08"
    ]
    assert [(a.iri, a.current, a.supersedes, a.reason) for a in evidence.attestations] == [
        (a["attestation"], a["current"], a["supersedes"], a["reason"]) for a in listed
    ]
    assert [a.current for a in evidence.attestations] == [False, True] and evidence.attestations[1].reason
    assert len(evidence.conversations) == min(10, evidence.total)
    with pytest.raises(NotFound, match="c99"):
        criterion_evidence(graphs, "measles", "c99")
    with pytest.raises(NotFound, match="c12"):  # out of scope: no probe bears on it
        criterion_evidence(graphs, "measles", "c12")
    with pytest.raises(NotFound):
        criterion_evidence(graphs, "measles", "c04", run_number=2)
    with pytest.raises(BadRequest):
        criterion_evidence(graphs, "measles", "c04", limit=0)
