"""Step 6's measures of an evaluation, as the metric queries give them (shared/DESIGN.md, "Metric definitions
(exact)"; docs/metrics.md). Coverage and the outcome distribution are exact: sums of decimal weights and counts,
divided as fractions. A pass rate is an estimate from a sample of the criterion's frame, so it carries an interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from ..judgments.reliability import StoredReliability


def ratio(numerator: Decimal | int, denominator: Decimal | int) -> Fraction | None:
    """``numerator / denominator`` exactly; ``None`` for a zero denominator (nothing to divide)."""
    return Fraction(numerator) / Fraction(denominator) if denominator else None


@dataclass(frozen=True)
class Coverage:
    """The applicable criteria (in scope in the envelope) and those covered (a current passed, failed or cantTell
    attestation), by count and by weight."""

    applicable: int
    covered: int
    applicable_weight: Decimal
    covered_weight: Decimal

    @property
    def rate(self) -> Fraction | None:
        """Coverage: covered weight / applicable weight, exactly; ``None`` without applicable criteria."""
        return ratio(self.covered_weight, self.applicable_weight)


@dataclass(frozen=True)
class OutcomeShare:
    """One outcome (an EARL outcome IRI) of the covered criteria: how many have it and their weight."""

    outcome: str
    criteria: int
    weight: Decimal


@dataclass(frozen=True)
class OutcomeDistribution:
    """The covered criteria by outcome: passed, failed and cantTell, each present (zero when none)."""

    shares: tuple[OutcomeShare, ...]

    @property
    def criteria(self) -> int:
        return sum(s.criteria for s in self.shares)

    @property
    def weight(self) -> Decimal:
        return sum((s.weight for s in self.shares), Decimal(0))

    def share(self, outcome: str) -> OutcomeShare:
        return next(s for s in self.shares if s.outcome == outcome)

    def fraction(self, outcome: str) -> Fraction | None:
        """The fraction of covered criteria with ``outcome``, by count."""
        return ratio(self.share(outcome).criteria, self.criteria)

    def weighted_fraction(self, outcome: str) -> Fraction | None:
        """The fraction of the covered weight with ``outcome``."""
        return ratio(self.share(outcome).weight, self.weight)


@dataclass(frozen=True)
class Interval:
    """A confidence interval for a proportion: its bounds, level and method (docs/metrics.md)."""

    lower: float
    upper: float
    level: float
    method: str


@dataclass(frozen=True)
class PassRate:
    """A criterion's probe pass rate in one run: ``passed`` (k) of ``judged`` (n) cases with a probe-level outcome,
    out of a frame of ``frame`` (N) distinct test inputs (``None``: the run's plan allocates nothing to it)."""

    criterion: str
    run: str
    passed: int
    judged: int
    frame: int | None
    cases: int
    interval: Interval | None
    """``None`` when nothing was judged (n = 0)."""

    @property
    def estimate(self) -> Fraction | None:
        return ratio(self.passed, self.judged)


@dataclass(frozen=True)
class ErrorCount:
    """How many execution errors of one kind (an EPO class IRI) one run has."""

    run: str
    kind: str
    errors: int


@dataclass(frozen=True)
class Gap:
    """An applicable criterion with no current attested outcome."""

    criterion: str
    identifier: str | None
    weight: Decimal
    requirement: str
    requirement_identifier: str | None
    dimension: str | None
    category: str | None
    attested_inapplicable: bool
    """Its only current attestations say inapplicable (else it has none)."""


@dataclass(frozen=True)
class Failure:
    """An applicable criterion whose outcome is failed, with the requirement it decomposes."""

    criterion: str
    identifier: str | None
    statement: str | None
    weight: Decimal
    dimension: str | None
    category: str | None
    requirement: str
    requirement_identifier: str | None
    requirement_statement: str | None
    attestations: tuple[str, ...]
    """Its current failed attestations."""


@dataclass(frozen=True)
class EvaluationMetrics:
    """Every measure of an evaluation's current envelope, as of ``as_of`` (``None``: now), over one run or all."""

    evaluation: str
    envelope: str
    envelope_digest: str
    as_of: str | None
    run: str | None
    coverage: Coverage
    distribution: OutcomeDistribution
    pass_rates: tuple[PassRate, ...]
    gaps: tuple[Gap, ...]
    failures: tuple[Failure, ...]
    execution_errors: tuple[ErrorCount, ...]
    reliability: tuple[StoredReliability, ...]
    """The judge reliability measurements stored in the record (queries/judge-reliability.rq)."""


@dataclass(frozen=True)
class DrillCriterion:
    """A criterion at the bottom of the drill-down: its outcome (EARL; ``earl:untested`` when not covered), weight,
    and the cases and determinations that bear on it."""

    criterion: str
    identifier: str | None
    weight: Decimal
    outcome: str
    cases: int
    determinations: int


@dataclass(frozen=True)
class DrillNode:
    """A level of the drill-down (the summary, a dimension or a category): its counts add up its criteria's."""

    key: str | None
    """The dimension's or category's IRI (``None`` for the summary)."""
    label: str | None
    outcomes: tuple[tuple[str, int], ...]
    """Per EARL outcome (passed, failed, cantTell, untested), how many of its criteria have it."""
    weight: Decimal
    covered_weight: Decimal
    cases: int
    determinations: int
    children: tuple[DrillNode, ...] = ()
    criteria: tuple[DrillCriterion, ...] = ()


@dataclass(frozen=True)
class TraceLink:
    """One chain requirement -> criterion -> probe -> case -> response -> determination -> attestation; the links
    past the response are ``None`` where the record has none yet."""

    requirement: str
    criterion: str
    probe: str
    run: str
    case: str
    turn: int
    response: str
    determination: str | None
    outcome: str | None
    judge: str | None
    determined_at: str | None
    attestation: str | None
    attested_outcome: str | None
    expert: str | None
    attested_at: str | None
    current: bool | None


@dataclass(frozen=True)
class FailureTrace:
    """A failed criterion traced back: its requirement (and the one that refines, if any), the current failed
    attestation and who made it, and one failed determination it aggregates with its judge and case."""

    criterion: str
    requirement: str
    parent_requirement: str | None
    attestation: str
    expert: str
    attested_at: str
    determination: str | None
    judge: str | None
    method: str | None
    determined_at: str | None
    probe: str | None
    run: str | None
    case: str | None
