"""Approvals of steps 2 and 3, enforced and append-only (methodology step 2: the domain expert judges
relevance and appropriateness, the organizational expert signs the envelope off; step 3: the domain
expert approves the test plan).

Each approval is an ``earl:Assertion, prov:Entity`` in the evaluation's graph, written once (insert
only): who (``earl:assertedBy``, ``prov:wasAttributedTo``), when (``prov:generatedAtTime``), what
(``earl:subject``, and ``epo:envelopeDigest`` / ``epo:planDigest`` of what was approved) and the
decision (``earl:result [ earl:outcome ...; earl:info ... ]``), as in the caie-spec record. The
checks that gate an approval run inside the write's precondition, under the write lock.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from ..core.auth import require
from ..core.catalog import now
from ..core.config import Credential
from .rdf import Index, Iris, envelope_digest, epo, owned_by
from .records import current_envelope_iri, graph_ref, iris_for, load
from ..core.errors import Conflict, NotFound
from ..core.graphs import GraphService
from ..core.namespaces import EARL, EPO, PROV, RDF, XSD

KINDS = {
    "relevance": "RelevanceAssessment",
    "appropriateness": "EnvelopeAppropriatenessAssessment",
    "envelope-sign-off": "EnvelopeSignOff",
    "plan-approval": "PlanApproval",
}
_CLASS_TO_KIND = {EPO + cls: kind for kind, cls in KINDS.items()}


@dataclass(frozen=True)
class ApprovalRecord:
    """One stored approval; ``outcome`` is ``passed`` (relevant, appropriate, approved) or ``failed``."""

    iri: str
    kind: str
    subject: str
    agent: str
    time: datetime
    outcome: str
    comment: str | None
    envelope_digest: str | None
    plan_digest: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "@id": self.iri, "kind": self.kind, "subject": self.subject, "agent": self.agent,
            "time": self.time.isoformat(), "outcome": self.outcome, "comment": self.comment,
            "envelopeDigest": self.envelope_digest, "planDigest": self.plan_digest,
        }


@dataclass(frozen=True)
class EnvelopeStatus:
    """Where the current envelope stands on its way to sign-off."""

    envelope: str
    version: int
    digest: str
    signed_off: bool
    appropriate: str | None
    relevance: dict[str, str | None]
    missing: list[str]

    def to_json(self) -> dict[str, object]:
        return {"envelope": self.envelope, "version": self.version, "digest": self.digest,
                "signedOff": self.signed_off, "appropriateness": self.appropriate,
                "relevance": self.relevance, "missingForSignOff": self.missing}


def records(index: Index) -> list[ApprovalRecord]:
    """Every approval in an evaluation graph, oldest first."""
    found = []
    for t in index.triples:
        if t.predicate.value != RDF + "type" or t.object.value not in _CLASS_TO_KIND:
            continue
        s = t.subject.value
        result = index.term(s, EARL + "result")
        outcome = index.one(result.value, EARL + "outcome") if result is not None else None
        found.append(ApprovalRecord(
            iri=s,
            kind=_CLASS_TO_KIND[t.object.value],
            subject=index.one(s, EARL + "subject") or "",
            agent=(index.one(s, EARL + "assertedBy") or "").rsplit("/", 1)[-1],
            time=datetime.fromisoformat(index.one(s, PROV + "generatedAtTime") or "1970-01-01T00:00:00+00:00"),
            outcome=(outcome or "").removeprefix(EARL),
            comment=index.one(result.value, EARL + "info") if result is not None else None,
            envelope_digest=index.one(s, EPO + "envelopeDigest"),
            plan_digest=index.one(s, EPO + "planDigest"),
        ))
    return sorted(found, key=lambda r: (r.time, r.iri))


def _latest(found: list[ApprovalRecord], kind: str, subject: str, digest: str) -> ApprovalRecord | None:
    matching = [r for r in found if r.kind == kind and r.subject == subject and r.envelope_digest == digest]
    return matching[-1] if matching else None


def _status(iris: Iris, index: Index) -> EnvelopeStatus:
    env = current_envelope_iri(iris, index)
    if env is None:
        raise NotFound(f"evaluation {iris.evaluation_id!r} has no envelope: PUT /evaluations/{iris.evaluation_id}/envelope writes it")
    digest = envelope_digest(env, [t for t in index.triples if owned_by(env, t)])
    found = records(index)
    criteria = [c for c in index.subjects(RDF + "type", EPO + "AcceptanceCriterion") if c.startswith(env + "/criteria/")]
    relevance: dict[str, str | None] = {}
    missing = []
    for c in criteria:
        cid = c.rsplit("/", 1)[-1]
        latest = _latest(found, "relevance", c, digest)
        relevance[cid] = latest.outcome if latest else None
        in_scope = index.one(c, EPO + "inScope") != "false"
        if in_scope and (latest is None or latest.outcome != "passed"):
            why = "not assessed" if latest is None else "assessed not relevant (set inScope false or change it)"
            missing.append(f"relevance of criterion {cid!r}: {why}")
    appropriateness = _latest(found, "appropriateness", env, digest)
    if appropriateness is None or appropriateness.outcome != "passed":
        missing.insert(0, "the envelope's appropriateness: " + ("not assessed" if appropriateness is None else "assessed inappropriate"))
    signed = any(r.kind == "envelope-sign-off" and r.subject == env and r.envelope_digest == digest and r.outcome == "passed" for r in found)
    return EnvelopeStatus(env, int(env.rsplit("/v", 1)[1]), digest, signed,
                          appropriateness.outcome if appropriateness else None, relevance, missing)


def envelope_status(graphs: GraphService, evaluation_id: str) -> EnvelopeStatus:
    """The current envelope's version, digest, sign-off and which assessments exist."""
    iris, index, _ = load(graphs, evaluation_id)
    return _status(iris, index)


