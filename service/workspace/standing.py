"""Where one evaluation's record stands: its stage in the lifecycle and what the stage rests on (docs/workspace.md,
"Stages"); :mod:`.records` lists from it what waits for whom.

Where a record stands is read from its milestones (``queries/workspace-milestones.rq``: DSO assessments, envelope
sign-offs, plans and their approvals, reports and their sign-offs), the runs (:func:`service.runs.records.list_runs`),
the envelope's assessments while it is not signed off (:func:`service.envelope.approvals.envelope_status`), the
attestations (:func:`service.judgments.attestations.attestations`) and who determined what (:mod:`.judged`). Every
read is bound to one evaluation and costs its milestones and runs, never its determinations (those are kept in
process and read once). Digests compared are the recorded ones; the acting operations recompute them from the content
and refuse what no longer holds, so a stage never lets a page skip a rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.namespaces import EARL
from ..core.store import Row
from ..envelope import get_evaluation, iris_for
from ..envelope.approvals import envelope_status
from ..envelope.model import EnvelopeStatus
from ..judgments.agreement import Said, envelope_threshold, instant
from ..judgments.attestations import attestations
from ..runs.records import RunView, list_runs
from ..scope.model import EnvelopeSummary, EvaluationSummary
from ..scope.records import list_evaluations
from .cases import run_cases
from .judged import judged
from .model import Stage

PASSED = EARL + "passed"
UNATTESTED = "determined, not attested"


@dataclass(frozen=True)
class PlanState:
    """A plan of the current envelope content, approved or not as the record states it."""

    iri: str
    number: int
    approved: bool


@dataclass(frozen=True)
class _Report:
    iri: str
    number: int
    run: str
    signed_off: bool
    accepted: bool


@dataclass(frozen=True)
class Standing:
    """Where one evaluation's record stands: its stage and what the stage and the waiting items rest on. Plans,
    runs and reports are those of the current envelope content (plans made on its recorded digest)."""

    summary: EvaluationSummary
    stage: Stage
    status: EnvelopeStatus | None
    """The envelope's assessments, read while it is not signed off; ``None`` otherwise or without an envelope."""
    unassessed_dso: str | None
    """The DSO whose present content no appropriateness assessment names, if any."""
    plans: tuple[PlanState, ...] = ()
    runs: tuple[RunView, ...] = ()
    reports: tuple[_Report, ...] = ()
    to_attest: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per run with determinations (IRI), the criteria waiting for an attestation and why."""
    needing: dict[int, int] = field(default_factory=dict)
    """Per run (number), its cases with a criterion waiting for a person's determination."""

    @property
    def run(self) -> RunView | None:
        """The latest run on a plan of the current envelope content: the one the stage follows."""
        return max(self.runs, key=lambda r: r.number, default=None)

    @property
    def report(self) -> _Report | None:
        """The latest report on :attr:`run`."""
        run = self.run
        return max((r for r in self.reports if run and r.run == run.iri), key=lambda r: r.number, default=None)


def standing(graphs: GraphService, summary: EvaluationSummary) -> Standing:
    """Where ``summary``'s record stands (docs/workspace.md, "Stages")."""
    rows = graphs.rows("workspace-milestones", {"evaluation": NamedNode(summary.iri)})
    unassessed = _unassessed_dso(graphs, summary.id, rows)
    envelope = summary.envelope
    if envelope is None:
        return Standing(summary, Stage.SCOPED, None, unassessed)
    if not _signed_off(rows, envelope):
        status = envelope_status(graphs, summary.id)
        return Standing(
            summary, Stage.ENVELOPE_DRAFTED if status.missing else Stage.ENVELOPE_ASSESSED, status, unassessed
        )
    plans = _plans(rows, envelope)
    current = {p.iri for p in plans}
    runs = tuple(run for run in list_runs(graphs, summary.id) if run.plan in current)
    signed = {r["item"].value for r in _kind(rows, "report-sign-off")}
    accepted = {r["item"].value for r in _kind(rows, "report-acceptance")}
    reports = tuple(
        _Report(
            r["item"].value,
            minted_number(r["item"].value),
            r["run"].value,
            r["item"].value in signed,
            r["item"].value in accepted,
        )
        for r in _kind(rows, "report")
    )
    latest, needing = _judged_runs(graphs, summary.id, runs)
    to_attest = {run: _to_attest(graphs, summary.id, run, by_criterion) for run, by_criterion in latest.items()}
    return Standing(
        summary, _stage(plans, runs, reports, to_attest), None, unassessed, plans, runs, reports, to_attest, needing
    )


def current_plans(graphs: GraphService, summary: EvaluationSummary) -> tuple[PlanState, ...]:
    """The plans made on the evaluation's current envelope content, each approved or not as the record states it
    (none before the envelope's sign-off): its milestones alone are read, not the plans' content, so that a page can
    offer the approved ones at once; running one recomputes the digests (:func:`..plan.approval.require_approved_plan`)."""
    rows = graphs.rows("workspace-milestones", {"evaluation": NamedNode(summary.iri)})
    envelope = summary.envelope
    return _plans(rows, envelope) if envelope is not None and _signed_off(rows, envelope) else ()


