"""Fast-lane fronts: plain ``GET /sparql`` lookups answered on every core, beside the main process (issue 8).

One Python process cannot parse and write HTTP fast enough for point lookups (docs/performance.md, "SPARQL
queries under load"), and only one process may open the embedded store read-write. So ``caie serve`` forks
*fronts*: processes that share the store as of their fork (copy-on-write, like the query workers) and accept
connections on the main process's own listening socket (the kernel gives each connection to one accepting
process; the main process accepts itself only while no front runs, :class:`FastLane`). A front takes a connection request by request. It *peeks* at each request (``MSG_PEEK``) and asks
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
- **Lifetime**: fronts die with the main process (``PR_SET_PDEATHSIG``, and end-of-file on the socketpair),
  stop on SIGTERM, close every inherited socket but the listener and their socketpair
  (:func:`.workers.close_inherited`), and never write to the store.
"""

from __future__ import annotations

import asyncio
import ctypes
import faulthandler
import gc
import os
import resource
import selectors
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

from ..store import EmbeddedStore
from .workers import FORKING, READY_S, close_inherited

Answer = Callable[[bytes], "tuple[bytes, bool] | None"]
"""Given a complete request head: the complete response and whether the connection stays open, or ``None`` for
whatever the main process must answer."""

STOP_S = 3.0
"""How long the main process waits for its fronts to stop before it kills them."""
_TICK_S = 0.05
"""How often an idle front looks at the store's generation and for a stop."""
_WATCH_S = 0.01
"""How often the watchdog looks at a running query's time and the front's memory."""
_PEEK = 65536
"""The most of a request a front looks at: a longer head goes to the main process."""
_PR_SET_PDEATHSIG = 1
_M_ARENA_MAX = -8
_PAGE = os.sysconf("SC_PAGE_SIZE")


# ------------------------------------------------------------------------------------------------ front


@dataclass(eq=False)
class _Connection:
    sock: socket.socket
    idle_since: float | None = None
    """When its last answer was written (uvicorn's keep-alive timeout starts there); ``None`` before one."""
    pending: memoryview | None = None
    """The rest of an answer the socket did not take at once."""
    keep_alive: bool = True
    events: int = selectors.EVENT_READ
    """What the selector waits for on it: the next request, or room to write the rest of an answer."""


@dataclass(eq=False)
class _Watch:
    """What the watchdog watches: the running request's budget, and when it started (with the serving thread's
    scheduler counters, taken by the watchdog when it first sees the request)."""

    budget_s: float
    wall_s: float
    started: float = field(default_factory=time.monotonic)
    counted: tuple[float, float, float] | None = None


