"""What a person reads on a workspace page, read for the items on that page only: criteria
(``queries/workspace-criteria.rq``), conversations (``workspace-case.rq``) and the verdicts on them
(``workspace-verdicts.rq``), each bound by VALUES to what the page shows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pyoxigraph import NamedNode

from ..core.graphs import GraphService
from ..core.namespaces import EPO
from ..core.rdf import local_name
from ..core.store import Row
from ..envelope import iris_for
from .model import CriterionText, Turn, Verdict

JUDGE_KINDS = {EPO + "HumanJudge": "person", EPO + "RuleJudge": "rule", EPO + "ModelJudge": "model"}
"""A determination's judging method (``epo:judgingMethod``) as the kind of judge."""


def criterion_texts(graphs: GraphService, evaluation_id: str, criteria: Iterable[str]) -> dict[str, CriterionText]:
    """Each of ``criteria`` (IRIs) that the evaluation's head graph states, by IRI."""
    evaluation = NamedNode(iris_for(graphs, evaluation_id).evaluation)
    rows = graphs.rows_over(
        "workspace-criteria", ("evaluation", "criterion"), [(evaluation, NamedNode(c)) for c in sorted(set(criteria))]
    )
    return {
        row["criterion"].value: CriterionText(
            row["criterion"].value,
            row["identifier"].value,
            row["statement"].value,
            row["expected"].value if "expected" in row else None,
            row["weight"].value if "weight" in row else None,
            row["dimension"].value,
            row["category"].value,
            tuple(row["concepts"].value.split()),
        )
        for row in rows
    }


def conversations(graphs: GraphService, cases: Sequence[str]) -> dict[str, tuple[str, str | None, tuple[Turn, ...]]]:
    """Each case's probe, trace (``None`` after an execution error) and turns, by case IRI."""
    found: dict[str, tuple[str, str | None, list[Turn]]] = {}
    for row in graphs.rows_over("workspace-case", ("case",), [(NamedNode(case),) for case in cases]):
        case = row["case"].value
        entry = found.setdefault(case, (row["probe"].value, row["trace"].value if "trace" in row else None, []))
        entry[2].append(Turn(int(row["turn"].value), _text(row, "input"), _text(row, "response"), _text(row, "reply")))
    return {
        case: (probe, trace, tuple(sorted(turns, key=lambda t: t.index)))
        for case, (probe, trace, turns) in found.items()
    }


def verdicts(graphs: GraphService, determinations: Iterable[str]) -> list[Verdict]:
    """The determinations named, by case, criterion, turn and time."""
    return [
        _verdict(row)
        for row in graphs.rows_over(
            "workspace-verdicts", ("determination",), [(NamedNode(d),) for d in sorted(set(determinations))]
        )
    ]


def _verdict(row: Row) -> Verdict:
    judge = row["judge"].value
    pointer = (int(row["pointerStart"].value), int(row["pointerEnd"].value)) if "pointerStart" in row else None
    return Verdict(
        row["determination"].value,
        row["criterion"].value,
        int(row["turn"].value),
        row["outcome"].value,
        row["mode"].value,
        judge,
        JUDGE_KINDS.get(row["method"].value, "person"),
        _text(row, "judgeName") or local_name(judge),
        _text(row, "version"),
        row["rationale"].value,
        pointer,
        row["at"].value,
    )


def _text(row: Row, name: str) -> str | None:
    return row[name].value if name in row else None
