"""JSON shapes of a report, its verification, the metrics it is computed from and a comparison of two reports
(the figures side of :mod:`.shapes`)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction

from ..core.rdf import local_name
from ..metrics.model import (
    Coverage,
    DrillNode,
    EvaluationMetrics,
    Failure,
    FailureTrace,
    Gap,
    OutcomeDistribution,
    PassRate,
    TraceLink,
)
from ..reports.compare import CHANGES, Comparison, signed
from ..reports.model import Check as ReportCheck
from ..reports.model import CriterionItem as ReportCriterion
from ..reports.model import Report as ReportModel
from ..reports.model import SignOff as ReportSignOff
from ..reports.model import Verification as ReportVerification
from ..reports.model import canon as report_canon
from .shapes import JSON, earl_name, reliability_json


def _exact(value: Decimal | int | None) -> str | None:
    """An exact figure as text (JSON numbers would lose decimals); ``None`` stays ``null``."""
    return None if value is None else report_canon(value)


def report_json(report: ReportModel) -> JSON:
    b, f, s = report.basis, report.figures, report.basis.scope
    text = _exact

    def sign_off(signed: ReportSignOff | None) -> JSON | None:
        return (
            None
            if signed is None
            else {"iri": signed.iri, "agent": signed.agent, "at": signed.at, "comment": signed.comment}
        )

    def criteria(items: Sequence[ReportCriterion]) -> list[JSON]:
        return [
            {
                "criterion": i.criterion,
                "identifier": i.identifier,
                "requirement": i.requirement,
                "weight": text(i.weight),
            }
            for i in items
        ]

    return {
        "report": report.iri,
        "number": report.number,
        "status": report.status,
        "asOf": report.as_of,
        "author": report.author,
        "run": b.run,
        "plan": b.plan,
        "planDigest": b.plan_digest,
        "envelope": b.envelope,
        "envelopeDigest": b.envelope_digest,
        "targetFingerprint": b.target_fingerprint,
        "evaluatorVersion": b.evaluator_version,
        "scope": {
            "target": s.target,
            "targetName": s.target_name,
            "targetKind": s.target_kind,
            "modelRelease": s.model_release,
            "configuration": s.configuration,
            "useBoundary": s.use_statement,
            "method": s.method_name,
            "methodVersion": s.method_version,
        },
        "judges": [{"judge": j.iri, "version": j.version} for j in b.judges],
        "coverage": {
            "value": text(f.coverage.value),
            "coveredWeight": text(f.coverage.covered_weight),
            "applicableWeight": text(f.coverage.applicable_weight),
            "covered": f.coverage.covered,
            "applicable": f.coverage.applicable,
        },
        "distribution": [
            {
                "outcome": earl_name(d.outcome),
                "count": d.count,
                "weight": text(d.weight),
                "fraction": text(d.fraction),
                "weightedFraction": text(d.weighted_fraction),
            }
            for d in f.distribution
        ],
        "passRates": [
            {
                "criterion": p.criterion,
                "passed": p.passed,
                "judged": p.judged,
                "frame": p.frame,
                "rate": text(p.rate),
                "lower": text(p.lower),
                "upper": text(p.upper),
                "level": text(p.level),
                "method": p.method,
            }
            for p in f.pass_rates
        ],
        "executionErrors": [{"run": e.run, "kind": e.kind, "count": e.count, "cases": e.cases} for e in f.errors],
        "failed": criteria(f.failed),
        "untested": criteria(f.untested),
        "tested": {
            "system": b.tested_system,
            "modelRelease": b.tested_release,
            "outsideBoundary": b.outside_boundary is not None,
            "reason": b.outside_boundary,
        },
        "standings": [
            {
                "criterion": st.criterion,
                "identifier": st.identifier,
                "weight": text(st.weight),
                "outcome": earl_name(st.outcome),
                "sufficiency": local_name(st.sufficiency) if st.sufficiency else None,
                "appropriateness": local_name(st.appropriateness) if st.appropriateness else None,
            }
            for st in f.standings
        ],
        "insufficientEvidence": {
            "value": text(f.insufficient.value),
            "insufficientWeight": text(f.insufficient.insufficient_weight),
            "coveredWeight": text(f.insufficient.covered_weight),
            "insufficient": f.insufficient.insufficient,
            "covered": f.insufficient.covered,
        },
        "judgeAgreement": [
            {
                "judge": a.judge,
                "version": a.version,
                "criterion": a.criterion,
                "measure": local_name(a.measure),
                "value": text(a.value),
                "units": a.units,
                "trustedAlone": a.trusted_alone,
            }
            for a in f.agreements
        ],
        "limitations": list(report.statement.limitations),
        "recommendations": list(report.statement.recommendations),
        "fitness": local_name(report.statement.fitness),
        "computedFrom": [{"graph": d.name, "digest": d.digest} for d in report.snapshots],
        "queries": [{"query": d.name, "digest": d.digest} for d in report.queries],
        "signOff": sign_off(report.sign_off),
        "acceptance": sign_off(report.acceptance),
    }


def verification_json(found: ReportVerification) -> JSON:
    def checks(items: Sequence[ReportCheck], key: str) -> list[JSON]:
        return [{key: c.name, "holds": c.holds, "stored": c.stored, "recomputed": c.recomputed} for c in items]

    return {
        "report": found.report,
        "holds": found.holds,
        "differences": found.differences(),
        "figures": checks(found.figures, "figure"),
        "graphs": checks(found.graphs, "graph"),
        "queries": checks(found.queries, "query"),
        "tallies": checks(found.tallies, "criterion"),
        "credentials": checks(found.credentials, "credential"),
    }


# ------------------------------------------------------------------------------------------- metrics (issue 11)


def _rate(value: Fraction | None) -> JSON | None:
    """An exact ratio: its decimal text to 12 places (exact when it terminates sooner) and the fraction itself."""
    if value is None:
        return None
    decimal = (Decimal(value.numerator) / Decimal(value.denominator)).quantize(Decimal("1e-12"))
    return {"value": report_canon(decimal), "fraction": f"{value.numerator}/{value.denominator}"}


def coverage_json(c: Coverage) -> JSON:
    return {
        "applicable": c.applicable,
        "covered": c.covered,
        "applicableWeight": report_canon(c.applicable_weight),
        "coveredWeight": report_canon(c.covered_weight),
        "rate": _rate(c.rate),
    }


def distribution_json(d: OutcomeDistribution) -> JSON:
    return {
        "criteria": d.criteria,
        "weight": report_canon(d.weight),
        "outcomes": [
            {
                "outcome": earl_name(s.outcome),
                "criteria": s.criteria,
                "weight": report_canon(s.weight),
                "fraction": _rate(d.fraction(s.outcome)),
                "weightedFraction": _rate(d.weighted_fraction(s.outcome)),
            }
            for s in d.shares
        ],
    }


def pass_rate_json(p: PassRate) -> JSON:
    interval = p.interval
    return {
        "criterion": p.criterion,
        "run": p.run,
        "k": p.passed,
        "n": p.judged,
        "N": p.frame,
        "cases": p.cases,
        "estimate": _rate(p.estimate),
        "interval": None
        if interval is None
        else {"lower": interval.lower, "upper": interval.upper, "level": interval.level, "method": interval.method},
    }


def gap_json(g: Gap) -> JSON:
    return {
        "criterion": g.criterion,
        "identifier": g.identifier,
        "weight": report_canon(g.weight),
        "requirement": g.requirement,
        "requirementIdentifier": g.requirement_identifier,
        "dimension": g.dimension,
        "category": g.category,
        "attestedInapplicable": g.attested_inapplicable,
    }


def failure_json(f: Failure) -> JSON:
    return {
        "criterion": f.criterion,
        "identifier": f.identifier,
        "statement": f.statement,
        "weight": report_canon(f.weight),
        "dimension": f.dimension,
        "category": f.category,
        "requirement": f.requirement,
        "requirementIdentifier": f.requirement_identifier,
        "requirementStatement": f.requirement_statement,
        "attestations": list(f.attestations),
    }


def metrics_json(m: EvaluationMetrics) -> JSON:
    return {
        "evaluation": m.evaluation,
        "envelope": m.envelope,
        "envelopeDigest": m.envelope_digest,
        "asOf": m.as_of,
        "run": m.run,
        "coverage": coverage_json(m.coverage),
        "distribution": distribution_json(m.distribution),
        "passRates": [pass_rate_json(p) for p in m.pass_rates],
        "gaps": [gap_json(g) for g in m.gaps],
        "failures": [failure_json(f) for f in m.failures],
        "executionErrors": [{"run": e.run, "kind": e.kind, "errors": e.errors} for e in m.execution_errors],
        "judgeReliability": [reliability_json(r) for r in m.reliability],
    }


def drill_json(node: DrillNode) -> JSON:
    return {
        "key": node.key,
        "label": node.label,
        "outcomes": {earl_name(o): n for o, n in node.outcomes},
        "weight": report_canon(node.weight),
        "coveredWeight": report_canon(node.covered_weight),
        "cases": node.cases,
        "determinations": node.determinations,
        "children": [drill_json(child) for child in node.children],
        "criteria": [
            {
                "criterion": c.criterion,
                "identifier": c.identifier,
                "weight": report_canon(c.weight),
                "outcome": earl_name(c.outcome),
                "cases": c.cases,
                "determinations": c.determinations,
            }
            for c in node.criteria
        ],
    }


def trace_link_json(t: TraceLink) -> JSON:
    return {
        "requirement": t.requirement,
        "criterion": t.criterion,
        "probe": t.probe,
        "run": t.run,
        "case": t.case,
        "turn": t.turn,
        "response": t.response,
        "determination": t.determination,
        "outcome": earl_name(t.outcome) if t.outcome else None,
        "judge": t.judge,
        "determinedAt": t.determined_at,
        "attestation": t.attestation,
        "attestedOutcome": earl_name(t.attested_outcome) if t.attested_outcome else None,
        "expert": t.expert,
        "attestedAt": t.attested_at,
        "current": t.current,
    }


def failure_trace_json(t: FailureTrace) -> JSON:
    return {
        "criterion": t.criterion,
        "requirement": t.requirement,
        "parentRequirement": t.parent_requirement,
        "attestation": t.attestation,
        "expert": t.expert,
        "attestedAt": t.attested_at,
        "determination": t.determination,
        "judge": t.judge,
        "method": t.method,
        "determinedAt": t.determined_at,
        "probe": t.probe,
        "run": t.run,
        "case": t.case,
    }


def comparison_json(iri: str, comparison: Comparison) -> JSON:
    """The comparison as JSON: the two reports, each criterion's change, the deltas, and counts per change."""
    return {
        "comparison": iri,
        "kind": comparison.kind,
        "compatible": True,
        "current": comparison.current.iri,
        "reference": comparison.reference.iri,
        "counts": {change: comparison.count(change) for change in CHANGES},
        "criteria": [
            {
                "identifier": row.identifier,
                "criterion": row.criterion,
                "weight": report_canon(row.weight),
                "referenceOutcome": local_name(row.reference_outcome),
                "outcome": local_name(row.outcome),
                "change": row.change,
            }
            for row in comparison.changes
        ],
        "deltas": [
            {
                "figure": delta.name,
                "reference": None if delta.reference is None else report_canon(delta.reference),
                "current": None if delta.current is None else report_canon(delta.current),
                "difference": signed(delta.difference) or None,
            }
            for delta in comparison.deltas
        ],
    }
