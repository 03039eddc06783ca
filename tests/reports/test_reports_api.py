"""Reports over real HTTP (issue 11 §2 and §6), on the bed-nets evaluation's run 1 against the demonstration
chatbot (tests/judgments' fixture: its three criteria weigh hanging 3, washing 2, where 1, and each has a frame of
two opening turns, one probe on each). An annotator determines washing (one passed, one failed) and where (both
passed); the domain expert attests washing failed and where passed, and leaves hanging unattested. Worked by hand:

- coverage = (2 + 1) / (3 + 2 + 1) = 0.5, two of three criteria covered; hanging is the gap;
- distribution by count: passed 1/2, failed 1/2, cantTell 0; by weight: passed 1/3, failed 2/3;
- pass rates: washing 1 of 2, where 2 of 2, each from a frame of 2.

A report on it is a draft until the domain expert signs it and the organizational expert accepts it, each by role;
fit to deploy is refused while washing failed. Changing one attestation triple behind the service makes
``verify`` name the figures and the graph digest that moved, and a sign-off is then refused.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import krippendorff
import pytest
import rdflib
from caie_vaccine.demo import DEMO_RELEASE
from rdflib import XSD, URIRef

from service.cli import main
from service.core import queries
from service.core.store import EmbeddedStore

from ..conftest import ALSO_REMOTE, BASE_URL, EMBEDDED_ONLY, Service, dump, restore, restored
from ..judgments.test_judgments_api import probes
from ..plan.test_second_domain_plan import ID

pytestmark = EMBEDDED_ONLY
EVALUATION = f"{BASE_URL}evaluations/{ID}"
THIRD = "0.333333333333"


def attest(service: Service) -> None:
    """The annotator's determinations and the domain expert's attestations the module docstring lists."""
    rulings = [
        (c, p["probe"], outcome)
        for c, outcomes in (("washing", ("passed", "failed")), ("where", ("passed", "passed")))
        for p, outcome in zip(probes(service, c), outcomes)
    ]
    made = service.http.post(
        f"/evaluations/{ID}/runs/1/determinations",
        headers=service.auth("nora"),
        json={
            "determinations": [
                {"probe": probe, "criterion": c, "outcome": o, "rationale": f"{o} on reading"}
                for c, probe, o in rulings
            ]
        },
    )
    assert made.status_code == 201, made.text
    for criterion, outcome in (("washing", "failed"), ("where", "passed")):
        attested = service.http.post(
            f"/evaluations/{ID}/runs/1/attestations",
            headers=service.auth("annie"),
            json={
                "criterion": criterion,
                "outcome": outcome,
                "rationale": "as determined",
                "sufficiency": "sufficient",
                "appropriateness": "appropriate",
            },
        )
        assert attested.status_code == 201, attested.text


BODY = {
    "run": 1,
    "limitations": ["two probes per criterion"],
    "recommendations": ["fix the washing advice"],
    "fitness": "NotFit",
}


def test_a_report_states_the_figures_worked_out_by_hand_and_is_final_only_after_both_sign_offs(
    attested: Service,
) -> None:
    url = f"/evaluations/{ID}/reports"
    before = len(dump(attested.store))
    for body, agent, status, phrase in (
        ({**BODY, "fitness": "FitToDeploy"}, "theo", 422, "washing failed"),
        (BODY, "dana", 403, "lacks the role"),
        (BODY, "vera", 403, "lacks the role"),
        ({**BODY, "run": 9}, "theo", 404, "run"),
        ({**BODY, "fitness": "Fine"}, "theo", 422, ""),
    ):
        answer = attested.http.post(url, json=body, headers=attested.auth(agent))
        assert (answer.status_code, phrase in answer.text) == (status, True), (body, agent, answer.text)
    assert len(dump(attested.store)) == before

    made = attested.http.post(url, json=BODY, headers=attested.auth("theo"))
    assert made.status_code == 201, made.text
    assert made.headers["location"] == f"/evaluations/{ID}/reports/1"
    report = made.json()
    assert (report["report"], report["status"], report["fitness"]) == (f"{EVALUATION}/reports/1", "draft", "NotFit")
    assert report["coverage"] == {
        "value": "0.5",
        "coveredWeight": "3",
        "applicableWeight": "6",
        "covered": 2,
        "applicable": 3,
    }
    assert [
        (d["outcome"], d["count"], d["weight"], d["fraction"], d["weightedFraction"]) for d in report["distribution"]
    ] == [("passed", 1, "1", "0.5", THIRD), ("failed", 1, "2", "0.5", "0.666666666667"), ("cantTell", 0, "0", "0", "0")]
    rates = {p["criterion"].rsplit("/", 1)[-1]: (p["passed"], p["judged"], p["frame"]) for p in report["passRates"]}
    assert (rates["washing"], rates["where"]) == ((1, 2, 2), (2, 2, 2))
    assert report["executionErrors"] == [{"run": f"{EVALUATION}/runs/1", "kind": None, "count": 0, "cases": 6}]
    assert [f["identifier"] for f in report["failed"]] == ["washing"]
    assert [(g["identifier"], g["weight"]) for g in report["untested"]] == [("hanging", "3")]
    assert report["scope"]["targetName"] == "bed-net advice chatbot"
    assert report["scope"]["modelRelease"] == DEMO_RELEASE  # the bed-nets scope's boundary: the demonstration chatbot
    assert report["tested"] == {
        "system": "OB-CAIE demonstration measles chatbot",
        "modelRelease": DEMO_RELEASE,
        "outsideBoundary": False,
        "reason": None,
    }
    assert report["envelopeDigest"] and report["targetFingerprint"].startswith("sha256:")
    assert any(j["judge"].endswith("/agents/nora") for j in report["judges"])
    graphs = {g["graph"] for g in report["computedFrom"]}
    assert {EVALUATION, f"{EVALUATION}/runs/1", f"{EVALUATION}/plans/1"} <= graphs
    assert {q["query"] for q in report["queries"]} >= {"coverage", "outcome-distribution", "pass-rate-counts"}
    assert attested.http.get(f"{url}/1").json() == report  # read back from the graph: what was computed is stored

    turtle = attested.http.get(f"{url}/1", headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200 and "text/turtle" in turtle.headers["content-type"]
    assert "Report" in turtle.text and "two probes per criterion" in turtle.text
    jsonld = attested.http.get(f"{url}/1", headers={"Accept": "application/ld+json"})
    assert jsonld.status_code == 200 and "json" in jsonld.headers["content-type"]

    sign_off, acceptance = f"{url}/1/sign-off", f"{url}/1/acceptance"
    assert attested.http.post(sign_off, json={}, headers=attested.auth("theo")).status_code == 403
    early = attested.http.post(acceptance, json={}, headers=attested.auth("dana"))
    assert early.status_code == 409 and "not signed off" in early.text
    signed = attested.http.post(sign_off, json={"comment": "the figures hold"}, headers=attested.auth("annie"))
    assert signed.status_code == 201, signed.text
    assert (signed.json()["status"], signed.json()["signOff"]["comment"]) == ("signed", "the figures hold")
    assert attested.http.post(sign_off, json={}, headers=attested.auth("annie")).status_code == 409
    assert attested.http.post(acceptance, json={}, headers=attested.auth("annie")).status_code == 403
    accepted = attested.http.post(acceptance, json={}, headers=attested.auth("dana"))
    assert accepted.status_code == 201, accepted.text
    assert accepted.json()["status"] == "final" and accepted.json()["acceptance"]["agent"].endswith("/agents/dana")
    listed = attested.http.get(url).json()["reports"]
    assert [(r["number"], r["status"]) for r in listed] == [(1, "final")]


def test_verify_holds_after_later_attestations_and_names_a_change_made_behind_the_service(attested: Service) -> None:
    url = f"/evaluations/{ID}/reports"
    assert attested.http.post(url, json=BODY, headers=attested.auth("annie")).status_code == 201
    checked = attested.http.get(f"{url}/1/verify").json()
    assert checked["holds"] is True and checked["differences"] == []
    assert {f["figure"] for f in checked["figures"]} >= {"coverage", "distribution.passed.count", "untested"}

    # A later attestation does not move a report dated before it.
    late = attested.http.post(
        f"/evaluations/{ID}/runs/1/attestations",
        headers=attested.auth("annie"),
        json={
            "criterion": "hanging",
            "outcome": "passed",
            "rationale": "attested after the report",
            "sufficiency": "sufficient",
            "appropriateness": "appropriate",
        },
    )
    assert late.status_code == 201, late.text
    assert attested.http.get(f"{url}/1/verify").json()["holds"] is True

    # A new envelope version (the evaluation goes on) changes the head graph the report rests on, not its figures:
    # they are recomputed over the report's own envelope version, not the evaluation's current one.
    assert attested.http.post(f"/evaluations/{ID}/envelope/versions", headers=attested.auth("theo")).status_code == 201
    checked = attested.http.get(f"{url}/1/verify").json()
    assert [f for f in checked["figures"] if not f["holds"]] == [] and {f["figure"] for f in checked["figures"]} >= {
        "coverage"
    }
    assert [g["graph"] for g in checked["graphs"] if not g["holds"]] == [EVALUATION]

    # One triple changed directly in the store: where's attestation now says failed.
    where = next(
        a
        for a in attested.http.get(f"/evaluations/{ID}/attestations").json()["attestations"]
        if a["criterion"].endswith("/where")
    )
    batch = where["attestation"].rsplit("/attestations/", 1)[0]
    attested.store.run_update(f"""
        PREFIX earl: <http://www.w3.org/ns/earl#>
        WITH <{batch}> DELETE {{ <{where['attestation']}/result> earl:outcome earl:passed }}
        INSERT {{ <{where['attestation']}/result> earl:outcome earl:failed }} WHERE {{}}""")
    checked = attested.http.get(f"{url}/1/verify").json()
    assert checked["holds"] is False
    moved = {f["figure"]: (f["stored"], f["recomputed"]) for f in checked["figures"] if not f["holds"]}
    assert moved["distribution.passed.count"] == ("1", "0")
    assert moved["distribution.failed.count"] == ("1", "2")
    assert "coverage" not in moved  # where is still covered, by a failed outcome now
    assert moved["failed"][1].split() == sorted(moved["failed"][0].split() + [where["criterion"]])
    assert [g["graph"] for g in checked["graphs"] if not g["holds"]] == sorted([EVALUATION, batch])
    before = len(dump(attested.store))
    refused = attested.http.post(f"{url}/1/sign-off", json={}, headers=attested.auth("annie"))
    assert (
        refused.status_code == 409
        and "no longer verifies" in refused.text
        and "distribution.passed.count" in refused.text
    )
    assert len(dump(attested.store)) == before


def test_caie_report_and_caie_verify_on_a_store_directory(
    attested: Service, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line on a copy of the record in a store directory: ``caie report`` prints where the draft is
    and the headline figures; ``caie verify`` prints every check and exits 0 while they hold."""
    copy = EmbeddedStore(tmp_path / "store")
    restore(copy, dump(attested.store))
    copy.close()
    where = ["--data-dir", str(tmp_path / "store"), "--base-url", BASE_URL]
    assert (
        main(["report", ID, "--run", "1", "--fitness", "NotFit", "--limitation", "two probes per criterion", *where])
        == 0
    )
    printed = capsys.readouterr().out
    assert f"report 1: {EVALUATION}/reports/1  (draft" in printed
    assert "coverage 0.5 (3 of 6 weight; 2 of 3 criteria)" in printed and "failed: washing" in printed
    assert main(["verify", ID, "1", *where]) == 0
    assert json.loads(capsys.readouterr().out)["holds"] is True


