"""The workspace's home: each evaluation's stage in the lifecycle and what waits for whom (docs/workspace.md).

Where a record stands is read from its milestones (``queries/workspace-milestones.rq``: DSO assessments, envelope
sign-offs, plans and their approvals, reports and their sign-offs), the runs (:func:`service.runs.records.list_runs`),
the envelope's assessments while it is not signed off (:func:`service.envelope.approvals.envelope_status`), the
attestations (:func:`service.judgments.attestations.attestations`) and who determined what (:mod:`.judged`). Every
read is bound to one evaluation and costs its milestones and runs, never its determinations (those are kept in
process and read once). Digests compared are the recorded ones; the acting operations recompute them from the content
and refuse what no longer holds, so a stage never lets a page skip a rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.namespaces import EARL
from ..core.roles import ADMIN, ANNOTATOR, DOMAIN_EXPERT, EVALUATION_OPERATOR, ORGANIZATIONAL_EXPERT
from ..core.store import Row
from ..envelope import envelope_at, get_evaluation, iris_for
from ..envelope.approvals import envelope_status
from ..envelope.model import EnvelopeStatus
from ..judgments.agreement import Said, envelope_threshold, instant
from ..judgments.attestations import attestations
from ..runs.records import RunView, list_runs
from ..scope.model import EnvelopeSummary, EvaluationSummary
from ..scope.records import list_evaluations
from .annotation import annotate_path, owed_by_run
from .cases import run_cases
from .judged import judged
from .model import EvaluationOverview, Stage, Waiting, WaitingItem
from .texts import criterion_texts

ROLES = (DOMAIN_EXPERT, ORGANIZATIONAL_EXPERT, EVALUATION_OPERATOR, ANNOTATOR)
"""The roles something can wait for, in the order a page lists them; an admin holds them all."""
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
    """Where every evaluation's record stands, by identifier: what :func:`evaluations_for` and :func:`waiting_for`
    read, once for both on the home page (about 60 ms an evaluation at 100,000 determinations)."""
    return [standing(graphs, summary) for summary in list_evaluations(graphs)]


def evaluations_for(
    graphs: GraphService, agent: str, roles: frozenset[str], read: Sequence[Standing] | None = None
) -> list[EvaluationOverview]:
    """Every evaluation ``agent`` (holding ``roles``) may see, by identifier, each with its stage and how many things
    of each kind wait in it for anyone. Reads are public, so every evaluation is listed: the parameters are where a
    deployment's rule narrows the listing. ``read``: the :func:`standings`, when the caller has them."""
    out = []
    for found in standings(graphs) if read is None else read:
        summary = found.summary
        counts = Counter[Waiting]()
        for item in _waiting(graphs, found, frozenset(ROLES), None, None, frozenset()):
            counts[item.kind] += item.count
        out.append(
            EvaluationOverview(
                summary.iri,
                summary.id,
                summary.title,
                found.stage,
                summary.envelope.version if summary.envelope else None,
                max((p.number for p in found.plans), default=None),
                found.run.number if found.run else None,
                found.report.number if found.report else None,
                tuple(sorted(counts.items(), key=lambda kv: kv[0].value)),
            )
        )
    return out


def waiting_for(
    graphs: GraphService,
    agent: str,
    roles: frozenset[str],
    languages: frozenset[str] | None,
    expertise: frozenset[str],
    read: Sequence[Standing] | None = None,
) -> list[WaitingItem]:
    """What waits for ``agent`` (their agent name) in every evaluation, by the roles they hold (an admin holds them
    all): per evaluation by identifier, then role (:data:`ROLES` order), then the kind's own order. ``languages``
    (BCP 47 tags; ``None``: not declared) and ``expertise`` (concept, dimension or category IRIs; empty: none
    declared) narrow the cases waiting for an annotator (:func:`_annotator`). ``read``: the :func:`standings`, when
    the caller has them."""
    return [
        item
        for found in (standings(graphs) if read is None else read)
        for item in waiting_here(graphs, found, agent, roles, languages, expertise)
    ]


def waiting_here(
    graphs: GraphService,
    found: Standing,
    agent: str,
    roles: frozenset[str],
    languages: frozenset[str] | None,
    expertise: frozenset[str],
) -> list[WaitingItem]:
    """What waits for ``agent`` in the one evaluation ``found`` is the standing of, as :func:`waiting_for` lists it
    (a page that read the standing already reads it once)."""
    held = frozenset(ROLES) if ADMIN in roles else roles & frozenset(ROLES)
    return _waiting(graphs, found, held, agent, languages, expertise)


def _waiting(
    graphs: GraphService,
    found: Standing,
    roles: frozenset[str],
    agent: str | None,
    languages: frozenset[str] | None,
    expertise: frozenset[str],
) -> list[WaitingItem]:
    out: list[WaitingItem] = []
    for role in ROLES:
        if role in roles:
            out += _FOR[role](graphs, found, agent, languages, expertise)
    return out


def _item(found: Standing, kind: Waiting, role: str, item: str, label: str, page: str, count: int = 1) -> WaitingItem:
    """A waiting item; ``page`` is the path under the evaluation's (``/workspace/…``), or a whole path."""
    evaluation = found.summary.id
    path = page if page.startswith("/evaluations/") else f"/evaluations/{evaluation}{page}"
    return WaitingItem(kind, role, evaluation, item, label, path, count)


