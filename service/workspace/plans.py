"""The plans as the domain expert's pages show them (docs/workspace.md, "Domain expert"): each plan as recorded
(:func:`service.plan.records.plan_view`), approved or not as the record states it.

:func:`service.plan.approval.plan_status` recomputes the plan's digest from its content and the envelope's from its
own: reading and digesting a 300-probe plan's 13,000 triples took 1.2 s a plan, on every request of the plans page.
Here the digests the record states stand for them: the plan's ``epo:planDigest``, the envelope's recorded digest
(``queries/evaluations.rq``) and a sign-off naming it (``queries/approvals.rq``); the pinned inputs are still compared
with the catalog. The reasons given are :func:`~service.plan.approval.assess`'s. A plan changed behind the service
shows as approved here while ``GET …/plans/{n}`` says why not; approving it and running it recompute every digest
(:func:`~service.plan.approval.approve_plan`, :func:`~service.plan.approval.require_approved_plan`), so a page never
lets anything skip the rule.
"""

from __future__ import annotations

from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.store import Row
from ..envelope.approvals import records
from ..plan.approval import EnvelopeState, assess, input_reasons, plan_status
from ..plan.model import PlanApprovalStatus
from ..plan.records import Approval
from ..scope.records import list_evaluations


def recorded_approval(graphs: GraphService, evaluation_id: str) -> Approval:
    """How the pages weigh each plan's approval: on the recorded digests (module docstring), the evaluation's
    approvals read once for all its plans."""
    summary = next((s for s in list_evaluations(graphs) if s.id == evaluation_id), None)
    envelope = summary.envelope if summary else None
    found = records(graphs, summary.iri) if summary else []
    state = (
        None
        if envelope is None
        else EnvelopeState(
            envelope.version,
            envelope.digest,
            any(
                r.kind == "envelope-sign-off"
                and r.subject == envelope.iri
                and r.envelope_digest == envelope.digest
                and r.outcome == "passed"
                for r in found
            ),
        )
    )

    def approval(row: Row) -> PlanApprovalStatus:
        plan = row["plan"].value
        if state is None or "digest" not in row:  # nothing recorded to weigh: from the content
            return plan_status(graphs, evaluation_id, minted_number(plan))
        recorded = row["digest"].value
        approvals = tuple(r for r in found if r.kind == "plan-approval" and r.subject == plan)
        return assess(
            plan, recorded, recorded, row["envelopeDigest"].value, state, approvals, input_reasons(graphs, plan)
        )

    return approval
