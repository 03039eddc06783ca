"""The figures a report graph states, read back by the published queries (``queries/report-figures.rq``,
``report-criteria.rq``, ``report-standings.rq``, ``report-judge-agreement.rq``), in the report's exact forms: what
:func:`.records.get_report` returns and :mod:`.verify` compares with the figures recomputed.
"""

from __future__ import annotations

from decimal import Decimal

from pyoxigraph import NamedNode

from ..core.graphs import GraphService
from ..core.rdf import local_name
from ..core.store import Row
from .model import (
    DISTRIBUTED,
    NO_INSUFFICIENT,
    Coverage,
    CriterionItem,
    ErrorCount,
    Figures,
    InsufficientShare,
    JudgeAgreementFigure,
    OutcomeShare,
    PassRate,
    Standing,
)


def text_of(row: Row, name: str) -> str | None:
    """The text of ``row``'s optional binding ``name``, ``None`` when unbound."""
    return row[name].value if name in row else None


def stored_figures(graphs: GraphService, report: str) -> Figures:
    """The figures the report graph states (``queries/report-figures.rq``, ``report-criteria.rq``)."""

    def number(row: Row, name: str) -> Decimal:
        return Decimal(row[name].value)

    def optional(row: Row, name: str) -> Decimal | None:
        return Decimal(row[name].value) if name in row else None

    rows = graphs.rows("report-figures", {"report": NamedNode(report)})
    by_metric: dict[str, list[Row]] = {}
    for row in rows:
        by_metric.setdefault(local_name(row["metric"].value), []).append(row)
    weighted = {r["weighted"].value == "true": r for r in by_metric.get("Coverage", [])}
    coverage = Coverage(
        number(weighted[True], "numerator"),
        number(weighted[True], "denominator"),
        int(weighted[False]["numerator"].value),
        int(weighted[False]["denominator"].value),
    )
    shares: dict[str, dict[bool, Row]] = {}
    for r in by_metric.get("OutcomeDistribution", []):
        shares.setdefault(r["outcome"].value, {})[r["weighted"].value == "true"] = r
    distribution = tuple(
        OutcomeShare(
            outcome,
            int(s[False]["numerator"].value),
            number(s[True], "numerator"),
            int(s[False]["denominator"].value),
            number(s[True], "denominator"),
        )
        for outcome, s in sorted(shares.items(), key=lambda item: _order(item[0]))
    )
    rates = tuple(
        sorted(
            (
                PassRate(
                    r["criterion"].value,
                    int(r["numerator"].value),
                    int(r["denominator"].value),
                    int(r["frame"].value) if "frame" in r else None,
                    optional(r, "lower"),
                    optional(r, "upper"),
                    optional(r, "level"),
                    text_of(r, "method"),
                )
                for r in by_metric.get("ProbePassRate", [])
            ),
            key=lambda p: p.criterion,
        )
    )
    errors = tuple(
        sorted(
            (
                ErrorCount(r["run"].value, text_of(r, "kind"), int(r["numerator"].value), int(r["denominator"].value))
                for r in by_metric.get("ExecutionErrorRate", [])
            ),
            key=lambda e: (e.run, e.kind or ""),
        )
    )
    failed, untested = stored_criteria(graphs, report)
    share = {r["weighted"].value == "true": r for r in by_metric.get("InsufficientEvidenceShare", [])}
    insufficient = (
        InsufficientShare(
            number(share[True], "numerator"),
            number(share[True], "denominator"),
            int(share[False]["numerator"].value),
            int(share[False]["denominator"].value),
        )
        if share
        else NO_INSUFFICIENT
    )  # a report made before it was stated
    agreements = tuple(
        JudgeAgreementFigure(
            r["judge"].value,
            r["version"].value,
            r["criterion"].value,
            r["measure"].value,
            optional(r, "value"),
            int(r["units"].value),
            r["trusted"].value == "true",
        )
        for r in graphs.rows("report-judge-agreement", {"report": NamedNode(report)})
    )
    return Figures(
        coverage,
        distribution,
        rates,
        errors,
        failed,
        untested,
        stored_standings(graphs, report),
        insufficient,
        agreements,
    )


def stored_standings(graphs: GraphService, report: str) -> tuple[Standing, ...]:
    """Each applicable criterion's outcome as the report states it (``queries/report-standings.rq``; none in a report
    made before issue 22)."""
    return tuple(
        Standing(
            r["criterion"].value,
            r["identifier"].value,
            Decimal(r["weight"].value),
            r["outcome"].value,
            text_of(r, "sufficiency"),
            text_of(r, "appropriateness"),
        )
        for r in graphs.rows("report-standings", {"report": NamedNode(report)})
    )


def stored_criteria(graphs: GraphService, report: str) -> tuple[tuple[CriterionItem, ...], tuple[CriterionItem, ...]]:
    """The failed criteria and the gaps the report names (``queries/report-criteria.rq``)."""
    named = graphs.rows("report-criteria", {"report": NamedNode(report)})

    def items(role: str) -> tuple[CriterionItem, ...]:
        return tuple(
            CriterionItem(
                r["criterion"].value, r["identifier"].value, text_of(r, "requirement"), Decimal(r["weight"].value)
            )
            for r in named
            if r["role"].value == role
        )

    return items("failed"), items("untested")


def _order(outcome: str) -> int:
    return DISTRIBUTED.index(outcome) if outcome in DISTRIBUTED else len(DISTRIBUTED)
