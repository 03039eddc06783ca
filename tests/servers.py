"""Real processes for the tests: an ``oxigraph serve`` store and the service under uvicorn, on free loopback ports.

Starting and stopping uvicorn costs about 0.2 s, so the per-test ``service`` fixture does not: one server runs
for the whole session and serves, through :class:`AppSlot`, the app each test creates over its own store.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from service.core.outbound import tls_context


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


# ------------------------------------------------------------------------------------------------- Virtuoso

VIRTUOSO_BINARY = "virtuoso-t"  # Debian package virtuoso-opensource-7-bin (7.2.5.1), as are isql-vt
VIRTUOSO_ISQL = "isql-vt"

# The limits of Debian's packaged /etc/virtuoso-opensource-7/virtuoso.ini (virtuoso-opensource-7 7.2.5.1),
# written out so the tests meet the limits an operator installing the package gets. Paths and ports differ, and
# the buffers: the package's minimal 10,000 (MaxDirtyBuffers 6,000) are raised to the values Virtuoso's own ini
# recommends for 2 GB of memory, as docs/stores.md tells operators to do: with the packaged ones the worked
# example froze Virtuoso in 2 of 5 runs, with these in none of 3 (docs/stores.md, "Buffers"). docs/stores.md lists
# every setting.
_VIRTUOSO_INI = """\
[Database]
DatabaseFile       = {dir}/virtuoso.db
ErrorLogFile       = {dir}/virtuoso.log
LockFile           = {dir}/virtuoso.lck
TransactionFile    = {dir}/virtuoso.trx
xa_persistent_file = {dir}/virtuoso.pxa
ErrorLogLevel      = 7
FileExtend         = 200
MaxCheckpointRemap = 2000
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = {dir}/virtuoso-temp.db
TransactionFile    = {dir}/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping           = 0

[Parameters]
ServerPort           = {sql_port}
DisableUnixSocket    = 1
MaxClientConnections = 10
CheckpointInterval   = 60
CaseMode             = 2
MaxStaticCursorRows  = 5000
DirsAllowed          = ., {dir}
NumberOfBuffers      = 170000
MaxDirtyBuffers      = 130000
MaxQueryMem          = 2G

[HTTPServer]
ServerPort           = {http_port}
ServerRoot           = {dir}
MaxClientConnections = 10
ServerThreads        = 10
MaxKeepAlives        = 10
KeepAliveTimeout     = 10
Charset              = UTF-8

