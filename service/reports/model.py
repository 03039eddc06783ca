"""Step 6's values: a report as recorded (what it rests on, its figures, what its authors say, its sign-offs) and
a verification of it (each figure and digest recomputed from the record, holds or differs).

Figures are exact: counts are integers, weights and fractions :class:`~decimal.Decimal` (a fraction is kept as
its numerator and denominator, its value rounded once by :func:`ratio`), interval bounds rounded to
:data:`BOUND_PLACES` decimals. :meth:`Figures.flat` names every figure by a stable key with its canonical text,
which is what a verification compares, so a stored report and a recomputation agree exactly or name the figure
that moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..core.namespaces import EARL, EPO
from ..core.rdf import local_name

DISTRIBUTED = (EARL + "passed", EARL + "failed", EARL + "cantTell")
"""The outcomes of the outcome distribution, in order."""

FITNESS = {"FitToDeploy": EPO + "FitToDeploy", "FitWithConditions": EPO + "FitWithConditions", "NotFit": EPO + "NotFit"}
"""The fitness values a recommendation may state, by their local names."""

RATIO_PLACES = Decimal("1e-12")
BOUND_PLACES = Decimal("1e-6")


def canon(value: Decimal | int) -> str:
    """A number's canonical text (no exponent, no trailing zeros): what is stored and compared."""
    if isinstance(value, int):
        return str(value)
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "") else text


def ratio(numerator: Decimal | int, denominator: Decimal | int) -> Decimal | None:
    """``numerator / denominator`` rounded to 12 decimals (``None`` for a zero denominator)."""
    if not denominator:
        return None
    return (Decimal(numerator) / Decimal(denominator)).quantize(RATIO_PLACES)


def bound(value: float | Decimal | None) -> Decimal | None:
    """An interval bound rounded to :data:`BOUND_PLACES`."""
    return None if value is None else Decimal(repr(value) if isinstance(value, float) else value).quantize(BOUND_PLACES)


@dataclass(frozen=True)
class Coverage:
    """Covered over applicable criteria, by weight (the coverage) and by count."""

    covered_weight: Decimal
    applicable_weight: Decimal
    covered: int
    applicable: int

    @property
    def value(self) -> Decimal | None:
        return ratio(self.covered_weight, self.applicable_weight)


@dataclass(frozen=True)
class OutcomeShare:
    """One outcome's part of the covered criteria: how many and how much weight, over all covered."""

    outcome: str
    count: int
    weight: Decimal
    covered: int
    covered_weight: Decimal

    @property
    def fraction(self) -> Decimal | None:
        return ratio(self.count, self.covered)

    @property
    def weighted_fraction(self) -> Decimal | None:
        return ratio(self.weight, self.covered_weight)


@dataclass(frozen=True)
class PassRate:
    """A criterion's probe pass rate: ``passed`` of ``judged`` probe-level determinations, from a frame of
    ``frame`` distinct test inputs (``None``: the plan allocates nothing to it), with its interval (``None``
    bounds, level and method when nothing was judged)."""

    criterion: str
    passed: int
    judged: int
    frame: int | None
    lower: Decimal | None
    upper: Decimal | None
    level: Decimal | None
    method: str | None

    @property
    def rate(self) -> Decimal | None:
        return ratio(self.passed, self.judged)


@dataclass(frozen=True)
class ErrorCount:
    """Execution errors of one kind (``None``: of every kind) in one run, out of the run's recorded cases."""

    run: str
    kind: str | None
    count: int
    cases: int


@dataclass(frozen=True)
class CriterionItem:
    """A criterion a report names (failed, or untested: a gap), with its requirement and weight."""

    criterion: str
    identifier: str
    requirement: str | None
    weight: Decimal


@dataclass(frozen=True)
class Standing:
    """An applicable criterion's outcome (``earl:untested`` when not covered) and what its current attestation says
    of its evidence (``None``: no current attestation)."""

    criterion: str
    identifier: str
    weight: Decimal
    outcome: str
    sufficiency: str | None
    appropriateness: str | None


