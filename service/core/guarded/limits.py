"""The limits a client's query runs under, and the errors that name them."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from ..errors import Cancelled, QueryLimitExceeded

MB = 1024 * 1024


@dataclass(frozen=True)
class QueryLimits:
    """One client query's budget: wall time, serialized answer size and (embedded store) worker memory.

    ``cancelled`` is set when nobody waits for the answer any more (the client went away).
    """

    time_s: float
    max_bytes: int
    memory_bytes: int
    cancelled: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)

    @property
    def deadline(self) -> float:
        return self.started + self.time_s

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise when the query must stop now: its client left, or its time is up."""
        if self.cancelled.is_set():
            raise Cancelled("the query was stopped: its client went away")
        if self.remaining() <= 0:
            raise self.timed_out()

    def timed_out(self) -> QueryLimitExceeded:
        return QueryLimitExceeded(
            f"the query was stopped at the time limit of {self.time_s:g} s (CAIE_QUERY_TIME_LIMIT_S); "
            "narrow it (LIMIT, more selective patterns) or ask the operator for a higher limit",
            limit="time",
            value=self.time_s,
        )

    def too_large(self) -> QueryLimitExceeded:
        return QueryLimitExceeded(
            f"the answer exceeded the result-size limit of {self.max_bytes:,} bytes (CAIE_QUERY_MAX_RESULT_BYTES) "
            "and was not sent: page it with LIMIT/OFFSET or select fewer variables",
            limit="result-size",
            value=self.max_bytes,
        )

    def out_of_memory(self) -> QueryLimitExceeded:
        return QueryLimitExceeded(
            f"the query was stopped at the memory bound of {self.memory_bytes // MB:,} MiB "
            "(CAIE_QUERY_MEMORY_LIMIT_MB): it held too many intermediate results; narrow it",
            limit="memory",
            value=self.memory_bytes // MB,
        )