[SPARQL]
ResultSetMaxRows           = 10000
MaxQueryCostEstimationTime = 400
MaxQueryExecutionTime      = 60
"""

# What the tests' store needs beyond a fresh database: SPARQL Update on the anonymous /sparql endpoint
# (the SPARQL user gets SPARQL_UPDATE) and writes through the anonymous Graph Store Protocol endpoint
# /sparql-graph-crud (default RDF permissions of user "nobody": 7 = read + write + list). A real deployment
# keeps these off and uses /sparql-auth and /sparql-graph-crud-auth with credentials instead.
_VIRTUOSO_GRANTS = "GRANT SPARQL_UPDATE TO \"SPARQL\"; DB.DBA.RDF_DEFAULT_USER_PERMS_SET ('nobody', 7);"


@dataclass(frozen=True)
class VirtuosoServer:
    """A running throwaway Virtuoso: anonymous endpoints (granted updates) and the authenticated ones."""

    base_url: str
    sql_port: int
    user: str
    password: str
    startup_s: float
    directory: Path | None = None

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of Virtuoso's own log (its errors, checkpoints, transaction kills): for a failure message."""
        if self.directory is None or not (self.directory / "virtuoso.log").is_file():
            return "(no Virtuoso log)"
        return "\n".join((self.directory / "virtuoso.log").read_text(errors="replace").splitlines()[-lines:])

    def diagnosis(self) -> str:
        """What Virtuoso says of itself when a service on it stalled: its log's last lines and ``status('')`` (the
        threads running and waiting, lock waits, deadlocks, pending transactions), for a failure message."""
        try:
            status = self.isql("status('')")
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
            status = f"(status('') failed: {error})"
        return f"Virtuoso's log, last lines:\n{self.log_tail()}\nVirtuoso's status(''):\n{status}"

    @property
    def query_url(self) -> str:
        return self.base_url + "/sparql"

    @property
    def update_url(self) -> str:
        return self.base_url + "/sparql"

    @property
    def store_url(self) -> str:
        return self.base_url + "/sparql-graph-crud"

    @property
    def auth_url(self) -> str:
        """Query and Update for an authenticated user (HTTP Digest): ``user`` and ``password``."""
        return self.base_url + "/sparql-auth"

    @property
    def auth_store_url(self) -> str:
        return self.base_url + "/sparql-graph-crud-auth"

    def isql(self, sql: str) -> str:
        """Run SQL as dba through ``isql-vt``; its output (raises on failure)."""
        done = subprocess.run(
            [_virtuoso_tool(VIRTUOSO_ISQL), f"127.0.0.1:{self.sql_port}", self.user, self.password, f"exec={sql}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,  # checked below, its output too
        )
        if done.returncode != 0 or "*** Error" in done.stdout + done.stderr:
            raise RuntimeError(f"isql-vt failed on {sql!r}: {done.stdout}{done.stderr}")
        return done.stdout


def _virtuoso_tool(name: str) -> str:
    """A Virtuoso binary; skips the test when absent outside CI, fails under CI (``make test`` installs it)."""
    import pytest

    found = shutil.which(name)
    if found:
        return found
    reason = f"{name} is missing: apt-get install virtuoso-opensource-7-bin (make test installs it)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + "; under CI the Makefile's virtuoso target must have installed it", pytrace=False)
    pytest.skip(reason)


def _virtuoso_ini(settings: Mapping[str, str]) -> str:
    """:data:`_VIRTUOSO_INI` with ``settings`` in place of its own lines; a setting it lacks goes in [SPARQL], its
    last section."""
    ini = _VIRTUOSO_INI
    for name, value in settings.items():
        line = re.compile(rf"(?m)^{re.escape(name)}\s*=.*$")
        ini = line.sub(f"{name} = {value}", ini) if line.search(ini) else ini + f"{name} = {value}\n"
    return ini


@contextmanager
def virtuoso_server(settings: Mapping[str, str] | None = None) -> Iterator[VirtuosoServer]:
    """A real Virtuoso 7 on a fresh database in a temporary directory, on two free loopback ports.

    ``settings`` replace lines of its ini (:func:`_virtuoso_ini`). Takes about 2 s to start (a new database is
    created and checkpointed); stopped with SIGTERM, which
    Virtuoso handles as a clean shutdown; the directory is removed.
    """
    binary = _virtuoso_tool(VIRTUOSO_BINARY)
    _virtuoso_tool(VIRTUOSO_ISQL)
    directory = tempfile.mkdtemp(prefix="caie-virtuoso-")
    sql_port, http_port = free_port(), free_port()
    while http_port == sql_port:
        http_port = free_port()
    ini = Path(directory, "virtuoso.ini")
    ini.write_text(_virtuoso_ini(settings or {}).format(dir=directory, sql_port=sql_port, http_port=http_port))
    started = time.monotonic()
    log = open(Path(directory, "stdout.log"), "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [binary, "+configfile", str(ini), "+foreground"], cwd=directory, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{http_port}"
    try:
        wait_until_up(url + "/sparql?query=ASK%7B%7D", process, seconds=60.0)
        password = secrets.token_hex(12)
        server = VirtuosoServer(url, sql_port, "dba", "dba", 0.0)  # a fresh database's dba password is "dba"
        deadline = time.monotonic() + 30
        while True:  # the SQL listener comes up just after the HTTP one
            try:
                server.isql("SELECT 1;")
                break
            except RuntimeError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        server.isql(f"{_VIRTUOSO_GRANTS} USER_CHANGE_PASSWORD ('dba', 'dba', '{password}');")
        yield VirtuosoServer(url, sql_port, "dba", password, time.monotonic() - started, Path(directory))
    finally:
        stop_process(process, grace_s=30.0)  # SIGTERM is Virtuoso's clean shutdown
        log.close()
        shutil.rmtree(directory, ignore_errors=True)


# ------------------------------------------------------------------------------------ authenticating proxy


@dataclass
class ProxyControl:
    """Knobs of a running :func:`authenticating_proxy`, changeable while it runs."""

    row_cap: int | None = None
    """Cut SPARQL JSON results to this many rows and N-Triples answers to this many lines, silently (a store limit)."""
    anytime: int | None = None
    """Answer a cut answer as Virtuoso's anytime query does (README.ANYTIME.md): with this status (206, or 200 as
    its HTTPAnytimeStatus allows) and the headers X-SQL-State: S1TAT and X-SQL-Message."""
    requests: int = 0
    refused: int = 0


@contextmanager
def authenticating_proxy(
    upstream: str, *, user: str | None = None, password: str | None = None, token: str | None = None
) -> Iterator[tuple[str, ProxyControl]]:
    """A reverse proxy to ``upstream`` that answers 401 unless the request carries HTTP Basic ``user``:``password``
    or the bearer ``token``; yields its URL (paths are kept: ``{url}/query`` reaches ``{upstream}/query``) and
    its :class:`ProxyControl`. Stands in for a store that needs credentials (Virtuoso's /sparql-auth, a proxy
    in front of GraphDB or Neptune)."""
    import base64
    import json

    control = ProxyControl()
    allowed = set()
    if user is not None and password is not None:
        allowed.add("Basic " + base64.b64encode(f"{user}:{password}".encode()).decode())
    if token is not None:
        allowed.add(f"Bearer {token}")
    hop = {"host", "authorization", "content-length", "connection", "transfer-encoding", "accept-encoding"}

    def cut(body: bytes, media: str) -> bytes:
        if control.row_cap is None:
            return body
        if media.startswith("application/sparql-results+json"):
            document = json.loads(body)
            if "results" in document:
                document["results"]["bindings"] = document["results"]["bindings"][: control.row_cap]
            return json.dumps(document).encode()
        if media.startswith("application/n-triples"):
            lines = [line for line in body.split(b"\n") if line.strip()]
            return b"\n".join(lines[: control.row_cap]) + b"\n"
        return body

    async def app(
        scope: dict[str, Any], receive: Callable[..., Awaitable[Any]], send: Callable[..., Awaitable[Any]]
    ) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        control.requests += 1
        if headers.get("authorization") not in allowed:
            control.refused += 1
            challenge = b'Basic realm="store"' if user is not None else b'Bearer realm="store"'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", challenge)],
                }
            )
            await send({"type": "http.response.body", "body": b"401 Unauthorized: credentials required"})
            return
        url = upstream + scope["path"] + ("?" + scope["query_string"].decode() if scope["query_string"] else "")
        forwarded = {k: v for k, v in headers.items() if k not in hop}
        async with httpx.AsyncClient(timeout=60.0) as client:
            answer = await client.request(scope["method"], url, content=body, headers=forwarded)
        media = answer.headers.get("content-type", "")
        content = cut(answer.content, media) if answer.status_code == 200 else answer.content
        status, sent = answer.status_code, [(b"content-type", media.encode())] if media else []
        if control.anytime is not None and content != answer.content:
            status = control.anytime
            sent += [
                (b"x-sql-state", b"S1TAT"),
                (b"x-sql-message", b"RC...: Returning incomplete results, query interrupted by result timeout."),
            ]
        await send({"type": "http.response.start", "status": status, "headers": sent})
        await send({"type": "http.response.body", "body": content})

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/")
        control.requests = control.refused = 0  # not counting the probe that saw it up
        yield url, control
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
