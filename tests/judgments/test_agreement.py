"""Issue 10 §7 over real HTTP, on the rule-judged bed-nets run: Krippendorff's alpha between two people who
determined the same responses (each person's latest determination on a unit counting), checked against the
``krippendorff`` package on the matrix the test writes down and against a value worked out by hand; and an
automated judge's agreement with the current attested outcome, stored as a measurement whose confusion table is
the one counted from the determinations listing.
"""

from __future__ import annotations

from collections import Counter

import krippendorff
import pytest

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from .test_judgments_api import ID, approved, judged, planned, probes  # noqa: F401

pytestmark = EMBEDDED_ONLY
EARL = "http://www.w3.org/ns/earl#"
CODES = {"passed": 0, "failed": 1, "cantTell": 2, "inapplicable": 3}


def determine(service: Service, agent: str, rulings: list[tuple[str, str, str]]) -> None:
    """``agent``'s determinations (probe, criterion identifier, outcome) on run 1's first turns, as one batch."""
    body = {"determinations": [{"probe": probe, "criterion": criterion, "outcome": outcome,
                                "rationale": f"{agent} reads the reply as {outcome}"}
                               for probe, criterion, outcome in rulings]}
    made = service.http.post(f"/evaluations/{ID}/runs/1/determinations", json=body, headers=service.auth(agent))
    assert made.status_code == 201, made.text


def test_alpha_between_people_is_krippendorffs_over_each_persons_latest_determination(judged: Service) -> None:  # noqa: F811
    listed = judged.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    p = sorted(item["probe"] for item in listed)
    hanging = probes(judged, "hanging")[0]["criterion"]
    other = sorted({item["criterion"].rsplit("/", 1)[-1] for item in listed} - {"hanging"})
    y, z = other[0], other[1]
    determine(judged, "annie", [(p[0], "hanging", "passed"), (p[1], "hanging", "failed"), (p[2], "hanging", "failed"),
                                (p[3], y, "cantTell"), (p[4], y, "inapplicable"), (p[0], z, "failed"), (p[1], z, "passed")])
    determine(judged, "nora", [(p[0], "hanging", "passed"), (p[1], "hanging", "failed"), (p[2], "hanging", "failed"),
                               (p[3], y, "cantTell"), (p[4], y, "passed"), (p[5], y, "failed")])
    determine(judged, "annie", [(p[1], "hanging", "passed")])  # annie corrects herself: her latest word counts

    found = judged.http.get(f"/evaluations/{ID}/agreement").json()
    # Units two people determined (z only annie, p[5] on y only nora; the rule judge is no person), by criterion IRI
    # then response; rows annie, nora.
    matrix = {"annie": ["passed", "passed", "failed", "cantTell", "inapplicable"],
              "nora": ["passed", "failed", "failed", "cantTell", "passed"]}
    units = sorted(found["units"], key=lambda u: (u["criterion"] != hanging, u["criterion"], u["probe"]))
    assert [u["probe"] for u in units] == [p[0], p[1], p[2], p[3], p[4]]
    assert [[u["outcomes"][coder] for u in units] for coder in found["coders"]] == [matrix["annie"], matrix["nora"]]
    assert [c.rsplit("/", 1)[-1] for c in found["coders"]] == ["annie", "nora"]
    assert found["valueCounts"] == {"passed": 4, "failed": 3, "cantTell": 2, "inapplicable": 1}
    by_hand = krippendorff.alpha(reliability_data=[[CODES[o] for o in row] for row in matrix.values()],
                                 level_of_measurement="nominal")
    assert (found["unitCount"], found["level"], found["reason"]) == (5, "nominal", None)
    assert found["alpha"] == pytest.approx(by_hand)

    # The hanging units alone: annie p p f, nora p f f. Coincidences: o(p,p) = 2, o(f,f) = 2, o(p,f) = o(f,p) = 1;
    # n_p = n_f = 3, n = 6. Nominal alpha = 1 - (n - 1) * (o(p,f) + o(f,p)) / (n_p n_f + n_f n_p)
    # = 1 - 5 * 2 / 18 = 4/9.
    one = judged.http.get(f"/evaluations/{ID}/agreement", params={"criterion": hanging}).json()
    assert (one["unitCount"], one["alpha"]) == (3, pytest.approx(4 / 9))

    alone = judged.http.get(f"/evaluations/{ID}/agreement", params={"criterion": hanging.replace("/hanging", f"/{z}")})
    assert alone.status_code == 200
    assert (alone.json()["alpha"], alone.json()["unitCount"]) == (None, 0)
    assert "0 unit(s) determined by two or more people: alpha needs at least 2" in alone.json()["reason"]
    refused = judged.http.get(f"/evaluations/{ID}/agreement", params={"criterion": "hanging"})
    assert refused.status_code == 400 and "the criterion 'hanging' is not an absolute IRI" in refused.text
    assert judged.http.get("/evaluations/nowhere/agreement").status_code == 404


