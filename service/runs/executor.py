"""Runs probes against one target: multi-turn conversations, bounded and paced, with timeouts and retries.

:func:`execute` takes the conversations and a single :class:`~.targets.Target` (so one call never mixes
target versions) and returns, in the order given, a :class:`~.model.CaseTrace` for each conversation that
was answered to the end, or an :class:`~.model.ExecutionError` for one whose reply never came. Only
transient failures (timeouts, 5xx, 429, connection errors) are tried again; a 4xx or a malformed body is
not, since the same request would fail the same way. Nothing here writes the record: the caller does.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from .model import CaseTrace, Conversation, Exchange, ExecutionError, ExecutionSettings, Turn
from .targets import Target, TargetFailure

CaseResult = CaseTrace | ExecutionError
ProgressCallback = Callable[[CaseResult], None]
"""Called once per conversation as it finishes (in finishing order), e.g. to advance a progress bar."""


class RequestSpacing:
    """At most ``rate_per_s`` request starts a second: each start takes the next free slot, ``1 / rate_per_s``
    after the one before (a token bucket holding one token), and waits for it.

    ``clock`` and ``sleep`` are the monotonic clock and the sleep to use (a test may pass simulated ones).
    """

    def __init__(
        self,
        rate_per_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not rate_per_s > 0:
            raise ValueError(f"rate_per_s must be above 0, not {rate_per_s!r}")
        self._interval = 1.0 / rate_per_s
        self._clock = clock
        self._sleep = sleep
        self._next_slot = float("-inf")

    async def wait_turn(self) -> None:
        # No await between reading and moving the next slot: concurrent callers each get their own slot.
        now = self._clock()
        slot = max(now, self._next_slot)
        self._next_slot = slot + self._interval
        if slot > now:
            await self._sleep(slot - now)


async def execute(
    cases: Sequence[Conversation],
    target: Target,
    settings: ExecutionSettings | None = None,
    *,
    on_progress: ProgressCallback | None = None,
) -> list[CaseResult]:
    """Run every conversation against ``target``; one result per conversation, in the order of ``cases``.

    As :func:`execute_stream`, with ``min(concurrency, len(cases))`` workers taking the conversations in turn.
    """
    settings = settings or ExecutionSettings()
    _refuse_duplicates(cases)
    results: dict[str, CaseResult] = {}
    queue = iter(cases)

    async def next_case() -> Conversation | None:
        return next(queue, None)

    def collect(result: CaseResult) -> None:
        results[result.probe] = result
        if on_progress is not None:
            on_progress(result)

    await execute_stream(
        next_case, target, settings, on_progress=collect, workers=min(settings.concurrency, len(cases))
    )
    return [results[case.probe] for case in cases if case.probe in results]


async def execute_stream(
    next_case: Callable[[], Awaitable[Conversation | None]],
    target: Target,
    settings: ExecutionSettings,
    *,
    on_progress: ProgressCallback,
    workers: int | None = None,
) -> int:
    """Run the conversations ``next_case`` gives (``None``: no more) against ``target`` as they come; how many ran.

    ``workers`` (by default ``concurrency``) workers each ask for a conversation as soon as they are free, so
    at most that many requests are in flight and none waits for a slower conversation to end; each result is
    handed to ``on_progress`` as it finishes. A worker sends each user turn with all earlier turns and replies,
    and stops a conversation at its first turn that fails for good. A probe given twice is refused
    (``ValueError``). An exception that is not a :class:`~.targets.TargetFailure` (a missing credential, a bug,
    one raised by ``on_progress``) stops the whole call and is raised.
    """
    fingerprint = target.version.fingerprint
    spacing = RequestSpacing(settings.rate_per_s) if settings.rate_per_s else None
    seen: set[str] = set()

    async def worker() -> None:
        while (case := await next_case()) is not None:
            if case.probe in seen:
                raise ValueError(f"a probe may run once per call, but this one comes more than once: {case.probe}")
            seen.add(case.probe)
            on_progress(await _converse(case, target, fingerprint, settings, spacing))

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(settings.concurrency if workers is None else workers):
                group.create_task(worker())
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return len(seen)


def _refuse_duplicates(cases: Sequence[Conversation]) -> None:
    repeated = sorted(probe for probe, count in Counter(case.probe for case in cases).items() if count > 1)
    if repeated:
        raise ValueError(f"a probe may run once per call, but these come more than once: {', '.join(repeated)}")


async def _converse(
    case: Conversation, target: Target, fingerprint: str, settings: ExecutionSettings, spacing: RequestSpacing | None
) -> CaseResult:
    turns: list[Turn] = []
    exchanges: list[Exchange] = []
    for number, text in enumerate(case.user_turns, start=1):
        turns.append(Turn(role="user", text=text))
        outcome = await _request(target, tuple(turns), settings, spacing)
        if isinstance(outcome, Exchange):
            exchanges.append(outcome)
            turns.append(Turn(role="assistant", text=outcome.text))
            continue
        failure, attempts = outcome
        return ExecutionError(
            probe=case.probe,
            target=fingerprint,
            kind=failure.kind,
            message=failure.message,
            attempts=attempts,
            turn=number,
            status=failure.status,
            turns=tuple(turns[:-1]),
        )
    return CaseTrace(probe=case.probe, target=fingerprint, turns=tuple(turns), exchanges=tuple(exchanges))


async def _request(
    target: Target, turns: tuple[Turn, ...], settings: ExecutionSettings, spacing: RequestSpacing | None
) -> Exchange | tuple[TargetFailure, int]:
    """The reply to ``turns``, or the failure that ended the tries and how many requests were made."""
    attempt = 1
    while True:
        if spacing is not None:
            await spacing.wait_turn()
        try:
            async with asyncio.timeout(settings.timeout_s):
                exchange = await target.reply(turns)
            return replace(exchange, attempts=attempt)
        except TimeoutError:
            failure = TargetFailure("timeout", f"no reply within {settings.timeout_s} s", transient=True)
        except TargetFailure as caught:
            failure = caught
        if not failure.transient or attempt > settings.retries:
            return failure, attempt
        attempt += 1
        await asyncio.sleep(
            min(settings.max_backoff_s, max(settings.backoff_before(attempt), failure.retry_after_s or 0.0))
        )
