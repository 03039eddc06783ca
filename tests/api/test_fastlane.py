"""The fast lane (issue 8, item 7): ``caie serve`` forks fronts that answer plain ``GET /sparql`` lookups.

Real ``caie serve`` processes on the embedded store, one with the fast lane and one without, over raw HTTP/1.1
sockets so that both get byte-identical requests and each answer can be compared byte for byte (but its
``date``). Which process answered is read from the kernel: the process holding the server's end of the
connection (``/proc/net/tcp`` and ``/proc/<pid>/fd``); a front answers what it can, the main process the rest.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlencode

import httpx
import pytest

from ..conftest import ROLES
from ..servers import caie_serve, children, free_port, wait_until_up

BASE = "http://caie.test/"
GRAPH = f"{BASE}graphs/ontologies/data"
TOKENS = {"admin-token": "admin", "vera-token": "vera"}
DATA = (
    "<http://example.org/data> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://www.w3.org/2002/07/owl#Ontology> .\n"
    + "".join(f'<http://example.org/s{i}> <http://example.org/p> "v{i}" .\n' for i in range(1000))
).encode()
LIMITS = {
    "CAIE_QUERY_TIME_LIMIT_S": "2",
    "CAIE_QUERY_MAX_RESULT_BYTES": "50000",
    "CAIE_QUERY_MEMORY_LIMIT_MB": "64",
    "CAIE_FAST_LANE_BUDGET_S": "0.25",
}
RUNAWAY = (
    "SELECT * WHERE { GRAPH ?g { ?a ?b ?c . ?d ?e ?f . ?x ?y ?z } "
    "FILTER(STRLEN(CONCAT(STR(?c), STR(?f), STR(?z))) > 1000) }"
)
_EIGHT_FOLD = "".join(f"BIND (CONCAT({', '.join([f'?v{step}'] * 8)}) AS ?v{step + 1}) " for step in range(8))
HUGE_VALUE = f'SELECT ?v8 WHERE {{ BIND ("0123456789abcdef" AS ?v0) {_EIGHT_FOLD}}}'
"""One value grown eightfold eight times (16 bytes to 268 MB): the memory bound is reached after some 40 MB of
copying, a few CPU milliseconds, so the 2 s time limit cannot come first however loaded the machine is (a sort
of large rows needed some CPU tenths, which a machine busy with other work did not always give within 2 s)."""
JSON = "application/sparql-results+json"


@dataclass
class Served:
    """A running ``caie serve``: its process, port and the pids of its fronts (none without the fast lane)."""

    process: subprocess.Popen[bytes]
    port: int
    first_fronts: dict[int, int] = field(default_factory=dict)
    """The first fronts' file status flags on the listening socket, before any write (the fixture reads them)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def listener(self) -> str:
        """The inode of the listening socket."""
        listening = f"0100007F:{self.port:04X} 00000000:0000 0A"
        return next(
            line.split()[9]
            for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
            if " ".join(line.split()[1:4]) == listening
        )

    def fronts(self) -> set[int]:
        """The children holding the listening socket: the fronts (query workers close it)."""
        inode = self.listener()
        return {pid for pid in children(self.process.pid) if holds(pid, inode)}


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def holds(pid: int, inode: str) -> bool:
    try:
        return any(os.readlink(fd) == f"socket:[{inode}]" for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:  # it ended meanwhile
        return False


def status_flags(pid: int, inode: str) -> int | None:
    """The file status flags (``O_NONBLOCK`` among them) of ``pid``'s descriptor of the socket ``inode``."""
    try:
        fd = next(fd for fd in Path(f"/proc/{pid}/fd").iterdir() if os.readlink(fd) == f"socket:[{inode}]")
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/fdinfo/{fd.name}").read_text().splitlines())
    except (OSError, StopIteration):  # it ended meanwhile
        return None
    return int(fields["flags"].strip(), 8)


def holder(served: Served, client: socket.socket) -> int | None:
    """The pid holding the service's end of ``client``'s connection: the main process or one of its fronts.

    The main process first: a query worker it forks holds copies of its sockets until it closes them."""
    local = client.getsockname()[1]
    wanted = f"0100007F:{served.port:04X} 0100007F:{local:04X}"
    inode = next(
        (
            line.split()[9]
            for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
            if " ".join(line.split()[1:3]) == wanted
        ),
        None,
    )
    return next(
        (pid for pid in [served.process.pid, *children(served.process.pid)] if inode and holds(pid, inode)), None
    )


def two_fronts(served: Served) -> None:
    """Wait until the service has its two fronts (after a write or a query given up, it forks them lazily)."""
    deadline = time.monotonic() + 10
    while len(served.fronts()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # a fresh front answers its probe before it accepts


def start(data: Path, **env: str) -> Served:
    port = free_port()
    credentials = {token: {"agent": agent, "roles": ROLES[agent]} for token, agent in TOKENS.items()}
    log = data.parent / f"{data.name}.log"
    process = caie_serve(
        port, credentials, "--base-url", BASE, data=data, log=log, **{"CAIE_FAST_LANE_PROCESSES": "2", **LIMITS, **env}
    )
    return Served(process, port)


def stop(served: Served) -> None:
    if served.process.poll() is None:
        served.process.send_signal(signal.SIGTERM)
        served.process.wait(timeout=20)


def load(served: Served, name: str = "data", data: bytes = DATA) -> None:
    wait_until_up(served.url + "/health", served.process, seconds=120)
    put = httpx.put(
        f"{served.url}/graphs/ontologies/{name}",
        content=data,
        headers={"Content-Type": "text/turtle", "Authorization": "Bearer admin-token"},
        timeout=60,
    )
    assert put.status_code in (200, 201), put.text


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Served]]:
    """The service with the fast lane (two fronts) and without, on the same data; both start at once."""
    directory = tmp_path_factory.mktemp("fastlane")
    lane, plain = start(directory / "lane"), start(directory / "plain", CAIE_FAST_LANE_PROCESSES="0")
    try:
        wait_until_up(lane.url + "/health", lane.process, seconds=120)
        two_fronts(lane)
        flags = {pid: status_flags(pid, lane.listener()) for pid in lane.fronts()}
        lane.first_fronts = {pid: flag for pid, flag in flags.items() if flag is not None}
        load(lane)
        load(plain)
        yield lane, plain
    finally:
        stop(lane)
        stop(plain)


