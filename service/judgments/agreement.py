"""Agreement and judge reliability on the record (issue 10 §7; docs/judgments.md, "Agreement and judge reliability").

**Between people.** Where two or more people determined the same criterion on the same response (a *unit*),
:func:`agreement` gives Krippendorff's alpha at the nominal level over EARL's four outcomes, computed by the
``krippendorff`` package from the reliability data that ``queries/agreement-units.rq`` reads: per unit, each
person's current determination (their latest on it: a person who determines a unit again corrects themselves).
Units of every criterion are pooled unless one criterion is asked for. Alpha is ``None``, with the reason, when
fewer than two units have two coders, or when every value is one outcome (no variation: alpha is 0/0).

**Automated judges against the attested outcomes.** For each automated judge version and criterion on a run
whose criterion has a current attestation, :func:`judge_agreement` gives the confusion table between the judge's
outcomes on the run's responses and the attested outcome (``queries/judge-agreement.rq``), and the agreement rate:
matching / compared, where the judge's ``inapplicable`` rulings are left out of both (the judge abstained, and the
aggregation rule an attestation starts from never counts them), while an attested ``inapplicable`` is an outcome
like any other. :func:`record_judge_reliability` stores them as DQV measurements (``epo:JudgeAgreementRate``) in
one batch ``{evaluation}/judgments/{n}``; :func:`stored_judge_reliability` reads them back
(``queries/judge-reliability.rq``).

**Automated judges against people.** For each automated judge version and criterion, :func:`judge_human_agreement`
gives Cohen's kappa or Krippendorff's alpha (nominal, the envelope's ``judgeAgreement.measure``) between the judge's
latest determination and people's latest manual one on the units both determined (from the determinations
``queries/judge-human-units.rq`` lists),
with n, and whether the judge may decide alone: its coefficient at least the envelope's minimum over at least its
minimum of units. :func:`cases_needing_people` lists a run's cases no person determined and no judge trusted
alone did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal

from pyoxigraph import Literal, NamedNode, Triple

from ..core.auth import require
from ..core.catalog import GraphKind, now
from ..core.config import Credential
from ..core.errors import Unprocessable
from ..core.graphs import GraphService
from ..core.iris import named_node
from ..core.namespaces import DQV, EPO, PROV, RDF, XSD
from ..core.rdf import date_time, integer
from ..core.roles import DOMAIN_EXPERT, EVALUATION_OPERATOR
from ..core.store import Row, Term
from ..envelope import DEFAULT_JUDGE_AGREEMENT, AgreementMeasure, JudgeAgreement, get_evaluation, iris_for
from ..runs.records import run_view
from .model import AUTOMATIC, CANT_TELL, FAILED, INAPPLICABLE, MANUAL, PASSED

EARL_OUTCOMES = (PASSED, FAILED, CANT_TELL, INAPPLICABLE)
"""The nominal values alpha is computed over, in the order of :attr:`Agreement.value_counts`."""
RELIABILITY_MEASURERS = (EVALUATION_OPERATOR, DOMAIN_EXPERT)
"""The roles that may store a judge reliability measurement."""


@dataclass(frozen=True)
class AgreementUnit:
    """One column of the reliability data matrix: a criterion on a response, and each coder's outcome."""

    criterion: str
    response: str
    probe: str
    run: str
    turn: int
    outcomes: tuple[tuple[str, str], ...]
    """(coder, outcome) per person who determined the unit, by coder IRI."""


@dataclass(frozen=True)
class Agreement:
    """Krippendorff's alpha between people over the units two or more of them determined."""

    alpha: float | None
    reason: str | None
    """Why ``alpha`` is ``None``; ``None`` when it is a number."""
    units: tuple[AgreementUnit, ...]
    coders: tuple[str, ...]
    value_counts: tuple[tuple[str, int], ...]
    """(outcome, how many of the units' values are that outcome), for every EARL outcome."""
    level: str = "nominal"


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


def agreement(graphs: GraphService, evaluation_id: str, criterion: str | None = None) -> Agreement:
    """Krippendorff's alpha (nominal) between the people who determined the same units, over every criterion or
    ``criterion`` alone; 404 for no such evaluation."""
    bindings = _bindings(graphs, evaluation_id, criterion=criterion)
    cells: dict[tuple[str, str], list[tuple[str, str]]] = {}
    where: dict[tuple[str, str], tuple[str, str, int]] = {}
    for row in graphs.rows("agreement-units", bindings):
        key = (row["criterion"].value, row["response"].value)
        cells.setdefault(key, []).append((row["coder"].value, row["outcome"].value))
        where[key] = (row["probe"].value, row["run"].value, int(row["turn"].value))
    units = tuple(
        AgreementUnit(key[0], key[1], *where[key], outcomes=tuple(sorted(outcomes))) for key, outcomes in cells.items()
    )
    import krippendorff  # with numpy, a fifth of a second: imported by the first measure, not by every importer
    import numpy as np

    counts = np.array(
        [[sum(1 for _, o in unit.outcomes if o == value) for value in EARL_OUTCOMES] for unit in units], dtype=float
    ).reshape(len(units), len(EARL_OUTCOMES))
    totals = tuple((value, int(total)) for value, total in zip(EARL_OUTCOMES, counts.sum(axis=0), strict=True))
    coders = tuple(sorted({coder for unit in units for coder, _ in unit.outcomes}))
    reason = _undefined(len(units), totals)
    alpha = None if reason else float(krippendorff.alpha(value_counts=counts, level_of_measurement="nominal"))
    return Agreement(alpha, reason, units, coders, totals)


