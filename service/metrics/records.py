"""The measures of an evaluation read from its record: each through its published query (queries/coverage.rq,
outcome-distribution.rq, pass-rate-counts.rq, gaps.rq, failures.rq, execution-errors.rq; docs/metrics.md), the
parameters bound, the rows shaped into :mod:`.model` values. Python only divides (exactly) and computes the
pass-rate intervals from the counts the queries give.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from pyoxigraph import NamedNode

from ..core.errors import BadRequest
from ..core.graphs import GraphService
from ..core.namespaces import EARL
from ..core.rdf import date_time
from ..core.store import Row, Term
from ..envelope import Envelope, envelope_at, iris_for
from ..judgments.reliability import stored_judge_reliability
from ..judgments.tallies import pass_rate_rows
from ..runs.records import run_view
from .intervals import wilson_fpc
from .model import Coverage, ErrorCount, EvaluationMetrics, Failure, Gap, OutcomeDistribution, OutcomeShare, PassRate

OUTCOMES = (EARL + "passed", EARL + "failed", EARL + "cantTell")
"""The outcomes a covered criterion can have, in the order the distribution lists them."""


@dataclass(frozen=True)
class Scope:
    """What the metric queries are asked about: the evaluation (its current envelope), a date, a run."""

    evaluation: str
    envelope: Envelope
    """The current envelope version, the one the queries read (epo:operationalEnvelope)."""
    as_of: datetime | None = None
    run: str | None = None

    def bindings(self, **extra: str | None) -> dict[str, Term]:
        """The parameters, with ``extra`` IRIs (``criterion``, ``requirement``) where given."""
        # the envelope resolved here (the current one, or a report's own version) is bound: the queries' own choice
        # from ?evaluation is the current one only
        bound: dict[str, Term] = {"evaluation": NamedNode(self.evaluation), "envelope": NamedNode(self.envelope.iri)}
        bound.update({name: NamedNode(iri) for name, iri in extra.items() if iri is not None})
        if self.as_of is not None:
            bound["asOf"] = date_time(self.as_of)
        if self.run is not None:
            bound["run"] = NamedNode(self.run)
        return bound


def parse_as_of(text: str | None) -> datetime | None:
    """An ``asOf`` parameter as a timezone-aware datetime (``None`` stays ``None``); 400 naming what is wrong."""
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(f"asOf {text!r} is not an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z") from None
    if value.utcoffset() is None:
        raise BadRequest(f"asOf {text!r} has no time zone: give one, e.g. 2026-01-31T12:00:00Z")
    return value


def scope_for(
    graphs: GraphService,
    evaluation_id: str,
    *,
    as_of: datetime | None = None,
    run: int | None = None,
    envelope_version: int | None = None,
) -> Scope:
    """The query scope (the current envelope unless ``envelope_version`` is given); 404 for an unknown evaluation,
    run or envelope version, 400 for a date without a time zone."""
    if as_of is not None and as_of.utcoffset() is None:
        raise BadRequest(f"asOf {as_of.isoformat()} has no time zone: give one, e.g. 2026-01-31T12:00:00Z")
    envelope, _ = envelope_at(graphs, evaluation_id, envelope_version)
    evaluation = iris_for(graphs, evaluation_id).evaluation
    return Scope(evaluation, envelope, as_of, run_view(graphs, evaluation_id, run).iri if run is not None else None)


def _decimal(row: Row, name: str) -> Decimal:
    return Decimal(row[name].value) if name in row else Decimal(0)


def _text(row: Row, name: str) -> str | None:
    return row[name].value if name in row else None


def coverage(graphs: GraphService, scope: Scope) -> Coverage:
    row = graphs.rows("coverage", scope.bindings())[0]
    return Coverage(
        applicable=int(row["applicable"].value),
        covered=int(row["covered"].value),
        applicable_weight=_decimal(row, "applicableWeight"),
        covered_weight=_decimal(row, "coveredWeight"),
    )


def distribution(graphs: GraphService, scope: Scope) -> OutcomeDistribution:
    found = {row["outcome"].value: row for row in graphs.rows("outcome-distribution", scope.bindings())}
    return OutcomeDistribution(
        tuple(
            OutcomeShare(
                outcome,
                int(found[outcome]["criteria"].value) if outcome in found else 0,
                _decimal(found[outcome], "outcomeWeight") if outcome in found else Decimal(0),
            )
            for outcome in OUTCOMES
        )
    )


def pass_rates(graphs: GraphService, scope: Scope, level: float = 0.95) -> tuple[PassRate, ...]:
    """Per criterion and run, k of n with the frame N and the Wilson interval with finite-population correction; as of
    now, from the runs' tallies where they are current (judgments.tallies), else recounted by pass-rate-counts.rq."""
    rows = (
        graphs.rows("pass-rate-counts", scope.bindings())
        if scope.as_of is not None
        else pass_rate_rows(graphs, scope.bindings(), scope.evaluation, scope.run)
    )
    out = []
    for row in rows:
        k, n = int(row["k"].value), int(row["n"].value)
        frame = int(row["frame"].value) if "frame" in row else None
        out.append(
            PassRate(
                criterion=row["criterion"].value,
                run=row["run"].value,
                passed=k,
                judged=n,
                frame=frame,
                cases=int(row["cases"].value),
                interval=wilson_fpc(k, n, frame, level),
            )
        )
    return tuple(out)


