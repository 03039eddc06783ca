"""What the domain expert and the organizational expert read to assess and sign off an envelope (docs/workspace.md,
"Domain expert"): its requirements and criteria as a tree, and for the DSO, each criterion and the envelope the
latest assessment of their present content, as :mod:`service.envelope.approvals` records and counts them; once it is
signed off, whether the DSO changed since.

One read of the record's approvals (``queries/approvals.rq``), the envelope's status and, once it is signed off, the
sign-off's pinned inputs (``pinned-inputs.rq``); no determination.
"""

from __future__ import annotations

from ..core.errors import NotFound
from ..core.graphs import GraphService
from ..envelope import Envelope, envelope_at, get_evaluation, iris_for
from ..envelope.approvals import envelope_status, records
from ..envelope.inputs import changed_since, governing_sign_off, recorded_pins
from ..envelope.model import ApprovalRecord, EnvelopeStatus
from .model import Assessed, EnvelopeReview, RequirementNode


def _assessed(found: list[ApprovalRecord], kind: str, subject: str, digest: str | None) -> Assessed:
    """The latest of ``kind`` about ``subject`` naming envelope ``digest`` (any, for ``None``), and how many more
    there are about it (of that content or other)."""
    about = [r for r in found if r.kind == kind and r.subject == subject]
    present = [r for r in about if digest is None or r.envelope_digest == digest]
    return Assessed(present[-1] if present else None, len(about) - (1 if present else 0))


def _tree(envelope: Envelope, found: list[ApprovalRecord], digest: str) -> tuple[RequirementNode, ...]:
    content = envelope.content
    known = {r.id for r in content.requirements}

    def node(requirement_id: str) -> RequirementNode:
        requirement = next(r for r in content.requirements if r.id == requirement_id)
        criteria = tuple(
            (
                c,
                f"{envelope.iri}/criteria/{c.id}",
                _assessed(found, "relevance", f"{envelope.iri}/criteria/{c.id}", digest),
            )
            for c in content.criteria
            if c.requirement == requirement_id
        )
        refinements = tuple(node(r.id) for r in content.requirements if r.parent == requirement_id)
        return RequirementNode(requirement, f"{envelope.iri}/requirements/{requirement_id}", criteria, refinements)

    return tuple(node(r.id) for r in content.requirements if r.parent is None or r.parent not in known)


def envelope_review(graphs: GraphService, evaluation_id: str) -> EnvelopeReview:
    """The evaluation's envelope and its assessments (an evaluation without an envelope: the DSO's alone); 404 for
    no such evaluation."""
    iris = iris_for(graphs, evaluation_id)
    dso = iris.dso(get_evaluation(graphs, evaluation_id).scope.dso)
    found = records(graphs, iris.evaluation)
    dso_assessed = _assessed(found, "dso-appropriateness", dso, None)
    try:
        envelope, _ = envelope_at(graphs, evaluation_id)
    except NotFound:
        return EnvelopeReview(iris.evaluation, dso, dso_assessed, None, None, (), Assessed(None, 0), Assessed(None, 0))
    status = envelope_status(graphs, evaluation_id)
    return EnvelopeReview(
        iris.evaluation,
        dso,
        dso_assessed,
        envelope,
        status,
        _tree(envelope, found, status.digest),
        _assessed(found, "appropriateness", envelope.iri, status.digest),
        _assessed(found, "envelope-sign-off", envelope.iri, status.digest),
        _dso_changed(graphs, found, status, dso),
    )


def _dso_changed(graphs: GraphService, found: list[ApprovalRecord], status: EnvelopeStatus, dso: str) -> bool:
    """Whether the DSO's digest is not the one the sign-off that froze the envelope pinned (a sign-off made before
    inputs were pinned names none: not known to have changed)."""
    sign_off = governing_sign_off(found, status)
    pins = [pin for pin in recorded_pins(graphs, sign_off.iri) if pin.graph == dso] if sign_off else []
    return bool(changed_since(graphs, pins))
