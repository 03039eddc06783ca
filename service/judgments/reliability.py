"""Automated judges against the attested outcomes (issue 10 §7; docs/judgments.md, "Agreement and judge
reliability").

For each automated judge version and criterion on a run whose criterion has a current attestation,
:func:`judge_agreement` gives the confusion table between the judge's outcomes on the run's responses and the
attested outcome (``queries/judge-agreement.rq``), and the agreement rate: matching / compared, where the judge's
``inapplicable`` rulings are left out of both (the judge abstained, and the aggregation rule an attestation starts
from never counts them), while an attested ``inapplicable`` is an outcome like any other.
:func:`record_judge_reliability` stores them as DQV measurements (``epo:JudgeAgreementRate``) in one batch
``{evaluation}/judgments/{n}``; :func:`stored_judge_reliability` reads them back (``queries/judge-reliability.rq``).
Agreement between people, and of judges with people, is :mod:`.agreement`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import Literal, NamedNode, Triple

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import Unprocessable
from ..core.graphs import GraphService
from ..core.namespaces import DQV, EPO, PROV, RDF, XSD
from ..core.rdf import integer
from ..core.roles import DOMAIN_EXPERT, EVALUATION_OPERATOR
from ..core.store import Row
from ..envelope import iris_for
from ..runs.records import run_view
from .agreement import record_bindings
from .model import INAPPLICABLE

RELIABILITY_MEASURERS = (EVALUATION_OPERATOR, DOMAIN_EXPERT)
"""The roles that may store a judge reliability measurement."""


@dataclass(frozen=True)
class ConfusionCell:
    """How many responses the judge gave ``judge_outcome`` while the criterion's attested outcome was ``attested_outcome``."""

    judge_outcome: str
    attested_outcome: str
    responses: int


@dataclass(frozen=True)
class JudgeReliability:
    """One automated judge version against one criterion's current attestation for one run."""

    judge: str
    version: str
    criterion: str
    run: str
    attestation: str
    cells: tuple[ConfusionCell, ...]

    @property
    def compared(self) -> int:
        """The responses the rate counts: every cell but the judge's ``inapplicable`` ones."""
        return sum(c.responses for c in self.cells if c.judge_outcome != INAPPLICABLE)

    @property
    def matching(self) -> int:
        return sum(
            c.responses for c in self.cells if c.judge_outcome == c.attested_outcome and c.judge_outcome != INAPPLICABLE
        )

    @property
    def rate(self) -> float | None:
        """matching / compared; ``None`` when the judge ruled only ``inapplicable``."""
        return self.matching / self.compared if self.compared else None


@dataclass(frozen=True)
class StoredReliability:
    """A judge reliability measurement as stored, and whether it is the latest for its judge version, criterion and run."""

    measurement: str
    at: str
    latest: bool
    reliability: JudgeReliability


def judge_agreement(
    graphs: GraphService, evaluation_id: str, *, run: str | None = None, criterion: str | None = None
) -> list[JudgeReliability]:
    """Each automated judge version against each criterion's current attestation, computed now from the record."""
    return _grouped(
        graphs.rows("judge-agreement", record_bindings(graphs, evaluation_id, run=run, criterion=criterion))
    )[0]


def _grouped(rows: list[Row]) -> tuple[list[JudgeReliability], list[Row]]:
    """Rows of judge-agreement.rq or judge-reliability.rq, one per confusion cell, as one
    :class:`JudgeReliability` per judge version, criterion, run, attestation (and stored measurement), in row
    order; and each one's first row."""
    groups: dict[tuple[str, ...], list[Row]] = {}
    for row in rows:
        key = tuple(row[name].value for name in ("judge", "version", "criterion", "run", "attestation"))
        key += (row["measurement"].value,) if "measurement" in row else ()
        groups.setdefault(key, []).append(row)
    found = [
        JudgeReliability(
            judge,
            version,
            criterion,
            run,
            attestation,
            cells=tuple(
                ConfusionCell(row["judgeOutcome"].value, row["attestedOutcome"].value, int(row["responses"].value))
                for row in group
            ),
        )
        for (judge, version, criterion, run, attestation, *_), group in groups.items()
    ]
    return found, [group[0] for group in groups.values()]


