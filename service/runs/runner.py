"""Run a recorded run's pending probes against its target and record each case as it finishes.

:func:`continue_run` is both the first execution and every resumption: it reads which probes the run has
recorded (``queries/run-recorded-probes.rq``, when it has any) and the plan's probes page by page, claims batches
of the others (:mod:`.claims`: runner processes sharing the run through one store never hold the same probe),
the next while one runs, feeds their probes to :func:`.executor.execute_stream` as its workers free up, and hands
finished cases to a writer thread that records them (:func:`.cases.record_cases`: one transaction per write, a
probe recorded meanwhile left out). A runner killed at any point loses at most the cases not yet written, whose
claims lapse with their lease and which the next runner runs again; a runner that fails (a target's key missing)
hands its claims back first, so that the run can be continued at once. Nothing is recorded twice. The target must
be the run's version (409 naming both fingerprints): one run never mixes versions.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from types import MappingProxyType

from ..core.auth import require
from ..core.config import Credential
from ..core.graphs import GraphService
from ..plan.model import Probe
from .cases import RunPlan, record_cases
from .claims import claim, lease_for, release, runner_id
from .executor import CaseResult, execute_stream
from .model import Conversation, ExecutionSettings
from .records import (
    RUNNERS,
    RunView,
    plan_probe_pages,
    recorded_probes,
    require_fingerprint,
    run_view,
)
from .targets import Target

WRITE_BATCH = 128
"""Cases recorded per transaction at most (fewer when the writer keeps up with the target). A conditional write
is four requests to the store whatever its size (:mod:`..core.commits`), each linear in its graphs, so a larger
write only shares those requests; the writer's thread works while the target answers, so the batch needs to be
no larger than what arrives meanwhile."""

UNRECORDED_BATCHES = 4
"""Batches a runner holds claimed and not yet recorded at most: enough that the executor's workers never wait for
the writer's latest write to land before the next batch is claimed (with two, they waited about half the run on a
busy machine), few enough that a runner killed loses little work."""

WRITE_WAIT_S = 0.2
"""How long the writer gathers cases after the first of a write, unless :data:`WRITE_BATCH` come sooner: writing each
case as it came (three or so per write while the writer kept up) cost a read of the graphs' state and a transaction
per write, several times the work per case of writes gathered over this long (bench/runner.py: 629 writes for
2,000 cases). The run's end writes what is left at once."""

WRITER_POLL_S = 0.02
"""How often the claimer looks whether the writer has caught up enough to claim another batch."""

