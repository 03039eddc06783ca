"""What a report's page shows a sponsor, read from the record: the report as stored (:mod:`.records`), each
applicable criterion's outcome as of the report (coverage by requirement), each failure traced back to its
requirement and to who judged and attested it, the untested part of the envelope, and the drill-down from
requirement to criterion to each case's conversation and its judgments. The charts are :mod:`.charts`'s.

Every figure on the page is the report's own; the per-criterion rows come from the published queries with the
report's date and run, so they add up to the report's figures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal

from pyoxigraph import Literal, NamedNode

from ..core.graphs import GraphService
from ..core.namespaces import XSD
from ..core.rdf import local_name
from ..core.store import Row
from ..envelope import iris_for
from ..scenarios.model import RuleBlocking
from ..scenarios.records import frame_blocking
from . import charts
from .identity import CriterionState, criterion_states
from .kept import kept
from .model import Report
from .records import get_report


@dataclass(frozen=True)
class Judgment:
    """A determination on one response of a case: its outcome and who made it (a person or a software judge)."""

    outcome: str
    judge: str
    at: str


@dataclass(frozen=True)
class Case:
    """One case (a probe's conversation in the run) and the determinations on it for a criterion."""

    case: str
    probe: str
    judgments: tuple[Judgment, ...]


@dataclass(frozen=True)
class Attested:
    """A current failed attestation and the failed determinations it aggregates, with their cases."""

    attestation: str
    expert: str
    at: str
    determinations: tuple[tuple[str, tuple[str, ...]], ...]
    """Each judge of the failed determinations it aggregates, with the cases they ruled on."""


@dataclass(frozen=True)
class Failure:
    """A failed criterion traced to its requirement and the people and judges behind its outcome."""

    state: CriterionState
    parent_requirement: str | None
    attestations: tuple[Attested, ...]


@dataclass(frozen=True)
class Drill:
    """One requirement's criteria, each with its outcome and cases."""

    requirement: str
    identifier: str | None
    statement: str | None
    criteria: tuple[tuple[CriterionState, tuple[Case, ...]], ...]


@dataclass(frozen=True)
class ReportPage:
    """Everything the report page renders; charts as ``data:`` URLs."""

    report: Report
    criteria: tuple[CriterionState, ...]
    failures: tuple[Failure, ...]
    untested: tuple[CriterionState, ...]
    drill: tuple[Drill, ...]
    coverage_chart: str
    distribution_chart: str
    pass_rate_chart: str
    blocking: tuple[RuleBlocking, ...] = ()
    """How much of the plan's candidate frame each consistency rule blocked (the derivation's exact counts)."""


def _bindings(report: Report) -> dict[str, NamedNode | Literal]:
    return {
        "envelope": NamedNode(report.basis.envelope),
        "run": NamedNode(report.basis.run),
        "asOf": Literal(report.as_of, datatype=NamedNode(XSD + "dateTime")),
    }


def _value(row: Row, name: str) -> str | None:
    return row[name].value if name in row else None


def _coverage_rows(graphs: GraphService, report: Report) -> list[charts.RequirementCoverage]:
    """Each requirement's covered and applicable weight as of the report (``queries/coverage-by-requirement.rq``)."""
    return [
        charts.RequirementCoverage(
            _value(row, "identifier") or local_name(row["requirement"].value),
            Decimal(row["coveredWeight"].value),
            Decimal(row["applicableWeight"].value),
        )
        for row in graphs.rows("coverage-by-requirement", _bindings(report))
    ]


def _failures(graphs: GraphService, report: Report, states: dict[str, CriterionState]) -> tuple[Failure, ...]:
    attested: dict[str, dict[str, tuple[str, str, dict[str, list[str]]]]] = defaultdict(dict)
    parents: dict[str, str | None] = {}
    for row in graphs.rows("trace-failure", _bindings(report)):
        criterion, attestation = row["criterion"].value, row["attestation"].value
        parents[criterion] = _value(row, "parentRequirement")
        _, _, judges = attested[criterion].setdefault(attestation, (row["expert"].value, row["attestedAt"].value, {}))
        if "judge" in row:
            cases = judges.setdefault(row["judge"].value, [])
            if (case := _value(row, "case")) and case not in cases:
                cases.append(case)
    return tuple(
        Failure(
            states[item.criterion],
            parents.get(item.criterion),
            tuple(
                Attested(iri, expert, at, tuple((judge, tuple(cases)) for judge, cases in judges.items()))
                for iri, (expert, at, judges) in attested.get(item.criterion, {}).items()
            ),
        )
        for item in report.figures.failed
        if item.criterion in states
    )


def _drill(graphs: GraphService, report: Report, criteria: tuple[CriterionState, ...]) -> tuple[Drill, ...]:
    """Each requirement's criteria with their cases (``queries/criterion-cases.rq``) and the determinations on them
    from the judgment batches the report states it was computed from, dated no later than it
    (``case-determinations.rq``, one batch a VALUES row): the report's own, however many the record gained since."""
    cases: dict[str, dict[str, tuple[str, list[Judgment]]]] = defaultdict(dict)
    for row in graphs.rows(
        "criterion-cases", {"envelope": NamedNode(report.basis.envelope), "run": NamedNode(report.basis.run)}
    ):
        cases[row["criterion"].value].setdefault(row["case"].value, (row["probe"].value, []))
    as_of = _bindings(report)["asOf"]
    batch = f"{report.basis.evaluation}/judgments/"
    batches = [(NamedNode(s.name), as_of) for s in report.snapshots if s.name.startswith(batch)]
    for row in sorted(
        graphs.rows_over("case-determinations", ("judgments", "asOf"), batches),
        key=lambda row: row["determination"].value,
    ):
        entry = cases.get(row["criterion"].value, {}).get(row["case"].value)
        judgment = Judgment(row["outcome"].value, row["judge"].value, row["determinedAt"].value)
        if entry is not None and judgment not in entry[1]:
            entry[1].append(judgment)
    requirements: dict[str, list[CriterionState]] = defaultdict(list)
    for state in criteria:
        requirements[state.requirement].append(state)
    return tuple(
        Drill(
            requirement,
            states[0].requirement_identifier,
            states[0].requirement_statement,
            tuple(
                (
                    state,
                    tuple(
                        Case(case, probe, tuple(judgments))
                        for case, (probe, judgments) in cases.get(state.criterion, {}).items()
                    ),
                )
                for state in states
            ),
        )
        for requirement, states in requirements.items()
    )


def report_page(
    graphs: GraphService, evaluation_id: str, number: int, digests: Mapping[str, str] | None = None
) -> ReportPage:
    """The page of report ``number`` of the evaluation (404 if there is none), kept by the record's state
    (:mod:`.kept`; ``digests``: the record's graph digests when the caller has just read them): reading it costs
    about 0.7 s at 100,000 determinations (its cases, their determinations, the failures' traces). The plan's
    blocking, which reads rule labels outside the record, is read afresh (10 ms)."""
    evaluation = iris_for(graphs, evaluation_id).evaluation
    found = kept(graphs, evaluation, ("page", number), lambda: _read(graphs, evaluation_id, number), digests)
    return replace(found, blocking=tuple(frame_blocking(graphs, found.report.basis.plan)))


def _read(graphs: GraphService, evaluation_id: str, number: int) -> ReportPage:
    report = get_report(graphs, evaluation_id, number)
    criteria = criterion_states(graphs, report.basis.envelope, as_of=report.as_of, run=report.basis.run)
    by_iri = {state.criterion: state for state in criteria}
    figures = report.figures
    identifiers = {state.criterion: state.identifier for state in criteria}
    intervals = [
        charts.Interval(
            identifiers.get(rate.criterion, local_name(rate.criterion)),
            rate.passed,
            rate.judged,
            float(rate.lower or 0),
            float(rate.upper or 0),
        )
        for rate in figures.pass_rates
    ]
    level = next((float(rate.level) for rate in figures.pass_rates if rate.level is not None), 0.95)
    counts = {local_name(share.outcome): share.count for share in figures.distribution}
    weights = {local_name(share.outcome): share.weight for share in figures.distribution}
    return ReportPage(
        report=report,
        criteria=criteria,
        failures=_failures(graphs, report, by_iri),
        untested=tuple(state for state in criteria if not state.covered),
        drill=_drill(graphs, report, criteria),
        coverage_chart=charts.data_uri(charts.coverage_by_requirement(_coverage_rows(graphs, report))),
        distribution_chart=charts.data_uri(charts.outcome_distribution(counts, weights)),
        pass_rate_chart=charts.data_uri(charts.pass_rates(intervals, level)),
    )