def test_a_third_party_recomputes_the_report_with_rdflib_from_the_exported_record(attested: Service) -> None:
    """The exported record (TriG) read by rdflib's own SPARQL engine: ``report-figures.rq`` gives the stored
    coverage measurement, and ``coverage.rq`` with the report's run and date gives the same sums."""
    made = attested.http.post(f"/evaluations/{ID}/reports", json=BODY, headers=attested.auth("theo")).json()
    exported = attested.http.get(f"/evaluations/{ID}/record", headers={"Accept": "application/trig"})
    assert exported.status_code == 200
    record = rdflib.Dataset()
    record.parse(data=exported.text, format="trig")

    def rows(name: str, **bound: rdflib.term.Identifier) -> list[dict[str, str]]:
        result = record.query(queries.load(name), initBindings=bound)
        return [{str(k): str(v) for k, v in row.asdict().items()} for row in result]

    stored = [
        r
        for r in rows("report-figures", report=URIRef(made["report"]))
        if r["metric"].endswith("/Coverage") and r["weighted"] == "true"
    ]
    as_of = rdflib.Literal(made["asOf"], datatype=XSD.dateTime)
    again = rows("coverage", evaluation=URIRef(EVALUATION), run=URIRef(made["run"]), asOf=as_of)
    assert [(Decimal(r["numerator"]), Decimal(r["denominator"])) for r in stored] == [(Decimal(3), Decimal(6))]
    assert [(Decimal(r["coveredWeight"]), Decimal(r["applicableWeight"])) for r in again] == [(Decimal(3), Decimal(6))]
    thin = [
        r
        for r in rows("report-figures", report=URIRef(made["report"]))
        if r["metric"].endswith("/InsufficientEvidenceShare") and r["weighted"] == "true"
    ]
    share = rows("insufficient-evidence", evaluation=URIRef(EVALUATION), run=URIRef(made["run"]), asOf=as_of)
    assert [(Decimal(r["numerator"]), Decimal(r["denominator"])) for r in thin] == [(Decimal(0), Decimal(3))]
    assert [(Decimal(r["insufficientWeight"]), Decimal(r["coveredWeight"])) for r in share] == [
        (Decimal(0), Decimal(3))
    ]


