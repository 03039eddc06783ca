"""Fast-lane fronts: plain ``GET /sparql`` lookups answered on every core, beside the main process (issue 8).

One Python process cannot parse and write HTTP fast enough for point lookups (docs/performance.md, "SPARQL
queries under load"), and only one process may open the embedded store read-write. So ``caie serve`` forks
*fronts*: processes that share the store as of their fork (copy-on-write, like the query workers) and accept
connections on the main process's own listening socket (the kernel gives each connection to one accepting
process; the main process accepts itself only while no front is ready to, :class:`FastLane`). A front takes a
connection request by request. It *peeks* at each request (``MSG_PEEK``) and asks
its :data:`Answer` callback for the complete answer; only with the answer ready does it consume the request
and write. Anything the callback does not answer, it hands over, unconsumed, to the main process
(``SCM_RIGHTS`` over a socketpair made before the fork), which serves that connection from then on: every
error and every other answer is the main process's own.

Protections:

- **Freshness**: a front answers from its fork-time copy, so it compares the store's shared generation
  (:meth:`EmbeddedStore.published_generation`, bumped before a write's answer is sent) with its own before
  and after each answer; once the store has moved on, it hands every connection over and exits. The main
  process forks fresh fronts lazily (:meth:`FastLane.tick`), while no write is in progress.
- **Limits**: a front runs one query at a time, watched by a thread. A request that has run, or waited on
  something, for its budget (``CAIE_FAST_LANE_BUDGET_S``; time spent waiting for a core on a loaded machine
  does not count, but the query time limit bounds it all), or whose process grew past the memory threshold, is
  handed over unconsumed (the main process runs it under the full guard, with its limits and errors) and the
  front exits, its runaway thread with it. pyoxigraph releases the GIL while it evaluates and serializes, so
  the watchdog runs meanwhile; ``RLIMIT_AS`` at the query workers' bound is the backstop.
- **Readiness**: a fresh front answers a probe request, then says so over its socketpair; only then does it
  accept, and only then does the main process stop accepting itself. A front not ready within
  ``CAIE_FRONT_READY_DEADLINE_S`` of its fork is killed (it holds no connection yet) and another forked. A fork
  can inherit a RocksDB mutex that one of the engine's background threads held at that instant (a compaction
  after a restart's recovery, say); the front's first query then waits on it for ever, holding the GIL
  (pyoxigraph takes its snapshot before it releases it), so the front's own watchdog thread never runs.
- **Lifetime**: fronts die with the main process (``PR_SET_PDEATHSIG``, and end-of-file on the socketpair),
  stop on SIGTERM, close every inherited socket but the listener and their socketpair
  (:func:`.workers.close_inherited`), and never write to the store.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from ..store import EmbeddedStore
from .front import READY, STOP_S, Answer, Front
from .workers import FORKING

_LOGGER = logging.getLogger("uvicorn.error")


@dataclass(eq=False)
class _Process:
    pid: int
    channel: socket.socket
    """The main process's end of the socketpair: connections handed over arrive here."""
    forked: float = field(default_factory=time.monotonic)
    ready: bool = False
    """It answered its probe (it said so over the socketpair): it accepts connections from then on."""
    status: int | None = None


