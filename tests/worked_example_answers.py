"""What the worked example's comparison across stores reads (tests/test_virtuoso_example.py): the example's answers
from a running service by content (envelope, plan, scenarios, run, determinations, attestations), a correction of
an attestation over REST and what it answers, and both taken from the worked example on the embedded store,
in-process."""

from __future__ import annotations

from typing import Any

from caie_vaccine.worked_example import EVALUATION_ID, load_worked_example
from fastapi.testclient import TestClient

from service.api import create_app
from service.core.bootstrap import load_spec_files

from .conftest import settings_for


def local(iri: str) -> str:
    return iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1]


def example_answers(get: Any) -> dict[str, Any]:
    """What the comparison reads from a service running the worked example; ``get(path, params)`` → JSON.

    Steps 4 and 5 are compared by content, not by the IRIs batches got or the times they were written."""
    envelope = get(f"/evaluations/{EVALUATION_ID}/envelope", {})
    plan = get(f"/evaluations/{EVALUATION_ID}/plans/1", {})
    totals = {
        status: get(f"/evaluations/{EVALUATION_ID}/scenarios", {"limit": 1, **({"status": status} if status else {})})[
            "total"
        ]
        for status in (None, "eligible", "blocked")
    }
    return {
        "envelope digest": envelope["digest"],
        "plan digest": plan["digest"],
        "plan recorded digest": plan["recordedDigest"],
        "plan envelope digest": plan["envelopeDigest"],
        "frameSize": plan["frameSize"],
        "eligibleFrameSize": plan["eligibleFrameSize"],
        "allocation": sorted((a["criterion"], a["probes"], a["promptFrame"]) for a in plan["allocation"]),
        "probes": plan["probes"],
        "approved": plan["approved"],
        "blocked by rule": sorted(
            (r["rule"], r["scenarios"]) for r in get(f"/evaluations/{EVALUATION_ID}/scenarios/summary", {})["rules"]
        ),
        "scenario totals": totals,
        "runs": [
            (r["number"], r["probes"], r["cases"], r["traces"], r["executionErrors"], r["done"], r["targetFingerprint"])
            for r in get(f"/evaluations/{EVALUATION_ID}/runs", {})["runs"]
        ],
        "determinations": sorted(
            (
                local(d["criterion"]),
                d["probe"],
                d["turn"],
                local(d["outcome"]),
                local(d["mode"]),
                d["judge"],
                d.get("version"),
                d["rationale"],
            )
            for d in get(f"/evaluations/{EVALUATION_ID}/determinations", {})["determinations"]
        ),
        "attestations": attestation_answers(get),
    }


def attestation_answers(get: Any) -> list[tuple[Any, ...]]:
    """Each attestation by content: criterion, outcomes, evidence, how many determinations, current, corrected."""
    return sorted(
        (
            local(a["criterion"]),
            a["outcome"],
            a["aggregatedOutcome"],
            a["sufficiency"],
            a["appropriateness"],
            len(a["determinations"]),
            a["current"],
            a["supersedes"] is not None,
            a["reason"],
        )
        for a in get(f"/evaluations/{EVALUATION_ID}/attestations", {})["attestations"]
    )


def correct(get: Any, post: Any) -> dict[str, Any]:
    """The current attestation of the first attested criterion superseded over REST, with a reason; what the
    POST answers and the attestations listed afterwards. ``post(path, body)`` → (status, JSON)."""
    current = [a for a in get(f"/evaluations/{EVALUATION_ID}/attestations", {})["attestations"] if a["current"]]
    first = min(current, key=lambda a: a["criterion"])
    status, made = post(
        f"/evaluations/{EVALUATION_ID}/runs/1/attestations",
        {
            "criterion": local(first["criterion"]),
            "outcome": "failed",
            "rationale": "a second review finds a failed reply",
            "sufficiency": "sufficient",
            "appropriateness": "appropriate",
            "supersedes": first["attestation"],
            "reason": "the reply to probe 1 fails the criterion",
        },
    )
    return {
        "status": status,
        "criterion": local(made["criterion"]),
        "outcome": made["outcome"],
        "aggregatedOutcome": made["aggregatedOutcome"],
        "current": made["current"],
        "supersedes the current one": made["supersedes"] == first["attestation"],
        "attestations": attestation_answers(get),
    }


def embedded_example(tokens: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The worked example on the embedded store, in-process, with the Virtuoso service's base URL; then the
    correction over REST."""
    app = create_app(settings_for(tokens))
    load_spec_files(app.state.graphs)
    load_worked_example(app.state.graphs)
    with TestClient(app) as client:

        def get(path: str, params: dict[str, Any]) -> Any:
            answer = client.get(path, params=params)
            assert answer.status_code == 200, f"embedded {path}: {answer.status_code} {answer.text}"
            return answer.json()

        def post(path: str, body: dict[str, Any]) -> tuple[int, Any]:
            answer = client.post(path, json=body, headers={"Authorization": f"Bearer {tokens['annie']}"})
            return answer.status_code, answer.json()

        return example_answers(get), correct(get, post)
