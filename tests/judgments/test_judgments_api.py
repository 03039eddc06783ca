"""Step 5 over real HTTP, on a run of the bed-nets test domain's approved plan against the demonstration chatbot:
people's determinations and the rule judges' (a judging rule of that domain, loaded as data), refused by name
and storing nothing when they do not fit the record, read back with ``queries/determinations.rq``; and the
domain expert's attestations, which start from the declared aggregation rule over every determination on the
criterion, and are corrected only by a superseding attestation with a reason, both staying in the record.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

from fastapi.testclient import TestClient

from service.api import create_app

from ..api.workspace import dated_by_hand
from ..conftest import EMBEDDED_ONLY, Service, dump, settings_for
from ..plan.test_second_domain_plan import ID
from ..runs.test_run_record import finished
from ..servers import AppSlot

pytestmark = EMBEDDED_ONLY
JUDGES = Path(__file__).parents[2] / "examples" / "bednets" / "judges.ttl"
EARL = "http://www.w3.org/ns/earl#"


def run_and_judge(service: Service) -> None:
    """Run 1 on the demo chatbot, the domain's judging rule loaded and applied by the operator."""
    started = service.http.post(
        f"/evaluations/{ID}/runs", json={"plan": 1, "target": {"kind": "demo"}}, headers=service.auth("theo")
    )
    assert started.status_code == 202, started.text
    finished(service, 1, traces=6)
    loaded = service.http.put(
        "/graphs/judges/bednets",
        content=JUDGES.read_bytes(),
        headers={"Content-Type": "text/turtle", **service.auth("admin")},
    )
    assert loaded.status_code == 201, loaded.text
    judged = service.http.post(f"/evaluations/{ID}/runs/1/rule-judgments", headers=service.auth("theo"))
    assert judged.status_code == 201, judged.text


def probes(service: Service, criterion: str) -> list[dict]:
    items = service.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    return [p for p in items if p["criterion"].endswith(f"/{criterion}")]


def test_rule_judges_and_people_determine_and_bad_determinations_store_nothing(judged: Service) -> None:
    automatic = judged.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]
    hanging = [d for d in automatic if d["criterion"].endswith("/hanging")]
    assert len(hanging) == len(probes(judged, "hanging")) == 2  # one per reply to a hanging question
    assert {d["mode"] for d in automatic} == {EARL + "automatic"}
    assert all(
        d["judge"] == "https://example.org/judges/bednets/hanging-tied" and d["version"].startswith("0.1.0+rule.")
        for d in hanging
    )
    assert {d["outcome"] for d in automatic} <= {EARL + o for o in ("passed", "failed", "cantTell", "inapplicable")}
    # the generic service check read each probe's country from its scenario facts: Ghana's channel is named
    where = [d for d in automatic if d["criterion"].endswith("/where")]
    assert len(where) == len(probes(judged, "where")) > 0
    assert all("kg/ghana/antenatal-clinics" in d["rationale"] for d in where), where

    probe = probes(judged, "hanging")[0]["probe"]
    url = f"/evaluations/{ID}/runs/1/determinations"
    body = {
        "determinations": [
            {
                "probe": probe,
                "criterion": "hanging",
                "outcome": "failed",
                "rationale": "says nothing about tying the net up",
                "pointer": {"start": 0, "end": 5},
            }
        ]
    }
    made = judged.http.post(url, json=body, headers=judged.auth("annie"))
    assert made.status_code == 201, made.text
    listed = judged.http.get(f"/evaluations/{ID}/determinations", params={"criterion": hanging[0]["criterion"]}).json()
    manual = [d for d in listed["determinations"] if d["mode"] == EARL + "manual"]
    assert [
        (d["probe"], d["outcome"], d["pointerStart"], d["pointerEnd"], d["judge"].endswith("/annie")) for d in manual
    ] == [(probe, EARL + "failed", "0", "5", True)]

    before = len(dump(judged.store))
    one = body["determinations"][0]
    refusals = [
        ({**one, "outcome": "maybe"}, "annie", 422, "outcome"),
        ({**one, "criterion": "c99"}, "annie", 422, "no criterion 'c99'"),
        ({**one, "probe": probe.replace("/probes/", "/probes/9")}, "annie", 422, "no answered case"),
        ({**one, "turn": 4}, "annie", 422, "1 turn(s), not 4"),
        ({**one, "pointer": {"start": 0, "end": 100_000}}, "annie", 422, "past the response"),
        (one, "theo", 403, "lacks the role"),
        (one, None, 401, "credential"),
    ]
    for item, agent, status, phrase in refusals:
        answer = judged.http.post(
            url, json={"determinations": [one, item]}, headers=judged.auth(agent) if agent else {}
        )
        assert (answer.status_code, phrase in answer.text) == (status, True), (item, answer.text)
    assert len(dump(judged.store)) == before


