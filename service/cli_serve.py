"""``caie serve``'s server: uvicorn with the fast-lane fronts, ending within seconds of SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import socket
import sys
import threading
import time
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI
    from uvicorn.server import ServerState

    from .core.config import Settings
    from .core.graphs import GraphService
    from .core.guarded.fastlane import FastLane

    class _HttpProtocolClass(Protocol):
        """How uvicorn makes an HTTP protocol per connection (``uvicorn.Server.startup``)."""

        def __call__(
            self, *, config: uvicorn.Config, server_state: ServerState, app_state: dict[str, Any]
        ) -> asyncio.Protocol: ...


SHUTDOWN_GRACE_S = 3
"""After SIGTERM or SIGINT, how long in-flight requests may finish before uvicorn cancels them."""
EXIT_DEADLINE_S = 5.0
"""After the signal, the process ends by then, whatever still runs (a worker thread cannot be killed)."""


def _exit_at_deadline() -> None:
    time.sleep(EXIT_DEADLINE_S)
    print(
        f"caie: still busy {EXIT_DEADLINE_S:g} s after the stop signal; exiting anyway "
        "(each store write is one transaction, so none is left half done)",
        file=sys.stderr,
        flush=True,
    )
    os._exit(1)


def _fast_lane(app: FastAPI, config: uvicorn.Config, listener: socket.socket) -> FastLane | None:
    """The fast-lane fronts for ``GET /sparql`` (docs/performance.md), on the embedded store unless turned off."""
    from .api.fastlane import FastAnswers
    from .core.guarded.fastlane import FastLane
    from .core.guarded.limits import MB
    from .core.store import EmbeddedStore

    settings: Settings = app.state.settings
    processes = (os.cpu_count() or 1) if settings.fast_lane_processes is None else settings.fast_lane_processes
    if not processes or not isinstance(app.state.store, EmbeddedStore):
        return None
    return FastLane(
        app.state.store,
        listener,
        FastAnswers(app, config),
        probe=FastAnswers.PROBE,
        processes=processes,
        budget_s=settings.fast_lane_budget_s,
        time_limit_s=settings.query_time_limit_s,
        memory_bytes=min(settings.fast_lane_memory_mb * MB, settings.query_memory_limit_mb * MB // 2),
        bound_bytes=settings.query_memory_limit_mb * MB,
        keep_alive_s=config.timeout_keep_alive,
        ready_deadline_s=settings.front_ready_deadline_s,
    )


def _warm(graphs: GraphService, stopping: threading.Event) -> None:
    """Each evaluation's determinations read once at startup rather than by the first page (12 s at 100,000), then
    everything the process holds so far frozen out of the garbage collector's full passes (``gc.freeze``): with the
    100,000 read, a full pass took 200-250 ms in the middle of a page, 40 ms after. A frozen object is still freed
    when its last reference goes; only a cycle among frozen objects is never collected (they live as long as the
    process anyway)."""
    from .workspace.judged import warm

    warm(graphs, stopping)
    gc.freeze()


def run_until_signalled(app: FastAPI, host: str, port: int) -> None:
    """uvicorn, ending within a few seconds of SIGTERM or SIGINT even during long work.

    On the signal, the app's ``stopping`` event makes work in worker threads stop at its next checkpoint
    (:class:`service.api.deps.Cancellation`), uvicorn gives requests :data:`SHUTDOWN_GRACE_S` to finish,
    and a watchdog ends the process at :data:`EXIT_DEADLINE_S` if something still holds it. The fast-lane
    fronts accept on the listening socket made here; they are forked before uvicorn starts and stopped with it.
    """
    import uvicorn

    from .api.head_limit import bounded_httptools

    stopping: threading.Event = app.state.stopping
    # uvloop and httptools rather than asyncio and h11: half the CPU per request (docs/performance.md, SPARQL under load);
    # httptools with the request head bounded (docs/protection.md).
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        loop="uvloop",
        http=bounded_httptools(app.state.settings),
    )
    config.load()  # the fronts write uvicorn's default headers, set here
    listener = config.bind_socket()
    listener.listen(config.backlog)  # as uvicorn would in create_server: the fronts accept on it before uvicorn runs
    lane = _fast_lane(app, config, listener)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if not stopping.is_set():
                stopping.set()
                threading.Thread(target=_exit_at_deadline, name="caie exit deadline", daemon=True).start()
            super().handle_exit(sig, frame)

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            threading.Thread(
                target=_warm, args=(app.state.graphs, stopping), name="caie workspace warm-up", daemon=True
            ).start()
            if lane is not None:  # connections the fronts hand over, served as uvicorn serves those it accepts
                # uvicorn's Config types the class as a bare asyncio.Protocol; uvicorn makes it with these arguments
                protocol = cast("_HttpProtocolClass", config.http_protocol_class)
                lane.attach(
                    asyncio.get_running_loop(),
                    functools.partial(
                        protocol, config=config, server_state=self.server_state, app_state=self.lifespan.state
                    ),
                )

        async def on_tick(self, counter: int) -> bool:
            if lane is not None:
                lane.tick()
            return await super().on_tick(counter)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            if lane is not None:
                lane.stop()
                listener.close()  # uvicorn closes only the sockets it was given
            await super().shutdown(sockets)

    if lane is None:
        Server(config).run(sockets=[listener])
        return
    lane.tick()  # the first fronts, forked before uvicorn starts any thread
    try:
        # uvicorn accepts nothing itself: the fronts accept, or the lane for it while there is no front.
        Server(config).run(sockets=[])
    finally:
        lane.stop()
