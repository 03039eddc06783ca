"""Agreement and judge reliability on the record (issue 10 §7; docs/judgments.md, "Agreement and judge reliability").

**Between people.** Where two or more people determined the same criterion on the same response (a *unit*),
:func:`agreement` gives Krippendorff's alpha at the nominal level over EARL's four outcomes, computed by the
``krippendorff`` package from the reliability data that ``queries/agreement-units.rq`` reads: per unit, each
person's current determination (their latest on it: a person who determines a unit again corrects themselves).
Units of every criterion are pooled unless one criterion is asked for. Alpha is ``None``, with the reason, when
fewer than two units have two coders, or when every value is one outcome (no variation: alpha is 0/0).

**Automated judges against the attested outcomes** (confusion tables and their stored measurements) are
:mod:`.reliability`'s.

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

from pyoxigraph import NamedNode

from ..core.graphs import GraphService
from ..core.iris import named_node
from ..core.rdf import date_time
from ..core.store import Term
from ..envelope import DEFAULT_JUDGE_AGREEMENT, AgreementMeasure, JudgeAgreement, get_evaluation, iris_for
from ..runs.records import run_view
from .model import AUTOMATIC, CANT_TELL, FAILED, INAPPLICABLE, MANUAL, PASSED

EARL_OUTCOMES = (PASSED, FAILED, CANT_TELL, INAPPLICABLE)
"""The nominal values alpha is computed over, in the order of :attr:`Agreement.value_counts`."""


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


def agreement(graphs: GraphService, evaluation_id: str, criterion: str | None = None) -> Agreement:
    """Krippendorff's alpha (nominal) between the people who determined the same units, over every criterion or
    ``criterion`` alone; 404 for no such evaluation."""
    bindings = record_bindings(graphs, evaluation_id, criterion=criterion)
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


def record_bindings(graphs: GraphService, evaluation_id: str, **given: str | None) -> dict[str, Term]:
    """The evaluation and each named record item given, as query parameters: 404 for no such evaluation, then 400
    for an item not named by an absolute IRI."""
    get_evaluation(graphs, evaluation_id)
    bindings: dict[str, Term] = {"evaluation": NamedNode(iris_for(graphs, evaluation_id).evaluation)}
    bindings.update({name: named_node(value, f"the {name}") for name, value in given.items() if value is not None})
    return bindings


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
    bindings = record_bindings(graphs, evaluation_id, criterion=criterion)
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
        for name, term in record_bindings(graphs, evaluation_id, criterion=criterion).items()
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
