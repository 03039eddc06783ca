"""What a report's figures rest on (issue 22 §5): each applicable criterion's outcome with its current
attestation's evidence sufficiency and test appropriateness (``queries/criterion-outcomes.rq``,
``queries/criterion-attestation-evidence.rq``), the share of coverage that rests on insufficient evidence
(``queries/insufficient-evidence.rq``; docs/metrics.md defines it), and each automated judge version's agreement
with people per criterion (:func:`service.judgments.agreement.judge_human_agreement`) against the threshold of the
report's envelope version. Computed as of the report's date, for its run, so :mod:`.verify` recomputes them.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from ..core.graphs import GraphService
from ..core.namespaces import EPO
from ..judgments.agreement import judge_human_agreement
from ..metrics.records import Scope
from .identity import criterion_states
from .model import InsufficientShare, JudgeAgreementFigure, Standing, bound

EVIDENCE_QUERIES = (
    "criterion-outcomes",
    "criterion-attestation-evidence",
    "insufficient-evidence",
    "judge-human-units",
)
"""The published queries these figures come from (their digests are recorded with the report)."""


def standings(graphs: GraphService, scope: Scope) -> tuple[Standing, ...]:
    """Every applicable criterion's outcome and its current attestation's sufficiency and appropriateness (of the
    attestations that are current for the scope's run, the insufficient and inappropriate ones win: what the
    outcome rests on is no stronger than its weakest current word)."""
    evidence: dict[str, tuple[str, str]] = {}
    for row in graphs.rows("criterion-attestation-evidence", scope.bindings()):
        found = (row["sufficiency"].value, row["appropriateness"].value)
        earlier = evidence.get(row["criterion"].value)
        evidence[row["criterion"].value] = (
            found
            if earlier is None
            else (
                min(earlier[0], found[0], key=lambda v: v != EPO + "Insufficient"),
                min(earlier[1], found[1], key=lambda v: v != EPO + "Inappropriate"),
            )
        )
    states = criterion_states(
        graphs, scope.envelope.iri, as_of=scope.as_of.isoformat() if scope.as_of else None, run=scope.run
    )
    return tuple(
        sorted(
            (
                Standing(s.criterion, s.identifier, s.weight, s.outcome, *(evidence.get(s.criterion) or (None, None)))
                for s in states
            ),
            key=lambda st: st.criterion,
        )
    )


def insufficient_share(graphs: GraphService, scope: Scope) -> InsufficientShare:
    rows = graphs.rows("insufficient-evidence", scope.bindings())
    row = rows[0] if rows else {}

    def number(name: str) -> Decimal:
        return Decimal(row[name].value) if name in row else Decimal(0)

    return InsufficientShare(
        number("insufficientWeight"), number("coveredWeight"), int(number("insufficient")), int(number("covered"))
    )


def agreements(
    graphs: GraphService, evaluation_id: str, scope: Scope, as_of: datetime
) -> tuple[JudgeAgreementFigure, ...]:
    """Each automated judge version's agreement with people per criterion, as of ``as_of``, held to the threshold of
    the scope's envelope version."""
    found = judge_human_agreement(
        graphs, evaluation_id, as_of=as_of, threshold=scope.envelope.content.agreement_threshold
    )
    return tuple(
        sorted(
            (
                JudgeAgreementFigure(
                    a.judge,
                    a.version,
                    a.criterion,
                    EPO + a.measure.local_name,
                    bound(a.value),
                    a.units,
                    a.trusted_alone,
                )
                for a in found
            ),
            key=lambda a: (a.criterion, a.judge, a.version),
        )
    )
