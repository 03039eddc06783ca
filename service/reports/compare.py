"""Comparing a report with a reference report: a version comparison (the same test target, another version) or a
baseline comparison (against a report designated as the baseline).

Two reports are compared only when they are compatible (:func:`incompatibilities`): the same envelope (digest),
method version, test material (plan digest), evaluator version, automated judges and their versions, metric
definitions (the digests of the queries that computed them), execution conditions (the run's settings) and use
boundary. Otherwise the comparison is refused with every difference named (409). When compatible, each
criterion's change (matched by identity, :mod:`.identity`) and the coverage and outcome distribution deltas are
stated; docs/comparison.md gives the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import quote

from pyoxigraph import Literal, NamedNode, Triple

from ..core.errors import BadRequest, Conflict
from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.namespaces import DCTERMS, EARL, EPO, RDFS, XSD
from ..core.rdf import RDF_TYPE, local_name
from ..runs.records import run_view
from .identity import CriterionState, criterion_states, envelope_differences
from .model import Report, canon
from .rdf import decimal
from .records import get_report

KINDS = {"version": EPO + "VersionComparison", "baseline": EPO + "BaselineComparison"}

FAILED, PASSED = EARL + "failed", EARL + "passed"
CHANGES = ("newly failing", "fixed", "still failing", "newly covered", "no longer covered", "other change", "unchanged")
"""A criterion's change, one of these (:func:`change`), in the order a page lists them."""


@dataclass(frozen=True)
class Side:
    """One report of a comparison, with each applicable criterion's outcome as of the report and its run's
    execution settings (canonical text, as the run records them)."""

    report: Report
    criteria: tuple[CriterionState, ...]
    settings: str


@dataclass(frozen=True)
class CriterionChange:
    """One criterion (by identifier) in both reports: its outcome in each and what changed."""

    identifier: str
    criterion: str
    requirement_identifier: str | None
    weight: Decimal
    reference_outcome: str
    outcome: str
    change: str


@dataclass(frozen=True)
class Delta:
    """A figure in both reports and its difference (current minus reference); ``None`` where undefined."""

    name: str
    reference: Decimal | None
    current: Decimal | None

    @property
    def difference(self) -> Decimal | None:
        if self.reference is None or self.current is None:
            return None
        return self.current - self.reference


@dataclass(frozen=True)
class Comparison:
    """A compatible comparison of ``current`` with ``reference``."""

    kind: str
    current: Report
    reference: Report
    changes: tuple[CriterionChange, ...]
    deltas: tuple[Delta, ...]

    def count(self, change: str) -> int:
        return sum(row.change == change for row in self.changes)


def change(reference: str, current: str) -> str:
    """What became of a criterion: a change of coverage first, then of failure (``fixed``: failed, now passed)."""
    was, now = reference != EARL + "untested", current != EARL + "untested"
    if not was or not now:
        return "unchanged" if was == now else ("newly covered" if now else "no longer covered")
    if current == FAILED:
        return "still failing" if reference == FAILED else "newly failing"
    if reference == FAILED and current == PASSED:
        return "fixed"
    return "unchanged" if reference == current else "other change"


def _differs(name: str, mine: object, theirs: object) -> list[str]:
    return [] if mine == theirs else [f"{name}: {mine} in the current report, {theirs} in the reference"]


def _judges(report: Report) -> dict[str, str | None]:
    return {judge.iri: judge.version for judge in report.basis.judges if judge.version is not None}


def incompatibilities(kind: str, current: Side, reference: Side) -> list[str]:
    """Every reason the two reports may not be compared, each naming what differs (empty: compatible)."""
    mine, theirs = current.report, reference.report
    a, b = mine.basis, theirs.basis
    reasons = _differs("envelope digest", a.envelope_digest, b.envelope_digest)
    if reasons:
        details = envelope_differences(current.criteria, reference.criteria)
        reasons = [reasons[0] + (f" ({'; '.join(details)})" if details else "")]
    reasons += _differs(
        "method version",
        f"{a.scope.method_name} {a.scope.method_version}",
        f"{b.scope.method_name} {b.scope.method_version}",
    )
    reasons += _differs("test material (plan digest)", a.plan_digest, b.plan_digest)
    reasons += _differs("evaluator version", a.evaluator_version, b.evaluator_version)
    judges, their_judges = _judges(mine), _judges(theirs)
    for judge in sorted(judges.keys() | their_judges.keys()):
        reasons += _differs(
            f"judge version of {judge}", judges.get(judge, "not used"), their_judges.get(judge, "not used")
        )
    queries = {query.name: query.digest for query in mine.queries}
    their_queries = {query.name: query.digest for query in theirs.queries}
    for name in sorted(queries.keys() | their_queries.keys()):
        reasons += _differs(
            f"metric definition {name}.rq (query digest)",
            queries.get(name, "absent"),
            their_queries.get(name, "absent"),
        )
    reasons += _differs("execution conditions (run settings)", current.settings, reference.settings)
    reasons += _differs("use boundary", a.scope.use_statement, b.scope.use_statement)
    if kind == "version":
        reasons += _differs(
            "test target",
            f"{a.scope.target_name} ({a.scope.target_kind})",
            f"{b.scope.target_name} ({b.scope.target_kind})",
        )
        if a.target_fingerprint == b.target_fingerprint:
            reasons.append(
                f"target version: both reports are on {a.target_fingerprint}; a version comparison "
                "compares another version of the same target"
            )
    return reasons


