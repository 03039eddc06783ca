"""One evaluation as its overview page shows it, and its reports as the reports page lists them (docs/workspace.md,
"Home" and "Sponsor and organizational expert").

The overview is what the evaluation's IRI dereferences to, read through the same domain functions the REST routes
use: the scope and envelope from the record's head graph (:func:`service.envelope.get_evaluation`), the envelope's
assessments while it is not signed off (:func:`service.envelope.approvals.envelope_status`, which the stage reads)
and, once it is, who signed it off and when (``queries/workspace-envelope-sign-off.rq``), the stage
(:func:`.records.standing`, whose milestones also give each plan's approval and each report's state), the plans
(``queries/plans.rq``) and runs, each a record with its own IRI. Every read starts from the evaluation's milestones
or a record's own IRI, so none costs the record's determinations.

A report's state is read from the record (made, signed off, accepted) and checked cheaply: the catalog digests of
the graphs it was computed from against the digests it states. A graph changed since means the report no longer
verifies; unchanged graphs mean only that: :func:`service.reports.verify.verify` recomputes every figure (seconds
on the worked example), which the page runs for one report on request and the sign-off runs before it signs.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import NamedNode

from ..core.errors import NotFound
from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.rdf import local_name
from ..envelope import get_evaluation
from ..envelope.model import EnvelopeStatus, Evaluation
from ..reports.kept import kept
from ..reports.model import Report
from ..reports.records import list_reports, record_digests
from ..runs.records import RunView, list_runs
from ..scope.records import list_evaluations
from .model import Stage
from .records import Standing, standing


@dataclass(frozen=True)
class PlanRow:
    """A plan as the overview lists it (``queries/plans.rq``); ``approved`` as the record states it for the current
    envelope content (``None``: made on other content). Approving recomputes the digests (plan.approval)."""

    iri: str
    number: int
    strategy: str
    probes: int
    envelope: str
    created_by: str
    created: str
    approved: bool | None


@dataclass(frozen=True)
class SignOffRow:
    """Who signed an envelope version off (their agent IRI) and when (``queries/envelope-sign-offs.rq``)."""

    agent: str
    at: str


@dataclass(frozen=True)
class ReportRow:
    """A report as the overview lists it: its run and :attr:`~service.reports.model.Report.status` as the record's
    milestones state them (``queries/workspace-milestones.rq``)."""

    iri: str
    number: int
    run: str
    status: str


@dataclass(frozen=True)
class EvaluationDetail:
    """An evaluation's overview: its record (scope, current envelope, versions), stage, the current envelope's
    assessments and sign-off, and every plan, run and report of the record (of earlier envelope content too)."""

    evaluation: Evaluation
    standing: Standing
    """Where the record stands (:func:`.records.standing`): its stage, and what the waiting items rest on."""
    sign_off: SignOffRow | None
    """The organizational expert's sign-off naming the current envelope's digest, once given."""
    plans: tuple[PlanRow, ...]
    runs: tuple[RunView, ...]
    """Every run of the record (the standing's are those on plans of the current envelope content)."""
    reports: tuple[ReportRow, ...]

    @property
    def stage(self) -> Stage:
        return self.standing.stage

    @property
    def status(self) -> EnvelopeStatus | None:
        """The current envelope's assessments while it is not signed off (a sign-off needs every one of them)."""
        return self.standing.status

    @property
    def relevance(self) -> dict[str, int]:
        """How the current envelope's criteria stand on relevance: passed, failed, not assessed."""
        given = list(self.status.relevance.values()) if self.status else []
        return {
            "relevant": given.count("passed"),
            "not relevant": given.count("failed"),
            "not assessed": given.count(None),
        }


def evaluation_detail(graphs: GraphService, evaluation_id: str) -> EvaluationDetail:
    """The overview of evaluation ``evaluation_id`` (404 if there is none)."""
    summary = next((s for s in list_evaluations(graphs) if s.id == evaluation_id), None)
    if summary is None:
        raise NotFound(f"no evaluation {evaluation_id!r}: GET /evaluations lists them")
    evaluation = get_evaluation(graphs, evaluation_id)
    found = standing(graphs, summary)
    sign_off = None
    if summary.envelope is not None and found.status is None:  # signed off: by whom, when
        rows = graphs.rows(
            "workspace-envelope-sign-off",
            {"evaluation": NamedNode(evaluation.iri), "envelope": NamedNode(summary.envelope.iri)},
        )
        sign_off = next(
            (
                SignOffRow(r["agent"].value, r["time"].value)
                for r in reversed(rows)
                if r["digest"].value == summary.envelope.digest
            ),
            None,
        )
    approved = {p.iri: p.approved for p in found.plans}
    plans = tuple(
        PlanRow(
            r["plan"].value,
            minted_number(r["plan"].value),
            local_name(r["strategy"].value),
            int(r["probes"].value),
            r["envelope"].value,
            r["createdBy"].value,
            r["created"].value,
            approved.get(r["plan"].value),
        )
        for r in graphs.rows("plans", {"evaluation": NamedNode(evaluation.iri)})
    )
    reports = tuple(
        ReportRow(r.iri, r.number, r.run, "final" if r.accepted else "signed" if r.signed_off else "draft")
        for r in found.reports
    )
    return EvaluationDetail(evaluation, found, sign_off, plans, tuple(list_runs(graphs, evaluation_id)), reports)


@dataclass(frozen=True)
class ReportState:
    """A report as the reports page lists it: the record's report, and the graphs it was computed from whose
    catalog digest is no longer the one it states (gone graphs among them)."""

    report: Report
    changed: tuple[str, ...]

    @property
    def unchanged(self) -> bool:
        return not self.changed


def report_states(graphs: GraphService, evaluation_id: str) -> list[ReportState]:
    """The evaluation's reports, oldest first, each with the graphs changed since it was made."""
    evaluation = get_evaluation(graphs, evaluation_id).iri  # 404 for no such evaluation
    digests = record_digests(graphs, evaluation)  # a report reads graphs of its record alone
    reports = kept(graphs, evaluation, ("reports",), lambda: list_reports(graphs, evaluation_id), digests)
    return [ReportState(r, tuple(s.name for s in r.snapshots if digests.get(s.name) != s.digest)) for r in reports]
