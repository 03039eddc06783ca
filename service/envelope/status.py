"""Approvals of step 2 as read: every approval of an evaluation (``queries/approvals.rq``), and the current
envelope's status: its digest recomputed from its content, which assessments name that digest, what sign-off still
lacks (``queries/sign-off-gaps.rq``, ``queries/dso-assessments.rq``). :mod:`.approvals` writes them and re-exports
these reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pyoxigraph import Literal, NamedNode, Triple

from ..core.catalog import GraphKind
from ..core.errors import NotFound
from ..core.graphs import GraphService
from ..core.iris import agent_name
from ..core.namespaces import EARL, EPO, RDF
from .model import ApprovalRecord, EnvelopeStatus
from .rdf import Index, Iris, envelope_digest, identifier_of, owned_by
from .rdf_read import current_envelope_iri
from .records import _loaded, graph_ref, load
from .scope_rdf import read_scope

KINDS = {
    "dso-appropriateness": "DsoAppropriatenessAssessment",
    "relevance": "RelevanceAssessment",
    "appropriateness": "EnvelopeAppropriatenessAssessment",
    "envelope-sign-off": "EnvelopeSignOff",
    "plan-approval": "PlanApproval",
}
_CLASS_TO_KIND = {EPO + cls: kind for kind, cls in KINDS.items()}


def records(graphs: GraphService, evaluation: str) -> list[ApprovalRecord]:
    """Every approval of an evaluation, oldest first (queries/approvals.rq)."""
    return [
        ApprovalRecord(
            iri=row["approval"].value,
            kind=_CLASS_TO_KIND[row["class"].value],
            subject=row["subject"].value,
            agent=agent_name(row["agent"].value),
            time=datetime.fromisoformat(row["time"].value),
            outcome=row["outcome"].value.removeprefix(EARL),
            comment=row["comment"].value if "comment" in row else None,
            envelope_digest=row["envelopeDigest"].value if "envelopeDigest" in row else None,
            plan_digest=row["planDigest"].value if "planDigest" in row else None,
        )
        for row in graphs.rows("approvals", {"evaluation": NamedNode(evaluation)})
    ]


def _latest(found: list[ApprovalRecord], kind: str, subject: str, digest: str) -> ApprovalRecord | None:
    matching = [r for r in found if r.kind == kind and r.subject == subject and r.envelope_digest == digest]
    return matching[-1] if matching else None


def _status(graphs: GraphService, iris: Iris, index: Index) -> EnvelopeStatus:
    env = current_envelope_iri(iris, index)
    if env is None:
        raise NotFound(
            f"evaluation {iris.evaluation_id!r} has no envelope: PUT /evaluations/{iris.evaluation_id}/envelope writes it"
        )
    # Recomputed from the envelope's content, never read from the record: an approval of other content
    # approves nothing.
    digest = envelope_digest(env, [t for t in index.triples if owned_by(env, t)])
    found = records(graphs, iris.evaluation)
    relevance = {
        identifier_of(index, c): latest.outcome if (latest := _latest(found, "relevance", c, digest)) else None
        for c in index.subjects(RDF + "type", EPO + "AcceptanceCriterion")
        if c.startswith(env + "/criteria/")
    }
    missing: list[str] = []
    for row in graphs.rows("sign-off-gaps", {"envelope": NamedNode(env), "digest": Literal(digest)}):
        assessed = "outcome" in row
        if row["class"].value == EPO + "EnvelopeAppropriatenessAssessment":
            missing.insert(
                0, "the envelope's appropriateness: " + ("assessed inappropriate" if assessed else "not assessed")
            )
        elif row["expected"].value == EARL + "failed":
            why = (
                "assessed relevant (set inScope true, or assess it not relevant)"
                if assessed
                else "out of scope without the domain expert's assessment that it is not relevant"
            )
            missing.append(f"relevance of criterion {row['identifier'].value!r}: {why}")
        else:
            why = "assessed not relevant (set inScope false or change it)" if assessed else "not assessed"
            missing.append(f"relevance of criterion {row['identifier'].value!r}: {why}")
    dso = _dso_status(graphs, iris, index)
    if dso.gap:
        missing.insert(0, dso.gap)
    appropriateness = _latest(found, "appropriateness", env, digest)
    signed = any(
        r.kind == "envelope-sign-off" and r.subject == env and r.envelope_digest == digest and r.outcome == "passed"
        for r in found
    )
    return EnvelopeStatus(
        env,
        int(env.rsplit("/v", 1)[1]),
        digest,
        signed,
        appropriateness.outcome if appropriateness else None,
        relevance,
        missing,
        dso.outcome,
    )


@dataclass(frozen=True)
class _DsoStatus:
    outcome: str | None
    gap: str | None


def _dso_status(graphs: GraphService, iris: Iris, index: Index) -> _DsoStatus:
    """The latest DSO appropriateness assessment of the DSO's present content (queries/dso-assessments.rq),
    and what sign-off still lacks about it."""
    scope = read_scope(iris, index)
    assert scope is not None, "load() found the evaluation"
    dso = iris.dso(scope.dso)
    entry = graphs.find_graph(dso)
    if entry is None:
        return _DsoStatus(None, f"the DSO <{dso}> does not exist: load it and assess its appropriateness")
    rows = [
        row
        for row in graphs.rows("dso-assessments", {"evaluation": NamedNode(iris.evaluation)})
        if row["dso"].value == dso and row["digest"].value == entry.digest
    ]
    outcome = rows[-1]["outcome"].value.removeprefix(EARL) if rows else None
    if outcome == "passed":
        return _DsoStatus(outcome, None)
    why = "assessed inappropriate" if outcome else f"not assessed for its present content (digest {entry.digest})"
    return _DsoStatus(outcome, f"the appropriateness of the DSO <{dso}>: {why}")


@dataclass(frozen=True)
class RecordState:
    """An evaluation's record as one check read it; ``head_digest`` is what an append is guarded on."""

    iris: Iris
    index: Index
    head_digest: str
    status: EnvelopeStatus


def read_state(graphs: GraphService, evaluation_id: str) -> RecordState:
    """The head graph's catalog digest, then its content and the envelope's status (404 for no evaluation)."""
    entry = graphs.find(graph_ref(graphs, evaluation_id))
    iris, index, _ = load(graphs, evaluation_id)
    assert entry is not None, "load() found the evaluation, so its graph is catalogued"
    return RecordState(iris, index, entry.digest, _status(graphs, iris, index))


def envelope_status(graphs: GraphService, evaluation_id: str) -> EnvelopeStatus:
    """The current envelope's version, digest, sign-off and which assessments exist: a read, so the head graph is
    the one kept by its catalog digest (:func:`.records._loaded`; reading and indexing it took 0.2 s a request at
    load 5); a write reads it afresh (:func:`read_state`)."""
    iris, index, _ = _loaded(graphs, evaluation_id)
    return _status(graphs, iris, index)


def list_approvals(graphs: GraphService, evaluation_id: str) -> tuple[list[ApprovalRecord], list[Triple]]:
    """Every approval of the evaluation (oldest first) and the triples of their batch graphs."""
    iris, _, _ = load(graphs, evaluation_id)
    found = records(graphs, iris.evaluation)
    prefix = graph_ref(graphs, evaluation_id).iri.value
    triples: list[Triple] = []
    for record in found:
        if record.iri.startswith(prefix + "/approvals/"):
            triples += graphs.triples(graphs.member(GraphKind.EVALUATION, evaluation_id + record.iri[len(prefix) :]))
    return found, triples
