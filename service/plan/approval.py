"""Step 3's gate: the domain expert approves a test plan, and nothing runs on a plan whose approval no
longer holds.

An approval names the plan's digest and the envelope's. Both are recomputed from the stored content
whenever the approval is checked: a plan or an envelope changed afterwards, through the service or
behind it, is not approved any more, and :func:`plan_status` says why. Nor is a plan one of whose pinned
inputs (DSO, knowledge graphs, scenario shapes) has another digest now.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import Conflict, NotFound
from ..core.graph_edits import GraphRef
from ..core.graphs import GraphService
from ..core.namespaces import EPO
from ..credentials.signing import Signer
from ..envelope.approvals import append_approval, read_state, records
from ..envelope.inputs import changed_since, recorded_pins
from ..envelope.model import ApprovalRecord
from .model import PlanApprovalStatus
from .rdf import plan_digest, text


def plan_ref(graphs: GraphService, evaluation_id: str, number: int) -> GraphRef:
    """The plan's batch graph ``{evaluation}/plans/{number}`` (its IRI is the plan's)."""
    return graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/plans/{number}")


def _content(
    graphs: GraphService, evaluation_id: str, number: int
) -> tuple[GraphRef, str, str | None, str | None, str]:
    """The plan's graph, content digest, recorded digest, envelope digest and catalog digest; 404 if absent."""
    ref = plan_ref(graphs, evaluation_id, number)
    entry = graphs.find(ref)
    triples = graphs.triples(ref) if entry is not None else []
    plan = ref.iri.value
    if not any(text(t.subject) == plan and text(t.object) == EPO + "TestPlan" for t in triples):
        raise NotFound(
            f"evaluation {evaluation_id!r} has no plan {number}: GET /evaluations/{evaluation_id}/plans lists them"
        )
    assert entry is not None

    def value(predicate: str) -> str | None:
        return next(
            (text(t.object) for t in triples if text(t.subject) == plan and t.predicate.value == predicate), None
        )

    recorded, envelope = value(EPO + "planDigest"), value(EPO + "envelopeDigest")
    return ref, plan_digest(triples), recorded, envelope, entry.digest


def input_reasons(graphs: GraphService, plan: str) -> list[str]:
    """Why the plan no longer rests on its inputs: one reason per pinned graph whose digest changed."""
    return [
        f"an input of the plan changed after it was made: {change.describe()}"
        for change in changed_since(graphs, recorded_pins(graphs, plan))
    ]


@dataclass(frozen=True)
class EnvelopeState:
    """The current envelope version as an approval is weighed against it: its digest and whether it is signed off."""

    version: int
    digest: str
    signed_off: bool


def plan_status(graphs: GraphService, evaluation_id: str, number: int) -> PlanApprovalStatus:
    """Whether plan ``number`` is approved on the current content of the plan and the envelope, and if not why."""
    ref, digest, recorded, planned_on, _ = _content(graphs, evaluation_id, number)
    state = read_state(graphs, evaluation_id)
    status, plan = state.status, ref.iri.value
    found = tuple(r for r in records(graphs, state.iris.evaluation) if r.kind == "plan-approval" and r.subject == plan)
    envelope = EnvelopeState(status.version, status.digest, status.signed_off)
    return assess(plan, digest, recorded, planned_on, envelope, found, input_reasons(graphs, plan))


def assess(
    plan: str,
    digest: str,
    recorded: str | None,
    planned_on: str | None,
    envelope: EnvelopeState,
    found: tuple[ApprovalRecord, ...],
    changed: list[str],
) -> PlanApprovalStatus:
    """Whether ``plan``, whose content digests to ``digest``, is approved on ``envelope``, given its approvals
    ``found`` and why its inputs no longer hold (``changed``), and if not why: :func:`plan_status`, and the
    workspace's pages with the recorded digests standing for the recomputed ones (:mod:`service.workspace.plans`)."""
    reasons = []
    if recorded != digest:
        reasons.append(
            f"the plan's content was changed after it was made: it records digest {recorded}, "
            f"its stored triples now digest to {digest}"
        )
    if not envelope.signed_off:
        reasons.append(f"envelope v{envelope.version} (digest {envelope.digest}) is not signed off")
    if planned_on != envelope.digest:
        reasons.append(
            f"the plan was made on envelope digest {planned_on}, the current envelope v{envelope.version} "
            f"has digest {envelope.digest}: make a plan for it"
        )
    reasons += changed
    valid = [
        r for r in found if r.outcome == "passed" and r.plan_digest == digest and r.envelope_digest == envelope.digest
    ]
    if not valid:
        reasons.append(
            "no domain expert approved this content of the plan" if found else "no domain expert has approved the plan"
        )
    return PlanApprovalStatus(plan, digest, recorded, not reasons, tuple(reasons), found)


def approve_plan(
    graphs: GraphService,
    evaluation_id: str,
    number: int,
    credential: Credential | None,
    comment: str | None = None,
    reviewed_digest: str | None = None,
    signer: Signer | None = None,
) -> ApprovalRecord:
    """The domain expert's approval of plan ``number`` as it is now stored.

    404 for a plan that does not exist; 409 when the envelope is not signed off, the plan was made on
    other envelope content, its content no longer matches its recorded digest, or ``reviewed_digest``
    (the digest the expert reviewed) is not the plan's current one.
    """
    agent = require(credential, "domain_expert")
    ref, digest, recorded, planned_on, catalogued = _content(graphs, evaluation_id, number)
    state = read_state(graphs, evaluation_id)
    status = state.status
    if reviewed_digest is not None and reviewed_digest != digest:
        raise Conflict(
            f"plan {number} is not the one reviewed: its digest is {digest}, the approval names {reviewed_digest}"
        )
    if recorded != digest:
        raise Conflict(
            f"plan {number} cannot be approved: its content was changed after it was made "
            f"(it records digest {recorded}, its triples digest to {digest})"
        )
    if not status.signed_off:
        raise Conflict(
            f"the test plan cannot be approved: envelope v{status.version} of evaluation "
            f"{evaluation_id!r} is not signed off by the organizational expert"
        )
    if planned_on != status.digest:
        raise Conflict(
            f"plan {number} was made on envelope digest {planned_on}, not on the current envelope "
            f"v{status.version} (digest {status.digest}): make a plan for it"
        )
    if changed := input_reasons(graphs, ref.iri.value):
        raise Conflict(f"plan {number} cannot be approved: " + "; ".join(changed), detail=changed)
    plan = NamedNode(ref.iri.value)
    return append_approval(
        graphs,
        state,
        agent,
        "plan-approval",
        plan.value,
        True,
        comment,
        [(EPO + "approvesPlan", plan), (EPO + "approves", plan), (EPO + "planDigest", Literal(digest))],
        guards={ref.iri.value: catalogued},
        signer=signer,  # signed by the expert's key, in the same write
    )


def require_approved_plan(graphs: GraphService, evaluation_id: str, number: int) -> PlanApprovalStatus:
    """Nothing runs on a plan that is not approved now: 409 naming every reason, else the plan's status."""
    status = plan_status(graphs, evaluation_id, number)
    if not status.approved:
        raise Conflict(
            f"nothing can run on plan {number} of evaluation {evaluation_id!r}: " + "; ".join(status.reasons),
            detail=list(status.reasons),
        )
    return status