def attest_hanging_on_thin_evidence(service: Service) -> None:
    """hanging (weight 3), judged by its rule alone, attested cantTell on insufficient evidence."""
    attested = service.http.post(
        f"/evaluations/{ID}/runs/1/attestations",
        headers=service.auth("annie"),
        json={
            "criterion": "hanging",
            "outcome": "cantTell",
            "rationale": "no person has read the two replies",
            "sufficiency": "insufficient",
            "appropriateness": "appropriate",
        },
    )
    assert attested.status_code == 201, attested.text


@ALSO_REMOTE
def test_a_report_says_what_its_figures_rest_on_and_verify_recomputes_it(attested: Service, snapshots: dict) -> None:
    """Worked by hand, with hanging attested cantTell on insufficient evidence besides washing failed and where
    passed (both sufficient): coverage (3 + 2 + 1) / 6 = 1 (cantTell is covered); the share on insufficient evidence
    is hanging's weight over the covered weight, 3 / 6 = 0.5, one of three criteria. Each rule judge's agreement with
    nora's determinations: hanging's on 0 units (no person read it), where's on nora's two."""
    service = restored(
        attested, snapshots, "bed-nets run 1 with hanging attested on thin evidence", attest_hanging_on_thin_evidence
    )
    made = service.http.post(f"/evaluations/{ID}/reports", json=BODY, headers=service.auth("theo"))
    assert made.status_code == 201, made.text
    report = made.json()
    assert (report["coverage"]["value"], report["coverage"]["covered"]) == ("1", 3)
    assert report["insufficientEvidence"] == {
        "value": "0.5",
        "insufficientWeight": "3",
        "coveredWeight": "6",
        "insufficient": 1,
        "covered": 3,
    }
    assert {s["identifier"]: (s["outcome"], s["sufficiency"], s["appropriateness"]) for s in report["standings"]} == {
        "hanging": ("cantTell", "Insufficient", "Appropriate"),
        "washing": ("failed", "Sufficient", "Appropriate"),
        "where": ("passed", "Sufficient", "Appropriate"),
    }

    automatic = [
        d
        for d in service.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]
        if d["mode"] == "http://www.w3.org/ns/earl#automatic"
    ]
    agreements = {a["criterion"].rsplit("/", 1)[-1]: a for a in report["judgeAgreement"]}
    assert set(agreements) == {d["criterion"].rsplit("/", 1)[-1] for d in automatic}
    assert (agreements["hanging"]["units"], agreements["hanging"]["value"]) == (0, None)
    where = sorted(
        (d["probe"], d["outcome"].rsplit("#", 1)[-1]) for d in automatic if d["criterion"].endswith("/where")
    )
    codes = {"passed": 0, "failed": 1, "cantTell": 2, "inapplicable": 3}
    matrix = [[codes[o] for _, o in where], [codes["passed"]] * len(where)]  # nora passed both
    expected = (
        None
        if len({v for row in matrix for v in row}) < 2
        else krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    )
    assert agreements["where"]["units"] == len(where) == 2 and agreements["where"]["measure"] == "KrippendorffAlpha"
    assert (agreements["where"]["value"] is None) == (expected is None)
    if expected is not None:
        assert float(agreements["where"]["value"]) == pytest.approx(float(expected), abs=1e-6)
    assert not any(a["trustedAlone"] for a in report["judgeAgreement"])  # 2 units of the 10 the default asks
    assert service.http.get(f"/evaluations/{ID}/reports/1").json() == report  # read back as stored

    page = service.http.get(f"/evaluations/{ID}/reports/1/page").text
    assert 'id="insufficient-value">50%' in page and 'id="standings"' in page and 'id="judge-agreement"' in page
    assert 'id="outside-boundary"' not in page

    checked = service.http.get(f"/evaluations/{ID}/reports/1/verify").json()
    assert checked["holds"] is True, checked["differences"]
    hanging = next(
        a
        for a in service.http.get(f"/evaluations/{ID}/attestations").json()["attestations"]
        if a["criterion"].endswith("/hanging")
    )
    batch = hanging["attestation"].rsplit("/attestations/", 1)[0]
    service.store.run_update(f"""
        PREFIX epo: <https://w3id.org/ob-caie/epo/>
        WITH <{batch}> DELETE {{ <{hanging['attestation']}> epo:evidenceSufficiency epo:Insufficient }}
        INSERT {{ <{hanging['attestation']}> epo:evidenceSufficiency epo:Sufficient }} WHERE {{}}""")
    moved = {
        f["figure"]: (f["stored"], f["recomputed"])
        for f in service.http.get(f"/evaluations/{ID}/reports/1/verify").json()["figures"]
        if not f["holds"]
    }
    assert moved["insufficientEvidence"] == ("0.5", "0")
    assert moved[f"standing.{hanging['criterion']}"] == (
        "cantTell Insufficient Appropriate",
        "cantTell Sufficient Appropriate",
    )
    assert "coverage" not in moved
