"""Client queries on the embedded store, in forked worker processes that can be killed.

pyoxigraph has no query timeout or cancellation, and a query running inside Rust cannot be interrupted: a
cartesian product whose FILTER rejects every row yields nothing, for ever. So a client's query runs in a
process forked from the service, which shares the store's state as of the fork (copy-on-write), and is
killed (SIGKILL) at the time limit, when its client goes away, or dies at its memory bound (``RLIMIT_AS``
set at its size at fork plus the bound: an allocation beyond it aborts the worker).

Workers persist and answer many queries over a pipe each, so a point lookup costs a round trip of tens of
microseconds, not a fork. A worker is as fresh as the store was when it was forked: a worker older than the
store's last committed write (:attr:`EmbeddedStore.generation`) is retired and a fresh one forked lazily,
while no write is in progress (:meth:`EmbeddedStore.writes_paused`), so no child inherits a store lock held
mid-write. A new worker first answers a small query within :data:`READY_S`; one that does not (it inherited
some engine lock another thread held) is killed and forked again.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import select
import signal
import stat
import struct
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, NoReturn

from ..errors import QueryWorkerCrashed, ServiceError, StoreUnavailable
from ..store import EmbeddedStore, QueryAnswer
from .limits import QueryLimits

READY_S = 2.0
"""How long a freshly forked worker may take to answer its first, trivial query."""
IDLE_EXIT_S = 30.0
"""A worker with no query for this long exits: it holds the service's memory as of its fork (copy-on-write)."""
_IDLE_EXIT = 3
"""A worker's exit status when it left idle: it never read a request sent meanwhile, which can go to another."""
_OUT_OF_MEMORY = 4
"""A worker's exit status when Python (not the engine) ran out of memory under its bound."""
_POLL_S = 0.05
"""How often a waiting parent looks at the client's disconnect flag."""
_HEADER = struct.Struct("!cQ")
_CHUNK = 1 << 20
_REQUEST, _ANSWER, _ERROR = b"Q", b"A", b"E"
FORKING = threading.Lock()
"""One fork at a time in the process: the query workers and the fast lane's fronts fork with the store's writes
paused, and take this lock first."""


class WorkerDied(Exception):
    """The worker's pipe closed mid-query: it was killed or it crashed (its wait status is in ``status``)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"wait status {status}")
        self.status = status


# ------------------------------------------------------------------------------------------ pipe framing


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, size: int) -> bytes:
    """Blocking read of exactly ``size`` bytes (the child's side); ``b""`` at end-of-file."""
    parts, got = [], 0
    while got < size:
        part = os.read(fd, min(size - got, _CHUNK))
        if not part:
            return b""
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _send(fd: int, kind: bytes, payload: bytes) -> None:
    _write_all(fd, _HEADER.pack(kind, len(payload)) + payload)


# ------------------------------------------------------------------------------------------------ child


def _vm_size() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def close_inherited(*keep: int) -> None:
    """Close the parent's sockets and pipes, all but ``keep`` and the standard streams. A connection a worker held
    open would never end for its client, and a client closing it would not be seen to go; a pipe's write end held
    here would keep its reader (another worker, a subprocess of the service) from seeing end-of-file when the
    service closes it. The store's own files stay open."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and fd not in keep and _is_channel(os.fstat(fd).st_mode):
                os.close(fd)
        except OSError:  # the directory listing's own descriptor, gone by now
            pass


def _is_channel(mode: int) -> bool:
    return stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode)


def _serve(store: EmbeddedStore, requests: int, replies: int, memory_bytes: int) -> NoReturn:
    """The child: answer queries until the parent closes the pipe; never returns into the parent's code."""
    status = 0
    try:
        close_inherited(requests, replies)
        faulthandler.disable()  # an abort at the memory bound is expected: no traceback of the parent's threads
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        bound = _vm_size() + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (bound, bound))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # dying at a limit must not write the service's memory to disk
        while True:
            if not select.select([requests], [], [], IDLE_EXIT_S)[0]:
                status = _IDLE_EXIT
                break
            header = _read_exact(requests, _HEADER.size)
            if not header:
                break
            _, size = _HEADER.unpack(header)
            args, kwargs, time_s, max_bytes = pickle.loads(_read_exact(requests, size))
            # A kernel backstop should the parent die mid-query: SIGXCPU once this query used its time in CPU.
            used = resource.getrusage(resource.RUSAGE_SELF)
            spent = int(used.ru_utime + used.ru_stime + time_s) + 2
            resource.setrlimit(resource.RLIMIT_CPU, (spent, resource.RLIM_INFINITY))
            try:
                answer = store.answer(*args, **kwargs)
            except MemoryError:
                raise
            except ServiceError as error:
                _send(replies, _ERROR, pickle.dumps((type(error), error.message)))
                continue
            except Exception as error:  # noqa: BLE001  # the engine's own failure: reported, the worker stays usable
                _send(replies, _ERROR, pickle.dumps((StoreUnavailable, f"the query failed in the store: {error}")))
                continue
            if len(answer.body) > max_bytes:
                _send(replies, _ERROR, pickle.dumps((None, "too large")))
                continue
            described = pickle.dumps((answer.media_type, len(answer.body)))
            meta = _HEADER.pack(_ANSWER, len(described)) + described
            if len(answer.body) < _CHUNK:
                _write_all(replies, meta + answer.body)  # one write: a small answer arrives in one read
            else:
                _write_all(replies, meta)
                _write_all(replies, answer.body)
    except MemoryError:
        status = _OUT_OF_MEMORY
    except BaseException:  # noqa: BLE001  # whatever happens, the child must not return into the service
        status = 1
    os._exit(status)


