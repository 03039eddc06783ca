"""Approvals of step 2, enforced and append-only: the domain expert judges the DSO's appropriateness, each
criterion's relevance (an out-of-scope criterion's as not relevant) and the envelope's appropriateness, the
organizational expert signs the envelope off.

Each approval is an ``earl:Assertion, prov:Entity`` appended to the record as its own batch graph
``{evaluation}/approvals/{key}``, written once: who (``earl:assertedBy``, ``prov:wasAttributedTo``),
when (``prov:generatedAtTime``), what (``earl:subject``, and ``epo:envelopeDigest`` /
``epo:planDigest`` of the content approved) and the decision (``earl:result`` with ``earl:outcome``
and ``earl:info``), as in the caie-spec record. The append holds only while the record's head graph
is the one the checks read. Whether an approval counts is decided when it is read: it approves the
content whose digest it names, and nothing else (a DSO assessment names the DSO's digest in an input pin).

The reads (every approval, the envelope's status, the record as a check read it) are in :mod:`.status`;
``records``, ``envelope_status``, ``list_approvals``, ``read_state`` and ``RecordState`` are re-exported here
(``__all__``), where the API, the plan and the workspace import them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from pyoxigraph import Literal, NamedNode, Triple

from ..core.auth import require
from ..core.config import Credential
from ..core.errors import Conflict, NotFound
from ..core.graphs import GraphService
from ..core.namespaces import EARL, EPO, PROV, RDF, XSD
from ..credentials.signing import Signer
from . import inputs
from .model import ApprovalRecord, EnvelopeStatus
from .rdf import Iris, epo
from .records import graph_ref, load
from .status import KINDS, RecordState, envelope_status, list_approvals, read_state, records


def append_approval(
    graphs: GraphService,
    state: RecordState,
    agent: Credential,
    kind: str,
    subject: str,
    outcome: bool,
    comment: str | None,
    extra: list[tuple[str, NamedNode | Literal]],
    guards: dict[str, str] | None = None,
    parts: Callable[[str], list[Triple]] | None = None,
    signer: Signer | None = None,
) -> ApprovalRecord:
    """Append one approval about ``subject`` as its own batch graph ``{evaluation}/approvals/{key}``.

    It holds only while the record's head graph (scope and envelope) is the one ``state`` read and each
    graph in ``guards`` still has the digest the caller checked (409 otherwise, nothing written).
    ``parts`` gives, for the approval's IRI, triples about nodes named under it (a sign-off's pinned inputs).
    Given ``signer``, the approval is signed by its person's key, a credential whose subject is the approval's
    graph, in the same write (``{evaluation}/approvals/{key}/credential``).
    """
    return _append(
        graphs,
        state.iris,
        state.head_digest,
        agent,
        kind,
        subject,
        outcome,
        comment,
        extra,
        state.status.digest,
        guards,
        parts,
        signer,
    )


def _append(
    graphs: GraphService,
    iris: Iris,
    head_digest: str,
    agent: Credential,
    kind: str,
    subject: str,
    outcome: bool,
    comment: str | None,
    extra: list[tuple[str, NamedNode | Literal]],
    envelope: str | None,
    guards: dict[str, str] | None,
    parts: Callable[[str], list[Triple]] | None,
    signer: Signer | None,
) -> ApprovalRecord:
    """:func:`append_approval` for a record read as ``iris`` with head digest ``head_digest``; ``envelope`` is
    the envelope digest the approval names (``None``: it is not about the envelope)."""
    key = uuid.uuid4().hex
    node = NamedNode(iris.under(f"approvals/{key}"))
    result, who = NamedNode(node.value + "#result"), NamedNode(iris.agent(agent.agent))
    time = graphs.clock()
    triples = [
        Triple(node, NamedNode(RDF + "type"), epo(KINDS[kind])),
        Triple(node, NamedNode(RDF + "type"), NamedNode(EARL + "Assertion")),
        Triple(node, NamedNode(RDF + "type"), NamedNode(PROV + "Entity")),
        Triple(node, epo("inEvaluation"), NamedNode(iris.evaluation)),
        Triple(node, NamedNode(EARL + "subject"), NamedNode(subject)),
        Triple(node, NamedNode(EARL + "assertedBy"), who),
        Triple(node, NamedNode(PROV + "wasAttributedTo"), who),
        Triple(node, NamedNode(EARL + "mode"), NamedNode(EARL + "manual")),
        Triple(
            node, NamedNode(PROV + "generatedAtTime"), Literal(time.isoformat(), datatype=NamedNode(XSD + "dateTime"))
        ),
        Triple(node, NamedNode(EARL + "result"), result),
        Triple(result, NamedNode(RDF + "type"), NamedNode(EARL + "TestResult")),
        Triple(result, NamedNode(EARL + "outcome"), NamedNode(EARL + ("passed" if outcome else "failed"))),
        Triple(who, NamedNode(RDF + "type"), NamedNode(PROV + "Agent")),
    ]
    if envelope is not None:
        triples.append(Triple(node, epo("envelopeDigest"), Literal(envelope)))
    triples += [Triple(node, NamedNode(p), o) for p, o in extra]
    triples += parts(node.value) if parts else []
    if comment:
        triples.append(Triple(result, NamedNode(EARL + "info"), Literal(comment)))
    record = graph_ref(graphs, iris.evaluation_id)
    credential = graphs.member(record.kind, f"{record.identifier}/approvals/{key}/credential")
    graphs.append(
        record,
        "approvals",
        triples,
        agent,
        key=key,
        title=f"{kind} by {agent.agent}",
        guards={record.iri.value: head_digest, **(guards or {})},
        also=[signer.credential_edit(credential, node.value, triples, who.value, time, record.iri.value)]
        if signer is not None
        else (),
    )
    return ApprovalRecord(
        node.value,
        kind,
        subject,
        agent.agent,
        time,
        "passed" if outcome else "failed",
        comment or None,
        envelope,
        next((o.value for p, o in extra if p == EPO + "planDigest"), None),
    )


def assess_dso_appropriateness(
    graphs: GraphService,
    evaluation_id: str,
    appropriate: bool,
    rationale: str,
    credential: Credential | None,
    signer: Signer | None = None,
) -> ApprovalRecord:
    """The domain expert's judgment that the DSO release the evaluation uses is (not) an appropriate domain model
    for it. It names the DSO's present content (an input pin: catalog digest and modification time) and holds
    only while the DSO and the record's head graph stay as read; a changed DSO needs a new assessment before
    the envelope can be signed off. Possible once the scope exists, before any envelope."""
    agent = require(credential, "domain_expert")
    entry = graphs.find(graph_ref(graphs, evaluation_id))
    iris, _, evaluation = load(graphs, evaluation_id)
    assert entry is not None, "load() found the evaluation, so its graph is catalogued"
    dso = iris.dso(evaluation.scope.dso)
    [pin] = inputs.present(evaluation_id, {dso: inputs.pin_of(graphs, dso)})
    return _append(
        graphs,
        iris,
        entry.digest,
        agent,
        "dso-appropriateness",
        dso,
        appropriate,
        rationale,
        [(EPO + "approves", NamedNode(dso))],
        None,
        inputs.guards([pin]),
        lambda approval: inputs.pin_triples(approval, [pin]),
        signer,
    )


def assess_relevance(
    graphs: GraphService,
    evaluation_id: str,
    criterion_id: str,
    relevant: bool,
    rationale: str,
    credential: Credential | None,
    signer: Signer | None = None,
) -> ApprovalRecord:
    """The domain expert's judgment that a criterion of the current envelope is (not) relevant."""
    agent = require(credential, "domain_expert")
    state = read_state(graphs, evaluation_id)
    criterion = f"{state.status.envelope}/criteria/{criterion_id}"
    if not state.index.has_type(criterion, EPO + "AcceptanceCriterion"):
        raise NotFound(f"the current envelope of evaluation {evaluation_id!r} has no criterion {criterion_id!r}")
    _refuse_when_frozen(graphs, state, f"the relevance of criterion {criterion_id!r}")
    approves: list[tuple[str, NamedNode | Literal]] = [(EPO + "approves", NamedNode(criterion))]
    return append_approval(graphs, state, agent, "relevance", criterion, relevant, rationale, approves, signer=signer)