def _signed_off(rows: list[Row], envelope: EnvelopeSummary) -> bool:
    return any(
        r["item"].value == envelope.iri
        and r["envelopeDigest"].value == envelope.digest
        and r["outcome"].value == PASSED
        for r in _kind(rows, "envelope-sign-off")
    )


def _plans(rows: list[Row], envelope: EnvelopeSummary) -> tuple[PlanState, ...]:
    """The plans made on ``envelope``'s recorded digest, each approved when an approval names its recorded digest
    and that envelope digest."""
    approvals = {
        (r["item"].value, r["planDigest"].value)
        for r in _kind(rows, "plan-approval")
        if r["envelopeDigest"].value == envelope.digest and r["outcome"].value == PASSED
    }
    return tuple(
        PlanState(
            r["item"].value,
            minted_number(r["item"].value),
            "planDigest" in r and (r["item"].value, r["planDigest"].value) in approvals,
        )
        for r in _kind(rows, "plan")
        if r["envelopeDigest"].value == envelope.digest
    )


def _kind(rows: list[Row], kind: str) -> list[Row]:
    return [r for r in rows if r["kind"].value == kind]


def _unassessed_dso(graphs: GraphService, evaluation_id: str, rows: list[Row]) -> str | None:
    """The scope's DSO, when it exists and no appropriateness assessment names its present content."""
    dso = iris_for(graphs, evaluation_id).dso(get_evaluation(graphs, evaluation_id).scope.dso)
    entry = graphs.find_graph(dso)
    if entry is None or any(
        r["item"].value == dso and r["digest"].value == entry.digest for r in _kind(rows, "dso-assessment")
    ):
        return None
    return dso


def _judged_runs(
    graphs: GraphService, evaluation_id: str, runs: tuple[RunView, ...]
) -> tuple[dict[str, dict[str, Said]], dict[int, int]]:
    """Per run with determinations (IRI), each criterion determined there and its latest determination; and per
    run (number), its answered cases with a criterion waiting for a person: for the annotator the plan assigned it
    to, or (unassigned) for anyone, when no person and no judge trusted alone determined it."""
    cases = {run.number: run_cases(graphs, run) for run in runs}
    run_of = {case.trace: run.iri for run in runs for case in cases[run.number] if case.trace}
    threshold = envelope_threshold(graphs, evaluation_id)
    latest: dict[str, dict[str, Said]] = {}
    with judged(graphs, evaluation_id) as index:
        for (criterion, trace), pair in index.pairs.items():
            if trace in run_of and pair.latest is not None:
                by_criterion = latest.setdefault(run_of[trace], {})
                by_criterion[criterion] = max(by_criterion.get(criterion, pair.latest), pair.latest)
        trusted = index.trusted(threshold)
        needing = {
            number: sum(
                1
                for case in listed
                if case.trace
                and any(
                    case.assigned_to not in index.pair(c, case.trace).people
                    if case.assigned_to
                    else index.needs_person(c, case.trace, trusted)
                    for c in case.criteria
                )
            )
            for number, listed in cases.items()
        }
    return latest, needing


def _to_attest(graphs: GraphService, evaluation_id: str, run: str, latest: dict[str, Said]) -> dict[str, str]:
    """The criteria determined on ``run`` (each with its latest determination) that wait for an attestation, and
    why: no current attestation, or a determination newer than it."""
    current = {a.criterion: a for a in attestations(graphs, evaluation_id, run=run) if a.current}
    out = {}
    for criterion, said in latest.items():
        attested = current.get(criterion)
        if attested is None:
            out[criterion] = UNATTESTED
        elif said[0] > instant(attested.at):
            out[criterion] = "determined again since its attestation"
    return out


def _stage(
    plans: tuple[PlanState, ...],
    runs: tuple[RunView, ...],
    reports: tuple[_Report, ...],
    to_attest: dict[str, dict[str, str]],
) -> Stage:
    """The furthest stage a record with a signed-off envelope has reached (docs/workspace.md, "Stages")."""
    run = max(runs, key=lambda r: r.number, default=None)
    report = max((r for r in reports if run and r.run == run.iri), key=lambda r: r.number, default=None)
    if report is not None:
        return Stage.ACCEPTED if report.accepted else Stage.SIGNED_OFF if report.signed_off else Stage.REPORTED
    if run is not None:
        if run.cases < run.probes:
            return Stage.RUNNING
        if run.iri not in to_attest:
            return Stage.RAN
        return Stage.JUDGED if UNATTESTED in to_attest[run.iri].values() else Stage.ATTESTED
    if any(p.approved for p in plans):
        return Stage.PLAN_APPROVED
    return Stage.PLANNED if plans else Stage.ENVELOPE_SIGNED_OFF


def standings(graphs: GraphService) -> list[Standing]:
    """Where every evaluation's record stands, by identifier: what :func:`.records.evaluations_for` and
    :func:`.records.waiting_for` read, once for both on the home page (about 60 ms an evaluation at 100,000
    determinations)."""
    return [standing(graphs, summary) for summary in list_evaluations(graphs)]