def gaps(graphs: GraphService, scope: Scope) -> tuple[Gap, ...]:
    return tuple(
        Gap(
            criterion=row["criterion"].value,
            identifier=_text(row, "identifier"),
            weight=_decimal(row, "weight"),
            requirement=row["requirement"].value,
            requirement_identifier=_text(row, "requirementIdentifier"),
            dimension=_text(row, "dimension"),
            category=_text(row, "category"),
            attested_inapplicable=row["attestedInapplicable"].value == "true",
        )
        for row in graphs.rows("gaps", scope.bindings())
    )


def failures(graphs: GraphService, scope: Scope) -> tuple[Failure, ...]:
    return tuple(
        Failure(
            criterion=row["criterion"].value,
            identifier=_text(row, "identifier"),
            statement=_text(row, "statement"),
            weight=_decimal(row, "weight"),
            dimension=_text(row, "dimension"),
            category=_text(row, "category"),
            requirement=row["requirement"].value,
            requirement_identifier=_text(row, "requirementIdentifier"),
            requirement_statement=_text(row, "requirementStatement"),
            attestations=tuple(sorted(row["attestations"].value.split())),
        )
        for row in graphs.rows("failures", scope.bindings())
    )


def execution_errors(graphs: GraphService, scope: Scope) -> tuple[ErrorCount, ...]:
    return tuple(
        ErrorCount(row["run"].value, row["kind"].value, int(row["errors"].value))
        for row in graphs.rows("execution-errors", scope.bindings())
    )


def evaluation_metrics(
    graphs: GraphService,
    evaluation_id: str,
    *,
    as_of: datetime | None = None,
    run: int | None = None,
    level: float = 0.95,
    envelope_version: int | None = None,
) -> EvaluationMetrics:
    """Every measure of the evaluation's current envelope (or version ``envelope_version`` of it: a report's own),
    counting what is dated no later than ``as_of`` (a timezone-aware datetime; ``None``: everything), over run
    ``run`` (a run number; ``None``: every run). 404 for an unknown evaluation, run or envelope version; 400 for a
    naive ``as_of``."""
    scope = scope_for(graphs, evaluation_id, as_of=as_of, run=run, envelope_version=envelope_version)
    return EvaluationMetrics(
        evaluation=scope.evaluation,
        envelope=scope.envelope.iri,
        envelope_digest=scope.envelope.digest,
        as_of=as_of.isoformat() if as_of is not None else None,
        run=scope.run,
        coverage=coverage(graphs, scope),
        distribution=distribution(graphs, scope),
        pass_rates=pass_rates(graphs, scope, level),
        gaps=gaps(graphs, scope),
        failures=failures(graphs, scope),
        execution_errors=execution_errors(graphs, scope),
        reliability=tuple(
            r
            for r in stored_judge_reliability(graphs, evaluation_id, run=scope.run)
            if as_of is None or datetime.fromisoformat(r.at) <= as_of
        ),
    )
