"""Retry a run's execution errors: each probe whose latest case in the run ended in one (the target timed out,
answered 5xx, refused the connection) is sent again to the run's own target version, and its new case is recorded as
a new attempt in the same run, next to the earlier one.

The record stays append-only and truthful (docs/decisions.md, "Retrying execution errors"). A retry is the graph
``{run}/retries/{k}``: who asked, when, with which execution settings (:func:`.rdf.retry_triples`). Each attempt is a
case graph of its own, ``{run}/cases/{probe number}/attempts/{k}``, whose conversation ``epo:retries`` the attempt
before and is ``epo:inRetry`` the retry; it is written only if absent (:func:`.cases.write_absent`), so two retries
of one attempt never both land, and the earlier case is never rewritten. Only an attempt that ended in an execution
error is retried, so a probe has at most one trace in a run; every read that counts a run's cases counts each probe's
latest attempt, the one no other retries (``queries/runs.rq``, ``execution-errors.rq``, ``run-recorded-probes.rq``).

A retry runs the errors as they stood when it started, in batches, by one runner (no claims): a run has one job at a
time in a service (:class:`.jobs.Jobs`), so a retry and a continuation of the same run never run there at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import Conflict
from ..core.graph_edits import GraphEdit, GraphRef
from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.namespaces import EPO
from ..plan.records import probes_numbered
from . import rdf
from .cases import write_absent
from .executor import CaseResult, execute
from .model import Conversation, ExecutionSettings, TargetVersion
from .records import RUNNERS, RunView, require_fingerprint, run_ref, run_view
from .runner import WRITE_BATCH, Continued, Progress
from .targets import Target


@dataclass(frozen=True)
class Errored:
    """A probe whose latest attempt in the run ended in an execution error: what a retry sends again."""

    probe: str
    number: int
    case: str
    attempt: int


@dataclass(frozen=True)
class RetryView:
    """A retry as recorded: who asked and when, its settings (canonical JSON), the attempts it recorded and how many
    of them were answered to the end."""

    iri: str
    number: int
    by: str
    at: str
    settings: str
    attempts: int
    traces: int


def attempt_ref(graphs: GraphService, evaluation_id: str, run_number: int, probe_number: int, attempt: int) -> GraphRef:
    """The graph of attempt ``attempt`` (2 or more) at probe ``probe_number`` in the run."""
    return graphs.member(
        GraphKind.EVALUATION, f"{evaluation_id}/runs/{run_number}/cases/{probe_number}/attempts/{attempt}"
    )


def errored(graphs: GraphService, run: RunView) -> list[Errored]:
    """The run's probes whose latest attempt ended in an execution error, in probe order
    (``queries/run-recorded-probes.rq``)."""
    rows = graphs.rows("run-recorded-probes", {"run": NamedNode(run.iri)}) if run.errors else []
    found = [
        Errored(row["probe"].value, minted_number(row["probe"].value), row["case"].value, int(row["attempt"].value))
        for row in rows
        if row["outcome"].value == EPO + "ExecutionError"
    ]
    return sorted(found, key=lambda e: e.number)


def retryable(
    graphs: GraphService, evaluation_id: str, run_number: int, version: TargetVersion, credential: Credential | None
) -> tuple[RunView, list[Errored]]:
    """Run ``run_number`` and its errors to retry against ``version``: 403 unless an evaluation operator, 404 for no
    such run, 409 naming both fingerprints unless ``version`` is the run's, 409 when no probe's latest attempt ended
    in an execution error (nothing to retry)."""
    require(credential, *RUNNERS)
    run = require_fingerprint(run_view(graphs, evaluation_id, run_number), version)
    found = errored(graphs, run)
    if not found:
        left = (
            f"; its {run.probes - run.cases} probes with no case yet are continued, not retried" if not run.done else ""
        )
        raise Conflict(
            f"run {run_number} has no execution error to retry: the latest attempt of each of its "
            f"{run.cases} recorded probes was answered{left}"
        )
    return run, found


def retry_errors(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    target: Target,
    settings: ExecutionSettings,
    credential: Credential | None,
    *,
    on_progress: Progress | None = None,
) -> Continued:
    """Send the run's errored probes (:func:`retryable`, with its refusals) again to ``target``, the run's version:
    the retry is recorded first (who, when, ``settings``), then each new attempt as its batch finishes.
    ``on_progress`` gets (attempts recorded, attempts to make) after each batch."""
    agent = require(credential, *RUNNERS)
    run, found = retryable(graphs, evaluation_id, run_number, target.version, credential)
    plan_number = minted_number(run.plan)
    probes = {p.iri: p for p in probes_numbered(graphs, evaluation_id, plan_number, [e.number for e in found])}
    retry = graphs.append_numbered(
        run_ref(graphs, evaluation_id, run_number),
        "retries",
        lambda ref: rdf.retry_triples(ref.iri.value, run.iri, settings, graphs.agent_iri(agent.agent), graphs.clock()),
        agent,
        title=f"retry {{n}} of run {run_number}",
    ).iri.value
    size = min(max(8, 4 * settings.concurrency), graphs.max_graphs_per_write or WRITE_BATCH)

    async def run_batches() -> int:
        recorded = 0
        try:
            for start in range(0, len(found), size):
                batch = found[start : start + size]
                conversations = [
                    Conversation(e.probe, probes[e.probe].opening_prompt, probes[e.probe].follow_ups) for e in batch
                ]
                results = await execute(conversations, target, settings)
                recorded += await asyncio.to_thread(
                    _record_attempts, graphs, evaluation_id, run, retry, batch, results, agent
                )
                if on_progress is not None:
                    on_progress(recorded, len(found))
        finally:
            closing = getattr(target, "aclose", None)
            if closing is not None:
                await closing()
        return recorded

    recorded = asyncio.run(run_batches())
    return Continued(len(found), recorded, run_view(graphs, evaluation_id, run_number))


def _record_attempts(
    graphs: GraphService,
    evaluation_id: str,
    run: RunView,
    retry: str,
    batch: Sequence[Errored],
    results: Sequence[CaseResult],
    agent: Credential,
) -> int:
    """Each result as the next attempt at its probe, in one transaction; an attempt another retry recorded meanwhile
    is left out. How many were written."""
    edits = []
    for errored_case, result in zip(batch, results):
        number = errored_case.attempt + 1
        ref = attempt_ref(graphs, evaluation_id, run.number, errored_case.number, number)
        iri = ref.iri.value
        edits.append(
            GraphEdit(
                ref,
                insert=rdf.case_triples(iri, run.iri, result)
                + rdf.attempt_triples(iri, number, errored_case.case, retry),
                expected_digest=None,
                title=f"attempt {number} at probe {errored_case.number} in run {run.number}",
                batch_of=run.iri,
            )
        )
    return len(write_absent(graphs, edits, agent, f"run {run.number}"))


def list_retries(graphs: GraphService, run: str) -> list[RetryView]:
    """The run's retries, oldest first (``queries/run-retries.rq``)."""
    return [
        RetryView(
            iri=row["retry"].value,
            number=minted_number(row["retry"].value),
            by=row["by"].value,
            at=row["at"].value,
            settings=row["settings"].value,
            attempts=int(row["attempts"].value),
            traces=int(row["traces"].value),
        )
        for row in graphs.rows("run-retries", {"run": NamedNode(run)})
    ]