@dataclass(eq=False)
class _Front:
    """The forked process: one thread serving connections, one watching its query."""

    listener: socket.socket
    channel: socket.socket
    store: EmbeddedStore
    generation: int
    answer: Answer
    probe: bytes
    budget_s: float
    wall_s: float
    memory_bytes: int
    bound_bytes: int
    keep_alive_s: float
    connections: dict[int, _Connection] = field(default_factory=dict)
    selector: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    lock: threading.Lock = field(default_factory=threading.Lock)
    watch: _Watch | None = None
    stopping: bool = False
    baseline: int = 0
    """The front's virtual size before its first query: the memory threshold counts from here."""

    def run(self) -> NoReturn:
        signal.set_wakeup_fd(-1)  # the parent's event loop wake-up socket is closed below; its number may be reused
        asyncio.events._set_running_loop(None)  # forked from inside the parent's running loop, which is not here
        close_inherited(self.listener.fileno(), self.channel.fileno())
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._stop)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:  # the main process died before the line above
            os._exit(0)
        faulthandler.disable()  # an abort at the memory backstop is expected: no traceback of the parent's threads
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # One malloc arena: the watchdog thread's own would reserve 64 MiB of address space, counted by the threshold.
        libc.mallopt(_M_ARENA_MAX, 1)
        self.channel.setblocking(True)
        threading.Thread(target=self._watchdog, args=(threading.get_native_id(),), name="fast-lane watchdog",
                         daemon=True).start()
        gc.freeze()  # the parent's objects: never collected here, so never copied by the collector touching them
        statm = os.open("/proc/self/statm", os.O_RDONLY)
        self.baseline = _size(statm)
        bound = self.baseline + self.bound_bytes
        resource.setrlimit(resource.RLIMIT_AS, (bound, bound))
        # A fork can inherit an engine lock another thread held: a front whose first query hangs leaves.
        # The whole path once before any client (lazy imports, first allocations); and a fork can inherit an
        # engine lock another thread held: a front whose first answer hangs or fails leaves.
        if self._watched(READY_S, self.wall_s, lambda: self.answer(self.probe)) is None:
            os._exit(1)
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        self.selector.register(self.channel, selectors.EVENT_READ, self.channel)
        self._serve()

    # ------------------------------------------------------------------------------------------- loop

    def _serve(self) -> NoReturn:
        next_look = 0.0
        while True:
            for key, mask in self.selector.select(_TICK_S):
                if key.data is None:
                    self._accept()
                elif key.data is self.channel:
                    os._exit(0)  # the main process closed its end: it is gone
                elif mask & selectors.EVENT_WRITE:
                    self._flush(key.data)
                else:
                    self._request(key.data)
            now = time.monotonic()
            if now >= next_look:
                next_look = now + _TICK_S
                if self._stale():
                    self._leave()
                if self.stopping:
                    self._finish()
                self._expire(now)

    def _accept(self) -> None:
        """One connection per wake-up, so that a burst of connections spreads over the fronts."""
        try:
            sock, _ = self.listener.accept()
        except OSError:  # BlockingIOError: another process took it
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = _Connection(sock)
        self.connections[sock.fileno()] = connection
        self.selector.register(sock, selectors.EVENT_READ, connection)

    def _request(self, connection: _Connection) -> None:
        try:
            data = connection.sock.recv(_PEEK, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close(connection)
            return
        end = data.find(b"\r\n\r\n")
        if end < 0 or self._stale():  # an incomplete head (or the store moved on): the main process takes it
            self._hand_over(connection)
            return
        head = data[:end + 4]
        answered = self._watched(self.budget_s, self.wall_s, lambda: self.answer(head))
        if answered is None or self._stale():
            self._hand_over(connection)
            return
        response, connection.keep_alive = answered
        if connection.sock.recv(len(head)) != head:  # the bytes just peeked at; nothing else can have read them
            self._close(connection)
            return
        connection.pending = memoryview(response)
        self._flush(connection)

    def _flush(self, connection: _Connection) -> None:
        assert connection.pending is not None
        try:
            sent = connection.sock.send(connection.pending)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            self._close(connection)
            return
        if sent < len(connection.pending):  # the rest once the socket has room
            connection.pending = connection.pending[sent:]
            self._wait_for(connection, selectors.EVENT_WRITE)
            return
        connection.pending = None
        if not connection.keep_alive:
            self._close(connection)
            return
        self._wait_for(connection, selectors.EVENT_READ)
        connection.idle_since = time.monotonic()

    def _wait_for(self, connection: _Connection, events: int) -> None:
        if connection.events != events:  # a system call only when it changes
            self.selector.modify(connection.sock, events, connection)
            connection.events = events

    def _expire(self, now: float) -> None:
        """Close connections idle past the keep-alive timeout, as uvicorn does."""
        for connection in list(self.connections.values()):
            if connection.pending is None and connection.idle_since is not None and now - connection.idle_since > self.keep_alive_s:
                self._close(connection)

    # ---------------------------------------------------------------------------------------- queries

    def _watched(self, budget_s: float, wall_s: float, work: Callable[[], object]) -> object:
        """``work()`` under the watchdog; ``None`` when it raised (the main process will answer)."""
        with self.lock:
            self.watch = _Watch(budget_s, wall_s)
        try:
            return work()
        except Exception:  # noqa: BLE001 - whatever failed, the main process answers the request itself
            return None
        finally:
            with self.lock:  # blocks for good if the watchdog gave this query up: the process is then exiting
                self.watch = None

    def _watchdog(self, serving: int) -> None:
        """Gives the running request up when the serving thread spent its budget running, or blocked (waiting on
        something but a core: time spent runnable, waiting for a core on a loaded machine, does not count), or
        past its wall time; or when the front grew past the memory threshold."""
        statm = os.open("/proc/self/statm", os.O_RDONLY)
        schedstat = os.open(f"/proc/self/task/{serving}/schedstat", os.O_RDONLY)
        while True:
            time.sleep(_WATCH_S)
            with self.lock:
                watch = self.watch
                if watch is None:
                    continue
                now = _counters(schedstat)
                if watch.counted is None:  # within _WATCH_S of its start
                    watch.counted = now
                    continue
                (wall, running, waiting), (wall0, running0, waiting0) = now, watch.counted
                blocked = (wall - wall0) - (running - running0) - (waiting - waiting0)
                over_time = max(running - running0, blocked) > watch.budget_s or time.monotonic() - watch.started > watch.wall_s
                if over_time or _size(statm) - self.baseline > self.memory_bytes:
                    self._leave()  # with the lock held: the serving thread cannot answer meanwhile

    # ------------------------------------------------------------------------------------- connections

    def _stale(self) -> bool:
        return self.store.published_generation() != self.generation

    def _hand_over(self, connection: _Connection) -> None:
        self._forget(connection)
        try:
            socket.send_fds(self.channel, [b"c"], [connection.sock.fileno()])
        except OSError:  # the main process is gone
            os._exit(0)
        connection.sock.close()

    def _leave(self) -> NoReturn:
        """Hand every connection over and exit: the store moved on, or a query overran its budget."""
        self.listener.close()
        for connection in list(self.connections.values()):
            self._finish_writing(connection)
            if connection.sock.fileno() >= 0:
                self._hand_over(connection)
        os._exit(0)

    def _finish(self) -> NoReturn:
        """On SIGTERM: stop accepting, finish the answers being written, close the idle connections (as uvicorn)."""
        self.listener.close()
        for connection in list(self.connections.values()):
            self._finish_writing(connection)
            self._close(connection)
        os._exit(0)

    def _finish_writing(self, connection: _Connection) -> None:
        if connection.pending is None:
            return
        try:
            connection.sock.settimeout(STOP_S)
            connection.sock.sendall(connection.pending)
        except OSError:
            pass
        self._close(connection)

    def _forget(self, connection: _Connection) -> None:
        if self.connections.pop(connection.sock.fileno(), None) is not None:
            self.selector.unregister(connection.sock)

    def _close(self, connection: _Connection) -> None:
        if connection.sock.fileno() >= 0:
            self._forget(connection)
            connection.sock.close()

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping = True


def _counters(schedstat: int) -> tuple[float, float, float]:
    """Now, and the serving thread's time running and time runnable but waiting for a core, in seconds."""
    running, waiting, _ = os.pread(schedstat, 128, 0).split()
    return time.monotonic(), int(running) / 1e9, int(waiting) / 1e9


def _size(statm: int) -> int:
    """The process's virtual size, as ``RLIMIT_AS`` counts it."""
    return int(os.pread(statm, 64, 0).split()[0]) * _PAGE


# ----------------------------------------------------------------------------------------------- parent


@dataclass(eq=False)
class _Process:
    pid: int
    channel: socket.socket
    """The main process's end of the socketpair: connections handed over arrive here."""
    status: int | None = None


class FastLane:
    """The main process's side: forks the fronts, receives the connections they hand over, forks fresh ones.

    The main process accepts connections itself only while no front is there to (after a write, until fresh
    fronts are forked): a connection it accepted would be its own for good, served at its own, higher cost.
    """

    def __init__(self, store: EmbeddedStore, listener: socket.socket, answer: Answer, *, probe: bytes, processes: int,
                 budget_s: float, time_limit_s: float, memory_bytes: int, bound_bytes: int, keep_alive_s: float) -> None:
        """``probe``: a request head every fresh front answers before it accepts; ``memory_bytes``: the threshold
        past which a front hands a query over; ``bound_bytes``: its ``RLIMIT_AS`` backstop above its size."""
        self._store = store
        self._listener = listener
        self._answer = answer
        self._wanted = processes
        budget_s = min(budget_s, time_limit_s)
        self._front = dict(probe=probe, budget_s=budget_s, wall_s=time_limit_s, memory_bytes=memory_bytes,
                           bound_bytes=bound_bytes, keep_alive_s=keep_alive_s)
        self._processes: list[_Process] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._protocol: Callable[[], asyncio.Protocol] | None = None
        self._tasks: set[asyncio.Task[object]] = set()
        self._stopped = False
        self._accepting = False

    @property
    def pids(self) -> list[int]:
        """The fronts running now (a front that ended has closed its end of the socketpair)."""
        return [process.pid for process in self._processes if process.status is None and process.channel.fileno() >= 0]

    def attach(self, loop: asyncio.AbstractEventLoop, protocol: Callable[[], asyncio.Protocol]) -> None:
        """Serve handed-over connections in ``loop`` with ``protocol`` (uvicorn's, as its server builds it)."""
        self._loop, self._protocol = loop, protocol
        for process in self._processes:
            loop.add_reader(process.channel, self._receive, process)
        self._accept_while_alone()

    def tick(self) -> None:
        """Reap fronts that ended and fork fresh ones, unless a write is in progress (then at a later tick)."""
        for process in self._processes:
            if process.status is None:
                pid, status = os.waitpid(process.pid, os.WNOHANG)
                if pid:
                    process.status = status
        self._processes = [p for p in self._processes if p.status is None or p.channel.fileno() >= 0]
        missing = self._wanted - len(self.pids)
        paused = self._store.writes_paused()
        if missing > 0 and not self._stopped and paused.acquire(blocking=False):
            try:
                for _ in range(missing):
                    self._fork()
            finally:
                paused.release()
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

    def _fork(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with FORKING:
            pid = os.fork()
            if pid == 0:
                try:
                    ours.close()
                    _Front(self._listener, theirs, self._store, self._store.generation, self._answer, **self._front).run()
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
            if not message:
                self._close_channel(process)
                self._accept_while_alone()
                return

    def _accept_while_alone(self) -> None:
        """Accept on the listening socket in the main process exactly while no front runs (and not once stopped)."""
        alone = self._loop is not None and not self._stopped and not self.pids
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
