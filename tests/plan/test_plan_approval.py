"""A plan approval is checked against what it approves, over real HTTP on both backends: the plan must
exist, the digest the expert reviewed must be the plan's current one, and a plan changed behind the
service (straight in the store) is no longer approved, so nothing may run on it.

Each test starts from a 40-probe plan made over HTTP once per backend (:func:`.test_plans_api.small_planned`)."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from service.core.errors import Conflict
from service.core.store import ChangeSet
from service.plan.approval import require_approved_plan

from ..api.test_evaluations import ID
from ..conftest import BASE_URL, Service, graphs_over
from .test_plans_api import plan_json


def catalog_digest(service: Service, graph: str) -> str:
    entries = service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"]
    return next(e["digest"] for e in entries if e["graph"] == graph)


def test_approval_checks_the_plan_it_approves(small_planned: Service) -> None:
    signed = small_planned
    missing = signed.http.post(f"/evaluations/{ID}/plans/99/approval", json={}, headers=signed.auth("annie"))
    assert missing.status_code == 404 and "no plan 99" in missing.json()["detail"]

    plan = plan_json(signed)
    url = f"/evaluations/{ID}/plans/{plan['number']}/approval"
    record_before = catalog_digest(signed, BASE_URL + f"evaluations/{ID}")
    stale = signed.http.post(url, json={"digest": "0" * 64}, headers=signed.auth("annie"))
    assert stale.status_code == 409 and plan["digest"] in stale.json()["detail"]
    assert signed.http.get(f"/evaluations/{ID}/plans/{plan['number']}").json()["approved"] is False
    assert catalog_digest(signed, BASE_URL + f"evaluations/{ID}") == record_before

    approved = signed.http.post(url, json={"digest": plan["digest"], "comment": "fit"}, headers=signed.auth("annie"))
    assert approved.status_code == 201, approved.text
    view = signed.http.get(f"/evaluations/{ID}/plans/{plan['number']}").json()
    assert view["approved"] is True and view["notApprovedBecause"] == []
    assert view["approvals"][0]["planDigest"] == plan["digest"] == view["digest"]
    graphs = graphs_over(signed.store)
    require_approved_plan(graphs, ID, plan["number"])


def test_a_plan_changed_behind_the_service_is_not_approved(small_planned: Service) -> None:
    signed, plan = small_planned, plan_json(small_planned)
    url = f"/evaluations/{ID}/plans/{plan['number']}/approval"
    assert signed.http.post(url, json={}, headers=signed.auth("annie")).status_code == 201

    # Someone with access to the store itself raises the plan's budget, bypassing the service.
    iri = NamedNode(plan["plan"])
    signed.store.apply(
        ChangeSet(insert=[Quad(iri, NamedNode("https://w3id.org/ob-caie/epo/probeBudget"), Literal("999"), iri)])
    )

    view = signed.http.get(f"/evaluations/{ID}/plans/{plan['number']}").json()
    assert view["approved"] is False and view["digest"] != plan["digest"]
    assert any("changed after it was made" in reason for reason in view["notApprovedBecause"])
    with pytest.raises(Conflict, match="nothing can run"):
        require_approved_plan(graphs_over(signed.store), ID, plan["number"])
    again = signed.http.post(url, json={}, headers=signed.auth("annie"))
    assert again.status_code == 409 and "changed after it was made" in again.json()["detail"]
