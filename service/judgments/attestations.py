"""Attestations (issue 10 §5): the domain expert states a criterion's outcome for a run, append-only.

The expert starts from a declared, versioned aggregation rule (:data:`AGGREGATION`, ``epo:AnyFailedFailsTrusted``
version 2: failed if any counted determination failed, else passed if any passed, else cannot tell; inapplicable
never counts; with nothing counted, untested) over the determinations on the criterion in the run that it counts:
a person's, an automated judge version's that may decide the criterion alone (its agreement with people meets the
envelope's threshold, :func:`.agreement.trusted_alone`), and any automated one on a case a person also determined.
An attestation aggregates every determination (no cherry picking) and may state another outcome, with its
rationale. It records the evidence's sufficiency and the
test's appropriateness: insufficient evidence supports only cannot tell, an inappropriate test only cannot tell
or inapplicable. A criterion has at most one current attestation per run: a correction supersedes it, with a
reason, and both stay in the record (``queries/attestations.rq`` says which is current). Given the deployment's
:class:`~service.credentials.signing.Signer`, the attestation's graph is signed by the expert's key as a Verifiable
Credential, written beside it in the same write (``…/judgments/{n}/credential``, docs/trust.md), whose status (bit
``n`` of the evaluation's Bitstring Status List, :mod:`service.credentials.status`) says once it is superseded.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from pyoxigraph import NamedNode, Triple

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import Conflict, Forbidden, Unprocessable
from ..core.graph_edits import GraphEdit, GraphRef
from ..core.graphs import GraphService
from ..core.namespaces import EARL, EPO
from ..core.roles import DOMAIN_EXPERT
from ..core.store import Row
from ..credentials.model import StatusEntry
from ..credentials.signing import Signer
from ..credentials.status import status_list_iri
from ..envelope import iris_for
from ..runs.records import run_view
from . import rdf
from .agreement import instant, trusted_alone
from .model import AUTOMATIC, CANT_TELL, FAILED, INAPPLICABLE, MANUAL, OUTCOMES, PASSED, PlanCriteria
from .records import plan_criteria
from .separation import NO_SEPARATION, Separation

AGGREGATION = EPO + "AnyFailedFailsTrusted"
UNTESTED = EARL + "untested"
"""What the rule proposes when it counts no determination: every one is an automated judge's not trusted alone."""
SUFFICIENCY = {"sufficient": EPO + "Sufficient", "insufficient": EPO + "Insufficient"}
APPROPRIATENESS = {"appropriate": EPO + "Appropriate", "inappropriate": EPO + "Inappropriate"}


@dataclass(frozen=True)
class AttestationView:
    """An attestation as recorded, and whether it is current (no later one supersedes it)."""

    iri: str
    criterion: str
    run: str
    outcome: str
    rationale: str
    expert: str
    at: str
    aggregation_rule: str
    aggregated_outcome: str
    """What the aggregation rule gives over the determinations: where the expert started."""
    sufficiency: str
    appropriateness: str
    determinations: tuple[str, ...]
    supersedes: str | None
    reason: str | None
    current: bool


def aggregate(outcomes: list[str]) -> str | None:
    """``epo:AnyFailedFails`` version 1 over determination outcomes (``None``: nothing to start from)."""
    counted = [o for o in outcomes if o != INAPPLICABLE]
    if FAILED in counted:
        return FAILED
    if PASSED in counted:
        return PASSED
    return CANT_TELL if counted else None


