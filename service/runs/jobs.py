"""Runs started over REST: background jobs with a state and progress, and the targets a deployment lets them call.

A job runs :func:`.runner.continue_run` on a thread of its own; its state (running, finished, failed with the
reason) and progress live in this process, while what it recorded is in the store, so a job lost with its
process is continued by starting it again. At most one job runs per run, and at most ``max_running`` at
once (429 beyond: a caller cannot exhaust the service). A target the service calls over HTTP must be under
one of the deployment's allowed URL prefixes (``CAIE_RUN_TARGET_ALLOWLIST``, compared as parsed scheme, host, port and
path segments, user-info refused: :mod:`..core.outbound`): an operator cannot make the service call an address the
deployment did not agree to.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from ..core.catalog import now
from ..core.errors import Conflict, ServiceError, TooManyRequests, Unprocessable
from ..core.outbound import refusal
from ..core.plugins import loaded
from .model import Boundary
from .targets import OpenAICompatible, Target

if TYPE_CHECKING:  # the runner (and the plan and scenario records under it) only when a job runs: `caie load` does not
    from .runner import Continued, Progress

JobState = Literal["running", "finished", "failed"]


@dataclass(frozen=True)
class TargetSpec:
    """A target as a request names it: the demonstration chatbot, or an OpenAI-compatible endpoint whose key is in
    the service's environment variable ``api_key_env`` (never in the request or the record)."""

    kind: Literal["demo", "openai-compatible"]
    base_url: str | None = None
    model: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    system: str | None = None
    system_instructions: str | None = None
    api_key_env: str | None = None


def build_target(spec: TargetSpec, allowlist: Sequence[str], key_envs: Sequence[str] = ()) -> Target:
    """The adapter for ``spec``; 422 naming the URL when it is under none of the allowed prefixes, or the variable
    when its key would be read from one the deployment does not list (``CAIE_KEY_ENVS``)."""
    if spec.kind == "demo":
        return demo_target()
    assert spec.base_url is not None and spec.model is not None
    if spec.api_key_env is not None and spec.api_key_env not in key_envs:
        raise Unprocessable(
            f"api_key_env {spec.api_key_env!r} is not among the variables this deployment lets a target "
            f"read its key from ({', '.join(key_envs) or 'none: set CAIE_KEY_ENVS'})"
        )
    if (why := refusal(spec.base_url, allowlist)) is not None:
        raise Unprocessable(
            f"target {spec.base_url!r} is not among the targets this deployment may call: {why} "
            f"({', '.join(allowlist) or 'none: set CAIE_RUN_TARGET_ALLOWLIST'})"
        )
    try:
        return OpenAICompatible(
            spec.base_url,
            spec.model,
            spec.parameters,
            system=spec.system,
            boundary=Boundary(system_instructions=spec.system_instructions),
            api_key_env=spec.api_key_env,
        )
    except ValueError as error:  # a parameter named like a credential
        raise Unprocessable(str(error)) from None


def demo_target() -> Target:
    """The demonstration chatbot an installed domain package offers: the entry point ``demo`` of the group
    ``caie.targets``, a callable taking no argument that returns a :class:`~.targets.Target` (examples/vaccine's
    measles chatbot); 422 when no package offers one."""
    offered = [point for point in loaded("caie.targets") if point.name == "demo"]
    if not offered:
        raise Unprocessable(
            "no demonstration chatbot is installed: a domain package offers one as the entry point "
            "demo of the group caie.targets (examples/vaccine does)"
        )
    target = offered[0].value
    if not callable(target):
        raise TypeError(f"caie.targets entry point demo ({offered[0].source}) must be a callable returning a Target")
    made: Target = target()
    return made


@dataclass(frozen=True)
class Job:
    """A run's background execution as this process knows it."""

    run: str
    state: JobState
    started: datetime
    recorded: int = 0
    probes: int = 0
    ended: datetime | None = None
    error: str | None = None


class Jobs:
    """The run jobs of one service process."""

    def __init__(self, max_running: int = 4) -> None:
        self._max_running = max_running
        self._jobs: dict[str, Job] = {}
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def get(self, run: str) -> Job | None:
        with self._lock:
            return self._jobs.get(run)

    def start(self, run: str, work: Callable[[Progress], Continued]) -> Job:
        """Run ``work`` (given a progress callback) on a new thread as ``run``'s job; 409 while one runs for it,
        429 while ``max_running`` jobs run."""
        with self._lock:
            if (current := self._jobs.get(run)) is not None and current.state == "running":
                raise Conflict(f"run {run} is already running in this service: GET it for its progress")
            if sum(1 for j in self._jobs.values() if j.state == "running") >= self._max_running:
                raise TooManyRequests(
                    f"{self._max_running} runs are running here already; try again when one ends", retry_after=30
                )
            job = self._jobs[run] = Job(run, "running", now())
        thread = threading.Thread(target=self._work, args=(run, work), name=f"job {run}", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        return job

    def wait(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for every job running now to end; whether they all did (a store about to be
        closed or reused must not get a running job's writes afterwards)."""
        with self._lock:
            threads = list(self._threads)
        deadline = time.monotonic() + timeout_s
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in threads)

    def _update(self, run: str, **changes: Any) -> None:
        with self._lock:
            self._jobs[run] = replace(self._jobs[run], **changes)

    def _work(self, run: str, work: Callable[[Progress], Continued]) -> None:
        try:
            done = work(lambda recorded, probes: self._update(run, recorded=recorded, probes=probes))
        except ServiceError as error:
            self._update(run, state="failed", ended=now(), error=str(error))
        except Exception as error:  # noqa: BLE001 - a job's failure is its state, read by GET
            self._update(run, state="failed", ended=now(), error=f"{type(error).__name__}: {error}")
        else:
            self._update(run, state="finished", ended=now(), recorded=done.run.cases, probes=done.run.probes)
