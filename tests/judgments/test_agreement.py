"""Issue 10 §7 over real HTTP, on the rule-judged bed-nets run: Krippendorff's alpha between two people who
determined the same responses (each person's latest determination on a unit counting), checked against the
``krippendorff`` package on the matrix the test writes down and against a value worked out by hand; and an
automated judge's agreement with the current attested outcome, stored as a measurement whose confusion table is
the one counted from the determinations listing.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import krippendorff
import pytest

from service.envelope import AgreementMeasure, JudgeAgreement
from service.judgments.agreement import HumanAgreement, coefficient

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from .test_judgments_api import ID, probes

pytestmark = EMBEDDED_ONLY
EARL = "http://www.w3.org/ns/earl#"
CODES = {"passed": 0, "failed": 1, "cantTell": 2, "inapplicable": 3}


def determine(service: Service, agent: str, rulings: list[tuple[str, str, str]]) -> None:
    """``agent``'s determinations (probe, criterion identifier, outcome) on run 1's first turns, as one batch."""
    body = {
        "determinations": [
            {
                "probe": probe,
                "criterion": criterion,
                "outcome": outcome,
                "rationale": f"{agent} reads the reply as {outcome}",
            }
            for probe, criterion, outcome in rulings
        ]
    }
    made = service.http.post(f"/evaluations/{ID}/runs/1/determinations", json=body, headers=service.auth(agent))
    assert made.status_code == 201, made.text


def test_alpha_between_people_is_krippendorffs_over_each_persons_latest_determination(judged: Service) -> None:
    listed = judged.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    p = sorted(item["probe"] for item in listed)
    hanging = probes(judged, "hanging")[0]["criterion"]
    other = sorted({item["criterion"].rsplit("/", 1)[-1] for item in listed} - {"hanging"})
    y, z = other[0], other[1]
    determine(
        judged,
        "annie",
        [
            (p[0], "hanging", "passed"),
            (p[1], "hanging", "failed"),
            (p[2], "hanging", "failed"),
            (p[3], y, "cantTell"),
            (p[4], y, "inapplicable"),
            (p[0], z, "failed"),
            (p[1], z, "passed"),
        ],
    )
    determine(
        judged,
        "nora",
        [
            (p[0], "hanging", "passed"),
            (p[1], "hanging", "failed"),
            (p[2], "hanging", "failed"),
            (p[3], y, "cantTell"),
            (p[4], y, "passed"),
            (p[5], y, "failed"),
        ],
    )
    determine(judged, "annie", [(p[1], "hanging", "passed")])  # annie corrects herself: her latest word counts

    found = judged.http.get(f"/evaluations/{ID}/agreement").json()
    # Units two people determined (z only annie, p[5] on y only nora; the rule judge is no person), by criterion IRI
    # then response; rows annie, nora.
    matrix = {
        "annie": ["passed", "passed", "failed", "cantTell", "inapplicable"],
        "nora": ["passed", "failed", "failed", "cantTell", "passed"],
    }
    units = sorted(found["units"], key=lambda u: (u["criterion"] != hanging, u["criterion"], u["probe"]))
    assert [u["probe"] for u in units] == [p[0], p[1], p[2], p[3], p[4]]
    assert [[u["outcomes"][coder] for u in units] for coder in found["coders"]] == [matrix["annie"], matrix["nora"]]
    assert [c.rsplit("/", 1)[-1] for c in found["coders"]] == ["annie", "nora"]
    assert found["valueCounts"] == {"passed": 4, "failed": 3, "cantTell": 2, "inapplicable": 1}
    by_hand = krippendorff.alpha(
        reliability_data=[[CODES[o] for o in row] for row in matrix.values()], level_of_measurement="nominal"
    )
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


def test_a_judges_reliability_against_the_current_attestation_is_stored_and_listed(judged: Service) -> None:
    url = f"/evaluations/{ID}/runs/1/judge-reliability"
    early = judged.http.post(url, headers=judged.auth("theo"))
    assert early.status_code == 422 and "attest first" in early.text
    assert judged.http.post(url, headers=judged.auth("vera")).status_code == 403
    assert judged.http.post(url).status_code == 401

    attest = f"/evaluations/{ID}/runs/1/attestations"
    first = {
        "criterion": "hanging",
        "outcome": "cantTell",
        "rationale": "two replies",
        "sufficiency": "insufficient",
        "appropriateness": "appropriate",
    }
    made = judged.http.post(attest, json=first, headers=judged.auth("annie"))
    assert made.status_code == 201, made.text
    attested = "passed"  # not what the rule judge ruled, so its rate is not trivially 1
    correction = {
        **first,
        "outcome": attested,
        "sufficiency": "sufficient",
        "supersedes": made.json()["attestation"],
        "reason": "both replies show how to fix the net above the bed",
    }
    current = judged.http.post(attest, json=correction, headers=judged.auth("annie"))
    assert current.status_code == 201, current.text

    criterion = current.json()["criterion"]
    automatic = [
        d
        for d in judged.http.get(f"/evaluations/{ID}/determinations", params={"criterion": criterion}).json()[
            "determinations"
        ]
        if d["mode"] == EARL + "automatic"
    ]
    counted = Counter(d["outcome"].rsplit("#", 1)[-1] for d in automatic)
    compared = sum(n for outcome, n in counted.items() if outcome != "inapplicable")

    stored = judged.http.post(url, headers=judged.auth("theo"))
    assert stored.status_code == 201, stored.text
    [measurement] = stored.json()["measurements"]
    assert (measurement["judge"], measurement["version"], measurement["criterion"], measurement["attestation"]) == (
        automatic[0]["judge"],
        automatic[0]["version"],
        criterion,
        current.json()["attestation"],
    )
    assert {c["judgeOutcome"]: c["responses"] for c in measurement["cells"]} == dict(counted)
    assert {c["attestedOutcome"] for c in measurement["cells"]} == {attested}
    assert (measurement["matching"], measurement["compared"]) == (counted[attested], compared)
    assert measurement["rate"] == pytest.approx(counted[attested] / compared)

    again = judged.http.post(url, headers=judged.auth("annie"))  # a domain expert may measure too
    assert again.status_code == 201, again.text
    listed = judged.http.get(f"/evaluations/{ID}/judge-reliability", params={"criterion": criterion}).json()[
        "measurements"
    ]
    assert [(m["measurement"], m["latest"]) for m in listed] == [
        (measurement["measurement"], False),
        (again.json()["measurements"][0]["measurement"], True),
    ]
    assert listed[0]["cells"] == measurement["cells"] and listed[0]["rate"] == pytest.approx(measurement["rate"])
    published = judged.http.get("/" + measurement["measurement"][len(BASE_URL) :], headers={"Accept": "text/turtle"})
    assert published.status_code == 200 and "JudgeAgreementRate" in published.text  # the measurement dereferences


def test_kappa_and_alpha_between_a_judge_and_people_worked_by_hand() -> None:
    # Four units, judge p p f f, people p f f f. Kappa: observed 3/4; chance from the judge's shares (p 1/2, f 1/2)
    # and people's (p 1/4, f 3/4) = 1/8 + 3/8 = 1/2; (3/4 - 1/2) / (1 - 1/2) = 1/2.
    # Alpha: values p 3, f 5 (n = 8); o(p,f) + o(f,p) = 2; 1 - (n - 1) * 2 / (2 * 3 * 5) = 1 - 14/30 = 8/15.
    p, f = EARL + "passed", EARL + "failed"
    units = [(p, p), (p, f), (f, f), (f, f)]
    assert coefficient(AgreementMeasure.COHEN_KAPPA, units) == (pytest.approx(0.5), None)
    assert coefficient(AgreementMeasure.KRIPPENDORFF_ALPHA, units) == (pytest.approx(8 / 15), None)
    assert coefficient(AgreementMeasure.COHEN_KAPPA, [(p, p)])[0] is None  # one unit: undefined, not perfect
    value, reason = coefficient(AgreementMeasure.KRIPPENDORFF_ALPHA, [(p, p), (p, p), (p, p)])
    assert value is None and "every value is passed" in reason

    def judge(value: float | None, units: int, minimum: str = "0.5", needed: int = 4) -> HumanAgreement:
        rule = JudgeAgreement(Decimal(minimum), AgreementMeasure.COHEN_KAPPA, needed)
        return HumanAgreement("j", "1", "c", rule.measure, value, None, units, units, rule)

    assert judge(0.5, 4).trusted_alone  # at the minimum, on the minimum of units
    assert not judge(0.49, 4).trusted_alone and not judge(0.9, 3).trusted_alone and not judge(None, 40).trusted_alone


def test_each_judges_agreement_with_people_decides_whether_its_cases_wait_for_a_person(judged: Service) -> None:
    hanging = probes(judged, "hanging")
    criterion = hanging[0]["criterion"]
    automatic = [
        d
        for d in judged.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]
        if d["mode"] == EARL + "automatic"
    ]
    on_hanging = {d["probe"]: d["outcome"] for d in automatic if d["criterion"] == criterion}
    assert sorted(on_hanging) == sorted(p["probe"] for p in hanging)  # one ruling per reply, as the rule judge gives

    # No person has determined anything: every judge version has 0 units with people, so none decides alone (the
    # bed-nets envelope declares no threshold: the default, alpha 0.8 over 10 units).
    before = judged.http.get(f"/evaluations/{ID}/judge-agreement").json()["judges"]
    assert {(a["judge"], a["version"], a["criterion"]) for a in before} == {
        (d["judge"], d["version"], d["criterion"]) for d in automatic
    }
    assert all((a["units"], a["value"], a["trustedAlone"]) == (0, None, False) for a in before)
    assert before[0]["threshold"] == {"minimum": "0.8", "measure": "krippendorff-alpha", "minimumUnits": 10}

    # Every case of the run waits for a person: the rule-judged ones as untrusted, the others as undetermined.
    listed = judged.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    waiting = judged.http.get(f"/evaluations/{ID}/runs/1/cases-needing-people").json()
    assert sorted((c["criterion"], c["probe"]) for c in waiting["cases"]) == sorted(
        (p["criterion"], p["probe"]) for p in listed
    )
    judged_probes = {d["probe"] for d in automatic}
    assert all((c["reason"] == "untrusted") == (c["probe"] in judged_probes) for c in waiting["cases"])
    assert sum(c["cases"] for c in waiting["criteria"]) == len(listed)

    # Nothing trusted alone: the proposal on a rule-judged criterion no person determined is untested.
    attest = f"/evaluations/{ID}/runs/1/attestations"
    body = {
        "criterion": "hanging",
        "outcome": "cantTell",
        "rationale": "no person has read the replies",
        "sufficiency": "insufficient",
        "appropriateness": "appropriate",
    }
    made = judged.http.post(attest, json=body, headers=judged.auth("annie"))
    assert made.status_code == 201, made.text
    assert (made.json()["aggregatedOutcome"], made.json()["aggregationRule"]) == (
        "untested",
        "https://w3id.org/ob-caie/epo/AnyFailedFailsTrusted",
    )

    # A person determines both hanging replies: agreeing with the rule on the first, not on the second.
    first, second = sorted(on_hanging)
    other = "passed" if on_hanging[second] != EARL + "passed" else "failed"
    mine = {first: on_hanging[first].rsplit("#", 1)[-1], second: other}
    determine(judged, "nora", [(probe, "hanging", outcome) for probe, outcome in mine.items()])
    [after] = [
        a
        for a in judged.http.get(f"/evaluations/{ID}/judge-agreement", params={"criterion": criterion}).json()["judges"]
    ]
    matrix = [
        [CODES[on_hanging[p].rsplit("#", 1)[-1]] for p in (first, second)],
        [CODES[mine[p]] for p in (first, second)],
    ]
    assert (after["units"], after["determined"], after["measure"]) == (2, 2, "krippendorff-alpha")
    assert after["value"] == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
    assert after["trustedAlone"] is False  # 2 units of the 10 the default asks
    now_waiting = judged.http.get(
        f"/evaluations/{ID}/runs/1/cases-needing-people", params={"criterion": criterion}
    ).json()
    assert now_waiting["cases"] == []  # a person determined both: they no longer wait

    # Both cases have a person's determination now, so the rule's rulings on them count again.
    correction = {
        **body,
        "outcome": "failed" if "failed" in {*on_hanging.values(), EARL + other} else "passed",
        "sufficiency": "sufficient",
        "supersedes": made.json()["attestation"],
        "reason": "nora read both",
    }
    counted = [*on_hanging.values(), *(EARL + o for o in mine.values())]
    expected = "failed" if EARL + "failed" in counted else "passed" if EARL + "passed" in counted else "cantTell"
    corrected = judged.http.post(attest, json=correction, headers=judged.auth("annie"))
    assert corrected.status_code == 201, corrected.text
    assert corrected.json()["aggregatedOutcome"] == expected
    assert judged.http.get(f"/evaluations/{ID}/runs/9/cases-needing-people").status_code == 404
