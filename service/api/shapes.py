"""JSON shapes of the domain's values: the one place where records become JSON for the HTTP answers."""

from __future__ import annotations

from ..envelope.model import ApprovalRecord, EnvelopeStatus
from ..plan.approval import PlanApprovalStatus


def approval_json(record: ApprovalRecord) -> dict[str, object]:
    return {
        "@id": record.iri, "kind": record.kind, "subject": record.subject, "agent": record.agent,
        "time": record.time.isoformat(), "outcome": record.outcome, "comment": record.comment,
        "envelopeDigest": record.envelope_digest, "planDigest": record.plan_digest,
    }


def envelope_status_json(status: EnvelopeStatus) -> dict[str, object]:
    return {"envelope": status.envelope, "version": status.version, "digest": status.digest,
            "signedOff": status.signed_off, "appropriateness": status.appropriate,
            "relevance": status.relevance, "missingForSignOff": status.missing}


def plan_approval_json(status: PlanApprovalStatus) -> dict[str, object]:
    """Whether a plan is approved now, why not, and every approval it received (current or not)."""
    return {"approved": status.approved, "notApprovedBecause": list(status.reasons),
            "approvals": [approval_json(r) for r in status.approvals]}