def list_approvals(graphs: GraphService, evaluation_id: str) -> tuple[list[ApprovalRecord], list[Triple]]:
    """Every approval of the evaluation (oldest first) and their triples."""
    _, index, _ = load(graphs, evaluation_id)
    found = records(index)
    iris = {r.iri for r in found}
    results = {index.term(i, EARL + "result") for i in iris} - {None}
    triples = [t for t in index.triples if t.subject.value in iris or t.subject in results]
    return found, triples


def _write(graphs: GraphService, evaluation_id: str, agent: Credential, kind: str, subject: str, outcome: bool,
           comment: str | None, extra: list[tuple[str, NamedNode | Literal]],
           check: Callable[[Iris, Index, EnvelopeStatus], None]) -> ApprovalRecord:
    """Append one approval about ``subject`` on the current envelope; ``check`` runs before and under the write lock."""
    iris, index, _ = load(graphs, evaluation_id)
    status = _status(iris, index)
    check(iris, index, status)
    node = NamedNode(iris.under(f"approvals/{uuid.uuid4().hex}"))
    result, who = BlankNode(), NamedNode(iris.agent(agent.agent))
    time = now()
    triples = [
        Triple(node, NamedNode(RDF + "type"), epo(KINDS[kind])),
        Triple(node, NamedNode(RDF + "type"), NamedNode(EARL + "Assertion")),
        Triple(node, NamedNode(RDF + "type"), NamedNode(PROV + "Entity")),
        Triple(node, epo("inEvaluation"), NamedNode(iris.evaluation)),
        Triple(node, NamedNode(EARL + "subject"), NamedNode(subject)),
        Triple(node, NamedNode(EARL + "assertedBy"), who),
        Triple(node, NamedNode(PROV + "wasAttributedTo"), who),
        Triple(node, NamedNode(EARL + "mode"), NamedNode(EARL + "manual")),
        Triple(node, NamedNode(PROV + "generatedAtTime"), Literal(time.isoformat(), datatype=NamedNode(XSD + "dateTime"))),
        Triple(node, epo("envelopeDigest"), Literal(status.digest)),
        Triple(node, NamedNode(EARL + "result"), result),
        Triple(result, NamedNode(RDF + "type"), NamedNode(EARL + "TestResult")),
        Triple(result, NamedNode(EARL + "outcome"), NamedNode(EARL + ("passed" if outcome else "failed"))),
        Triple(who, NamedNode(RDF + "type"), NamedNode(PROV + "Agent")),
    ]
    triples += [Triple(node, NamedNode(p), o) for p, o in extra]
    if comment:
        triples.append(Triple(result, NamedNode(EARL + "info"), Literal(comment)))

    def precondition(current: list[Triple]) -> None:
        now_index = Index(current)
        now_status = _status(iris, now_index)
        if (now_status.envelope, now_status.digest) != (status.envelope, status.digest):
            raise Conflict("the envelope changed while this approval was checked; review it and send the approval again")
        check(iris, now_index, now_status)

    graphs.update(graph_ref(graphs, evaluation_id), agent, insert=triples, precondition=precondition)
    return ApprovalRecord(node.value, kind, subject, agent.agent, time, "passed" if outcome else "failed", comment or None,
                          status.digest, next((o.value for p, o in extra if p == EPO + "planDigest"), None))


def _no_check(iris: Iris, index: Index, status: EnvelopeStatus) -> None:
    return None


