"""Real processes for the tests: an ``oxigraph serve`` store and the service under uvicorn, on free loopback ports.

Starting and stopping uvicorn costs about 0.2 s, so the per-test ``service`` fixture does not: one server runs
for the whole session and serves, through :class:`AppSlot`, the app each test creates over its own store.
A throwaway Virtuoso is :mod:`tests.virtuoso`'s, a store behind credentials :mod:`tests.proxy`'s.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from service.core.outbound import tls_context

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen[bytes] | None = None, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    # One client for every poll, on the process's one TLS context: httpx.get builds a client, and with it a TLS
    # context loading the CA bundle, each time (~36 ms of a core): polled every 50 ms, ~40% of a core.
    with httpx.Client(timeout=1.0, verify=tls_context()) as http:
        while time.monotonic() < deadline:
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"the process serving {url} exited with {process.returncode}")
            try:
                http.get(url)
                return
            except httpx.HTTPError:
                time.sleep(0.05)
    raise RuntimeError(f"nothing answered at {url} within {seconds} s")


def caie_binary() -> str:
    """The ``caie`` entry point installed beside this interpreter (the one a deployment runs)."""
    candidate = Path(sys.executable).with_name("caie")
    if not candidate.exists():
        raise RuntimeError(f"{candidate} is missing: pip install -e . (make test does)")
    return str(candidate)


def caie_serve(
    port: int,
    credentials: Mapping[str, object],
    *options: str,
    log: Path,
    data: Path | None = None,
    wrapper: Sequence[str] = (),
    own_session: bool = False,
    **env: str,
) -> subprocess.Popen[bytes]:
    """``caie serve`` as an operator starts it, on ``port`` of the loopback: its data directory ``data`` (none: the
    store its ``CAIE_*`` settings name), ``credentials`` as ``CAIE_TOKENS``, ``env`` as more variables, its output
    appended to ``log``. ``wrapper`` runs it under another command (strace); ``own_session`` puts it in a process
    group of its own, so that a crash is the whole group killed at once. Returns at once: :func:`wait_until_up`."""
    command = [*wrapper, caie_binary(), "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--data-dir", str(data)] if data is not None else []
    with log.open("ab") as out:  # the child keeps its own descriptor
        return subprocess.Popen(
            [*command, *options],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=own_session,
            env={**os.environ, "CAIE_TOKENS": json.dumps(credentials), **env},
        )


def stop_process(process: subprocess.Popen[bytes], grace_s: float = 20.0) -> None:
    """SIGTERM a process that is still running; SIGKILL it if it has not ended after ``grace_s`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def oxigraph_binary() -> str:
    """The ``oxigraph`` CLI installed beside this interpreter (PyPI package ``oxigraph``)."""
    candidate = Path(sys.executable).with_name("oxigraph")
    found = str(candidate) if candidate.exists() else shutil.which("oxigraph")
    if not found:
        raise RuntimeError("the oxigraph CLI is missing: pip install oxigraph (make test installs it)")
    return found


@contextmanager
def oxigraph_server(*options: str) -> Iterator[str]:
    """A real ``oxigraph serve`` on a fresh directory, with ``options`` (e.g. ``--timeout-s``); yields its base URL."""
    port = free_port()
    directory = tempfile.mkdtemp(prefix="caie-oxigraph-")
    process = subprocess.Popen(
        [oxigraph_binary(), "serve", "--location", directory, "--bind", f"127.0.0.1:{port}", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/query?query=ASK%7B%7D", process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(directory, ignore_errors=True)


ASGIApp = Callable[[dict[str, Any], Callable[..., Awaitable[Any]], Callable[..., Awaitable[Any]]], Awaitable[None]]


class AppSlot:
    """An ASGI app that hands every request to the app put in it (503 while it is empty).

    Lets one uvicorn server serve a fresh app per test: each request still goes over real HTTP to the
    app the test created, nothing is shared between tests but the listening socket.
    """

    def __init__(self) -> None:
        self.app: ASGIApp | None = None

    @contextmanager
    def serving(self, app: ASGIApp) -> Iterator[None]:
        """``app`` in the slot for the block; then the app served before (a test serving another app for a while,
        over the same store, gives its own back)."""
        previous, self.app = self.app, app
        try:
            yield
        finally:
            self.app = previous

    async def __call__(
        self, scope: dict[str, Any], receive: Callable[..., Awaitable[Any]], send: Callable[..., Awaitable[Any]]
    ) -> None:
        app = self.app
        if app is not None:
            await app(scope, receive, send)
        elif scope["type"] == "http":
            await send({"type": "http.response.start", "status": 503, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"no app is being served"})


@contextmanager
def app_server(app: ASGIApp) -> Iterator[str]:
    """The app served by uvicorn in a thread on a free port; yields its URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/health")
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def children(pid: int) -> set[int]:
    """The live (not zombie) child processes of ``pid``, from /proc."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found
