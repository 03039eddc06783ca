"""Step 4 in the record: start a run on an approved plan, read runs back; its cases are written by :mod:`.cases`.

A run starts only on a plan approved now (:func:`..plan.approval.require_approved_plan`: 409 naming every
reason otherwise), by an evaluation operator, and is pinned to one target version: its fingerprint is in the
run's graph and every case's, and a case from another version is refused (409 naming both). Cases are
appended, never rewritten: each probe's case is its own graph (:mod:`.rdf`), written with a condition that
the graph does not exist yet, so a probe recorded by a resumed run, by another runner process or by a
replica is never recorded twice: :func:`.cases.record_cases` leaves it out and says so. A probe whose case ended in an
execution error may be retried (:mod:`.retries`): the retry is a new attempt, a case of the same run in a graph of
its own, and every read that counts a run's cases counts each probe's latest attempt. Every read is a query in
``queries/`` (``runs.rq``, ``run-recorded-probes.rq``, ``run-execution-errors.rq``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Triple

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.commits import ConcurrentWrite, StaleWrite
from ..core.config import Credential
from ..core.errors import Conflict, NotFound, Unprocessable
from ..core.graph_edits import GraphRef
from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.namespaces import EPO
from ..core.store import Row, Term
from ..envelope import get_evaluation, iris_for
from ..plan.approval import plan_ref, require_approved_plan
from ..plan.model import Probe
from ..plan.records import plan_size, probes_numbered
from ..scenarios.records import page_rows
from . import rdf
from .model import ExecutionSettings, TargetVersion, within_boundary

RUNNERS = ("evaluation_operator",)
PROBE_PAGE = 1000
"""Probes read per page when a runner loads its plan."""
FIRST_PROBE_PAGE = 128
"""Probes in the first page: four claims' worth at concurrency 32, read in milliseconds, so the workers start at once."""


@dataclass(frozen=True)
class RunView:
    """A run as recorded, and how far it got."""

    iri: str
    number: int
    plan: str
    plan_digest: str
    fingerprint: str
    configuration: str
    settings: str
    started_by: str
    started: str
    probes: int
    cases: int
    """The probes with a case (each counted once, however often it was retried)."""
    traces: int
    errors: int
    """The probes whose latest attempt ended in an execution error."""
    attempts: int
    """Every case recorded, retried attempts included."""

    @property
    def done(self) -> bool:
        return self.cases >= self.probes

    @property
    def retried(self) -> int:
        """The attempts a later one retried: each ended in an execution error, which stays in the record."""
        return self.attempts - self.cases


def run_ref(graphs: GraphService, evaluation_id: str, number: int) -> GraphRef:
    """The run's graph ``{evaluation}/runs/{number}`` (its IRI is the run's)."""
    return graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/runs/{number}")


def case_ref(graphs: GraphService, evaluation_id: str, run_number: int, probe_number: int) -> GraphRef:
    """The graph of the case of probe ``probe_number`` in the run (``{run}/cases/{probe number}``)."""
    return graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/runs/{run_number}/cases/{probe_number}")


def start_run(
    graphs: GraphService,
    evaluation_id: str,
    plan_number: int,
    version: TargetVersion,
    settings: ExecutionSettings,
    credential: Credential | None,
    *,
    outside_boundary: str | None = None,
) -> RunView:
    """A new run of plan ``plan_number`` against ``version``: 403 unless an evaluation operator, 404 for no such
    plan, 409 unless the plan is approved now, 422 for a target outside the scope's version boundary unless
    ``outside_boundary`` gives the operator's reason for running it anyway (then the run says so). The run's graph
    is appended on the condition that the plan's graph is still the one approved."""
    agent = require(credential, *RUNNERS)
    marked = boundary_triples(graphs, evaluation_id, version, outside_boundary)
    status = require_approved_plan(graphs, evaluation_id, plan_number)
    plan_graph = plan_ref(graphs, evaluation_id, plan_number)
    catalogued = graphs.entry(plan_graph).digest
    evaluation_iri = iris_for(graphs, evaluation_id).evaluation
    try:
        ref = graphs.append_numbered(
            graphs.member(GraphKind.EVALUATION, evaluation_id),
            "runs",
            lambda run: (
                rdf.run_triples(
                    run.iri.value,
                    evaluation_iri,
                    status.plan,
                    status.digest,
                    version,
                    settings,
                    graphs.agent_iri(agent.agent),
                    graphs.clock(),
                )
                + [Triple(run.iri, predicate, value) for predicate, value in marked]
            ),
            agent,
            title=f"run {{n}} of plan {plan_number}",
            guards={plan_graph.iri.value: catalogued},
        )
    except (ConcurrentWrite, StaleWrite):
        require_approved_plan(graphs, evaluation_id, plan_number)  # the plan changed meanwhile: say how
        raise
    return run_view(graphs, evaluation_id, int(ref.key))


def boundary_triples(
    graphs: GraphService, evaluation_id: str, version: TargetVersion, reason: str | None
) -> list[tuple[NamedNode, NamedNode | Literal]]:
    """What a run states about the scope's version boundary: nothing when ``version`` is inside it; the boundary and
    ``reason`` when the operator runs a target outside it on purpose. 422 for a target outside it with no reason,
    and for a reason given for a target inside it (a run is never marked out of scope by mistake)."""
    boundary = get_evaluation(graphs, evaluation_id).scope.test_target.version_boundary
    inside = within_boundary(version, boundary.model_release)
    given = (reason or "").strip()
    if inside and reason is not None:
        raise Unprocessable(
            f"the target's release {version.model_release!r} is inside the scope's version boundary "
            f"(modelRelease {boundary.model_release!r}): there is no outside-boundary reason to record"
        )
    if not inside and not given:
        raise Unprocessable(
            f"the target's release {version.model_release!r} ({version.system}) is outside the scope's "
            f"version boundary (modelRelease {boundary.model_release!r}): run a target of that release, "
            "or record the run as outside the boundary with a reason (outsideBoundary)"
        )
    if inside:
        return []
    return [
        (
            NamedNode(EPO + "outsideVersionBoundary"),
            NamedNode(iris_for(graphs, evaluation_id).under("target/version-boundary")),
        ),
        (NamedNode(EPO + "outsideBoundaryReason"), Literal(given)),
    ]