# ----------------------------------------------------------------------------------------------- parent


@dataclass
class Worker:
    """A forked worker as the parent sees it: its pid, its pipes, the store generation it was forked at."""

    pid: int
    requests: int
    replies: int
    generation: int
    busy: bool = False
    status: int | None = None
    """The wait status once the worker is reaped."""
    buffer: bytearray = field(default_factory=bytearray)
    poller: select.poll = field(default_factory=select.poll)

    def __post_init__(self) -> None:
        self.poller.register(self.replies, select.POLLIN | select.POLLHUP)

    def stop(self) -> None:
        """Kill the worker (unless it is already dead), reap it and close its pipes."""
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            self.status = os.waitpid(self.pid, 0)[1]
        for fd in (self.requests, self.replies):
            os.close(fd)

    def _read(self, size: int, limits: QueryLimits) -> bytes:
        """Exactly ``size`` bytes of the reply, waiting at most until the deadline and while the client is there.

        Reads as much as the pipe holds at once (a small answer is one read), and keeps the rest for the next call.
        """
        while len(self.buffer) < size:
            limits.check()
            if not self.poller.poll(max(min(limits.remaining(), _POLL_S), 0) * 1000):
                continue
            part = os.read(self.replies, _CHUNK)
            if not part:
                self.status = os.waitpid(self.pid, 0)[1]
                raise WorkerDied(self.status)
            self.buffer += part
        taken = bytes(self.buffer[:size])
        del self.buffer[:size]
        return taken

    def answer(self, args: tuple[Any, ...], kwargs: dict[str, Any], limits: QueryLimits) -> QueryAnswer:
        """Run ``store.answer(*args, **kwargs)`` in the worker. If this raises with :attr:`busy` still set, the
        worker is mid-query (stopped at a limit, or its client left) and must be killed."""
        self.busy = True
        try:
            _send(self.requests, _REQUEST, pickle.dumps((args, kwargs, limits.time_s, limits.max_bytes)))
        except BrokenPipeError:  # it exited (idle) before this request
            self.status = os.waitpid(self.pid, 0)[1]
            raise WorkerDied(self.status) from None
        kind, size = _HEADER.unpack(self._read(_HEADER.size, limits))
        payload = pickle.loads(self._read(size, limits))
        if kind == _ERROR:
            self.busy = False
            cls, message = payload
            raise limits.too_large() if cls is None else cls(message)
        media_type, length = payload
        if length > limits.max_bytes:
            raise limits.too_large()
        body = self._read(length, limits)
        self.busy = False
        return QueryAnswer(body, media_type)


