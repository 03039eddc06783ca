"""Reports in the record: made from one run's figures (:func:`service.metrics.records.evaluation_metrics`, dated
now), appended as the graph ``{evaluation}/reports/{n}`` and never rewritten; read back by the published queries
(``queries/reports.rq``, ``report-figures.rq``, ``report-criteria.rq``, ``report-texts.rq``,
``report-provenance.rq``); the figures a report graph states are read by :mod:`.figures`.

A report states the digests of the graphs it read (the evaluation's head graph, the run's plan, the run and its
cases, every judgment batch) and of the metric query files, so :mod:`.verify` can tell what changed. Its write
is guarded on the digests of the head, plan, run and judgment graphs it read: if any moved meanwhile, 409 and
nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from decimal import Decimal

from pyoxigraph import NamedNode, Triple

from .. import __version__
from ..core import queries
from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import NotFound, Unprocessable
from ..core.graph_edits import GraphRef
from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.rdf import date_time, local_name
from ..core.roles import DOMAIN_EXPERT, EVALUATION_OPERATOR
from ..core.store import Row
from ..envelope import get_evaluation, iris_for
from ..metrics.model import EvaluationMetrics
from ..metrics.records import evaluation_metrics, scope_for
from ..runs.records import RunView, run_view
from . import evidence, rdf
from .figures import stored_figures, text_of
from .model import (
    FITNESS,
    Basis,
    Coverage,
    CriterionItem,
    Digested,
    ErrorCount,
    Figures,
    JudgeUsed,
    OutcomeShare,
    PassRate,
    Report,
    ScopeFacts,
    SignOff,
    Statement,
    bound,
)

REPORTERS = (EVALUATION_OPERATOR, DOMAIN_EXPERT)
"""The roles that make (draft) reports."""

METRIC_QUERIES = (
    "coverage",
    "outcome-distribution",
    "pass-rate-counts",
    "gaps",
    "failures",
    "execution-errors",
    "run-judges",
    "run-boundary",
    *evidence.EVIDENCE_QUERIES,
)
"""The published queries a report's figures and judges come from; their digests are recorded with it."""


def figures_of(metrics: EvaluationMetrics, run: RunView) -> Figures:
    """The report's figures from the metric values, in the report's exact forms."""
    c, d = metrics.coverage, metrics.distribution
    return Figures(
        coverage=Coverage(c.covered_weight, c.applicable_weight, c.covered, c.applicable),
        distribution=tuple(OutcomeShare(s.outcome, s.criteria, s.weight, d.criteria, d.weight) for s in d.shares),
        pass_rates=tuple(
            PassRate(
                p.criterion,
                p.passed,
                p.judged,
                p.frame,
                bound(p.interval.lower) if p.interval else None,
                bound(p.interval.upper) if p.interval else None,
                Decimal(str(p.interval.level)) if p.interval else None,
                p.interval.method if p.interval else None,
            )
            for p in sorted(metrics.pass_rates, key=lambda p: p.criterion)
        ),
        errors=(
            ErrorCount(run.iri, None, sum(e.errors for e in metrics.execution_errors if e.run == run.iri), run.cases),
            *(
                ErrorCount(e.run, e.kind, e.errors, run.cases)
                for e in sorted(metrics.execution_errors, key=lambda e: (e.run, e.kind))
            ),
        ),
        failed=tuple(
            CriterionItem(f.criterion, f.identifier or local_name(f.criterion), f.requirement, f.weight)
            for f in metrics.failures
        ),
        untested=tuple(
            CriterionItem(g.criterion, g.identifier or local_name(g.criterion), g.requirement, g.weight)
            for g in metrics.gaps
        ),
    )


def compute_figures(
    graphs: GraphService, evaluation_id: str, run: RunView, as_of: datetime, envelope: str | None = None
) -> tuple[EvaluationMetrics, Figures]:
    """What the metric queries give now for ``run``, counting what is dated no later than ``as_of``, over the
    envelope version ``envelope`` (its IRI, ``…/envelope/v{n}``: a report's own) or else the current one."""
    version = None if envelope is None else int(envelope.rsplit("/v", 1)[-1])
    metrics = evaluation_metrics(graphs, evaluation_id, as_of=as_of, run=run.number, envelope_version=version)
    scope = scope_for(graphs, evaluation_id, as_of=as_of, run=run.number, envelope_version=version)
    return metrics, replace(
        figures_of(metrics, run),
        standings=evidence.standings(graphs, scope),
        insufficient=evidence.insufficient_share(graphs, scope),
        agreements=evidence.agreements(graphs, evaluation_id, scope, as_of),
    )