def _undefined(units: int, totals: tuple[tuple[str, int], ...]) -> str | None:
    """Why alpha cannot be computed over these units, or ``None`` when it can."""
    if units < 2:
        return (
            f"{units} unit(s) determined by two or more people: alpha needs at least 2 (a unit is a criterion on "
            "a response; have a second annotator or expert determine the same responses)"
        )
    used = [value.rsplit("#", 1)[-1] for value, total in totals if total]
    if len(used) < 2:
        return f"every value is {used[0]}: with no variation between values alpha is undefined (0/0)"
    return None


def judge_agreement(
    graphs: GraphService, evaluation_id: str, *, run: str | None = None, criterion: str | None = None
) -> list[JudgeReliability]:
    """Each automated judge version against each criterion's current attestation, computed now from the record."""
    return _grouped(graphs.rows("judge-agreement", _bindings(graphs, evaluation_id, run=run, criterion=criterion)))[0]


def _bindings(graphs: GraphService, evaluation_id: str, **given: str | None) -> dict[str, Term]:
    """The evaluation and each named record item given, as query parameters: 404 for no such evaluation, then 400
    for an item not named by an absolute IRI."""
    get_evaluation(graphs, evaluation_id)
    bindings: dict[str, Term] = {"evaluation": NamedNode(iris_for(graphs, evaluation_id).evaluation)}
    bindings.update({name: named_node(value, f"the {name}") for name, value in given.items() if value is not None})
    return bindings


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
    at, by = now(), graphs.agent_iri(agent.agent)
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
        graphs.rows("judge-reliability", _bindings(graphs, evaluation_id, run=run, criterion=criterion))
    )
    return [
        StoredReliability(first["measurement"].value, first["at"].value, first["latest"].value == "true", r)
        for r, first in zip(found, firsts, strict=True)
    ]


@dataclass(frozen=True)
class HumanAgreement:
    """One automated judge version against people on one criterion: the coefficient over the ``units`` both
    determined (``None``, with ``reason``, when undefined), and whether it may decide the criterion's cases alone."""

    judge: str
    version: str
    criterion: str
    measure: AgreementMeasure
    value: float | None
    reason: str | None
    units: int
    determined: int
    """The units the judge determined, with a person or not."""
    threshold: JudgeAgreement
    """The envelope's threshold it was held to."""

    @property
    def trusted_alone(self) -> bool:
        """At least the threshold's minimum, over at least its minimum of units."""
        t = self.threshold
        return self.value is not None and Decimal(repr(self.value)) >= t.minimum and self.units >= t.minimum_units


def judge_human_agreement(
    graphs: GraphService,
    evaluation_id: str,
    *,
    criterion: str | None = None,
    as_of: datetime | None = None,
    threshold: JudgeAgreement | None = None,
) -> list[HumanAgreement]:
    """Every automated judge version's agreement with people per criterion (module docstring), against
    ``threshold`` (the current envelope's, or its default, unless given); determinations dated after ``as_of``
    left out."""
    bindings = _bindings(graphs, evaluation_id, criterion=criterion)
    if as_of is not None:
        bindings["asOf"] = date_time(as_of)
    words = LatestWords()
    for row in graphs.rows("judge-human-units", bindings):
        words.add(
            row["criterion"].value,
            row["response"].value,
            row["mode"].value,
            (row["judge"].value, row["version"].value) if "version" in row else None,
            row["at"].value,
            row["determination"].value,
            row["outcome"].value,
        )
    return words.agreements(threshold or envelope_threshold(graphs, evaluation_id))


def envelope_threshold(graphs: GraphService, evaluation_id: str) -> JudgeAgreement:
    """The current envelope's judge agreement threshold, or the default one (docs/envelope.md)."""
    envelope = get_evaluation(graphs, evaluation_id).envelope
    return envelope.content.agreement_threshold if envelope else DEFAULT_JUDGE_AGREEMENT


Said = tuple[datetime, str, str]
"""A determination as agreement compares it: (when, its IRI, its outcome); the greater is the later word."""