def list_runs(graphs: GraphService, evaluation_id: str) -> list[RunView]:
    """The evaluation's runs in the order they started (``queries/runs.rq``)."""
    evaluation = NamedNode(iris_for(graphs, evaluation_id).evaluation)
    return [_view(row) for row in graphs.rows("runs", {"evaluation": evaluation})]


def run_view(graphs: GraphService, evaluation_id: str, number: int) -> RunView:
    """Run ``number`` of the evaluation; 404 when there is none."""
    evaluation = NamedNode(iris_for(graphs, evaluation_id).evaluation)
    rows = graphs.rows("runs", {"evaluation": evaluation, "run": run_ref(graphs, evaluation_id, number).iri})
    if not rows:
        raise NotFound(
            f"evaluation {evaluation_id!r} has no run {number}: GET /evaluations/{evaluation_id}/runs lists them"
        )
    return _view(rows[0])


def require_fingerprint(run: RunView, version: TargetVersion) -> RunView:
    """``run``, when ``version`` is its target version; 409 naming both fingerprints otherwise."""
    if version.fingerprint != run.fingerprint:
        raise Conflict(
            f"run {run.number} is pinned to target version {run.fingerprint}, not "
            f"{version.fingerprint}: one run never mixes target versions; start a new run for this one"
        )
    return run


def _view(row: Row) -> RunView:
    iri = row["run"].value
    return RunView(
        iri=iri,
        number=minted_number(iri),
        plan=row["plan"].value,
        plan_digest=row["planDigest"].value,
        fingerprint=row["fingerprint"].value,
        configuration=row["configuration"].value,
        settings=row["settings"].value,
        started_by=row["startedBy"].value,
        started=row["started"].value,
        probes=int(row["probes"].value),
        cases=int(row["cases"].value),
        traces=int(row["traces"].value),
        errors=int(row["errors"].value),
        attempts=int(row["attempts"].value),
    )


@dataclass(frozen=True)
class RunError:
    """A case of a run whose reply never came, as recorded: kept apart from outcomes, never judged. ``kind`` is
    the EPO class (``epo:Timeout``, ...), ``turn`` the user turn that failed, ``attempts`` the requests made for it,
    ``status`` the HTTP status when the target answered one; ``attempt`` which attempt at the probe the case was (1
    for the first), ``retried_by`` the later attempt that retried it (``None`` while it is the probe's latest)."""

    case: str
    probe: str
    number: int
    kind: str
    message: str
    attempts: int
    turn: int
    status: int | None
    attempt: int
    retried_by: str | None


def run_errors(
    graphs: GraphService, run: str, limit: int = 50, offset: int = 0, *, latest: bool = True
) -> list[RunError]:
    """A page of the run's execution errors in probe order (``queries/run-execution-errors.rq``): those of the
    probes' latest attempts (how many: :attr:`RunView.errors`), or with ``latest=False`` those a later attempt
    retried (:attr:`RunView.retried`). 400 for a page out of bounds."""
    bindings: dict[str, Term] = {"run": NamedNode(run), "latest": Literal(latest)}
    return [
        RunError(
            case=row["case"].value,
            probe=row["probe"].value,
            number=int(row["number"].value),
            kind=row["kind"].value,
            message=row["message"].value,
            attempts=int(row["attempts"].value),
            turn=int(row["turn"].value),
            status=int(row["status"].value) if "status" in row else None,
            attempt=int(row["attempt"].value),
            retried_by=row["retriedBy"].value if "retriedBy" in row else None,
        )
        for row in page_rows(graphs, "run-execution-errors", bindings, limit, offset)
    ]


def recorded_probes(graphs: GraphService, run: str) -> dict[str, str]:
    """Probe IRI to the EPO class of its latest recorded case's end (``epo:Trace`` or ``epo:ExecutionError``)."""
    return {
        row["probe"].value: row["outcome"].value for row in graphs.rows("run-recorded-probes", {"run": NamedNode(run)})
    }


def plan_probes(graphs: GraphService, evaluation_id: str, plan: str) -> list[Probe]:
    """Every probe of the run's plan, in number order."""
    return [probe for page in plan_probe_pages(graphs, evaluation_id, plan) for probe in page]


def plan_probe_pages(graphs: GraphService, evaluation_id: str, plan: str) -> Iterator[list[Probe]]:
    """The probes of the run's plan, in number order, a page at a time, each read when asked for: a runner starts on
    the first (:data:`FIRST_PROBE_PAGE`, so that it starts at once) while it reads the others (:data:`PROBE_PAGE`)."""
    number = minted_number(plan)
    total, start, size = plan_size(graphs, evaluation_id, number), 1, FIRST_PROBE_PAGE
    while start <= total:
        page = probes_numbered(graphs, evaluation_id, number, range(start, min(start + size, total + 1)))
        if page:
            yield list(page)
        start, size = start + size, PROBE_PAGE
