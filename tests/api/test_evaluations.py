"""``/evaluations`` over real HTTP on both backends: scope and envelope round trips, refusals that store
nothing, and the approval flow (relevance, appropriateness, sign-off, versions), append-only."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal

import rdflib

from ..conftest import BASE_URL, Service
from ..test_envelope import example_envelope, example_evaluation, snapshot

EPO = rdflib.Namespace("https://w3id.org/ob-caie/epo/")
ID = "measles"
SERVER_FIELDS = ("@context", "@id", "envelope")


def create(service: Service, envelope: bool = True) -> None:
    made = service.http.post("/evaluations", json=example_evaluation(), headers=service.auth("theo"))
    assert made.status_code == 201, made.text
    if envelope:
        written = service.http.put(f"/evaluations/{ID}/envelope", json=example_envelope(), headers=service.auth("theo"))
        assert written.status_code == 201, written.text


def without(body: dict, keys: tuple[str, ...] = SERVER_FIELDS) -> dict:
    return {k: v for k, v in body.items() if k not in keys}


def sign_off(service: Service) -> dict:
    """The domain expert assesses the DSO, each criterion (an out-of-scope one as not relevant) and the envelope;
    the organizational expert signs it off. The sign-off's JSON."""
    answer = service.http.post(
        f"/evaluations/{ID}/dso/appropriateness",
        json={"appropriate": True, "rationale": "models what the public asks"},
        headers=service.auth("annie"),
    )
    assert answer.status_code == 201, answer.text
    for criterion in example_envelope()["criteria"]:
        relevant = criterion.get("inScope", True)
        answer = service.http.post(
            f"/evaluations/{ID}/criteria/{criterion['id']}/relevance",
            json={"relevant": relevant, "rationale": "matters in the outbreak" if relevant else "out of scope"},
            headers=service.auth("annie"),
        )
        assert answer.status_code == 201, answer.text
    answer = service.http.post(
        f"/evaluations/{ID}/envelope/appropriateness",
        json={"appropriate": True, "rationale": "fits the public"},
        headers=service.auth("annie"),
    )
    assert answer.status_code == 201, answer.text
    signed = service.http.post(
        f"/evaluations/{ID}/envelope/sign-off", json={"comment": "for the ministry"}, headers=service.auth("dana")
    )
    assert signed.status_code == 201, signed.text
    return signed.json()


# ------------------------------------------------------------------------------------------- round trips


def test_example_round_trips(loaded: Service) -> None:
    made = loaded.http.post("/evaluations", json=example_evaluation(), headers=loaded.auth("theo"))
    assert made.status_code == 201 and made.headers["location"] == f"/evaluations/{ID}"
    got = loaded.http.get(f"/evaluations/{ID}")
    assert got.status_code == 200 and without(got.json()) == example_evaluation()
    assert got.json()["@context"] == BASE_URL + "contexts/evaluation.jsonld"
    assert "json-ld#context" in got.headers["link"]

    put = loaded.http.put(f"/evaluations/{ID}/envelope", json=example_envelope(), headers=loaded.auth("theo"))
    assert put.status_code == 201, put.text
    env = loaded.http.get(f"/evaluations/{ID}/envelope").json()
    assert {k: env[k] for k in ("statement", "judgeAgreement", "requirements", "criteria")} == example_envelope()
    assert env["version"] == 1 and len(env["digest"]) == 64 and env["status"]["signedOff"] is False
    assert env["@id"] == BASE_URL + f"evaluations/{ID}/envelope/v1"
    assert loaded.http.get(f"/evaluations/{ID}").json()["envelope"]["digest"] == env["digest"]

    turtle = loaded.http.get(f"/evaluations/{ID}", headers={"Accept": "text/turtle"})
    assert turtle.headers["content-type"].startswith("text/turtle")
    graph = rdflib.Graph().parse(data=turtle.text, format="turtle")
    criteria = set(graph.subjects(rdflib.RDF.type, EPO.AcceptanceCriterion))
    weights = {Decimal(str(graph.value(c, EPO.weight))) for c in criteria}
    assert len(criteria) == len(weights) == len(example_envelope()["criteria"]) == 14
    method = graph.value(rdflib.URIRef(BASE_URL + f"evaluations/{ID}"), EPO.evaluationMethod)
    assert str(graph.value(method, EPO.methodVersion)) == example_evaluation()["evaluationMethod"]["methodVersion"]
    assert all(isinstance(graph.value(c, rdflib.PROV.generatedAtTime).toPython(), datetime) for c in criteria)
    evaluation = rdflib.URIRef(BASE_URL + f"evaluations/{ID}")
    assert (evaluation, rdflib.RDF.type, EPO.Evaluation) in graph
    assert graph.value(evaluation, rdflib.URIRef("http://rdfs.org/ns/void#triples")) is not None  # its catalog record

    as_turtle = loaded.http.get(f"/evaluations/{ID}/envelope", headers={"Accept": "text/turtle"})
    envelope_graph = rdflib.Graph().parse(data=as_turtle.text, format="turtle")
    assert str(envelope_graph.value(rdflib.URIRef(env["@id"]), EPO.envelopeDigest)) == env["digest"]

    listed = loaded.http.get("/evaluations").json()["evaluations"]
    assert [(e["id"], e["envelope"]["digest"]) for e in listed] == [(ID, env["digest"])]
    context = loaded.http.get("/contexts/evaluation.jsonld")
    assert context.headers["content-type"].startswith("application/ld+json") and "weight" in context.json()["@context"]

    # the digest is stable and follows the weights (same store: one spec load and one evaluation per backend)
    _digest_is_stable_and_follows_the_weights(loaded, env["digest"])
    # an RDF upload is read and checked like JSON
    _rdf_upload_is_read_and_checked_like_json(loaded)