@dataclass
class LatestWords:
    """Per unit (a criterion on a response), people's latest manual determination and each automated judge
    version's latest one: what :func:`judge_human_agreement` compares. Determinations may be added in any order
    and at any time (a later word replaces an earlier one: latest by date, then the greater IRI)."""

    people: dict[tuple[str, str], Said] = field(default_factory=dict)
    judged: dict[tuple[str, str, str], dict[str, Said]] = field(default_factory=dict)
    """(judge, version, criterion) to each response it determined and its latest word there."""

    def add(
        self,
        criterion: str,
        response: str,
        mode: str,
        software: tuple[str, str] | None,
        at: str,
        determination: str,
        outcome: str,
    ) -> None:
        """One determination: a person's (``mode`` earl:manual) or an automated judge version's (``software``,
        its (judge, version)); any other is left out, as semi-automatic ones are."""
        said = (instant(at), determination, outcome)
        if mode == MANUAL:
            unit = (criterion, response)
            self.people[unit] = max(self.people.get(unit, said), said)
        elif mode == AUTOMATIC and software is not None:
            by_unit = self.judged.setdefault((*software, criterion), {})
            by_unit[response] = max(by_unit.get(response, said), said)

    def agreements(self, threshold: JudgeAgreement) -> list[HumanAgreement]:
        """Each judge version's coefficient with people per criterion, over the units both determined."""
        found = []
        for key, by_unit in self.judged.items():
            compared = [
                (said[2], self.people[(key[2], response)][2])
                for response, said in by_unit.items()
                if (key[2], response) in self.people
            ]
            value, reason = coefficient(threshold.measure, compared)
            found.append(
                HumanAgreement(
                    *key,
                    measure=threshold.measure,
                    value=value,
                    reason=reason,
                    units=len(compared),
                    determined=len(by_unit),
                    threshold=threshold,
                )
            )
        return found


def instant(at: str) -> datetime:
    """An xsd:dateTime as a comparable instant (one written without a zone read as UTC)."""
    moment = datetime.fromisoformat(at)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def coefficient(measure: AgreementMeasure, compared: list[tuple[str, str]]) -> tuple[float | None, str | None]:
    """Nominal agreement between two coders over ``compared`` (one (first, second) outcome pair per unit): Cohen's
    kappa, or Krippendorff's alpha by the ``krippendorff`` package; ``None`` with the reason when undefined (fewer
    than 2 units, or one value only: 0/0)."""
    totals = tuple((value, sum((a == value) + (b == value) for a, b in compared)) for value in EARL_OUTCOMES)
    reason = _undefined(len(compared), totals)
    if reason:
        return None, reason.replace("determined by two or more people", "determined by the judge and a person")
    if measure is AgreementMeasure.KRIPPENDORFF_ALPHA:
        import krippendorff  # as in the reliability above: on first use
        import numpy as np

        codes = np.array(
            [[EARL_OUTCOMES.index(a) for a, _ in compared], [EARL_OUTCOMES.index(b) for _, b in compared]], dtype=float
        )
        return float(krippendorff.alpha(reliability_data=codes, level_of_measurement="nominal")), None
    n = len(compared)
    observed = sum(a == b for a, b in compared) / n
    expected = sum(sum(a == v for a, _ in compared) * sum(b == v for _, b in compared) for v in EARL_OUTCOMES) / (n * n)
    return (observed - expected) / (1 - expected), None


def trusted_alone(graphs: GraphService, evaluation_id: str) -> set[tuple[str, str, str]]:
    """(judge, version, criterion) of every automated judge version that may decide the criterion's cases alone now."""
    return {(a.judge, a.version, a.criterion) for a in judge_human_agreement(graphs, evaluation_id) if a.trusted_alone}


@dataclass(frozen=True)
class CaseNeedingPerson:
    """A run's case of a criterion that waits for a person's determination, and the judges that did determine it
    (none: no judge covers it; else each is not trusted alone)."""

    criterion: str
    probe: str
    case: str
    judges: tuple[tuple[str, str], ...]
    """(judge, version) of each automated judge version that determined the criterion on the case."""

    @property
    def reason(self) -> str:
        return "untrusted" if self.judges else "undetermined"


def cases_needing_people(
    graphs: GraphService, evaluation_id: str, run_number: int, criterion: str | None = None
) -> list[CaseNeedingPerson]:
    """Run ``run_number``'s cases, per criterion its plan tests, that no person determined and no judge trusted
    alone did (``queries/cases-needing-people.rq``); 404 for no such run."""
    run = run_view(graphs, evaluation_id, run_number)
    # the query reads the evaluation from the run: Virtuoso refuses it with ?evaluation bound too (its header)
    bindings = {
        name: term
        for name, term in _bindings(graphs, evaluation_id, criterion=criterion).items()
        if name != "evaluation"
    } | {"ofRun": NamedNode(run.iri)}
    trusted = trusted_alone(graphs, evaluation_id)
    judged: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    by_person: set[tuple[str, str, str]] = set()
    for row in graphs.rows("cases-needing-people", bindings):
        key = (row["criterion"].value, row["probe"].value, row["case"].value)
        judges = judged.setdefault(key, [])
        mode = row["mode"].value if "mode" in row else None
        if mode == MANUAL:
            by_person.add(key)
        elif (
            mode == AUTOMATIC
            and "version" in row
            and (found := (row["judge"].value, row["version"].value)) not in judges
        ):
            judges.append(found)
    return [
        CaseNeedingPerson(*key, judges=tuple(judges))
        for key, judges in judged.items()
        if key not in by_person and not any((judge, version, key[0]) in trusted for judge, version in judges)
    ]