@dataclass(frozen=True)
class InsufficientShare:
    """Of the covered criteria, those whose current attestation states insufficient evidence, by weight and count."""

    insufficient_weight: Decimal
    covered_weight: Decimal
    insufficient: int
    covered: int

    @property
    def value(self) -> Decimal | None:
        return ratio(self.insufficient_weight, self.covered_weight)


NO_INSUFFICIENT = InsufficientShare(Decimal(0), Decimal(0), 0, 0)


@dataclass(frozen=True)
class JudgeAgreementFigure:
    """An automated judge version's agreement with people on a criterion (``measure`` an EPO individual; ``value``
    ``None`` when undefined) over ``units``, and whether it decided the criterion's cases alone."""

    judge: str
    version: str
    criterion: str
    measure: str
    value: Decimal | None
    units: int
    trusted_alone: bool


@dataclass(frozen=True)
class Figures:
    """Every number a report states, computed by the published queries (``service.metrics``, :mod:`.evidence`)."""

    coverage: Coverage
    distribution: tuple[OutcomeShare, ...]
    pass_rates: tuple[PassRate, ...]
    errors: tuple[ErrorCount, ...]
    failed: tuple[CriterionItem, ...]
    untested: tuple[CriterionItem, ...]
    standings: tuple[Standing, ...] = ()
    insufficient: InsufficientShare = NO_INSUFFICIENT
    agreements: tuple[JudgeAgreementFigure, ...] = ()

    def flat(self) -> dict[str, str]:
        """Every figure by a stable name, as canonical text (``""`` for an undefined fraction)."""

        def text(value: Decimal | int | None) -> str:
            return "" if value is None else canon(value)

        c = self.coverage
        out = {
            "coverage": text(c.value),
            "coverage.coveredWeight": text(c.covered_weight),
            "coverage.applicableWeight": text(c.applicable_weight),
            "coverage.covered": text(c.covered),
            "coverage.applicable": text(c.applicable),
        }
        for share in self.distribution:
            name = f"distribution.{local_name(share.outcome)}"
            out |= {
                f"{name}.count": text(share.count),
                f"{name}.weight": text(share.weight),
                f"{name}.fraction": text(share.fraction),
                f"{name}.weightedFraction": text(share.weighted_fraction),
            }
        for rate in self.pass_rates:
            name = f"passRate.{rate.criterion}"
            out |= {
                f"{name}.passed": text(rate.passed),
                f"{name}.judged": text(rate.judged),
                f"{name}.frame": text(rate.frame),
                f"{name}.lower": text(rate.lower),
                f"{name}.upper": text(rate.upper),
            }
        for error in self.errors:
            out[f"errors.{error.run}.{local_name(error.kind) if error.kind else 'all'}"] = (
                f"{error.count}/{error.cases}"
            )
        out["failed"] = " ".join(sorted(item.criterion for item in self.failed))
        out["untested"] = " ".join(sorted(item.criterion for item in self.untested))
        i = self.insufficient
        out |= {
            "insufficientEvidence": text(i.value),
            "insufficientEvidence.insufficientWeight": text(i.insufficient_weight),
            "insufficientEvidence.coveredWeight": text(i.covered_weight),
            "insufficientEvidence.insufficient": text(i.insufficient),
            "insufficientEvidence.covered": text(i.covered),
        }
        for st in self.standings:
            out[f"standing.{st.criterion}"] = " ".join(
                local_name(v) if v else "none" for v in (st.outcome, st.sufficiency, st.appropriateness)
            )
        for a in self.agreements:
            out[f"judgeAgreement.{a.judge}.{a.version}.{a.criterion}"] = (
                f"{local_name(a.measure)} {text(a.value) or 'undefined'} over {a.units} units, "
                + ("trusted alone" if a.trusted_alone else "not trusted alone")
            )
        return out