def _deltas(current: Report, reference: Report) -> tuple[Delta, ...]:
    deltas = [Delta("coverage", reference.figures.coverage.value, current.figures.coverage.value)]
    theirs = {share.outcome: share for share in reference.figures.distribution}
    for share in current.figures.distribution:
        other = theirs.get(share.outcome)
        name = local_name(share.outcome)
        deltas += [
            Delta(f"{name} fraction", other.fraction if other else None, share.fraction),
            Delta(f"{name} weighted fraction", other.weighted_fraction if other else None, share.weighted_fraction),
            Delta(f"{name} count", Decimal(other.count) if other else None, Decimal(share.count)),
        ]
    return tuple(deltas)


def compare(kind: str, current: Side, reference: Side) -> Comparison:
    """The comparison of ``current`` with ``reference``; 400 for an unknown kind or a report with itself, 409
    naming every incompatibility."""
    if kind not in KINDS:
        raise BadRequest(f"unknown comparison kind {kind!r}: use one of {', '.join(KINDS)}")
    if current.report.iri == reference.report.iri:
        raise BadRequest(f"a report is not compared with itself ({current.report.iri})")
    reasons = incompatibilities(kind, current, reference)
    if reasons:
        raise Conflict(
            f"{current.report.iri} and {reference.report.iri} are not compatible, so they are not "
            f"compared: {' | '.join(reasons)}",
            detail=reasons,
        )
    before = {state.identifier: state for state in reference.criteria}
    changes = tuple(
        CriterionChange(
            state.identifier,
            state.criterion,
            state.requirement_identifier,
            state.weight,
            before[state.identifier].outcome,
            state.outcome,
            change(before[state.identifier].outcome, state.outcome),
        )
        for state in current.criteria
        if state.identifier in before
    )
    ordered = tuple(sorted(changes, key=lambda row: (CHANGES.index(row.change), -row.weight, row.identifier)))
    return Comparison(kind, current.report, reference.report, ordered, _deltas(current.report, reference.report))


def signed(value: Decimal | None) -> str:
    """A delta as text with its sign (``+0.25``, ``-1``, ``0``); empty when undefined."""
    if value is None:
        return ""
    text = canon(value)
    return text if text.startswith("-") or text == "0" else "+" + text


def side(graphs: GraphService, evaluation_id: str, number: int) -> Side:
    """Report ``number`` of the evaluation as one side of a comparison (404 if there is none)."""
    report = get_report(graphs, evaluation_id, number)
    run = run_view(graphs, evaluation_id, minted_number(report.basis.run))
    return Side(
        report, criterion_states(graphs, report.basis.envelope, as_of=report.as_of, run=report.basis.run), run.settings
    )


def comparison_triples(iri: str, comparison: Comparison) -> list[Triple]:
    """The comparison as linked data at ``iri``: its kind, the two reports, ``epo:compatible true``, each
    criterion's change and each figure's delta (docs/comparison.md lists the terms)."""
    triples: list[Triple] = []

    def say(subject: str, predicate: str, value: NamedNode | Literal | None) -> None:
        if value is not None:
            triples.append(Triple(NamedNode(subject), NamedNode(predicate), value))

    say(iri, RDF_TYPE.value, NamedNode(KINDS[comparison.kind]))
    say(iri, RDF_TYPE.value, NamedNode(EPO + "Comparison"))
    say(iri, EPO + "currentReport", NamedNode(comparison.current.iri))
    say(iri, EPO + "referenceReport", NamedNode(comparison.reference.iri))
    say(iri, EPO + "compatible", Literal("true", datatype=NamedNode(XSD + "boolean")))
    for row in comparison.changes:
        node = f"{iri}#criterion-{quote(row.identifier, safe='')}"
        say(iri, EPO + "criterionChange", NamedNode(node))
        say(node, RDF_TYPE.value, NamedNode(EPO + "CriterionChange"))
        say(node, DCTERMS + "identifier", Literal(row.identifier))
        say(node, EPO + "forCriterion", NamedNode(row.criterion))
        say(node, EPO + "referenceOutcome", NamedNode(row.reference_outcome))
        say(node, EPO + "outcome", NamedNode(row.outcome))
        say(node, EPO + "changeKind", Literal(row.change))
    for k, delta in enumerate(comparison.deltas, start=1):
        node = f"{iri}#delta-{k}"
        say(iri, EPO + "metricDelta", NamedNode(node))
        say(node, RDF_TYPE.value, NamedNode(EPO + "MetricDelta"))
        say(node, RDFS + "label", Literal(delta.name))
        for predicate, value in (
            ("referenceValue", delta.reference),
            ("currentValue", delta.current),
            ("difference", delta.difference),
        ):
            say(node, EPO + predicate, None if value is None else decimal(value))
    return triples
