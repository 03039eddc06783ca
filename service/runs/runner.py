"""Run a recorded run's pending probes against its target and record each case as it finishes.

:func:`continue_run` is both the first execution and every resumption: it reads which probes the run has
recorded (``queries/run-recorded-probes.rq``), runs the others through :func:`.executor.execute`, and hands
finished cases to a writer thread that records them in batches (:func:`.records.record_cases`: one
transaction each, a probe recorded meanwhile by another runner left out). A runner killed at any point
loses at most the cases not yet written, which the next :func:`continue_run` runs again; nothing is recorded
twice. The target must be the run's version (409 naming both fingerprints): one run never mixes versions.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ..core.config import Credential
from ..core.errors import Conflict
from ..core.graphs import GraphService
from .executor import CaseResult, execute
from .model import Conversation, ExecutionSettings
from .records import RunView, plan_probes, record_cases, recorded_probes, run_view
from .targets import Target

WRITE_BATCH = 32
"""Cases recorded per transaction (fewer when the runner is waiting on the target)."""

Progress = Callable[[int, int], None]
"""Called with (cases recorded in this run so far, the plan's probes) after each write."""


@dataclass(frozen=True)
class Continued:
    """What one :func:`continue_run` did: the probes it ran, those it recorded, and the run afterwards."""

    ran: int
    recorded: int
    run: RunView


def continue_run(graphs: GraphService, evaluation_id: str, run_number: int, target: Target,
                 settings: ExecutionSettings, credential: Credential | None, *,
                 on_progress: Progress | None = None, limit: int | None = None) -> Continued:
    """Run the pending probes of run ``run_number`` (at most ``limit`` of them) and record their cases."""
    run = require_version(run_view(graphs, evaluation_id, run_number), target)
    done = recorded_probes(graphs, run.iri)
    pending = [Conversation(p.iri, p.opening_prompt) for p in plan_probes(graphs, evaluation_id, run.plan)
               if p.iri not in done][:limit]
    writer = _Writer(graphs, evaluation_id, run_number, credential, len(done), run.probes, on_progress)
    writer.start()
    try:
        asyncio.run(_execute(pending, target, settings, writer.put))
    finally:
        writer.finish()
    return Continued(len(pending), writer.recorded, run_view(graphs, evaluation_id, run_number))


def require_version(run: RunView, target: Target) -> RunView:
    """``run``, when ``target`` is its version; 409 naming both fingerprints otherwise."""
    if target.version.fingerprint != run.fingerprint:
        raise Conflict(f"run {run.number} is pinned to target version {run.fingerprint}, not "
                       f"{target.version.fingerprint}: one run never mixes target versions; start a new run for this one")
    return run


async def _execute(cases: list[Conversation], target: Target, settings: ExecutionSettings,
                   on_result: Callable[[CaseResult], None]) -> None:
    closing = getattr(target, "aclose", None)
    try:
        await execute(cases, target, settings, on_progress=on_result)
    finally:
        if closing is not None:
            await closing()


class _Writer(threading.Thread):
    """Records finished cases in batches off the event loop, so the target is never kept waiting on the store."""

    def __init__(self, graphs: GraphService, evaluation_id: str, run_number: int, credential: Credential | None,
                 recorded_before: int, probes: int, on_progress: Progress | None) -> None:
        super().__init__(name=f"run-{run_number}-writer", daemon=True)
        self._args = (graphs, evaluation_id, run_number)
        self._credential = credential
        self._queue: queue.Queue[CaseResult | None] = queue.Queue()
        self._total, self._probes, self._on_progress = recorded_before, probes, on_progress
        self.recorded = 0
        self.failure: BaseException | None = None

    def put(self, result: CaseResult) -> None:
        if self.failure is not None:
            raise self.failure  # stop running probes whose cases could not be recorded
        self._queue.put(result)

    def run(self) -> None:
        finished = False
        while not finished:
            batch = [self._queue.get()]
            while len(batch) < WRITE_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            finished = batch[-1] is None
            cases = [case for case in batch if case is not None]
            if cases and self.failure is None:
                try:
                    written = record_cases(*self._args, cases, self._credential)
                except BaseException as error:  # noqa: BLE001 - handed to the runner's thread
                    self.failure = error
                    continue
                self.recorded += len(written.recorded)
                self._total += len(written.recorded)
                if self._on_progress is not None:
                    self._on_progress(self._total, self._probes)

    def finish(self) -> None:
        self._queue.put(None)
        self.join()
        if self.failure is not None:
            raise self.failure