def attest(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    criterion: str,
    outcome: str,
    rationale: str,
    sufficiency: str,
    appropriateness: str,
    credential: Credential | None,
    *,
    supersedes: str | None = None,
    reason: str | None = None,
    separation: Separation = NO_SEPARATION,
    supersede_role: str | None = None,
    signer: Signer | None = None,
) -> AttestationView:
    """Record the domain expert's attestation of ``criterion`` for run ``run_number`` (see the module docstring).
    403 unless a domain expert, or when ``separation`` keeps them from the run or its determinations, or when it
    supersedes another expert's attestation without ``supersede_role`` (the deployment's); 422 naming
    the problem; 409 when the criterion already has a current attestation for the run and this one does not
    supersede it (or supersedes another)."""
    agent = require(credential, DOMAIN_EXPERT)
    run = run_view(graphs, evaluation_id, run_number)
    separation.require_apart_from_run(graphs, run, agent, "attest")
    evaluation = iris_for(graphs, evaluation_id).evaluation
    criteria = plan_criteria(graphs, run.plan)
    _check_values(criteria, criterion, outcome, rationale, sufficiency, appropriateness)
    rows = graphs.rows(
        "determinations",
        {"evaluation": NamedNode(evaluation), "criterion": NamedNode(criterion), "ofRun": NamedNode(run.iri)},
    )
    if not rows:
        raise Unprocessable(f"no determination on {criterion} in run {run_number} to attest from: determine first")
    separation.require_apart_from_determiners(graphs, agent, (row["judge"].value for row in rows), criterion)
    if aggregate([row["outcome"].value for row in rows]) is None:
        raise Unprocessable(
            f"every determination on {criterion} in run {run_number} is inapplicable: nothing to attest"
        )
    counted_rows = counted(rows, trusted_alone(graphs, evaluation_id), criterion)
    started_from = aggregate([row["outcome"].value for row in counted_rows]) or UNTESTED
    current = [a for a in attestations(graphs, evaluation_id, criterion=criterion, run=run.iri) if a.current]
    _check_supersession(current, criterion, run_number, supersedes, reason)
    _check_superseder(graphs, agent, current, supersedes, supersede_role)
    at = graphs.clock()  # the deployment's clock (a test's, which it advances instead of sleeping)
    expert = graphs.agent_iri(agent.agent)

    def signed(batch: GraphRef, triples: list[Triple]) -> list[GraphEdit]:
        """The batch's credential, signed by the expert's key (``signer`` is not ``None`` here)."""
        assert signer is not None
        return [
            signer.credential_edit(
                graphs.member(batch.kind, f"{batch.identifier}/credential"),
                f"{batch.iri.value}/attestations/1",
                triples,
                expert,
                at,
                evaluation,
                # its bit in the evaluation's status list is its batch number: set once it is superseded
                StatusEntry(int(batch.key), status_list_iri(evaluation)),
            )
        ]

    ref = graphs.append_numbered(
        graphs.member(GraphKind.EVALUATION, evaluation_id),
        "judgments",
        lambda batch: rdf.attestation_triples(
            f"{batch.iri.value}/attestations/1",
            evaluation,
            criterion,
            run.iri,
            outcome,
            rationale,
            (AGGREGATION, started_from),
            [row["determination"].value for row in rows],
            SUFFICIENCY[sufficiency],
            APPROPRIATENESS[appropriateness],
            expert,
            at,
            supersedes,
            reason,
        ),
        agent,
        title=f"judgments {{n}}: attestation of {criteria.identifiers[criterion]} for run {run_number}",
        also=signed if signer is not None else None,
    )
    iri = f"{ref.iri.value}/attestations/1"
    return next(a for a in attestations(graphs, evaluation_id, criterion=criterion, run=run.iri) if a.iri == iri)


def counts(
    mode: str,
    judge: str,
    version: str | None,
    person_on_case: bool,
    trusted: Collection[tuple[str, str, str]],
    criterion: str,
) -> bool:
    """Whether the aggregation rule counts a determination on ``criterion``: every one not automated, an automated
    judge version's in ``trusted`` for the criterion, and an automated one on a case (the run's conversation of a
    probe) a person determined by hand (``person_on_case``)."""
    return mode != AUTOMATIC or person_on_case or (judge, version or "", criterion) in trusted


def counted(rows: list[Row], trusted: Collection[tuple[str, str, str]], criterion: str) -> list[Row]:
    """The determinations (``determinations.rq`` rows of one criterion in one run) the aggregation rule counts
    (:func:`counts`)."""
    by_person = {row["probe"].value for row in rows if row["mode"].value == MANUAL}
    return [
        row
        for row in rows
        if counts(
            row["mode"].value,
            row["judge"].value,
            row["version"].value if "version" in row else None,
            row["probe"].value in by_person,
            trusted,
            criterion,
        )
    ]