def assess_appropriateness(
    graphs: GraphService,
    evaluation_id: str,
    appropriate: bool,
    rationale: str,
    credential: Credential | None,
    signer: Signer | None = None,
) -> ApprovalRecord:
    """The domain expert's judgment that the current envelope as a whole is (not) appropriate."""
    agent = require(credential, "domain_expert")
    state = read_state(graphs, evaluation_id)
    env = state.status.envelope
    _refuse_when_frozen(graphs, state, "the envelope's appropriateness")
    approves: list[tuple[str, NamedNode | Literal]] = [(EPO + "approves", NamedNode(env))]
    return append_approval(
        graphs, state, agent, "appropriateness", env, appropriate, rationale, approves, signer=signer
    )


def _refuse_when_frozen(graphs: GraphService, state: RecordState, what: str) -> None:
    """409 once the current envelope version is signed off: its relevance, appropriateness and sign-off are the
    ones it was signed off with. A later assessment would name the same frozen digest and change what
    GET …/envelope reports for it, while the sign-off and the plans made on it stand."""
    status = state.status
    frozen_by = inputs.governing_sign_off(records(graphs, state.iris.evaluation), status) if status.signed_off else None
    if frozen_by is not None:
        raise Conflict(
            f"envelope v{status.version} of evaluation {state.iris.evaluation_id!r} was signed off by {frozen_by.agent} "
            f"at {frozen_by.time.isoformat()}: it is frozen, so {what} is not recorded. A change needs a new version "
            f"(POST /evaluations/{state.iris.evaluation_id}/envelope/versions), assessed and signed off afresh"
        )