class Connection:
    """One keep-alive HTTP/1.1 connection, written and read as bytes."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.sock = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        self.buffer = b""

    def send(self, method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b"") -> bytes:
        lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in (headers or {}).items())]
        if body:
            lines.append(f"Content-Length: {len(body)}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        return self.read(method)

    def read(self, method: str = "GET") -> bytes:
        while b"\r\n\r\n" not in self.buffer:
            self._more()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        length = 0
        if method != "HEAD":
            framed = re.search(rb"\r\ncontent-length: (\d+)", head, re.IGNORECASE)
            assert framed, f"an answer without content-length: {head[:300]!r}"
            length = int(framed[1])
        while len(self.buffer) < length:
            self._more()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return head + b"\r\n\r\n" + body

    def _more(self) -> None:
        part = self.sock.recv(65536)
        assert part, "the service closed the connection"
        self.buffer += part

    def holder(self) -> int | None:
        return holder(self.served, self.sock)

    def close(self) -> None:
        self.sock.close()


def undated(answer: bytes) -> bytes:
    return re.sub(rb"\r\ndate: [^\r]*", b"\r\ndate: -", answer)


def sparql(query: str, **parameters: str) -> str:
    return "/sparql?" + urlencode({"query": query, **parameters}, quote_via=quote)


LOOKUP = "SELECT ?o WHERE { <http://example.org/s7> <http://example.org/p> ?o }"
IN_GRAPH = f"SELECT ?s ?o WHERE {{ GRAPH <{GRAPH}> {{ ?s <http://example.org/p> ?o }} }} ORDER BY ?o LIMIT 5"
CONSTRUCT = "CONSTRUCT { ?s <http://example.org/q> ?o } WHERE { ?s <http://example.org/p> ?o } ORDER BY ?o LIMIT 4"
FRONT_CASES = [
    (sparql(LOOKUP), {"Accept": JSON}),
    (sparql(IN_GRAPH), {"Accept": "application/sparql-results+xml", "Authorization": "Bearer vera-token"}),
    (sparql(IN_GRAPH), {"Accept": "text/csv"}),
    (sparql(IN_GRAPH), {"Accept": "text/tab-separated-values", "Origin": "https://elsewhere.example"}),
    (sparql(LOOKUP), {}),
    (sparql("ASK { <http://example.org/s7> ?p ?o }"), {"Accept": JSON}),
    (sparql("ASK { <http://example.org/nothing> ?p ?o }"), {"Accept": "application/sparql-results+xml"}),
    (sparql(CONSTRUCT), {"Accept": "text/turtle"}),
    (sparql(CONSTRUCT), {"Accept": "application/n-triples", "Authorization": "Bearer admin-token"}),
    (sparql(CONSTRUCT), {"Accept": "application/ld+json"}),
    (sparql(f"SELECT (COUNT(*) AS ?n) FROM <{GRAPH}> WHERE {{ ?s ?p ?o }}"), {"Accept": JSON}),
    (sparql("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", **{"default-graph-uri": GRAPH}), {"Accept": JSON}),
    (sparql("SELECT (COUNT(*) AS ?g) WHERE { GRAPH ?g { ?s ?p ?o } }", **{"named-graph-uri": GRAPH}), {"Accept": JSON}),
    (sparql(LOOKUP), {"Accept": JSON, "Connection": "close"}),
]
MAIN_CASES = [
    ("GET", sparql(LOOKUP), {"Authorization": "Bearer not-a-token"}),
    ("GET", sparql("SELECT nonsense"), {}),
    ("GET", sparql(LOOKUP), {"Accept": "image/png"}),
    ("GET", sparql(LOOKUP) + "&query=ASK%7B%7D", {}),
    ("GET", sparql("SELECT * WHERE { SERVICE <http://127.0.0.1:1/> { ?s ?p ?o } }"), {}),
    ("GET", sparql("SELECT * WHERE { ?s ?p ?o }"), {"Accept": JSON}),  # over the result-size limit
    ("GET", "/sparql", {"Accept": "text/html"}),  # the service description: a browser is sent to the query page
    ("HEAD", sparql(LOOKUP), {"Accept": JSON}),
    ("OPTIONS", "/sparql", {"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET"}),
    ("GET", "/health", {}),
]


def test_every_answer_is_the_main_process_answer_byte_for_byte(servers: tuple[Served, Served]) -> None:
    """Lookups a front may answer come from a front; everything else from the main process; all of them are the
    bytes the service without the fast lane sends, and a connection handed to the main process stays there."""
    lane, plain = servers
    for target, headers in FRONT_CASES:
        # While a front is being forked again (one gave up a request on a loaded machine) the main process
        # accepts and answers: that is allowed, so such a case is sent again once the fronts are back.
        for attempt in range(3):
            two_fronts(lane)
            ours, theirs = Connection(lane), Connection(plain)
            answer = ours.send("GET", target, headers)
            assert undated(answer) == undated(theirs.send("GET", target, headers)), target
            assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
            if headers.get("Connection") == "close":
                assert ours.sock.recv(1) == b"", "the connection stayed open after 'Connection: close'"
                by_front = True
            else:
                by_front = ours.holder() in lane.fronts()
            ours.close()
            theirs.close()
            if by_front:
                break
        assert by_front, f"not answered by a front in {attempt + 1} tries: {target} {headers}"
    body = b"query=" + quote(LOOKUP).encode()
    for method, target, headers in [
        *MAIN_CASES,
        ("POST", "/sparql", {"Content-Type": "application/x-www-form-urlencoded"}),
    ]:
        ours, theirs = Connection(lane), Connection(plain)
        sent = body if method == "POST" else b""
        assert undated(ours.send(method, target, headers, sent)) == undated(
            theirs.send(method, target, headers, sent)
        ), target
        assert ours.holder() == lane.process.pid, f"{method} {target} {headers} was not handed to the main process"
        # once handed over, a lookup on the same connection is the main process's too
        assert b'"v7"' in ours.send("GET", sparql(LOOKUP), {"Accept": JSON})
        assert ours.holder() == lane.process.pid
        ours.close()
        theirs.close()


def test_after_a_write_every_keep_alive_connection_sees_it(servers: tuple[Served, Served]) -> None:
    """Connections the fronts hold, opened before a write, each see the write in the very next lookup."""
    lane, _ = servers
    for round_ in range(2):
        two_fronts(lane)
        connections = [Connection(lane) for _ in range(6)]
        for connection in connections:
            assert b'"v7"' in connection.send("GET", sparql(LOOKUP), {"Accept": JSON})
        assert any(c.holder() in lane.fronts() for c in connections), (
            f"no front holds a connection: {[c.holder() for c in connections]} {lane.process.pid} {lane.fronts()} {children(lane.process.pid)}"
        )
        subject = f"http://example.org/new{round_}"
        load(
            lane,
            f"new{round_}",
            f'<{subject}> a <http://www.w3.org/2002/07/owl#Ontology> ; <http://example.org/p> "fresh" .\n'.encode(),
        )
        for connection in connections:  # at once, on the same connections
            answer = connection.send("GET", sparql(f"SELECT ?o WHERE {{ <{subject}> ?p ?o }}"), {"Accept": JSON})
            assert b'"fresh"' in answer, answer
            connection.close()


def test_a_runaway_in_a_front_ends_with_the_main_process_error_while_lookups_go_on(
    servers: tuple[Served, Served],
) -> None:
    """A runaway goes to a front, which gives it up at its 0.25 s budget; the main process runs it to its 2 s limit
    and answers its clear error; meanwhile fronts (fresh ones) answer lookups. The same for a query that takes
    more memory than a front may, which ends at the main process's memory bound."""
    lane, _ = servers
    for query, limit in ((RUNAWAY, "time"), (HUGE_VALUE, "memory")):
        two_fronts(lane)
        runaway = Connection(lane)
        runaway.send("GET", sparql(LOOKUP), {"Accept": JSON})
        front = runaway.holder()
        assert front in lane.fronts()
        with ThreadPoolExecutor(1) as pool:
            stopped = pool.submit(runaway.send, "GET", sparql(query), {"Accept": JSON})
            answered = 0
            while not stopped.done():
                lookup = Connection(lane)
                assert b'"v7"' in lookup.send("GET", sparql(LOOKUP), {"Accept": JSON})
                answered += 1
                lookup.close()
                time.sleep(0.05)
            answer = stopped.result()
        assert answered >= 3, "lookups were not answered while the runaway ran"
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 500 ") and b"application/problem+json" in head, answer[:300]
        assert json.loads(body)["limit"] == limit
        assert runaway.holder() == lane.process.pid and front not in lane.fronts(), (
            "the front that gave up did not exit"
        )
        runaway.close()
    two_fronts(lane)
    fresh = Connection(lane)
    assert b'"v7"' in fresh.send("GET", sparql(LOOKUP), {"Accept": JSON}) and fresh.holder() in lane.fronts()
    fresh.close()


def test_fronts_accept_without_blocking(servers: tuple[Served, Served]) -> None:
    """Every front waiting for a connection is woken by each new one, and all but one find none: their shared
    listening socket is non-blocking from the start (uvicorn binds it blocking). A front blocked in accept() left
    the requests on its own connections unread until some other connection came (a client's 30 s timeout after a
    write), and a stale front did not leave meanwhile (it left, handing its connections over, at the next one).
    Read as the first fronts came up: once the main process has accepted on the socket itself (libuv sets it
    non-blocking then), it stays so."""
    lane, _ = servers
    assert lane.first_fronts, "no front came up"
    for pid, flags in lane.first_fronts.items():
        assert flags & os.O_NONBLOCK, f"front {pid} accepted on a blocking socket"


def test_fronts_stop_with_the_service(servers: tuple[Served, Served]) -> None:
    lane, _ = servers
    two_fronts(lane)
    fronts = lane.fronts()
    assert len(fronts) == 2
    lane.process.send_signal(signal.SIGTERM)
    lane.process.wait(timeout=20)
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in fronts) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in fronts), "a front outlived the service"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", lane.port), timeout=2)