def record_digests(graphs: GraphService, evaluation: str) -> dict[str, str]:
    """Every graph of the evaluation's record with its catalog digest (``queries/record-graphs.rq``)."""
    rows = graphs.rows("record-graphs", {"catalog": graphs.catalog_graph, "record": NamedNode(evaluation)})
    return {row["graph"].value: row["digest"].value for row in rows}


def snapshots(graphs: GraphService, evaluation: str, run: RunView) -> tuple[Digested, ...]:
    """The graphs a report reads, with their catalog digests: the head, the run's plan, the run and its cases,
    the judgment batches (:func:`record_digests`)."""

    def read(graph: str) -> bool:
        return graph in (evaluation, run.plan, run.iri) or graph.startswith(
            (f"{run.iri}/cases/", f"{evaluation}/judgments/")
        )

    return tuple(
        sorted(
            (Digested(graph, digest) for graph, digest in record_digests(graphs, evaluation).items() if read(graph)),
            key=lambda d: d.name,
        )
    )


def _scope(graphs: GraphService, evaluation_id: str) -> ScopeFacts:
    iris, scope = iris_for(graphs, evaluation_id), get_evaluation(graphs, evaluation_id).scope
    t, method = scope.test_target, scope.method
    return ScopeFacts(
        target=iris.under("target"),
        target_name=t.name,
        target_kind=t.kind,
        version_boundary=iris.under("target/version-boundary"),
        model_release=t.version_boundary.model_release,
        configuration=t.version_boundary.configuration,
        use_boundary=iris.under("use-boundary"),
        use_statement=scope.use_boundary.statement,
        method=iris.under("method") if method else None,
        method_name=method.name if method else None,
        method_version=method.version if method else None,
    )


def _judges(graphs: GraphService, evaluation: str, run: str, as_of: datetime) -> tuple[JudgeUsed, ...]:
    rows = graphs.rows(
        "run-judges", {"evaluation": NamedNode(evaluation), "ofRun": NamedNode(run), "asOf": date_time(as_of)}
    )
    return tuple(JudgeUsed(row["judge"].value, row["version"].value if "version" in row else None) for row in rows)


def make_report(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    limitations: Sequence[str],
    recommendations: Sequence[str],
    fitness: str,
    credential: Credential | None,
) -> Report:
    """A draft report on run ``run_number``, dated now, as stored (limitations and recommendations are sets, in text
    order). 401/403 unless an evaluation operator or domain expert;
    404 for no such evaluation or run; 422 for an unknown fitness, an empty text, or fit to deploy while a
    criterion failed (caie-spec S8)."""
    agent = require(credential, *REPORTERS)
    problems = [] if fitness in FITNESS else [f"fitness must be one of {', '.join(FITNESS)}, not {fitness!r}"]
    problems += [
        f"{what} {k} is empty"
        for what, texts in (("limitation", limitations), ("recommendation", recommendations))
        for k, text in enumerate(texts, start=1)
        if not text.strip()
    ]
    if problems:
        raise Unprocessable("; ".join(problems), detail=problems)
    run = run_view(graphs, evaluation_id, run_number)
    evaluation = iris_for(graphs, evaluation_id).evaluation
    as_of = graphs.clock()
    read = snapshots(graphs, evaluation, run)
    metrics, figures = compute_figures(graphs, evaluation_id, run, as_of)
    if fitness == "FitToDeploy" and figures.failed:
        failed = ", ".join(item.identifier for item in figures.failed)
        raise Unprocessable(
            f"fit to deploy rests on no failed criterion (caie-spec S8), but {failed} failed: "
            "recommend FitWithConditions or NotFit"
        )
    tested = json.loads(run.configuration)
    outside = graphs.rows("run-boundary", {"run": NamedNode(run.iri)})
    basis = Basis(
        evaluation=evaluation,
        run=run.iri,
        plan=run.plan,
        plan_digest=run.plan_digest,
        envelope=metrics.envelope,
        envelope_digest=metrics.envelope_digest,
        target_fingerprint=run.fingerprint,
        scope=_scope(graphs, evaluation_id),
        judges=_judges(graphs, evaluation, run.iri, as_of),
        evaluator_version=__version__,
        tested_system=tested["system"],
        tested_release=tested["model_release"],
        outside_boundary=outside[0]["reason"].value if outside else None,
    )
    statement = Statement(tuple(sorted(set(limitations))), tuple(sorted(set(recommendations))), FITNESS[fitness])

    def build(ref: GraphRef) -> list[Triple]:
        iri = ref.iri.value
        return rdf.report_triples(
            Report(
                iri=iri,
                number=minted_number(iri),
                as_of=as_of.isoformat(),
                author=graphs.agent_iri(agent.agent),
                basis=basis,
                figures=figures,
                statement=statement,
                snapshots=read,
                queries=tuple(Digested(name, queries.digest(name)) for name in sorted(METRIC_QUERIES)),
            )
        )

    guarded = {d.name: d.digest for d in read if "/cases/" not in d.name}
    ref = graphs.append_numbered(
        graphs.member(GraphKind.EVALUATION, evaluation_id),
        "reports",
        build,
        agent,
        title=f"report {{n}} on run {run_number}",
        guards=guarded,
    )
    return get_report(graphs, evaluation_id, int(ref.key))  # as stored