def test_a_judges_reliability_against_the_current_attestation_is_stored_and_listed(judged: Service) -> None:  # noqa: F811
    url = f"/evaluations/{ID}/runs/1/judge-reliability"
    early = judged.http.post(url, headers=judged.auth("theo"))
    assert early.status_code == 422 and "attest first" in early.text
    assert judged.http.post(url, headers=judged.auth("vera")).status_code == 403
    assert judged.http.post(url).status_code == 401

    attest = f"/evaluations/{ID}/runs/1/attestations"
    first = {"criterion": "hanging", "outcome": "cantTell", "rationale": "two replies", "sufficiency": "insufficient",
             "appropriateness": "appropriate"}
    made = judged.http.post(attest, json=first, headers=judged.auth("annie"))
    assert made.status_code == 201, made.text
    attested = "passed"  # not what the rule judge ruled, so its rate is not trivially 1
    correction = {**first, "outcome": attested, "sufficiency": "sufficient", "supersedes": made.json()["attestation"],
                  "reason": "both replies show how to fix the net above the bed"}
    current = judged.http.post(attest, json=correction, headers=judged.auth("annie"))
    assert current.status_code == 201, current.text

    criterion = current.json()["criterion"]
    automatic = [d for d in judged.http.get(f"/evaluations/{ID}/determinations", params={"criterion": criterion})
                 .json()["determinations"] if d["mode"] == EARL + "automatic"]
    counted = Counter(d["outcome"].rsplit("#", 1)[-1] for d in automatic)
    compared = sum(n for outcome, n in counted.items() if outcome != "inapplicable")

    stored = judged.http.post(url, headers=judged.auth("theo"))
    assert stored.status_code == 201, stored.text
    [measurement] = stored.json()["measurements"]
    assert (measurement["judge"], measurement["version"], measurement["criterion"], measurement["attestation"]) == (
        automatic[0]["judge"], automatic[0]["version"], criterion, current.json()["attestation"])
    assert {c["judgeOutcome"]: c["responses"] for c in measurement["cells"]} == dict(counted)
    assert {c["attestedOutcome"] for c in measurement["cells"]} == {attested}
    assert (measurement["matching"], measurement["compared"]) == (counted[attested], compared)
    assert measurement["rate"] == pytest.approx(counted[attested] / compared)

    again = judged.http.post(url, headers=judged.auth("annie"))  # a domain expert may measure too
    assert again.status_code == 201, again.text
    listed = judged.http.get(f"/evaluations/{ID}/judge-reliability", params={"criterion": criterion}).json()["measurements"]
    assert [(m["measurement"], m["latest"]) for m in listed] == [
        (measurement["measurement"], False), (again.json()["measurements"][0]["measurement"], True)]
    assert listed[0]["cells"] == measurement["cells"] and listed[0]["rate"] == pytest.approx(measurement["rate"])
    published = judged.http.get("/" + measurement["measurement"][len(BASE_URL):], headers={"Accept": "text/turtle"})
    assert published.status_code == 200 and "JudgeAgreementRate" in published.text  # the measurement dereferences
