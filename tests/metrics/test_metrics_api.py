"""Issue 11, "Done when" 1: coverage, the outcome distribution and pass-rate counts of an evaluation with known
weights and outcomes (tests/metrics/conftest.py), to the exact values worked out by hand, through the HTTP API on
both store backends; as of a date and for one run; and the gaps, failures, traces and drill-down that go with them.
"""

from __future__ import annotations

import pytest

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import domain_json
from .conftest import EVALUATION, ID, before_correction, tree_levels

CRITERIA = f"{BASE_URL}evaluations/{ID}/envelope/v1/criteria/"
RUN = f"{BASE_URL}evaluations/{ID}/runs/"
Z2 = 1.959963984540054**2
"""z² of a two-sided 95% interval."""


def metrics(service: Service, **params: object) -> dict:
    answer = service.http.get(f"{EVALUATION}/metrics", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def distribution(body: dict) -> dict[str, tuple]:
    return {
        o["outcome"]: (
            o["criteria"],
            o["weight"],
            (o["fraction"] or {}).get("fraction"),
            (o["weightedFraction"] or {}).get("fraction"),
        )
        for o in body["distribution"]["outcomes"]
    }


def rates(body: dict) -> dict[tuple[str, int], tuple]:
    return {
        (p["criterion"].removeprefix(CRITERIA), int(p["run"].rsplit("/", 1)[-1])): (p["k"], p["n"], p["N"], p["cases"])
        for p in body["passRates"]
    }


def test_coverage_distribution_and_pass_rate_counts_are_exact(measured: Service) -> None:
    body = metrics(measured)
    # applicable: hanging 3 + washing 2 + where 1; covered: hanging (passed after the correction), washing (cantTell)
    assert body["coverage"] == {
        "applicable": 3,
        "covered": 2,
        "applicableWeight": "6",
        "coveredWeight": "5",
        "rate": {"value": "0.833333333333", "fraction": "5/6"},
    }
    assert distribution(body) == {
        "passed": (1, "3", "1/2", "3/5"),
        "failed": (0, "0", "0/1", "0/1"),
        "cantTell": (1, "2", "1/2", "2/5"),
    }
    assert (body["distribution"]["criteria"], body["distribution"]["weight"]) == (2, "5")
    # per case: hanging A failed (one failed among its determinations), B passed; washing A only inapplicable
    # (left out), B cantTell; run 2: washing A passed. N is each criterion's prompt frame: 2.
    assert rates(body) == {
        ("hanging", 1): (1, 2, 2, 2),
        ("washing", 1): (0, 1, 2, 2),
        ("where", 1): (0, 0, 2, 2),
        ("hanging", 2): (0, 0, 2, 2),
        ("washing", 2): (1, 1, 2, 2),
        ("where", 2): (0, 0, 2, 2),
    }
    intervals = {
        (p["criterion"].removeprefix(CRITERIA), p["run"].removeprefix(RUN)): p["interval"] for p in body["passRates"]
    }
    assert intervals[("hanging", "1")] == {
        "lower": 0.5,
        "upper": 0.5,
        "level": 0.95,
        "method": "wilson-fpc",
    }  # a census
    # washing, run 1: 0 of 1 from a frame of 2: f = (2 - 1)/(2 - 1) = 1, Wilson's [0, z²/(1 + z²)]
    assert intervals[("washing", "1")]["lower"] == 0.0
    assert intervals[("washing", "1")]["upper"] == pytest.approx(Z2 / (1 + Z2), abs=1e-12)
    assert intervals[("where", "1")] is None  # nothing judged
    assert [(g["identifier"], g["weight"], g["attestedInapplicable"]) for g in body["gaps"]] == [("where", "1", False)]
    assert body["failures"] == [] and body["executionErrors"] == []
    assert body["envelope"] == f"{BASE_URL}evaluations/{ID}/envelope/v1" and body["envelopeDigest"]


def test_as_of_a_date_and_for_one_run(measured: Service) -> None:
    """As of the superseded attestation's time the criterion was failed; before anything, nothing is covered; run 2
    has only washing's inapplicable attestation, so nothing is covered in it."""
    body = metrics(measured, asOf=before_correction(measured))
    assert body["coverage"]["rate"]["fraction"] == "5/6"
    assert distribution(body) == {
        "passed": (0, "0", "0/1", "0/1"),
        "failed": (1, "3", "1/2", "3/5"),
        "cantTell": (1, "2", "1/2", "2/5"),
    }
    assert [(f["identifier"], f["requirementIdentifier"], f["weight"]) for f in body["failures"]] == [
        ("hanging", "R1", "3")
    ]
    before_anything = metrics(measured, asOf="2000-01-01T00:00:00Z")
    assert before_anything["coverage"] == {
        "applicable": 3,
        "covered": 0,
        "applicableWeight": "6",
        "coveredWeight": "0",
        "rate": {"value": "0", "fraction": "0/1"},
    }
    assert distribution(before_anything) == {o: (0, "0", None, None) for o in ("passed", "failed", "cantTell")}
    assert {key: value[:2] for key, value in rates(before_anything).items()} == {key: (0, 0) for key in rates(body)}

    body = metrics(measured, run=2)
    assert (body["run"], body["coverage"]["covered"], body["coverage"]["coveredWeight"]) == (f"{RUN}2", 0, "0")
    assert rates(body) == {("hanging", 2): (0, 0, 2, 2), ("washing", 2): (1, 1, 2, 2), ("where", 2): (0, 0, 2, 2)}
    assert [(g["identifier"], g["attestedInapplicable"]) for g in body["gaps"]] == [
        ("hanging", False),
        ("washing", True),
        ("where", False),
    ]
    assert metrics(measured, run=1)["coverage"]["rate"]["fraction"] == "5/6"


@EMBEDDED_ONLY
def test_traceability_both_ways_and_the_drill_down(measured: Service) -> None:
    http = measured.http
    asOf = before_correction(measured)
    back = http.get(f"{EVALUATION}/failures/trace", params={"asOf": asOf}).json()["traces"]
    # the failed hanging attestation aggregates annie's failed determination on probe A (nora's passed one is not a failure)
    assert [
        (
            t["criterion"].removeprefix(CRITERIA),
            t["requirement"].rsplit("/", 1)[-1],
            t["expert"].rsplit("/", 1)[-1],
            t["judge"].rsplit("/", 1)[-1],
            t["method"].rsplit("/", 1)[-1],
            t["run"],
        )
        for t in back
    ] == [("hanging", "R1", "annie", "annie", "HumanJudge", f"{RUN}1")]
    assert http.get(f"{EVALUATION}/failures/trace").json()["traces"] == []  # corrected since

    links = http.get(f"{EVALUATION}/trace", params={"criterion": "hanging", "run": 1}).json()["links"]
    judged = {
        (
            link["probe"].rsplit("/", 1)[-1],
            link["outcome"],
            link["judge"].rsplit("/", 1)[-1],
            link["attestedOutcome"],
            link["current"],
        )
        for link in links
    }
    probe_a, probe_b = sorted({link["probe"].rsplit("/", 1)[-1] for link in links})
    # every determination on hanging in run 1 is aggregated by both attestations, the superseded and the current one
    assert judged == {
        (probe, outcome, judge, attested, current)
        for probe, outcome, judge in (
            (probe_a, "failed", "annie"),
            (probe_a, "passed", "nora"),
            (probe_b, "passed", "annie"),
        )
        for attested, current in (("failed", False), ("passed", True))
    }
    where = http.get(f"{EVALUATION}/trace", params={"requirement": "R2"}).json()["links"]
    assert len(where) == 4 and {link["determination"] for link in where} == {None}  # 2 probes x 2 runs, none judged

    tree = http.get(f"{EVALUATION}/drill-down", params={"criterion": "washing"}).json()
    summary = tree["summary"]
    assert (
        summary["outcomes"],
        summary["weight"],
        summary["coveredWeight"],
        summary["cases"],
        summary["determinations"],
    ) == ({"passed": 1, "failed": 0, "cantTell": 1, "untested": 1}, "6", "5", 5, 6)
    dimensions = {d["label"]: d for d in summary["children"]}
    assert {
        label: (d["outcomes"]["untested"], d["weight"], [c["label"] for c in d["children"]])
        for label, d in dimensions.items()
    } == {"safety": (0, "5", ["care", "use"]), "accuracy": (1, "1", ["service-access"])}
    care = next(c for c in dimensions["safety"]["children"] if c["label"] == "care")
    assert [(c["identifier"], c["outcome"], c["cases"], c["determinations"]) for c in care["criteria"]] == [
        ("washing", "cantTell", 3, 3)
    ]
    assert {(c["run"].removeprefix(RUN), c["outcome"]) for c in tree["cases"]} >= {
        ("1", "inapplicable"),
        ("1", "cantTell"),
        ("2", "passed"),
    }


@EMBEDDED_ONLY
def test_bad_parameters_are_refused_by_name(measured: Service) -> None:
    for path, params, status, phrase in [
        ("metrics", {"asOf": "yesterday"}, 400, "not an ISO 8601 date-time"),
        ("metrics", {"asOf": "2026-01-01T00:00:00"}, 400, "no time zone"),
        ("metrics", {"run": 9}, 404, "has no run 9"),
        ("gaps", {"run": 9}, 404, "has no run 9"),
        ("trace", {"criterion": "c99"}, 404, "no criterion 'c99'"),
        ("trace", {"requirement": "R9"}, 404, "no requirement 'R9'"),
    ]:
        answer = measured.http.get(f"{EVALUATION}/{path}", params=params)
        assert (answer.status_code, phrase in answer.text) == (status, True), answer.text
    assert measured.http.get("/evaluations/nothing-here/metrics").status_code == 404


def test_metrics_read_the_envelope_as_it_is_now_after_it_changes(measured: Service) -> None:
    """The envelope is kept in process by its graph's catalog digest between requests: a new version, then a changed
    weight, each shows in the next answer (on a remote store too, where other replicas may write)."""
    v1 = metrics(measured)
    started = measured.http.post(f"{EVALUATION}/envelope/versions", headers=measured.auth("theo"))
    assert started.status_code == 201, started.text
    v2 = metrics(measured)
    assert (v2["envelope"], v2["envelopeDigest"]) == (
        f"{BASE_URL}evaluations/{ID}/envelope/v2",
        started.json()["digest"],
    )
    assert v2["envelopeDigest"] == v1["envelopeDigest"]  # a copy: the digest is of the content, not the IRIs
    # v2's criteria are new IRIs: v1's attestations are not on them
    assert (v2["coverage"]["applicableWeight"], v2["coverage"]["covered"]) == ("6", 0)
    content = domain_json("envelope.json")
    next(c for c in content["criteria"] if c["id"] == "where")["weight"] = 4
    changed = measured.http.put(f"{EVALUATION}/envelope", json=content, headers=measured.auth("theo"))
    assert changed.status_code == 200, changed.text
    now = metrics(measured)
    assert (now["envelopeDigest"], now["coverage"]["applicableWeight"]) == (changed.json()["digest"], "9")  # 3 + 2 + 4
    assert now["envelopeDigest"] != v2["envelopeDigest"]
    assert next((g["identifier"], g["weight"]) for g in now["gaps"]) == ("where", "4")


@EMBEDDED_ONLY
def test_drill_down_totals_at_every_level(measured: Service) -> None:
    """Each level's totals, from drill-down.rq, worked out by hand. Safety holds hanging (weight 3, category use) and
    washing (2, care); accuracy holds where (1, service-access). Cases and determinations per criterion: hanging 2
    cases (probe A: annie failed, nora passed; B: annie passed), 3 determinations; washing 3 cases (run 1 A
    inapplicable, B cantTell; run 2 A passed), 3; where none."""
    dimensions = f"{BASE_URL}evaluations/{ID}/envelope/v1/dimensions/"

    def levels(**params: object) -> dict:
        answer = measured.http.get(f"{EVALUATION}/drill-down", params=params)
        assert answer.status_code == 200, answer.text
        return {
            (level, key.removeprefix(dimensions) if key else key): value
            for (level, key), value in tree_levels(answer.json()["summary"]).items()
            if level != "criterion"
        }

    #                                       passed failed cantTell untested  weight covered cases determinations
    assert levels() == {
        ("summary", None): ((1, 0, 1, 1), "6", "5", 5, 6),
        ("dimension", "safety"): ((1, 0, 1, 0), "5", "5", 5, 6),
        ("category", "safety/use"): ((1, 0, 0, 0), "3", "3", 2, 3),
        ("category", "safety/care"): ((0, 0, 1, 0), "2", "2", 3, 3),
        ("dimension", "accuracy"): ((0, 0, 0, 1), "1", "0", 0, 0),
        ("category", "accuracy/service-access"): ((0, 0, 0, 1), "1", "0", 0, 0),
    }
    # before the correction hanging was failed; every determination is older than that
    before = levels(asOf=before_correction(measured))
    assert (before[("summary", None)], before[("dimension", "safety")], before[("category", "safety/use")]) == (
        ((0, 1, 1, 1), "6", "5", 5, 6),
        ((0, 1, 1, 0), "5", "5", 5, 6),
        ((0, 1, 0, 0), "3", "3", 2, 3),
    )
    # run 2: its only attestation says inapplicable (nothing covered); one case, washing's, one determination
    second = levels(run=2)
    assert (second[("summary", None)], second[("category", "safety/care")], second[("category", "safety/use")]) == (
        ((0, 0, 0, 3), "6", "0", 1, 1),
        ((0, 0, 0, 1), "2", "0", 1, 1),
        ((0, 0, 0, 1), "3", "0", 0, 0),
    )