def _digest_is_stable_and_follows_the_weights(loaded: Service, first: str) -> None:
    again = loaded.http.put(f"/evaluations/{ID}/envelope", json=example_envelope(), headers=loaded.auth("theo"))
    assert again.status_code == 200 and again.json()["digest"] == first
    changed = example_envelope()
    changed["criteria"][4]["weight"] = 6.25
    rewritten = loaded.http.put(f"/evaluations/{ID}/envelope", json=changed, headers=loaded.auth("theo")).json()
    assert rewritten["digest"] != first and rewritten["version"] == 1
    back = loaded.http.put(f"/evaluations/{ID}/envelope", json=example_envelope(), headers=loaded.auth("theo")).json()
    assert back["digest"] == first


def _rdf_upload_is_read_and_checked_like_json(loaded: Service) -> None:
    """The evaluation (with its envelope) as the service writes it in Turtle, uploaded again under another id."""
    turtle = loaded.http.get(f"/evaluations/{ID}", headers={"Accept": "text/turtle"}).text
    copied = turtle.replace(f"evaluations/{ID}", "evaluations/copy")
    put = loaded.http.put(
        "/evaluations/copy", content=copied, headers={"Content-Type": "text/turtle", **loaded.auth("theo")}
    )
    assert put.status_code == 201, put.text
    assert without(put.json(), (*SERVER_FIELDS, "ignoredTriples", "ignoredExamples")) == {
        **example_evaluation(),
        "id": "copy",
    }
    original = loaded.http.get(f"/evaluations/{ID}/envelope").json()
    copy_env = loaded.http.get("/evaluations/copy/envelope").json()
    assert copy_env["digest"] == original["digest"] and copy_env["criteria"] == original["criteria"]

    before = snapshot(loaded.store)
    zero = copied.replace('epo:weight "10"^^xsd:decimal', 'epo:weight "0"^^xsd:decimal')
    assert zero != copied
    refused = loaded.http.put(
        "/evaluations/copy", content=zero, headers={"Content-Type": "text/turtle", **loaded.auth("theo")}
    )
    assert refused.status_code == 422 and "weight 0" in refused.json()["detail"]
    assert snapshot(loaded.store) == before


# ------------------------------------------------------------------------------------------- refusals


def _envelope_with(change: Callable[[dict], None]) -> dict:
    body = copy.deepcopy(example_envelope())
    change(body)
    return body


def _cycle(body: dict) -> None:
    body["requirements"][0]["parent"] = "R5"  # R5 refines R1 already


BAD_ENVELOPES = {
    "unknown concept": (lambda b: b["criteria"][2]["concepts"].append("ve:Smallpox"), 422, "unknown DSO concept"),
    "KG term is no DSO concept": (
        lambda b: b["criteria"][2]["concepts"].append("kg:kenya/country"),
        422,
        "unknown DSO concept",
    ),
    "weight missing": (lambda b: b["criteria"][1].pop("weight"), 422, "criteria.1.weight"),
    "weight zero": (lambda b: b["criteria"][1].update(weight=0), 422, "greater than zero"),
    "weight negative": (lambda b: b["criteria"][1].update(weight=-2), 422, "greater than zero"),
    "requirement cycle": (_cycle, 422, "requirement cycle: R1 -> R5 -> R1"),
    "duplicate criterion id": (lambda b: b["criteria"][1].update(id="c01"), 422, "duplicate criterion id 'c01'"),
    "duplicate requirement id": (lambda b: b["requirements"][1].update(id="R1"), 422, "duplicate requirement id 'R1'"),
    "unknown requirement": (lambda b: b["criteria"][0].update(requirement="R404"), 422, "unknown requirement 'R404'"),
    "unknown parent": (lambda b: b["requirements"][0].update(parent="R404"), 422, "refines unknown requirement 'R404'"),
    "extra field": (lambda b: b["criteria"][0].update(colour="red"), 422, "colour"),
    "bad judge": (lambda b: b["criteria"][0].update(judgedBy="oracle"), 422, "judgedBy"),
}