def _check_values(
    criteria: PlanCriteria, criterion: str, outcome: str, rationale: str, sufficiency: str, appropriateness: str
) -> None:
    problems = []
    if criterion not in criteria:
        problems.append(f"{criterion} is not a criterion the run's plan tests (an in-scope criterion of its envelope)")
    if outcome not in OUTCOMES:
        problems.append(f"outcome {outcome!r} is not one of EARL's: {', '.join(sorted(OUTCOMES))}")
    if sufficiency not in SUFFICIENCY:
        problems.append(f"sufficiency must be one of {', '.join(SUFFICIENCY)}, not {sufficiency!r}")
    if appropriateness not in APPROPRIATENESS:
        problems.append(f"appropriateness must be one of {', '.join(APPROPRIATENESS)}, not {appropriateness!r}")
    if not rationale.strip():
        problems.append("an attestation needs a rationale")
    if sufficiency == "insufficient" and outcome in (PASSED, FAILED):
        problems.append("insufficient evidence supports no passed or failed outcome: attest cantTell")
    if appropriateness == "inappropriate" and outcome in (PASSED, FAILED):
        problems.append("an inappropriate test supports no passed or failed outcome: attest cantTell or inapplicable")
    if problems:
        raise Unprocessable("; ".join(problems), detail=problems)


def _check_superseder(
    graphs: GraphService, agent: Credential, current: list[AttestationView], supersedes: str | None, role: str | None
) -> None:
    """Only the expert who attested supersedes their attestation, unless the deployment names a role whose holders
    may supersede another's (``CAIE_SUPERSEDE_ROLE``: a lead expert, a panel); the reason is recorded either way."""
    superseded = next((a for a in current if a.iri == supersedes), None)
    if superseded is None or superseded.expert == graphs.agent_iri(agent.agent):
        return
    if role is None or not agent.roles & {role, "admin"}:
        raise Forbidden(
            f"{supersedes} is {superseded.expert}'s attestation: only they may supersede it"
            + (
                f", or a holder of the role {role!r}"
                if role
                else " (a deployment may name a role that may supersede others': CAIE_SUPERSEDE_ROLE)"
            )
        )


def _check_supersession(
    current: list[AttestationView], criterion: str, run_number: int, supersedes: str | None, reason: str | None
) -> None:
    if supersedes is None and current:
        raise Conflict(
            f"{criterion} already has a current attestation for run {run_number} ({current[0].iri}): "
            "supersede it, with a reason"
        )
    if supersedes is not None:
        if supersedes not in {a.iri for a in current}:
            raise Conflict(
                f"{supersedes} is not the current attestation of {criterion} for run {run_number}"
                + (f" (that is {current[0].iri})" if current else " (it has none)")
            )
        if not (reason or "").strip():
            raise Unprocessable("a superseding attestation needs the reason for the correction")


def attestations(
    graphs: GraphService, evaluation_id: str, *, criterion: str | None = None, run: str | None = None
) -> list[AttestationView]:
    """The evaluation's attestations (``queries/attestations.rq``), oldest first per criterion."""
    bindings = {"evaluation": NamedNode(iris_for(graphs, evaluation_id).evaluation)}
    if criterion is not None:
        bindings["criterion"] = NamedNode(criterion)
    if run is not None:
        bindings["run"] = NamedNode(run)
    found = [
        AttestationView(
            iri=row["attestation"].value,
            criterion=row["criterion"].value,
            run=row["run"].value,
            outcome=row["outcome"].value,
            rationale=row["rationale"].value,
            expert=row["expert"].value,
            at=row["at"].value,
            aggregation_rule=row["aggregationRule"].value,
            aggregated_outcome=row["aggregatedOutcome"].value,
            sufficiency=row["sufficiency"].value,
            appropriateness=row["appropriateness"].value,
            determinations=tuple(row["determinations"].value.split()) if "determinations" in row else (),
            supersedes=row["supersedes"].value if "supersedes" in row else None,
            reason=row["reason"].value if "reason" in row else None,
            current=row["current"].value == "true",
        )
        for row in graphs.rows("attestations", bindings)
    ]
    # ordered here, not by the query: Virtuoso cannot sort rows carrying an attestation's determinations
    return sorted(found, key=lambda a: (a.criterion, instant(a.at), a.iri))