_LOG = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""Called with (cases recorded in this run so far, the plan's probes) after each write."""


@dataclass(frozen=True)
class Continued:
    """What one :func:`continue_run` did: the probes it ran, those it recorded, and the run afterwards."""

    ran: int
    recorded: int
    run: RunView


def continue_run(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    target: Target,
    settings: ExecutionSettings,
    credential: Credential | None,
    *,
    on_progress: Progress | None = None,
    limit: int | None = None,
    claim_size: int | None = None,
    lease: timedelta | None = None,
    poll_s: float = 1.0,
) -> Continued:
    """Run the pending probes of run ``run_number`` (at most ``limit`` of them) and record their cases.

    Probes are claimed ``claim_size`` at a time (:mod:`.claims`; by default four per concurrent conversation, at
    most the store's ``max_graphs_per_write``; the first batch no larger than the concurrency) under a lease (by
    default one that outlasts :data:`UNRECORDED_BATCHES` batches of the longest conversation of the plan's pages
    read so far, :func:`.claims.lease_for`). Further batches are claimed while one runs, so a worker that finishes
    a conversation starts the next at once, never waiting for a batch's slowest case; at most
    :data:`UNRECORDED_BATCHES` are claimed and not yet recorded. When every pending probe is held by another
    runner's live claim, this runner waits (``poll_s``) for their cases or for their leases to lapse, and ends when
    every probe has its case.
    """
    run = require_version(run_view(graphs, evaluation_id, run_number), target)
    agent = require(credential, *RUNNERS)
    size = claim_size or min(max(8, 4 * settings.concurrency), graphs.max_graphs_per_write or WRITE_BATCH)
    done = set(recorded_probes(graphs, run.iri)) if run.cases else set()  # a run with no case yet: nothing to read
    plan = _PlanReader(plan_probe_pages(graphs, evaluation_id, run.plan))
    writer = _Writer(
        graphs,
        evaluation_id,
        run_number,
        agent,
        run.cases,
        run.probes,
        on_progress,
        RunPlan(run, MappingProxyType(plan.numbers)),
    )
    claimant = runner_id()
    writer.start()
    try:
        try:
            ran = asyncio.run(
                _claimed_stream(
                    graphs,
                    evaluation_id,
                    run,
                    plan,
                    done,
                    target,
                    settings,
                    agent,
                    writer,
                    limit,
                    size,
                    lease,
                    poll_s,
                    claimant,
                )
            )
        finally:
            writer.finish()
    except BaseException:
        _hand_back(graphs, evaluation_id, run, claimant, agent)
        raise
    return Continued(ran, writer.recorded, run_view(graphs, evaluation_id, run_number))


def _hand_back(graphs: GraphService, evaluation_id: str, run: RunView, claimant: str, agent: Credential) -> None:
    """The claims of a runner that failed, handed back so that continuing the run need not wait for their leases;
    when that fails too (the store is what failed), the leases lapse as they would for a runner that died."""
    try:
        release(graphs, evaluation_id, run.number, run.iri, claimant, agent)
    except Exception:  # noqa: BLE001 - the runner's own failure is the one to raise
        _LOG.warning(
            "run %s: the claims of runner %s could not be handed back; they lapse with their leases",
            run.iri,
            claimant,
            exc_info=True,
        )


class _PlanReader:
    """The run's plan as the runner reads it: page by page in a thread, while the probes of the pages read run
    (reading a plan of 2,000 probes takes longer than claiming and starting the first of them)."""

    def __init__(self, pages: Iterator[list[Probe]]) -> None:
        self.probes: list[Probe] = []
        self.numbers: dict[str, int] = {}
        self.turns = 1
        """The most turns of a conversation read so far (a batch's lease covers its longest)."""
        self.complete = False
        self._pages = pages
        self._arrived = asyncio.Event()

    async def read(self) -> None:
        try:
            while (page := await asyncio.to_thread(next, self._pages, None)) is not None:
                self.probes += page
                self.numbers.update((p.iri, p.number) for p in page)
                self.turns = max([self.turns, *(1 + len(p.follow_ups) for p in page)])
                self._arrived.set()
        finally:
            self.complete = True
            self._arrived.set()

    async def next_page(self) -> None:
        """Return once another page was read, or the whole plan."""
        self._arrived.clear()
        await self._arrived.wait()


async def _claimed_stream(
    graphs: GraphService,
    evaluation_id: str,
    run: RunView,
    plan: _PlanReader,
    done: set[str],
    target: Target,
    settings: ExecutionSettings,
    agent: Credential,
    writer: _Writer,
    limit: int | None,
    size: int,
    lease: timedelta | None,
    poll_s: float,
    claimant: str,
) -> int:
    """Read the plan, claim batches and run their probes as workers free up, until no probe is pending (or
    ``limit`` were claimed); the probes this runner ran. ``done``: the probes recorded when the run was read, to
    which the claims add those other runners record meanwhile. Every case goes to ``writer`` as it finishes."""
    taken: set[str] = set()  # claimed by this call: never claimed or run again by it, whatever its lease says
    ready: asyncio.Queue[Conversation | None] = asyncio.Queue()

    async def claim_batches() -> None:
        try:
            while limit is None or len(taken) < limit:
                await writer.recorded_at_least(len(taken) - (UNRECORDED_BATCHES - 1) * size)
                pending = [p for p in plan.probes if p.iri not in done and p.iri not in taken]
                if not pending:
                    if plan.complete:
                        break
                    await plan.next_page()
                    continue
                # the first batch as small as the workers: they start sooner, and the next is claimed meanwhile
                take = min(size if taken else settings.concurrency, size, limit - len(taken) if limit else size)
                claimed = await asyncio.to_thread(
                    claim,
                    graphs,
                    evaluation_id,
                    run.number,
                    run.iri,
                    pending,
                    take,
                    claimant,
                    lease or lease_for(settings, UNRECORDED_BATCHES * size, plan.turns),
                    agent,
                )
                done.update(claimed.recorded)
                if not claimed.won:  # all held by other runners' live claims: wait for their cases, or their leases
                    await asyncio.sleep(poll_s)
                    continue
                taken.update(p.iri for p in claimed.won)
                for probe in claimed.won:
                    ready.put_nowait(Conversation(probe.iri, probe.opening_prompt, probe.follow_ups))
        finally:
            ready.put_nowait(None)
            reading.cancel()  # a run limited to fewer probes than the plan's needs no more pages

    async def next_case() -> Conversation | None:
        case = await ready.get()
        if case is None:
            ready.put_nowait(None)  # every worker sees the end
        return case

    try:
        async with asyncio.TaskGroup() as group:
            reading = group.create_task(plan.read())
            group.create_task(claim_batches())
            ran = group.create_task(execute_stream(next_case, target, settings, on_progress=writer.put))
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    finally:
        closing = getattr(target, "aclose", None)
        if closing is not None:
            await closing()
    return ran.result()


def require_version(run: RunView, target: Target) -> RunView:
    """``run``, when ``target`` is its version; 409 naming both fingerprints otherwise."""
    return require_fingerprint(run, target.version)


class _Writer(threading.Thread):
    """Records finished cases in batches off the event loop, so the target is never kept waiting on the store."""

    def __init__(
        self,
        graphs: GraphService,
        evaluation_id: str,
        run_number: int,
        credential: Credential | None,
        recorded_before: int,
        probes: int,
        on_progress: Progress | None,
        known: RunPlan,
    ) -> None:
        super().__init__(name=f"run-{run_number}-writer", daemon=True)
        self._args = (graphs, evaluation_id, run_number)
        self._batch = min(WRITE_BATCH, graphs.max_graphs_per_write or WRITE_BATCH)
        self._known = known
        self._credential = credential
        self._queue: queue.Queue[CaseResult | None] = queue.Queue()
        self._total, self._probes, self._on_progress = recorded_before, probes, on_progress
        self.recorded = 0
        self._handled = 0
        self.failure: BaseException | None = None

    def put(self, result: CaseResult) -> None:
        if self.failure is not None:
            raise self.failure  # stop running probes whose cases could not be recorded
        self._queue.put(result)

    async def recorded_at_least(self, cases: int) -> None:
        """Return once at least ``cases`` of the cases put here are written (or left out as recorded already);
        raise if the writer failed. Polled, so that the event loop can cancel the wait."""
        while self._handled < cases:
            if self.failure is not None:
                raise self.failure
            await asyncio.sleep(WRITER_POLL_S)

    def run(self) -> None:
        finished = False
        while not finished:
            batch = [self._queue.get()]
            until = time.monotonic() + WRITE_WAIT_S
            while len(batch) < self._batch and batch[-1] is not None:
                try:
                    batch.append(self._queue.get(timeout=max(0.0, until - time.monotonic())))
                except queue.Empty:
                    break
            finished = batch[-1] is None
            cases = [case for case in batch if case is not None]
            try:
                if cases and self.failure is None:
                    self._record(cases)
            except BaseException as error:  # noqa: BLE001 - handed to the runner's thread
                self.failure = error
            finally:
                self._handled += len(cases)  # one writer thread; readers only compare it

    def _record(self, cases: list[CaseResult]) -> None:
        written = record_cases(*self._args, cases, self._credential, known=self._known)
        self.recorded += len(written.recorded)
        self._total += len(written.recorded)
        if self._on_progress is not None:
            self._on_progress(self._total, self._probes)

    def finish(self) -> None:
        self._queue.put(None)
        self.join()
        if self.failure is not None:
            raise self.failure
