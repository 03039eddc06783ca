"""Our own record, exported in caie-spec's layout (``GET /evaluations/{id}/record/caie``), conforms to caie-spec's
shapes S0..S9 (validated as the import validates a caie-spec record).

The record is the measles example taken through every step over HTTP, as the worked example does
(examples/vaccine/caie_vaccine/worked_example.py): scope and envelope from examples/measles, assessed and signed off, a plan (the
shared 40-probe ``Equal`` plan of tests/plan instead of the worked example's 300 probes, to keep the test
cheap) approved by the domain expert, run on the demonstration chatbot, judged by the worked example's rule
judges, each judged criterion attested from the aggregation rule and one attestation corrected by a superseding
one. What the export adds to meet the shapes is marked as its declaration (docs/interop.md).
"""

from __future__ import annotations

import time
from collections import defaultdict
from fractions import Fraction

import rdflib
from rdflib.namespace import RDF, SKOS

from service.publishing.caie_declarations import DECLARED
from service.scope import caie

from ..api.test_evaluations import ID
from ..conftest import EMBEDDED_ONLY, Service
from .common import spec_file

pytestmark = EMBEDDED_ONLY
C = rdflib.Namespace("https://w3id.org/og-caie/epo#")
EARL = rdflib.Namespace("http://www.w3.org/ns/earl#")


def run_judge_and_attest(service: Service) -> None:
    """Plan 1 approved, run on the demo chatbot, rule-judged; each judged criterion attested, the first corrected."""
    approved = service.http.post(
        f"/evaluations/{ID}/plans/1/approval", json={"comment": "fit for the outbreak"}, headers=service.auth("annie")
    )
    assert approved.status_code == 201, approved.text
    started = service.http.post(
        f"/evaluations/{ID}/runs", json={"plan": 1, "target": {"kind": "demo"}}, headers=service.auth("theo")
    )
    assert started.status_code == 202, started.text
    for _ in range(600):  # the run is a background job
        run = service.http.get(f"/evaluations/{ID}/runs/1").json()
        if run["job"] is None or run["job"]["state"] != "running":
            break
        time.sleep(0.05)
    assert (run["traces"], run["executionErrors"]) == (40, 0), run
    judged = service.http.post(f"/evaluations/{ID}/runs/1/rule-judgments", headers=service.auth("theo"))
    assert judged.status_code == 201, judged.text
    outcomes: dict[str, set[str]] = defaultdict(set)
    for d in service.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]:
        outcomes[d["criterion"]].add(d["outcome"].rsplit("#", 1)[-1])
    url, made = f"/evaluations/{ID}/runs/1/attestations", []
    for criterion, found in sorted(outcomes.items()):
        outcome = next((o for o in ("failed", "passed", "cantTell") if o in found), None)
        if outcome is not None:
            body = {
                "criterion": criterion.rsplit("/", 1)[-1],
                "outcome": outcome,
                "rationale": "as the rule gives",
                "sufficiency": "sufficient",
                "appropriateness": "appropriate",
            }
            answer = service.http.post(url, json=body, headers=service.auth("annie"))
            assert answer.status_code == 201, answer.text
            made.append(answer.json())
    correction = {
        "criterion": made[0]["criterion"].rsplit("/", 1)[-1],
        "outcome": "cantTell",
        "rationale": "too few replies",
        "sufficiency": "insufficient",
        "appropriateness": "appropriate",
        "supersedes": made[0]["attestation"],
        "reason": "on review, the evidence is too thin",
    }
    answer = service.http.post(url, json=correction, headers=service.auth("annie"))
    assert answer.status_code == 201, answer.text


def current_attestations(service: Service) -> dict[str, str]:
    listed = service.http.get(f"/evaluations/{ID}/attestations").json()["attestations"]
    return {a["criterion"]: a["outcome"].rsplit("#", 1)[-1] for a in listed if a["current"]}


def test_our_record_in_caie_spec_layout_conforms_to_its_shapes(small_planned: Service) -> None:
    spec = caie.load_spec(spec_file())
    assert spec is not None
    service = small_planned
    run_judge_and_attest(service)
    current = current_attestations(service)
    assert len(current) >= 3 and "cantTell" in current.values()  # the correction is among them

    answer = service.http.get(f"/evaluations/{ID}/record/caie", headers={"Accept": "text/turtle"})
    assert answer.status_code == 200, answer.text
    exported = rdflib.Graph().parse(data=answer.text, format="turtle")
    as_ntriples = service.http.get(f"/evaluations/{ID}/record/caie", headers={"Accept": "application/n-triples"})
    assert len(rdflib.Graph().parse(data=as_ntriples.text, format="nt")) == len(exported)
    outcome = caie.validate(exported, spec)
    assert outcome.conforms, sorted({(caie.shape_name(v, spec), v.message) for v in outcome.violations})

    # The chain is ours: only the current attestations, with their outcomes.
    attestations = set(exported.subjects(RDF.type, C.Attestation))
    assert {
        str(exported.value(a, EARL.test)): str(exported.value(exported.value(a, EARL.result), EARL.outcome)).rsplit(
            "#", 1
        )[-1]
        for a in attestations
    } == current
    # Everything the export declares is marked so, and none of our record's own items is.
    declared = set(exported.subjects(SKOS.editorialNote, rdflib.Literal(DECLARED)))
    assert any(exported.value(d, RDF.type) == C.ServiceAgreement for d in declared)
    assert not declared & (attestations | set(exported.subjects(RDF.type, C.AcceptanceCriterion)))
    # The out-of-scope criterion is not exported (caie-spec has no scope flag); every in-scope one is.
    in_scope = {str(c) for c in exported.subjects(RDF.type, C.AcceptanceCriterion)}
    # The draft report's figures are caie-spec's rule over those attestations: coverage by weight, shares by count.
    weights = {str(c): Fraction(str(w)) for c, w in exported.subject_objects(C.weight)}
    assert set(weights) == in_scope
    [report] = exported.subjects(RDF.type, C.Report)
    coverage = sum(weights[c] for c in current) / sum(weights.values())
    assert abs(Fraction(str(exported.value(report, C.coverage))) - coverage) < Fraction(1, 10**6)
    for name, wanted in (("passRate", "passed"), ("failRate", "failed"), ("cantTellRate", "cantTell")):
        share = Fraction(sum(1 for o in current.values() if o == wanted), len(current))
        assert abs(Fraction(str(exported.value(report, C[name]))) - share) < Fraction(1, 10**6), name


def test_an_unknown_record_is_404_and_an_unknown_format_406(service: Service) -> None:
    assert service.http.get(f"/evaluations/{ID}/record/caie", headers={"Accept": "text/turtle"}).status_code == 404
    assert service.http.get(f"/evaluations/{ID}/record/caie", headers={"Accept": "application/pdf"}).status_code == 406