def _scope_with(change: Callable[[dict], None]) -> dict:
    body = copy.deepcopy(example_evaluation())
    change(body)
    return body


BAD_SCOPES = {
    "DSO not loaded": (lambda b: b.update(dso="no-such-dso"), 422, "'no-such-dso' is not loaded"),
    "KG not loaded": (lambda b: b["knowledgeGraphs"].append("atlantis"), 422, "'atlantis' is not loaded"),
    "unknown use boundary value": (lambda b: b["useBoundary"]["languages"].append("kg:kenya/lang-xx"), 422, "lang-xx"),
    "unknown out-of-scope concept": (lambda b: b["outOfScope"][0]["concepts"].append("ve:Smallpox"), 422, "Smallpox"),
    "duplicate assumption id": (
        lambda b: b["operatingEnvironment"]["assumptions"].append({"id": "no-identity", "statement": "again"}),
        422,
        "duplicate assumption id 'no-identity'",
    ),
    "not an IRI": (lambda b: b["useBoundary"]["users"].append("somebody"), 422, "not an absolute IRI"),
}


def test_refusals_store_nothing(loaded: Service) -> None:
    """Every refused write, on one store per backend (one spec load, one evaluation): who may write and what
    must exist, each bad scope, a second creation, a scope under another id, and each bad envelope. Each answer
    is checked for its status and message; the store is compared after each group of refusals (what a refusal
    wrote would still show there: every later request of the group is refused too)."""
    before = snapshot(loaded.store)
    assert loaded.http.post("/evaluations", json=example_evaluation()).status_code == 401
    assert loaded.http.post("/evaluations", json=example_evaluation(), headers=loaded.auth("vera")).status_code == 403
    missing = loaded.http.put("/evaluations/nope/envelope", json=example_envelope(), headers=loaded.auth("theo"))
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]
    assert loaded.http.get("/evaluations/nope").status_code == 404
    for case in sorted(BAD_SCOPES):
        change, status, message = BAD_SCOPES[case]
        answer = loaded.http.post("/evaluations", json=_scope_with(change), headers=loaded.auth("theo"))
        assert answer.status_code == status, (case, answer.text)
        assert message in answer.json()["detail"], case
    assert snapshot(loaded.store) == before

    create(loaded)
    before = snapshot(loaded.store)
    again = loaded.http.post("/evaluations", json=example_evaluation(), headers=loaded.auth("theo"))
    assert again.status_code == 409
    other = loaded.http.put(
        f"/evaluations/{ID}", json={**example_evaluation(), "id": "other"}, headers=loaded.auth("theo")
    )
    assert other.status_code == 422 and "'other'" in other.json()["detail"]
    for case in sorted(BAD_ENVELOPES):
        change, status, message = BAD_ENVELOPES[case]
        answer = loaded.http.put(
            f"/evaluations/{ID}/envelope", json=_envelope_with(change), headers=loaded.auth("theo")
        )
        assert answer.status_code == status, (case, answer.text)
        assert message in answer.json()["detail"], case
    assert snapshot(loaded.store) == before


# ------------------------------------------------------------------------------------------- approvals


