"""An evaluation with known weights and outcomes, built through the HTTP API once per backend (then restored).

The bed-nets test domain (tests/plan/test_second_domain_plan.py): three criteria, hanging (weight 3), washing (2) and
where (1), each with a prompt frame of 2 and 2 probes in the approved plan. Runs 1 and 2 on the demonstration
chatbot. No judging rule is loaded: every determination is a person's, so every outcome is known here.

Determinations (turn 1 of each probe's case):
  run 1  hanging probe A: annie failed, nora passed (the case is failed: any failed fails); probe B: annie passed
         washing probe A: annie inapplicable (never counted); probe B: annie cantTell
         where: none
  run 2  washing probe A: annie passed
Attestations, in this order (annie):
  run 2  washing inapplicable                      (current, but inapplicable never counts)
  run 1  washing cantTell                          (current)
  run 1  hanging failed                            (its time is ``asOf`` in the tests: the state before the correction)
  run 1  hanging passed, superseding the failed one, with a reason
So where is untested: no attestation at all.
"""

from __future__ import annotations

import pytest

from ..api.workspace import dated_by_hand
from ..conftest import Service, restored
from ..plan.test_second_domain_plan import ID
from ..runs.test_run_record import DEMO, finished
from ..servers import AppSlot

EVALUATION = f"/evaluations/{ID}"


def probes(service: Service) -> dict[str, list[str]]:
    """Criterion identifier to its plan's probe IRIs, in order."""
    items = service.http.get(f"{EVALUATION}/plans/1/probes", params={"limit": 100}).json()["items"]
    found: dict[str, list[str]] = {}
    for probe in sorted(items, key=lambda p: p["probe"]):
        found.setdefault(probe["criterion"].rsplit("/", 1)[-1], []).append(probe["probe"])
    return found


def determine(service: Service, run: int, agent: str, items: list[tuple[str, str, str]]) -> None:
    body = {
        "determinations": [
            {"probe": probe, "criterion": criterion, "outcome": outcome, "rationale": f"{outcome}, as the test says"}
            for probe, criterion, outcome in items
        ]
    }
    made = service.http.post(f"{EVALUATION}/runs/{run}/determinations", json=body, headers=service.auth(agent))
    assert made.status_code == 201, made.text


def attest(service: Service, run: int, criterion: str, outcome: str, **more: str) -> dict:
    body = {
        "criterion": criterion,
        "outcome": outcome,
        "rationale": f"attested {outcome}",
        "sufficiency": "sufficient",
        "appropriateness": "appropriate",
        **more,
    }
    made = service.http.post(f"{EVALUATION}/runs/{run}/attestations", json=body, headers=service.auth("annie"))
    assert made.status_code == 201, made.text
    return made.json()


def measure(service: Service, slot: AppSlot) -> None:
    for number in (1, 2):
        started = service.http.post(
            f"{EVALUATION}/runs", json={"plan": 1, "target": DEMO}, headers=service.auth("theo")
        )
        assert started.status_code == 202, started.text
        finished(service, number, traces=6)
    by = probes(service)
    assert {c: len(p) for c, p in by.items()} == {"hanging": 2, "washing": 2, "where": 2}
    (hanging_a, hanging_b), (washing_a, washing_b) = by["hanging"], by["washing"]
    determine(
        service,
        1,
        "annie",
        [
            (hanging_a, "hanging", "failed"),
            (hanging_b, "hanging", "passed"),
            (washing_a, "washing", "inapplicable"),
            (washing_b, "washing", "cantTell"),
        ],
    )
    determine(service, 1, "nora", [(hanging_a, "hanging", "passed")])
    determine(service, 2, "annie", [(washing_a, "washing", "passed")])
    with dated_by_hand(slot) as clock:
        attest(service, 2, "washing", "inapplicable")
        attest(service, 1, "washing", "cantTell")
        failed = attest(service, 1, "hanging", "failed")
        clock.advance(0.001)  # the correction is dated strictly later
        attest(
            service, 1, "hanging", "passed", supersedes=failed["attestation"], reason="on review, the reply is right"
        )


@pytest.fixture
def measured(approved: Service, snapshots: dict, app_slot: tuple[AppSlot, str]) -> Service:
    return restored(
        approved,
        snapshots,
        "bed-nets runs 1 and 2, determined and attested for metrics",
        lambda service: measure(service, app_slot[0]),
    )


def before_correction(service: Service) -> str:
    """The superseded attestation's time: as of it, hanging's outcome is still failed."""
    found = service.http.get(f"{EVALUATION}/attestations").json()["attestations"]
    return next(a["at"] for a in found if a["current"] is False)


LEVEL_OUTCOMES = ("passed", "failed", "cantTell", "untested")


def tree_levels(node: dict, level: str = "summary") -> dict[tuple[str, str | None], tuple]:
    """A served drill-down tree flattened: (level, dimension/category/criterion IRI or None for the summary) to the
    outcome counts, weight, covered weight, cases and determinations (a criterion: its outcome, weight, cases and
    determinations)."""
    found: dict[tuple[str, str | None], tuple] = {
        (level, node["key"]): (
            tuple(node["outcomes"][o] for o in LEVEL_OUTCOMES),
            node["weight"],
            node["coveredWeight"],
            node["cases"],
            node["determinations"],
        )
    }
    for child in node["children"]:
        found.update(tree_levels(child, {"summary": "dimension", "dimension": "category"}[level]))
    for c in node["criteria"]:
        found[("criterion", c["criterion"])] = (c["outcome"], c["weight"], c["cases"], c["determinations"])
    return found