class FastLane:
    """The main process's side: forks the fronts, receives the connections they hand over, forks fresh ones.

    The main process accepts connections itself only while no front is ready to (after a write, until fresh
    fronts are forked and answered their probe): a connection it accepted would be its own for good, served at
    its own, higher cost. A front not ready within ``ready_deadline_s`` of its fork is killed and replaced.
    """

    def __init__(
        self,
        store: EmbeddedStore,
        listener: socket.socket,
        answer: Answer,
        *,
        probe: bytes,
        processes: int,
        budget_s: float,
        time_limit_s: float,
        memory_bytes: int,
        bound_bytes: int,
        keep_alive_s: float,
        ready_deadline_s: float,
    ) -> None:
        """``probe``: a request head every fresh front answers before it accepts; ``memory_bytes``: the threshold
        past which a front hands a query over; ``bound_bytes``: its ``RLIMIT_AS`` backstop above its size;
        ``ready_deadline_s``: how long after its fork a front may take to answer its probe."""
        self._store = store
        # Non-blocking for every process accepting on it (the flag belongs to the socket, which the fronts share):
        # of the fronts woken for one connection, all but one find none, and must go back to their own connections.
        # uvicorn binds it blocking; a front blocked in accept() left its connections' requests unread until the
        # next connection came, and a stale front answered nothing meanwhile and did not leave.
        listener.setblocking(False)
        self._listener = listener
        self._wanted = processes
        self._ready_deadline_s = ready_deadline_s
        self._front = functools.partial(
            Front,
            listener=listener,
            store=store,
            answer=answer,
            probe=probe,
            budget_s=min(budget_s, time_limit_s),
            wall_s=time_limit_s,
            memory_bytes=memory_bytes,
            bound_bytes=bound_bytes,
            keep_alive_s=keep_alive_s,
        )
        self._processes: list[_Process] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._protocol: Callable[[], asyncio.Protocol] | None = None
        self._tasks: set[asyncio.Task[object]] = set()
        self._stopped = False
        self._accepting = False

    @property
    def pids(self) -> list[int]:
        """The fronts running now (a front that ended has closed its end of the socketpair)."""
        return [process.pid for process in self._running()]

    def _running(self) -> list[_Process]:
        return [process for process in self._processes if process.status is None and process.channel.fileno() >= 0]

    def attach(self, loop: asyncio.AbstractEventLoop, protocol: Callable[[], asyncio.Protocol]) -> None:
        """Serve handed-over connections in ``loop`` with ``protocol``, an :class:`asyncio.Protocol` factory (the
        one ``caie serve`` gives uvicorn), through asyncio's ``connect_accepted_socket``."""
        self._loop, self._protocol = loop, protocol
        for process in self._processes:
            loop.add_reader(process.channel, self._receive, process)
        self._accept_while_alone()

    def tick(self) -> None:
        """Reap fronts that ended, kill those not ready by their deadline, and fork fresh ones, unless a write is in
        progress (then at a later tick)."""
        overdue = time.monotonic() - self._ready_deadline_s  # a front forked before this and not ready is late
        for process in self._processes:
            if process.status is None:
                pid, status = os.waitpid(process.pid, os.WNOHANG)
                if pid:
                    process.status = status
                elif not process.ready and process.forked < overdue and process.channel.fileno() >= 0:
                    # Hung before it accepted anything (docs/protection.md, "The fast lane"): it holds no connection.
                    _LOGGER.warning(
                        "fast-lane front %d not ready %g s after its fork: killed, another forked",
                        process.pid,
                        self._ready_deadline_s,
                    )
                    os.kill(process.pid, signal.SIGKILL)
                    self._close_channel(process)  # no longer counted: replaced below; reaped at a later tick
        self._processes = [p for p in self._processes if p.status is None or p.channel.fileno() >= 0]
        missing = self._wanted - len(self.pids)
        if missing > 0 and not self._stopped:
            self._fork(missing)
        self._accept_while_alone()

    def stop(self) -> None:
        """SIGTERM every front and reap it (SIGKILL after :data:`STOP_S`)."""
        self._stopped = True
        self._accept_while_alone()
        deadline = time.monotonic() + STOP_S
        for process in self._processes:
            if process.status is None:
                os.kill(process.pid, signal.SIGTERM)
        for process in self._processes:
            while process.status is None:
                pid, status = os.waitpid(process.pid, os.WNOHANG)
                if pid:
                    process.status = status
                elif time.monotonic() > deadline:
                    os.kill(process.pid, signal.SIGKILL)
                    process.status = os.waitpid(process.pid, 0)[1]
                else:
                    time.sleep(0.01)
            self._close_channel(process)

    def _fork(self, count: int) -> None:
        """Fork ``count`` fronts, unless a query worker is being forked or a write is in progress (then at a later
        tick). The locks are taken in the order the query workers take them, FORKING then the write lock, and
        without waiting: the other order deadlocked against a worker forked meanwhile, stopping the event loop."""
        if not FORKING.acquire(blocking=False):
            return
        try:
            paused = self._store.writes_paused()
            if not paused.acquire(blocking=False):
                return
            try:
                for _ in range(count):
                    self._fork_one()
            finally:
                paused.release()
        finally:
            FORKING.release()

    def _fork_one(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                self._front(channel=theirs, generation=self._store.generation).run()
            except BaseException:  # noqa: BLE001 - said, then the front ends; it never returns into the parent's code
                traceback.print_exc()
            finally:
                os._exit(1)
        theirs.close()
        ours.setblocking(False)
        process = _Process(pid, ours)
        self._processes.append(process)
        if self._loop is not None:
            self._loop.add_reader(ours, self._receive, process)

    def _receive(self, process: _Process) -> None:
        """Connections a front handed over, to uvicorn as if it had accepted them; end-of-file when the front ends."""
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(process.channel, 1, 16)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                message, fds = b"", []
            for fd in fds:
                self._serve(socket.socket(fileno=fd))
            if message == READY:
                process.ready = True
                self._accept_while_alone()
            elif not message:
                self._close_channel(process)
                self._accept_while_alone()
                return

    def _accept_while_alone(self) -> None:
        """Accept on the listening socket in the main process exactly while no front is ready (and not once stopped)."""
        alone = self._loop is not None and not self._stopped and not any(process.ready for process in self._running())
        if alone != self._accepting:
            assert self._loop is not None
            if alone:
                self._loop.add_reader(self._listener, self._accept)
            else:
                self._loop.remove_reader(self._listener)
            self._accepting = alone

    def _accept(self) -> None:
        try:
            sock, _ = self._listener.accept()
        except OSError:  # BlockingIOError: a front took it
            return
        self._serve(sock)

    def _serve(self, sock: socket.socket) -> None:
        """A connection to uvicorn, as if its server had accepted it."""
        assert self._loop is not None and self._protocol is not None
        sock.setblocking(False)
        task = self._loop.create_task(self._loop.connect_accepted_socket(self._protocol, sock))
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[object]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()  # a client that left meanwhile: nothing to serve

    def _close_channel(self, process: _Process) -> None:
        if process.channel.fileno() >= 0:
            if self._loop is not None:
                self._loop.remove_reader(process.channel)
            process.channel.close()