class WorkerPool:
    """Forked workers over one embedded store, ``idle`` of them kept between queries. How many run at once is
    capped by the guard's admission (``CAIE_QUERY_MAX_CONCURRENT``), before a query gets here."""

    def __init__(self, *, idle: int, memory_bytes: int) -> None:
        self._idle_most = idle
        self._memory_bytes = memory_bytes
        self._idle: list[Worker] = []
        self._lock = threading.Lock()
        # Idle workers go with the pool (with its application) or at interpreter exit, whichever comes first; a
        # worker also exits by itself when idle (IDLE_EXIT_S) or when the service's end of its pipe closes.
        weakref.finalize(self, _stop_all, self._idle)

    def answer(
        self, store: EmbeddedStore, args: tuple[Any, ...], kwargs: dict[str, Any], limits: QueryLimits
    ) -> QueryAnswer:
        while True:
            worker = self._acquire(store)
            try:
                return worker.answer(args, kwargs, limits)
            except WorkerDied as died:
                if not _left_idle(died.status):
                    raise _death(died.status, limits) from None
                # It left idle without reading the query: released below, the query goes to another worker.
            finally:
                self._release(worker, store)

    # ---------------------------------------------------------------------------------------- workers

    def _acquire(self, store: EmbeddedStore) -> Worker:
        """An idle worker as fresh as the store, else a new one (idle ones older than the store are stopped)."""
        with self._lock:
            stale = [worker for worker in self._idle if worker.generation != store.generation]
            for worker in stale:
                self._idle.remove(worker)
            fresh = self._idle.pop() if self._idle else None
        for old in stale:
            old.stop()
        return fresh if fresh is not None else self._fork(store)

    def _release(self, worker: Worker, store: EmbeddedStore) -> None:
        """Keep the worker for the next query if it finished cleanly and is still fresh; else stop it."""
        keep = not worker.busy and worker.status is None and worker.generation == store.generation
        with self._lock:
            keep = keep and len(self._idle) < self._idle_most
            if keep:
                self._idle.append(worker)
        if not keep:
            worker.stop()

    def _fork(self, store: EmbeddedStore) -> Worker:
        for _ in range(3):
            worker = self._fork_once(store)
            probe = QueryLimits(time_s=READY_S, max_bytes=1 << 16, memory_bytes=self._memory_bytes)
            try:
                worker.answer(("ASK { GRAPH ?g { ?s ?p ?o } }", "application/sparql-results+json"), {}, probe)
                return worker
            except (ServiceError, WorkerDied):
                worker.stop()
        raise StoreUnavailable("no query worker could be started: each forked worker failed to answer a trivial query")

    def _fork_once(self, store: EmbeddedStore) -> Worker:
        with FORKING, store.writes_paused():
            generation = store.generation
            child_requests, parent_requests = os.pipe()
            parent_replies, child_replies = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(parent_requests)
                os.close(parent_replies)
                _serve(store, child_requests, child_replies, self._memory_bytes)
        os.close(child_requests)
        os.close(child_replies)
        return Worker(pid, parent_requests, parent_replies, generation)


def _death(status: int, limits: QueryLimits) -> Exception:
    """The error for a worker that died mid-query. At the memory bound an allocation fails under ``RLIMIT_AS``:
    the engine aborts (SIGABRT, Rust's allocation-failure handler) or Python exits with :data:`_OUT_OF_MEMORY`;
    past the CPU backstop the kernel sends SIGXCPU. Any other end (SIGSEGV from a stack overflow, an exit status)
    is a crash, reported as one."""
    signalled = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    if signalled == signal.SIGABRT or (os.WIFEXITED(status) and os.WEXITSTATUS(status) == _OUT_OF_MEMORY):
        return limits.out_of_memory()
    if signalled == signal.SIGXCPU:
        return limits.timed_out()
    return QueryWorkerCrashed(
        f"the query worker crashed ({_describe(status)}) while running this query; it reached none of the query limits"
    )


def _left_idle(status: int) -> bool:
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == _IDLE_EXIT


def _stop_all(idle: list[Worker]) -> None:
    while idle:
        idle.pop().stop()


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
