"""A throwaway Virtuoso 7 for the tests (:func:`virtuoso_server`): a fresh database in a temporary directory,
with the limits of Debian's packaged ini (docs/stores.md), on free loopback ports."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import NamedNode

from service.core.store import RemoteStore

from .servers import free_port, stop_process, wait_until_up

VIRTUOSO_BINARY = "virtuoso-t"  # Debian package virtuoso-opensource-7-bin (7.2.5.1), as are isql-vt
VIRTUOSO_ISQL = "isql-vt"

# The limits of Debian's packaged /etc/virtuoso-opensource-7/virtuoso.ini (virtuoso-opensource-7 7.2.5.1),
# written out so the tests meet the limits an operator installing the package gets. Paths and ports differ, and
# the buffers: the package's minimal 10,000 (MaxDirtyBuffers 6,000) are raised to the values Virtuoso's own ini
# recommends for 2 GB of memory, as docs/stores.md tells operators to do (they did not stop Virtuoso 7.2.5's
# occasional freeze: docs/stores.md, "Buffers"). docs/stores.md lists every setting.
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
; no cached cardinality samples: 7.2.5 kept those taken while the record was still empty, and its plans then froze
; or ran past 60 s (docs/stores.md, "Buffers": 12 of 12 builds with it, 2 of 4 without)
RdfInferenceSampleCacheSize = 0

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


LIST_GRAPHS = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
"""Every graph holding a triple (on Virtuoso, its own too)."""


class VirtuosoStore(RemoteStore):
    """The remote backend on the session's Virtuoso, as an operator configures it for Virtuoso's packaged limits:
    ``row_cap`` its ``ResultSetMaxRows`` (10,000). ``system_graphs`` are the graphs the fresh database held
    (Virtuoso's own); the tests never drop or read them."""

    def __init__(self, server: VirtuosoServer, system_graphs: frozenset[str]) -> None:
        super().__init__(server.query_url, server.update_url, server.store_url, row_cap=10_000)
        self.system_graphs = system_graphs

    def test_graphs(self) -> list[NamedNode]:
        """Every graph holding triples but Virtuoso's own."""
        rows = self.select(LIST_GRAPHS)
        return [row["g"] for row in rows if row["g"].value not in self.system_graphs]  # type: ignore[misc]  # a GRAPH variable binds only named nodes

    def empty(self) -> None:
        """Drop every graph but Virtuoso's own, in one update request (``DROP ALL`` would drop those too)."""
        graphs = self.test_graphs()
        if graphs:
            self.run_update(" ;\n".join(f"DROP SILENT GRAPH {graph}" for graph in graphs))