def record_judge_reliability(
    graphs: GraphService, evaluation_id: str, run_number: int, credential: Credential | None
) -> list[StoredReliability]:
    """Store run ``run_number``'s judge reliability (every automated judge version on every criterion with a
    current attestation) as DQV measurements in one batch. 401/403 unless an evaluation operator or domain
    expert; 404 for no such run; 422 when there is nothing to compare."""
    agent = require(credential, *RELIABILITY_MEASURERS)
    run = run_view(graphs, evaluation_id, run_number)
    measured = judge_agreement(graphs, evaluation_id, run=run.iri)
    if not measured:
        raise Unprocessable(
            f"run {run_number} has no automated determination on a criterion with a current "
            "attestation: judge it and attest first (POST …/rule-judgments, POST …/attestations)"
        )
    evaluation = iris_for(graphs, evaluation_id).evaluation
    at, by = graphs.clock(), graphs.agent_iri(agent.agent)
    ref = graphs.append_numbered(
        graphs.member(GraphKind.EVALUATION, evaluation_id),
        "judgments",
        lambda batch: [
            t
            for k, r in enumerate(measured, start=1)
            for t in measurement_triples(f"{batch.iri.value}/measurements/{k}", evaluation, r, by, at.isoformat())
        ],
        agent,
        title=f"judgments {{n}}: {len(measured)} judge reliability measurement(s) on run {run_number}",
    )
    return [
        StoredReliability(f"{ref.iri.value}/measurements/{k}", at.isoformat(), True, r)
        for k, r in enumerate(measured, start=1)
    ]


def measurement_triples(iri: str, evaluation: str, measured: JudgeReliability, by: str, at: str) -> list[Triple]:
    """One judge reliability measurement with its confusion cells (``{iri}/cells/{k}``); ``dqv:value`` only when
    the rate is defined (``epo:numerator`` and ``epo:denominator`` always)."""
    node = NamedNode(iri)

    def say(subject: NamedNode, term: str, value: NamedNode | Literal) -> Triple:
        return Triple(subject, NamedNode(term), value)

    out = [
        say(node, RDF + "type", NamedNode(DQV + "QualityMeasurement")),
        say(node, EPO + "inEvaluation", NamedNode(evaluation)),
        say(node, DQV + "isMeasurementOf", NamedNode(EPO + "JudgeAgreementRate")),
        say(node, DQV + "computedOn", NamedNode(measured.judge)),
        say(node, EPO + "judgeVersion", Literal(measured.version)),
        say(node, EPO + "forCriterion", NamedNode(measured.criterion)),
        say(node, EPO + "forRun", NamedNode(measured.run)),
        say(node, PROV + "wasDerivedFrom", NamedNode(measured.attestation)),
        say(node, EPO + "numerator", integer(measured.matching)),
        say(node, EPO + "denominator", integer(measured.compared)),
        say(node, PROV + "wasAttributedTo", NamedNode(by)),
        say(node, PROV + "generatedAtTime", Literal(at, datatype=NamedNode(XSD + "dateTime"))),
    ]
    if measured.compared:
        exact = format(Decimal(measured.matching) / Decimal(measured.compared), "f")
        out.append(say(node, DQV + "value", Literal(exact, datatype=NamedNode(XSD + "decimal"))))
    for k, c in enumerate(measured.cells, start=1):
        cell = NamedNode(f"{iri}/cells/{k}")
        out += [
            say(node, EPO + "confusionCell", cell),
            say(cell, RDF + "type", NamedNode(EPO + "ConfusionCell")),
            say(cell, EPO + "judgeOutcome", NamedNode(c.judge_outcome)),
            say(cell, EPO + "attestedOutcome", NamedNode(c.attested_outcome)),
            say(cell, EPO + "responseCount", integer(c.responses)),
        ]
    return out


def stored_judge_reliability(
    graphs: GraphService, evaluation_id: str, *, run: str | None = None, criterion: str | None = None
) -> list[StoredReliability]:
    """The judge reliability measurements stored in the evaluation's record, oldest first."""
    found, firsts = _grouped(
        graphs.rows("judge-reliability", record_bindings(graphs, evaluation_id, run=run, criterion=criterion))
    )
    return [
        StoredReliability(first["measurement"].value, first["at"].value, first["latest"].value == "true", r)
        for r, first in zip(found, firsts, strict=True)
    ]