@dataclass(frozen=True)
class ScopeFacts:
    """The scope a report states: the target and its version boundary, the use boundary, the method."""

    target: str
    target_name: str
    target_kind: str
    version_boundary: str
    model_release: str
    configuration: str
    use_boundary: str
    use_statement: str
    method: str | None = None
    method_name: str | None = None
    method_version: str | None = None


@dataclass(frozen=True)
class JudgeUsed:
    """A judge whose determinations the report counts: a person (no version) or software with its version."""

    iri: str
    version: str | None


@dataclass(frozen=True)
class Basis:
    """What a report rests on: the run, its plan (the test material) and envelope, the target version it ran,
    the judges, and the evaluator (this service) that computed it."""

    evaluation: str
    run: str
    plan: str
    plan_digest: str
    envelope: str
    envelope_digest: str
    target_fingerprint: str
    scope: ScopeFacts
    judges: tuple[JudgeUsed, ...]
    evaluator_version: str
    tested_system: str = ""
    tested_release: str = ""
    """The run's target version: what was tested (empty for a report made before it was stated)."""
    outside_boundary: str | None = None
    """The operator's reason for running a target outside the scope's version boundary; ``None`` inside it."""


@dataclass(frozen=True)
class Digested:
    """A graph (or query file) and its SHA-256 when the report was computed."""

    name: str
    digest: str


@dataclass(frozen=True)
class Statement:
    """What the report's author states on the strength of the figures."""

    limitations: tuple[str, ...]
    recommendations: tuple[str, ...]
    fitness: str


@dataclass(frozen=True)
class SignOff:
    """The domain expert's sign-off (``kind`` ``sign-off``) or the organizational expert's acceptance."""

    iri: str
    kind: str
    agent: str
    at: str
    comment: str | None


@dataclass(frozen=True)
class Report:
    """A report as recorded; its IRI is its graph's, ``{evaluation}/reports/{number}``; ``as_of`` its date."""

    iri: str
    number: int
    as_of: str
    author: str
    basis: Basis
    figures: Figures
    statement: Statement
    snapshots: tuple[Digested, ...]
    queries: tuple[Digested, ...]
    sign_off: SignOff | None = None
    acceptance: SignOff | None = None

    @property
    def status(self) -> str:
        """``draft`` until the domain expert signs, ``signed`` until the organizational expert accepts, then ``final``."""
        if self.sign_off is None:
            return "draft"
        return "final" if self.acceptance is not None else "signed"


@dataclass(frozen=True)
class Check:
    """One stored figure or digest against its recomputation (``None``: nothing to recompute, e.g. a graph gone)."""

    name: str
    stored: str
    recomputed: str | None

    @property
    def holds(self) -> bool:
        return self.stored == self.recomputed


@dataclass(frozen=True)
class Verification:
    """A report's figures, graph digests and query digests, each recomputed from the record now; its run's
    pass-rate tallies (per criterion, "k of n, c cases") against a recount; and each credential of its
    presentation, ``verifies`` or its problems (naming the credential, its signer and the person it is
    attributed to)."""

    report: str
    figures: tuple[Check, ...]
    graphs: tuple[Check, ...]
    queries: tuple[Check, ...]
    tallies: tuple[Check, ...] = ()
    credentials: tuple[Check, ...] = ()

    @property
    def holds(self) -> bool:
        checks = self.figures + self.graphs + self.queries + self.tallies + self.credentials
        return all(check.holds for check in checks)

    def differences(self) -> list[str]:
        """Each check that does not hold, in words."""
        return [
            f"{what} {c.name}: stored {c.stored!r}, now {c.recomputed!r}"
            for what, checks in (
                ("figure", self.figures),
                ("graph", self.graphs),
                ("query", self.queries),
                ("tally of criterion", self.tallies),
                ("credential", self.credentials),
            )
            for c in checks
            if not c.holds
        ]
