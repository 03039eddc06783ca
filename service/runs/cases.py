"""A run's cases written: each probe's case its own graph, written only if absent, so never recorded twice
(:func:`record_cases`); a run whose replies were collected elsewhere, written with all its cases in one transaction
(:func:`record_imported_run`). Runs are started and read in :mod:`.records`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.commits import ConcurrentWrite, StaleWrite
from ..core.config import Credential
from ..core.errors import Conflict, Unprocessable
from ..core.graph_edits import GraphEdit
from ..core.graphs import GraphService
from ..envelope import iris_for
from ..plan.approval import plan_ref, require_approved_plan
from . import rdf
from .model import CaseTrace, ExecutionError, TargetVersion
from .records import RUNNERS, RunView, case_ref, plan_probes, run_view


@dataclass(frozen=True)
class Recorded:
    """What one :func:`record_cases` call wrote: the cases recorded, and the probes left out because a case for
    them was already in the record (recorded earlier, or by another runner meanwhile)."""

    recorded: tuple[str, ...]
    already: tuple[str, ...]


@dataclass(frozen=True)
class RunPlan:
    """A run and its plan's probe numbers by IRI: what recording a case checks against, read once per runner (a
    runner reading its plan page by page passes a view that grows as it reads: it records only probes it took from
    pages it has read)."""

    run: RunView
    numbers: Mapping[str, int]

    @staticmethod
    def read(graphs: GraphService, evaluation_id: str, run_number: int) -> RunPlan:
        run = run_view(graphs, evaluation_id, run_number)
        return RunPlan(run, MappingProxyType({p.iri: p.number for p in plan_probes(graphs, evaluation_id, run.plan)}))


def record_cases(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    results: Sequence[CaseTrace | ExecutionError],
    credential: Credential | None,
    *,
    known: RunPlan | None = None,
) -> Recorded:
    """Append the cases of ``results`` to run ``run_number``, in one transaction; a probe whose case is already
    in the record is left out (never recorded twice) and returned in ``already``. ``known``: the run and its
    plan's probes as the caller read them (a runner recording many writes reads them once; a plan is never
    changed, so they cannot go stale).

    403 unless an evaluation operator; 404 for no such run; 422 naming every probe that is not the run's plan's
    or is given twice; 409 naming both fingerprints for a case from another target version than the run's.
    """
    agent = require(credential, *RUNNERS)
    known = known or RunPlan.read(graphs, evaluation_id, run_number)
    run, numbers = known.run, known.numbers
    if problems := _probe_problems(results, numbers, run.plan):
        raise Unprocessable("; ".join(problems), detail=problems)
    foreign = sorted({r.target for r in results if r.target != run.fingerprint})
    if foreign:
        raise Conflict(
            f"run {run_number} is pinned to target version {run.fingerprint}; cases from "
            f"{', '.join(foreign)} belong to another run (one run never mixes target versions)"
        )
    edits = _case_edits(graphs, evaluation_id, run_number, run.iri, results, numbers)
    written = write_absent(graphs, edits, agent, f"run {run_number}")
    return Recorded(
        tuple(r.probe for r, e in zip(results, edits) if e.ref.iri.value in written),
        tuple(r.probe for r, e in zip(results, edits) if e.ref.iri.value not in written),
    )


def write_absent(graphs: GraphService, edits: Sequence[GraphEdit], agent: Credential, what: str) -> set[str]:
    """Write ``edits``, each a new graph written only if still absent, in one transaction; a graph written meanwhile
    (by another runner, or before a restart) is left out and the others written. The IRIs of the graphs written."""
    pending = list(edits)
    for _ in range(5):
        if not pending:
            return set()
        try:
            graphs.apply_edits(pending, agent)
        except StaleWrite as stale:  # recorded meanwhile: leave them out
            taken = set(stale.graphs)
            pending = [edit for edit in pending if edit.ref.iri.value not in taken]
            continue
        except ConcurrentWrite:
            continue  # another runner was writing one of these at the same moment: try again
        return {edit.ref.iri.value for edit in pending}
    raise Conflict(f"{what}: too many concurrent writes of the same cases; retry")


def _probe_problems(
    results: Sequence[CaseTrace | ExecutionError],
    numbers: Mapping[str, int],
    plan: str,
    where: Mapping[str, str] | None = None,
) -> list[str]:
    """What is wrong with the probes ``results`` name: not the plan's (with ``where[probe]``, where the caller's
    file gives it), or given twice."""
    given = Counter(r.probe for r in results)
    located = where or {}
    unknown = [probe + (f" ({located[probe]})" if probe in located else "") for probe in given if probe not in numbers]
    problems = [f"not probes of {plan}: {', '.join(unknown)}"] if unknown else []
    return problems + [f"given twice: {probe}" for probe, count in given.items() if count > 1]


def _case_edits(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    run: str,
    results: Sequence[CaseTrace | ExecutionError],
    numbers: Mapping[str, int],
) -> list[GraphEdit]:
    """Each result as its case graph ``{run}/cases/{probe number}``, to be written only if absent."""
    edits = []
    for result in results:
        case = case_ref(graphs, evaluation_id, run_number, numbers[result.probe])
        edits.append(
            GraphEdit(
                case,
                insert=rdf.case_triples(case.iri.value, run, result),
                expected_digest=None,
                title=f"case of probe {numbers[result.probe]} in run {run_number}",
                batch_of=run,
            )
        )
    return edits


def record_imported_run(
    graphs: GraphService,
    evaluation_id: str,
    plan_number: int,
    version: TargetVersion,
    results: Sequence[CaseTrace | ExecutionError],
    source: rdf.ImportSource,
    credential: Credential | None,
    *,
    where: Mapping[str, str] | None = None,
) -> RunView:
    """A run of plan ``plan_number`` whose replies were collected elsewhere (``source``): the run and every case
    of ``results`` written in one transaction, so that a refusal or a failed write leaves no run behind.

    Checked before anything is written: 403 unless an evaluation operator; 404 for no such plan; 409 unless the
    plan is approved now (and the write holds only while its graph is the one approved); 422 naming every probe
    that is not the plan's, with ``where[probe]`` (where the file gives it), or is given twice; 422 for a case
    answered by another target version than ``version`` (one run never mixes versions).
    """
    agent = require(credential, *RUNNERS)
    status = require_approved_plan(graphs, evaluation_id, plan_number)
    plan_graph = plan_ref(graphs, evaluation_id, plan_number)
    catalogued = graphs.entry(plan_graph).digest
    numbers = {p.iri: p.number for p in plan_probes(graphs, evaluation_id, status.plan)}
    problems = _probe_problems(results, numbers, status.plan, where)
    foreign = sorted({r.target for r in results} - {version.fingerprint})
    problems += (
        [
            (
                f"cases answered by target version {', '.join(foreign)}, not the import's {version.fingerprint} "
                "(one run never mixes target versions)"
            )
        ]
        if foreign
        else []
    )
    if not results or problems:
        raise Unprocessable(
            "; ".join(problems) or "nothing to import: no case answered or failed", detail=problems or None
        )
    evaluation = graphs.member(GraphKind.EVALUATION, evaluation_id)
    for _ in range(5):
        ref = graphs.next_batch(evaluation, "runs")
        number = int(ref.key)
        run = ref.iri.value
        triples = rdf.run_triples(
            run,
            iris_for(graphs, evaluation_id).evaluation,
            status.plan,
            status.digest,
            version,
            None,
            graphs.agent_iri(agent.agent),
            graphs.clock(),
        ) + rdf.source_triples(run, source)
        edits = [
            GraphEdit(
                ref,
                insert=triples,
                expected_digest=None,
                batch_of=evaluation.iri.value,
                title=f"run {number} of plan {plan_number}, imported from {source.label}",
            )
        ]
        edits += _case_edits(graphs, evaluation_id, number, run, results, numbers)
        try:
            graphs.apply_edits(edits, agent, guards={plan_graph.iri.value: catalogued})
        except (ConcurrentWrite, StaleWrite):
            require_approved_plan(graphs, evaluation_id, plan_number)  # a plan changed meanwhile: 409 saying so
            continue  # another run took the number meanwhile
        return run_view(graphs, evaluation_id, number)
    raise Conflict(f"could not number a new run of evaluation {evaluation_id!r}: too many concurrent starts; retry")
