"""A live ``caie serve`` for the hostile tests, and what watches it while it is attacked.

The service runs as an operator runs it: its own process, an on-disk data directory, two fast-lane fronts. While
an attack runs, :func:`watched` times ``/health`` from one thread and makes another client's SPARQL lookup from
another (both over fresh connections, so through the fronts as any client's would be); afterwards it waits for
the main process's resident memory to come back within :data:`RSS_SLACK_MB` of where it was before the attack.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from ..conftest import ROLES
from ..servers import caie_serve, children, free_port, wait_until_up

BASE = "http://caie.test/"
HEALTH_WITHIN_S = 1.0
"""The issue's bound: /health answers within 1 s throughout each attack."""
RSS_SLACK_MB = 200
"""After each attack, the main process's resident memory is back within this of where it was."""
LOOKUP = "SELECT ?g WHERE { GRAPH ?g { ?s a ?type } } LIMIT 1"
PEOPLE = {"erin-token": {"agent": "erin", "roles": ["domain_expert"]}}
"""A second domain expert, who may not supersede annie's attestations."""


@dataclass
class Live:
    """A running ``caie serve``: its process, port, data directory and tokens."""

    process: subprocess.Popen[bytes]
    port: int
    data: Path
    tokens: dict[str, str]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def auth(self, agent: str = "admin") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[agent]}"}

    def rss_mb(self) -> float:
        """The main process's resident memory (``VmRSS``), in MB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024

    def family(self) -> set[int]:
        """The main process and every live process under it (fronts, query workers)."""
        found, todo = {self.process.pid}, [self.process.pid]
        while todo:
            for child in children(todo.pop()):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        return found


def start(data: Path, tokens: dict[str, str], port: int | None = None, **env: str) -> Live:
    """``caie serve`` on ``data`` with two fast-lane fronts; returns once ``/health`` answers (at most 120 s)."""
    port = port or free_port()
    credentials = {token: {"agent": agent, "roles": ROLES[agent]} for agent, token in tokens.items()} | PEOPLE
    log = data.parent / f"{data.name}-{port}.log"
    process = caie_serve(
        port, credentials, "--base-url", BASE, data=data, log=log, **{"CAIE_FAST_LANE_PROCESSES": "2", **env}
    )
    live = Live(process, port, data, {**tokens, "erin": "erin-token"}, env)
    wait_until_up(live.url + "/health", process, seconds=120)
    return live


def stop(live: Live) -> None:
    """SIGTERM, then SIGKILL after 20 s; and any process of its family still there (fronts orphaned by a kill)."""
    family = live.family()
    if live.process.poll() is None:
        live.process.send_signal(signal.SIGTERM)
        try:
            live.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            live.process.kill()
            live.process.wait(timeout=10)
    end_orphans(family - {live.process.pid})


def end_orphans(pids: set[int]) -> None:
    """SIGKILL each of ``pids`` (processes a killed service left, recorded by pid before the kill) still alive."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@dataclass
class Watch:
    """What the watchers saw: each /health answer's latency (or None for no 200), each lookup's success."""

    health: list[float | None] = field(default_factory=list)
    lookups: list[bool] = field(default_factory=list)
    rss_before: float = 0.0
    rss_after: float = 0.0


@contextmanager
def watched(live: Live) -> Iterator[Watch]:
    """Time /health and make another client's lookup throughout the ``with`` block; then check both and the
    memory (see the module)."""
    watch = Watch(rss_before=live.rss_mb())
    stopping = threading.Event()

    def health() -> None:
        while not stopping.is_set():
            started = time.monotonic()
            try:
                ok = httpx.get(live.url + "/health", timeout=10).status_code == 200
            except httpx.HTTPError:
                ok = False
            watch.health.append(time.monotonic() - started if ok else None)
            stopping.wait(0.1)

    def lookup() -> None:
        while not stopping.is_set():
            try:
                answer = httpx.get(
                    live.url + "/sparql",
                    params={"query": LOOKUP},
                    timeout=10,
                    headers={"Accept": "application/sparql-results+json"},
                )
                watch.lookups.append(answer.status_code == 200 and bool(answer.json()["results"]["bindings"]))
            except (httpx.HTTPError, ValueError, KeyError):
                watch.lookups.append(False)
            stopping.wait(0.2)

    threads = [threading.Thread(target=health, daemon=True), threading.Thread(target=lookup, daemon=True)]
    for thread in threads:
        thread.start()
    try:
        yield watch
        time.sleep(0.3)  # at least one round of each after the attack's last answer
    finally:
        stopping.set()
        for thread in threads:
            thread.join(timeout=15)
    deadline = time.monotonic() + 30
    while (rss := live.rss_mb()) > watch.rss_before + RSS_SLACK_MB and time.monotonic() < deadline:
        time.sleep(0.5)
    watch.rss_after = rss
    slow = [t for t in watch.health if t is None or t > HEALTH_WITHIN_S]
    assert watch.health and not slow, (
        f"/health: {len(slow)} of {len(watch.health)} not answered 200 within "
        f"{HEALTH_WITHIN_S} s (None: no answer): {slow[:10]}"
    )
    assert watch.lookups and all(watch.lookups), (
        f"another client's lookup failed {watch.lookups.count(False)} of {len(watch.lookups)} times"
    )
    assert rss <= watch.rss_before + RSS_SLACK_MB, f"resident memory {rss:.0f} MB, {watch.rss_before:.0f} MB before"


def raw_post(live: Live, path: str, size: int, content_type: str, *, chunked: bool = False) -> tuple[int, bytes]:
    """POST ``size`` bytes to ``path`` as an attacker does, over a raw socket: the head (a declared length, or
    chunked), then the body until the service answers or closes; the status and body of its answer (0 if none)."""
    sock = socket.create_connection(("127.0.0.1", live.port), timeout=60)
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: attacker\r\nContent-Type: {content_type}\r\n{framing}\r\n\r\n".encode()
    )
    piece = b"{" * (1 << 20)
    sent = 0
    sock.setblocking(False)
    try:
        while sent < size:
            try:
                if sock.recv(1, socket.MSG_PEEK):
                    break  # it answered before reading everything: the point of a limit at the edge
            except BlockingIOError:
                pass
            part = piece[: min(len(piece), size - sent)]
            frame = f"{len(part):x}\r\n".encode() + part + b"\r\n" if chunked else part
            try:
                sock.send(frame)
                sent += len(part)
            except BlockingIOError:
                time.sleep(0.005)
        if chunked and sent >= size:
            sock.send(b"0\r\n\r\n")
    except OSError:  # it closed the connection on us: its answer may be waiting all the same
        pass
    sock.setblocking(True)
    answer = b""
    try:
        while b"\r\n\r\n" not in answer or len(answer.partition(b"\r\n\r\n")[2]) < _length(answer):
            part = sock.recv(65536)
            if not part:
                break
            answer += part
    except OSError:
        pass
    finally:
        sock.close()
    if not answer.startswith(b"HTTP/1.1 "):
        return 0, answer
    return int(answer[9:12]), answer.partition(b"\r\n\r\n")[2]


def _length(answer: bytes) -> int:
    head = answer.partition(b"\r\n\r\n")[0].lower()
    for line in head.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


class Trap:
    """A TCP listener that records every connection and what it was sent: where nothing must arrive."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            connection.settimeout(2)
            try:
                self.received.append(connection.recv(65536))
            except OSError:
                self.received.append(b"")
            connection.close()

    def close(self) -> None:
        self.sock.close()