def list_reports(graphs: GraphService, evaluation_id: str) -> list[Report]:
    """The evaluation's reports, oldest first."""
    evaluation = iris_for(graphs, evaluation_id).evaluation
    return [_report(graphs, row) for row in graphs.rows("reports", {"evaluation": NamedNode(evaluation)})]


def get_report(graphs: GraphService, evaluation_id: str, number: int) -> Report:
    """Report ``number`` of the evaluation (404 if there is none)."""
    return _report(graphs, report_row(graphs, evaluation_id, number))


def report_row(graphs: GraphService, evaluation_id: str, number: int) -> Row:
    """Report ``number``'s row of ``queries/reports.rq`` (404 if there is none): its date, basis and scope without
    its figures and provenance, which on a large run list thousands of graph digests."""
    evaluation = iris_for(graphs, evaluation_id).evaluation
    iri = f"{evaluation}/reports/{number}"
    rows = graphs.rows("reports", {"evaluation": NamedNode(evaluation), "report": NamedNode(iri)})
    if not rows:
        raise NotFound(
            f"evaluation {evaluation_id!r} has no report {number}: GET /evaluations/{evaluation_id}/reports lists them"
        )
    return rows[0]


def _sign_off(row: Row, kind: str, node: str, by: str, at: str, comment: str) -> SignOff | None:
    if node not in row:
        return None
    return SignOff(row[node].value, kind, row[by].value, row[at].value, text_of(row, comment))


def _report(graphs: GraphService, row: Row) -> Report:
    iri = row["report"].value
    bound_report = {"report": NamedNode(iri)}
    provenance = graphs.rows("report-provenance", bound_report)
    scope = ScopeFacts(
        target=row["target"].value,
        target_name=row["targetName"].value,
        target_kind=row["targetKind"].value,
        version_boundary=row["boundary"].value,
        model_release=row["release"].value,
        configuration=row["configuration"].value,
        use_boundary=row["use"].value,
        use_statement=row["useStatement"].value,
        method=text_of(row, "method"),
        method_name=text_of(row, "methodName"),
        method_version=text_of(row, "methodVersion"),
    )
    basis = Basis(
        evaluation=iri.rsplit("/reports/", 1)[0],
        run=row["run"].value,
        plan=row["plan"].value,
        plan_digest=row["planDigest"].value,
        envelope=row["envelope"].value,
        envelope_digest=row["envelopeDigest"].value,
        target_fingerprint=row["fingerprint"].value,
        scope=scope,
        judges=tuple(JudgeUsed(p["name"].value, text_of(p, "value")) for p in provenance if p["kind"].value == "judge"),
        evaluator_version=row["evaluatorVersion"].value,
    )
    [target] = graphs.rows("report-target", bound_report) or [{}]
    basis = replace(
        basis,
        tested_system=text_of(target, "system") or "",
        tested_release=text_of(target, "release") or "",
        outside_boundary=text_of(target, "reason"),
    )
    texts = graphs.rows("report-texts", bound_report)
    return Report(
        iri=iri,
        number=minted_number(iri),
        as_of=row["asOf"].value,
        author=row["author"].value,
        basis=basis,
        figures=stored_figures(graphs, iri),
        statement=Statement(
            tuple(t["text"].value for t in texts if t["kind"].value == "limitation"),
            tuple(t["text"].value for t in texts if t["kind"].value == "recommendation"),
            row["fitness"].value,
        ),
        snapshots=tuple(Digested(p["name"].value, p["value"].value) for p in provenance if p["kind"].value == "graph"),
        queries=tuple(Digested(p["name"].value, p["value"].value) for p in provenance if p["kind"].value == "query"),
        sign_off=_sign_off(row, "sign-off", "signOff", "signedBy", "signedAt", "signComment"),
        acceptance=_sign_off(row, "acceptance", "acceptance", "acceptedBy", "acceptedAt", "acceptComment"),
    )