def sign_off_envelope(
    graphs: GraphService,
    evaluation_id: str,
    credential: Credential | None,
    comment: str | None = None,
    signer: Signer | None = None,
) -> ApprovalRecord:
    """The organizational expert's sign-off, which freezes the current envelope and pins its inputs.

    The sign-off records the digest and modification time of the DSO, each knowledge graph and each
    scenario shapes graph as they are now (:mod:`.inputs`), and holds only while they stay so until it is
    written. 409 naming what is missing, a graph of the scope that does not exist, or, for an envelope
    already signed off, any input changed since (a new envelope version pins new inputs) or else the sign-off
    that froze it: one sign-off per version.
    """
    agent = require(credential, "organizational_expert")
    state = read_state(graphs, evaluation_id)
    status = state.status
    if status.missing:
        raise Conflict(
            f"envelope v{status.version} (digest {status.digest}) cannot be signed off yet: missing "
            + "; ".join(status.missing),
            detail=status.missing,
        )
    current = inputs.current_inputs(graphs, load(graphs, evaluation_id)[2].scope)
    pins = inputs.present(evaluation_id, current.pins)
    first = inputs.governing_sign_off(records(graphs, state.iris.evaluation), status)
    if first is not None:
        inputs.require_unchanged(graphs, evaluation_id, status, first, current, "sign the envelope off again")
        _refuse_when_frozen(graphs, state, "another sign-off")
    return append_approval(
        graphs,
        state,
        agent,
        "envelope-sign-off",
        status.envelope,
        True,
        comment,
        [(EPO + "approvesEnvelope", NamedNode(status.envelope))],
        guards=inputs.guards(pins),
        parts=lambda approval: inputs.pin_triples(approval, pins),
        signer=signer,
    )


__all__ = [
    "ApprovalRecord",
    "EnvelopeStatus",
    "RecordState",
    "append_approval",
    "assess_appropriateness",
    "assess_dso_appropriateness",
    "assess_relevance",
    "envelope_status",
    "list_approvals",
    "read_state",
    "records",
    "sign_off_envelope",
]