def _domain_expert(graphs: GraphService, found: Standing, *_: object) -> list[WaitingItem]:
    out = []
    if found.unassessed_dso:
        out.append(
            _item(
                found,
                Waiting.DSO_APPROPRIATENESS,
                DOMAIN_EXPERT,
                found.unassessed_dso,
                f"appropriateness of the DSO {found.unassessed_dso.rsplit('/', 1)[-1]}",
                "/workspace/envelope",
            )
        )
    status = found.status
    if status is not None:
        criteria = {c.id: c for c in envelope_at(graphs, found.summary.id)[0].content.criteria}
        out += [
            _item(
                found,
                Waiting.RELEVANCE,
                DOMAIN_EXPERT,
                f"{status.envelope}/criteria/{identifier}",
                f"relevance of {identifier}: {_short(criteria[identifier].statement)}",
                "/workspace/envelope",
            )
            for identifier, outcome in status.relevance.items()
            if outcome is None and identifier in criteria
        ]
        if status.appropriate is None:
            out.append(
                _item(
                    found,
                    Waiting.ENVELOPE_APPROPRIATENESS,
                    DOMAIN_EXPERT,
                    status.envelope,
                    f"appropriateness of envelope v{status.version}",
                    "/workspace/envelope",
                )
            )
    out += [
        _item(
            found,
            Waiting.PLAN_APPROVAL,
            DOMAIN_EXPERT,
            p.iri,
            f"approval of plan {p.number}",
            f"/workspace/plans/{p.number}",
        )
        for p in found.plans
        if not p.approved
    ]
    for run in found.runs:
        waiting = found.to_attest.get(run.iri, {})
        texts = criterion_texts(graphs, found.summary.id, waiting)
        out += [
            _item(
                found,
                Waiting.ATTESTATION,
                DOMAIN_EXPERT,
                criterion,
                f"attest {texts[criterion].identifier} for run {run.number} ({why})",
                f"/workspace/criteria/{texts[criterion].identifier}?run={run.number}",
            )
            for criterion, why in sorted(waiting.items(), key=lambda kv: texts[kv[0]].identifier)
            if criterion in texts
        ]
    out += [
        _item(
            found,
            Waiting.REPORT_SIGN_OFF,
            DOMAIN_EXPERT,
            r.iri,
            f"sign-off of report {r.number}",
            f"/reports/{r.number}/page",
        )
        for r in found.reports
        if not r.signed_off
    ]
    return out


def _organizational_expert(graphs: GraphService, found: Standing, *_: object) -> list[WaitingItem]:
    out = []
    if found.status is not None and not found.status.missing and not found.status.signed_off:
        out.append(
            _item(
                found,
                Waiting.ENVELOPE_SIGN_OFF,
                ORGANIZATIONAL_EXPERT,
                found.status.envelope,
                f"sign-off of envelope v{found.status.version}",
                "/workspace/envelope",
            )
        )
    return out + [
        _item(
            found,
            Waiting.REPORT_ACCEPTANCE,
            ORGANIZATIONAL_EXPERT,
            r.iri,
            f"acceptance of report {r.number}",
            f"/reports/{r.number}/page",
        )
        for r in found.reports
        if r.signed_off and not r.accepted
    ]


def _operator(graphs: GraphService, found: Standing, *_: object) -> list[WaitingItem]:
    started = {run.plan for run in found.runs}
    out = [
        _item(
            found,
            Waiting.RUN_START,
            EVALUATION_OPERATOR,
            p.iri,
            f"start a run of plan {p.number}",
            f"/workspace/plans/{p.number}",
        )
        for p in found.plans
        if p.approved and p.iri not in started
    ]
    for run in found.runs:
        if run.errors:
            out.append(
                _item(
                    found,
                    Waiting.RUN_ERRORS,
                    EVALUATION_OPERATOR,
                    run.iri,
                    f"run {run.number}: {run.errors} execution error(s)",
                    f"/workspace/runs/{run.number}",
                    run.errors,
                )
            )
        if run.cases < run.probes:
            out.append(
                _item(
                    found,
                    Waiting.RUN_IN_PROGRESS,
                    EVALUATION_OPERATOR,
                    run.iri,
                    f"run {run.number}: {run.cases} of {run.probes} probes recorded",
                    f"/workspace/runs/{run.number}",
                )
            )
    return out


def _annotator(
    graphs: GraphService,
    found: Standing,
    agent: str | None,
    languages: frozenset[str] | None,
    expertise: frozenset[str],
) -> list[WaitingItem]:
    """Per run, the cases waiting for the annotator in languages they read; with ``expertise`` declared, those
    assigned to them or with a criterion in it (the queue lists the others after these). For anyone (``agent``
    ``None``): the cases that need a person, in any language."""
    evaluation = found.summary.id
    if agent is None:
        counts = found.needing
    else:
        owed = owed_by_run(graphs, evaluation, found.runs, agent, languages)
        texts = criterion_texts(graphs, evaluation, {c for items in owed.values() for o in items for c in o.waiting})
        counts = {
            number: sum(
                1
                for o in items
                if o.waiting
                and (not expertise or o.assigned or any(texts[c].topics & expertise for c in o.waiting if c in texts))
            )
            for number, items in owed.items()
        }
    return [
        _item(
            found,
            Waiting.ANNOTATION,
            ANNOTATOR,
            run.iri,
            f"run {run.number}: {counts[run.number]} case(s) to determine",
            annotate_path(evaluation, run.number),
            counts[run.number],
        )
        for run in found.runs
        if counts.get(run.number)
    ]


_Lister = Callable[[GraphService, Standing, str | None, frozenset[str] | None, frozenset[str]], list[WaitingItem]]
"""What waits for one role: ``(graphs, found, agent, languages, expertise)``."""
_FOR: dict[str, _Lister] = {
    DOMAIN_EXPERT: _domain_expert,
    ORGANIZATIONAL_EXPERT: _organizational_expert,
    EVALUATION_OPERATOR: _operator,
    ANNOTATOR: _annotator,
}


def _short(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