def test_approval_flow_is_enforced_and_append_only(loaded: Service) -> None:
    create(loaded)
    url = f"/evaluations/{ID}"
    early = loaded.http.post(f"{url}/envelope/sign-off", headers=loaded.auth("dana"))
    assert (
        early.status_code == 409 and "appropriateness" in early.json()["detail"] and "'c01'" in early.json()["detail"]
    )
    assert (
        "appropriateness of the DSO" in early.json()["detail"]
        and "'c12': out of scope without" in early.json()["detail"]
    )

    relevance = {"relevant": True, "rationale": "core"}
    assert loaded.http.post(f"{url}/criteria/c01/relevance", json=relevance).status_code == 401
    assert (
        loaded.http.post(f"{url}/criteria/c01/relevance", json=relevance, headers=loaded.auth("dana")).status_code
        == 403
    )
    assert (
        loaded.http.post(f"{url}/criteria/c99/relevance", json=relevance, headers=loaded.auth("annie")).status_code
        == 404
    )
    appropriateness = {"appropriate": True, "rationale": "fits"}
    assert (
        loaded.http.post(
            f"{url}/envelope/appropriateness", json=appropriateness, headers=loaded.auth("theo")
        ).status_code
        == 403
    )
    assert loaded.http.post(f"{url}/envelope/sign-off", headers=loaded.auth("annie")).status_code == 403
    assert (
        loaded.http.post(f"{url}/dso/appropriateness", json=appropriateness, headers=loaded.auth("theo")).status_code
        == 403
    )
    assert (
        loaded.http.post(
            "/evaluations/nope/dso/appropriateness", json=appropriateness, headers=loaded.auth("annie")
        ).status_code
        == 404
    )

    first = sign_off(loaded)
    assert first["kind"] == "envelope-sign-off" and first["agent"] == "dana"
    env = loaded.http.get(f"{url}/envelope").json()
    assert env["status"]["signedOff"] is True and first["envelopeDigest"] == env["digest"]
    assert env["status"]["dsoAppropriateness"] == "passed" and env["status"]["relevance"]["c12"] == "failed"

    changed = example_envelope()
    changed["criteria"][0]["weight"] = 11
    before = snapshot(loaded.store)
    frozen = loaded.http.put(f"{url}/envelope", json=changed, headers=loaded.auth("theo"))
    assert frozen.status_code == 409 and "envelope/versions" in frozen.json()["detail"]
    assert snapshot(loaded.store) == before
    assert loaded.http.put(f"{url}/envelope", json=example_envelope(), headers=loaded.auth("theo")).status_code == 200

    # Signed off, the version is frozen: no second sign-off, no later relevance or appropriateness assessment
    # (each would name the frozen digest and change what GET …/envelope says of it, the sign-off standing).
    records = loaded.http.get(f"{url}/approvals").json()["approvals"]
    before = snapshot(loaded.store)
    for path, body in [
        ("envelope/sign-off", {}),
        ("criteria/c01/relevance", {"relevant": False, "rationale": "late"}),
        ("envelope/appropriateness", {"appropriate": False, "rationale": "second thoughts"}),
    ]:
        refused = loaded.http.post(
            f"{url}/{path}", json=body, headers=loaded.auth("dana" if "sign" in path else "annie")
        )
        assert refused.status_code == 409, (path, refused.text)
        assert "signed off by dana" in refused.json()["detail"] and "envelope/versions" in refused.json()["detail"]
    assert snapshot(loaded.store) == before
    assert loaded.http.get(f"{url}/envelope").json()["status"] == env["status"]
    after = loaded.http.get(f"{url}/approvals").json()["approvals"]
    assert after == records and [r["kind"] for r in after].count("envelope-sign-off") == 1
    assert len(records) == 1 + len(example_envelope()["criteria"]) + 1 + 1
    assert (records[0]["kind"], records[0]["subject"], records[0]["envelopeDigest"]) == (
        "dso-appropriateness",
        BASE_URL + "graphs/dso/vaccine-education",
        None,
    )

    turtle = loaded.http.get(f"{url}/approvals", headers={"Accept": "text/turtle"}).text
    graph = rdflib.Graph().parse(data=turtle, format="turtle")
    sign_offs = set(graph.subjects(rdflib.RDF.type, EPO.EnvelopeSignOff))
    earl = rdflib.Namespace("http://www.w3.org/ns/earl#")
    assert len(sign_offs) == 1
    for record in sign_offs:
        assert graph.value(record, earl.assertedBy) == rdflib.URIRef(BASE_URL + "agents/dana")
        assert graph.value(graph.value(record, earl.result), earl.outcome) == earl.passed

    version = loaded.http.post(f"{url}/envelope/versions", headers=loaded.auth("theo"))
    assert version.status_code == 201 and version.json()["version"] == 2
    assert version.json()["status"]["signedOff"] is False and version.json()["digest"] == env["digest"]
    rewritten = loaded.http.put(f"{url}/envelope", json=changed, headers=loaded.auth("theo"))
    assert rewritten.status_code == 200 and rewritten.json()["digest"] != env["digest"]
    assert loaded.http.post(f"{url}/envelope/versions", headers=loaded.auth("theo")).status_code == 409
    v1 = loaded.http.get(f"{url}/envelope", params={"version": 1}).json()
    assert v1["digest"] == env["digest"] and v1["criteria"][0]["weight"] == 10
    assert len(loaded.http.get(f"{url}/approvals").json()["approvals"]) == len(after)
    assert loaded.http.put(url, json=example_evaluation(), headers=loaded.auth("theo")).status_code == 200
    scope_change = {**example_evaluation(), "title": "renamed"}
    assert loaded.http.put(url, json=scope_change, headers=loaded.auth("theo")).status_code == 409
