"""A fast-lane front: the forked process that serves connections from the listening socket (see :mod:`.fastlane`).

One thread serves its connections from a selector, request by request: it peeks at a request, asks the
:data:`Answer` callback for the complete response, and only then consumes the request and writes; what the
callback does not answer, the front hands over to the main process unconsumed. Another thread watches the
running request's time and the process's memory, and gives the request up (hands everything over and exits)
past the budget or the threshold.
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
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn, TypeVar

from ..store import EmbeddedStore
from .workers import READY_S, close_inherited

Answer = Callable[[bytes], "tuple[bytes, bool] | None"]
"""Given a complete request head: the complete response and whether the connection stays open, or ``None`` (or an
exception) for whatever the main process must answer."""

STOP_S = 3.0
"""How long stopping may take: a front finishing the answers it is writing, the main process waiting for its
fronts before it kills them."""
_TICK_S = 0.05
"""How often an idle front looks at the store's generation and for a stop."""
_WATCH_S = 0.01
"""How often the watchdog looks at a running query's time and the front's memory."""
READY = b"r"
"""What a front sends the main process once it answered its probe: from then on it accepts connections."""
_PEEK = 65536
"""The most of a request a front looks at: a longer head goes to the main process."""
_PR_SET_PDEATHSIG = 1
_M_ARENA_MAX = -8
_PAGE = os.sysconf("SC_PAGE_SIZE")
_T = TypeVar("_T")


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
class Front:
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
        if sys.version_info < (3, 12):  # forked inside the parent's running loop, which is not here: 3.12's asyncio
            asyncio.events._set_running_loop(None)  # forgets it at fork itself (gh-66285); 3.11 has only this way
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
        threading.Thread(
            target=self._watchdog, args=(threading.get_native_id(),), name="fast-lane watchdog", daemon=True
        ).start()
        gc.freeze()  # the parent's objects: never collected here, so never copied by the collector touching them
        statm = os.open("/proc/self/statm", os.O_RDONLY)
        self.baseline = _size(statm)
        bound = self.baseline + self.bound_bytes
        resource.setrlimit(resource.RLIMIT_AS, (bound, bound))
        # The whole path once before any client (lazy imports, first allocations): a front whose first answer fails
        # or overruns leaves. One that inherited a RocksDB mutex held at the fork hangs in it holding the GIL, out
        # of the watchdog's reach: the main process kills it at its ready deadline (docs/protection.md).
        if self._watched(READY_S, self.wall_s, lambda: self.answer(self.probe)) is None:
            os._exit(1)
        self.channel.send(READY)
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
        head = data[: end + 4]
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
            if (
                connection.pending is None
                and connection.idle_since is not None
                and now - connection.idle_since > self.keep_alive_s
            ):
                self._close(connection)

    # ---------------------------------------------------------------------------------------- queries

    def _watched(self, budget_s: float, wall_s: float, work: Callable[[], _T]) -> _T | None:
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
                over_time = (
                    max(running - running0, blocked) > watch.budget_s or time.monotonic() - watch.started > watch.wall_s
                )
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