def assess_relevance(graphs: GraphService, evaluation_id: str, criterion_id: str, relevant: bool,
                     rationale: str, credential: Credential | None) -> ApprovalRecord:
    """The domain expert's judgment that a criterion of the current envelope is (not) relevant."""
    agent = require(credential, "domain_expert")
    iris, index, evaluation = load(graphs, evaluation_id)
    env = current_envelope_iri(iris, index)
    criterion = f"{env}/criteria/{criterion_id}"
    if env is None or not index.has_type(criterion, EPO + "AcceptanceCriterion"):
        raise NotFound(f"the current envelope of evaluation {evaluation_id!r} has no criterion {criterion_id!r}")
    return _write(graphs, evaluation_id, agent, "relevance", criterion, relevant, rationale,
                  [(EPO + "approves", NamedNode(criterion))], _no_check)


def assess_appropriateness(graphs: GraphService, evaluation_id: str, appropriate: bool, rationale: str,
                           credential: Credential | None) -> ApprovalRecord:
    """The domain expert's judgment that the current envelope as a whole is (not) appropriate."""
    agent = require(credential, "domain_expert")
    iris, index, _ = load(graphs, evaluation_id)
    env = _status(iris, index).envelope
    return _write(graphs, evaluation_id, agent, "appropriateness", env, appropriate, rationale,
                  [(EPO + "approves", NamedNode(env))], _no_check)


def _ready_for_sign_off(iris: Iris, index: Index, status: EnvelopeStatus) -> None:
    if status.missing:
        raise Conflict(f"envelope v{status.version} (digest {status.digest}) cannot be signed off yet: missing "
                       + "; ".join(status.missing), detail=status.missing)


def sign_off_envelope(graphs: GraphService, evaluation_id: str, credential: Credential | None,
                      comment: str | None = None) -> ApprovalRecord:
    """The organizational expert's sign-off, which freezes the current envelope; 409 naming what is missing."""
    agent = require(credential, "organizational_expert")
    iris, index, _ = load(graphs, evaluation_id)
    env = _status(iris, index).envelope
    return _write(graphs, evaluation_id, agent, "envelope-sign-off", env, True, comment,
                  [(EPO + "approvesEnvelope", NamedNode(env))], _ready_for_sign_off)


def _envelope_signed(iris: Iris, index: Index, status: EnvelopeStatus) -> None:
    if not status.signed_off:
        raise Conflict(f"the test plan cannot be approved: envelope v{status.version} of evaluation "
                       f"{iris.evaluation_id!r} is not signed off by the organizational expert")


def approve_plan(graphs: GraphService, evaluation_id: str, plan_iri: str, plan_digest: str,
                 credential: Credential | None, comment: str | None = None) -> ApprovalRecord:
    """The domain expert's approval of a test plan (identified by IRI and digest); 409 on an unsigned envelope."""
    agent = require(credential, "domain_expert")
    return _write(graphs, evaluation_id, agent, "plan-approval", plan_iri, True, comment,
                  [(EPO + "approvesPlan", NamedNode(plan_iri)), (EPO + "approves", NamedNode(plan_iri)),
                   (EPO + "planDigest", Literal(plan_digest))], _envelope_signed)


def require_approved_plan(graphs: GraphService, evaluation_id: str, plan_iri: str, plan_digest: str | None = None) -> None:
    """Nothing runs on an unapproved plan: 409 saying why, unless the plan (at ``plan_digest``, if given)
    was approved on the current, signed-off envelope."""
    iris, index, _ = load(graphs, evaluation_id)
    status = _status(iris, index)
    if not status.signed_off:
        raise Conflict(f"nothing can run: envelope v{status.version} of evaluation {evaluation_id!r} is not signed off")
    approvals = [r for r in records(index) if r.kind == "plan-approval" and r.subject == plan_iri and r.outcome == "passed"]
    if not approvals:
        raise Conflict(f"nothing can run: the test plan <{plan_iri}> is not approved by a domain expert")
    if plan_digest is not None and not any(r.plan_digest == plan_digest for r in approvals):
        raise Conflict(f"nothing can run: the test plan <{plan_iri}> changed since it was approved "
                       f"(approved digest {approvals[-1].plan_digest}, now {plan_digest})")
    if not any(r.envelope_digest == status.digest for r in approvals):
        raise Conflict(f"nothing can run: the test plan <{plan_iri}> was approved on another envelope than the "
                       f"current v{status.version} (digest {status.digest}); approve a plan for it")


__all__ = [
    "ApprovalRecord", "EnvelopeStatus", "approve_plan", "assess_appropriateness", "assess_relevance",
    "envelope_status", "iris_for", "list_approvals", "require_approved_plan", "sign_off_envelope",
]