def test_attestations_start_from_the_rule_and_are_corrected_only_by_superseding(
    judged: Service, app_slot: tuple[AppSlot, str]
) -> None:
    url = f"/evaluations/{ID}/runs/1/attestations"
    first = {
        "criterion": "hanging",
        "outcome": "failed",
        "rationale": "neither reply says how to fix the net",
        "sufficiency": "sufficient",
        "appropriateness": "appropriate",
    }
    assert judged.http.post(url, json=first, headers=judged.auth("theo")).status_code == 403
    assert (
        judged.http.post(url, json={**first, "sufficiency": "insufficient"}, headers=judged.auth("annie")).status_code
        == 422
    )
    with dated_by_hand(app_slot[0]) as clock:
        made = judged.http.post(url, json=first, headers=judged.auth("annie"))
        assert made.status_code == 201, made.text
        attestation, dated = made.json(), [clock.utc()]
        determinations = judged.http.get(
            f"/evaluations/{ID}/determinations", params={"criterion": attestation["criterion"]}
        ).json()["determinations"]
        assert set(attestation["determinations"]) == {d["determination"] for d in determinations}  # no cherry-picking
        # only the rule judge ruled, and no person agreed with it yet: the rule counts none of its rulings
        assert {d["mode"] for d in determinations} == {"http://www.w3.org/ns/earl#automatic"}
        assert (attestation["aggregatedOutcome"], attestation["current"]) == ("untested", True)

        again = judged.http.post(url, json={**first, "outcome": "passed"}, headers=judged.auth("annie"))
        assert again.status_code == 409 and "supersede it" in again.text
        correction = {
            **first,
            "outcome": "cantTell",
            "sufficiency": "insufficient",
            "supersedes": attestation["attestation"],
        }
        assert judged.http.post(url, json=correction, headers=judged.auth("annie")).status_code == 422  # no reason
        clock.advance(0.001)  # the correction is dated strictly later (the listing orders by date)
        dated.append(clock.utc())
        corrected = judged.http.post(
            url,
            json={**correction, "reason": "two replies are too few to fail the criterion"},
            headers=judged.auth("annie"),
        )
    assert corrected.status_code == 201, corrected.text
    listed = judged.http.get(f"/evaluations/{ID}/attestations").json()["attestations"]
    assert [(a["outcome"], a["current"], a["supersedes"]) for a in listed] == [
        ("failed", False, None),
        ("cantTell", True, attestation["attestation"]),
    ]
    assert listed[1]["reason"] == "two replies are too few to fail the criterion"
    assert [datetime.fromisoformat(a["at"]) for a in listed] == dated  # the dates are the deployment clock's


def test_a_deployment_with_the_separation_rule_refuses_over_http_who_ran_a_run_judging_it(judged: Service) -> None:
    """With ``CAIE_SEPARATION`` on, the HTTP routes apply the rule: the admin (who holds every role) starts a run,
    and may then neither determine nor attest on it (403 naming the rule); nothing is stored."""
    app = create_app(settings_for(judged.tokens, separation=True), judged.store)
    with TestClient(app) as client:
        admin = judged.auth("admin")
        started = client.post(f"/evaluations/{ID}/runs", json={"plan": 1, "target": {"kind": "demo"}}, headers=admin)
        assert started.status_code == 202, started.text
        for _ in range(600):
            if client.get(f"/evaluations/{ID}/runs/2").json()["job"]["state"] != "running":
                break
            time.sleep(0.05)
        before = len(dump(judged.store))
        probe = probes(judged, "hanging")[0]["probe"]
        refused = client.post(
            f"/evaluations/{ID}/runs/2/determinations",
            headers=admin,
            json={
                "determinations": [
                    {"probe": probe, "criterion": "hanging", "outcome": "passed", "rationale": "says to tie it up"}
                ]
            },
        )
        assert refused.status_code == 403 and "ran run 2" in refused.text, refused.text
        assert len(dump(judged.store)) == before


def test_only_the_attester_supersedes_an_attestation_unless_the_deployment_names_a_role(judged: Service) -> None:
    """Another domain expert may not supersede annie's attestation (403, nothing stored); a deployment that names a
    role (CAIE_SUPERSEDE_ROLE) lets its holders do it, the reason recorded."""
    url = f"/evaluations/{ID}/runs/1/attestations"
    first = {
        "criterion": "hanging",
        "outcome": "cantTell",
        "rationale": "two replies only",
        "sufficiency": "insufficient",
        "appropriateness": "appropriate",
    }
    made = judged.http.post(url, json=first, headers=judged.auth("annie"))
    assert made.status_code == 201, made.text
    other = {
        **first,
        "rationale": "I read them otherwise",
        "supersedes": made.json()["attestation"],
        "reason": "a second reading",
    }
    people = {
        "erin-token": {"agent": "erin", "roles": ["domain_expert"]},
        "lena-token": {"agent": "lena", "roles": ["domain_expert", "lead_expert"]},
    }
    base = settings_for(judged.tokens, supersede_role="lead_expert")
    settings = base.model_copy(update={"tokens": json.dumps({**json.loads(base.tokens or "{}"), **people})})
    with TestClient(create_app(settings, judged.store)) as client:
        before = len(dump(judged.store))
        refused = client.post(url, json=other, headers={"Authorization": "Bearer erin-token"})
        assert refused.status_code == 403 and "only they may supersede it" in refused.text, refused.text
        assert len(dump(judged.store)) == before
        lead = client.post(url, json=other, headers={"Authorization": "Bearer lena-token"})
        assert lead.status_code == 201 and lead.json()["reason"] == "a second reading", lead.text
