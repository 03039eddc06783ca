"""SPARQL query throughput under load: our ``/sparql`` against a raw ``oxigraph serve`` on the same data.

The data is an evaluation record's attestations (``--attestations``, 300,000 by default, four triples each:
type, criterion, outcome, time; about 1.2M triples, the same every run) in one named graph. Ours is a real
``caie serve`` process on an embedded on-disk store the data was loaded into with ``caie load``; the
baseline is ``oxigraph serve --union-default-graph`` on a store loaded with ``oxigraph load``. Both stores
are compacted (``oxigraph optimize``) before serving, so no background compaction is timed.

Two workloads, each run by wrk (Debian's ``wrk``) with ``bench/sparql_load.lua`` after a warm-up:

- lookup: ``SELECT ?p ?o WHERE { <attestation n> ?p ?o }`` with a random ``n`` per request, 16 connections;
- analytic: a random criterion's outcome tally (``GROUP BY`` over its 7,500 attestations), 4 connections.

Every request is ``GET <endpoint>?query=...`` with ``Accept: application/sparql-results+json``. Before
measuring, both endpoints answer the two queries once and must agree. Any non-2xx answer fails the run.

    .venv/bin/python bench/sparql_load.py [--attestations 300000] [--seconds 15] [--rounds 1] [--anonymous] [--set CAIE_X=V] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.servers import free_port, oxigraph_binary, wait_until_up

BASE = "http://bench.test/"
"""Our deployment base (the graph's IRI is under it) whatever port the service listens on."""
DATA = BASE + "record/"
EPO = "https://w3id.org/ob-caie/epo/"
EARL = "http://www.w3.org/ns/earl#"
PROV = "http://www.w3.org/ns/prov#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
GRAPH = "ontologies/bench"
"""Where ours keeps the data: the generic graph API writes ontology, DSO, KG and shapes graphs, not records."""
LUA = Path(__file__).with_name("sparql_load.lua")
CAIE = [sys.executable, "-m", "service.cli"]

LOOKUP = ("SELECT ?p ?o WHERE { <" + DATA + "attestations/a", "> ?p ?o }")
"""The point lookup, split where wrk puts the random key."""
OUTCOMES = ("passed", "failed", "cantTell", "inapplicable")
CRITERIA = 40
ANALYTIC = (
    f"SELECT ?outcome (COUNT(?attestation) AS ?n) WHERE {{ ?attestation <{EARL}test> <{DATA}criteria/c",
    f"> ; <{EARL}outcome> ?outcome }} GROUP BY ?outcome ORDER BY ?outcome",
)
"""A criterion's outcome tally (what a report computes per criterion), a random criterion per request: a join
and a GROUP BY over its 7,500 attestations. The tally of every criterion at once takes about 1 s of CPU a query
(3.5 s alone on the shared development machine), too long for a 15 s window at 4 connections."""


def outcome(n: int) -> str:
    """Attestation ``n``'s outcome, spread so that each criterion has every outcome."""
    return OUTCOMES[(n * 7) % 11 % 4]


def write_attestations(path: Path, attestations: int, graph: str) -> None:
    """The record as N-Triples, with the ``owl:Ontology`` declaration an ontology-kind graph needs."""
    with path.open("w", encoding="utf-8") as out:
        out.write(f"<{graph}> <{RDF_TYPE}> <http://www.w3.org/2002/07/owl#Ontology> .\n")
        for n in range(attestations):
            subject = f"<{DATA}attestations/a{n}>"
            out.write(
                f"{subject} <{RDF_TYPE}> <{EPO}Attestation> .\n"
                f"{subject} <{EARL}test> <{DATA}criteria/c{n % CRITERIA}> .\n"
                f"{subject} <{EARL}outcome> <{EARL}{outcome(n)}> .\n"
                f"{subject} <{PROV}generatedAtTime> \"2026-08-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z\"^^<{XSD_DATETIME}> .\n"
            )


@dataclass(frozen=True)
class Endpoint:
    """A running SPARQL endpoint: where to GET queries, and the Authorization header to send ("" for none)."""

    name: str
    url: str
    path: str
    authorization: str = ""

    def get(self, query: str) -> httpx.Response:
        headers = {"Accept": "application/sparql-results+json"}
        if self.authorization:
            headers["Authorization"] = self.authorization
        response = httpx.get(self.url + self.path, params={"query": query}, headers=headers, timeout=120)
        response.raise_for_status()
        return response


@contextmanager
def _running(command: list[str], probe: str, log: Path, env: dict[str, str] | None = None) -> Iterator[None]:
    """The server process until the block ends; its output goes to ``log`` (shown if it does not come up)."""
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        try:
            wait_until_up(probe, process, seconds=120.0)
        except RuntimeError as error:
            raise SystemExit(f"{error}:\n{log.read_text(errors='replace')[-4000:]}") from None
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def prepare(workdir: Path, attestations: int) -> None:
    """The record loaded into both stores under ``workdir`` (``caie load`` and ``oxigraph load``), then compacted.

    A workdir already prepared for the same number of attestations is used as it is.
    """
    marker = workdir / "prepared.json"
    if marker.exists():
        prepared = json.loads(marker.read_text())["attestations"]
        if prepared != attestations:
            raise SystemExit(f"{workdir} holds {prepared:,} attestations, not {attestations:,}: give another --workdir")
        return
    workdir.mkdir(parents=True, exist_ok=True)
    data = workdir / "record.nt"
    write_attestations(data, attestations, BASE + GRAPH)
    subprocess.run(
        [*CAIE, "load", str(data), "--graph", GRAPH, "--data-dir", str(workdir / "caie")],
        check=True,
        env={**os.environ, "CAIE_BASE_URL": BASE},
        stdout=subprocess.DEVNULL,
    )
    subprocess.run(
        [
            oxigraph_binary(),
            "load",
            "--location",
            str(workdir / "oxigraph"),
            "--file",
            str(data),
            "--graph",
            BASE + GRAPH,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for store in ("caie", "oxigraph"):
        subprocess.run(
            [oxigraph_binary(), "optimize", "--location", str(workdir / store)], check=True, stdout=subprocess.DEVNULL
        )
    data.unlink()
    marker.write_text(json.dumps({"attestations": attestations}))


@contextmanager
def ours(workdir: Path, anonymous: bool, settings: dict[str, str]) -> Iterator[Endpoint]:
    """``caie serve`` on the prepared embedded store, with a bearer token configured for the queries.

    wrk is one client with 16 connections: the query guard's caps on queries at once, per client (2) and in
    all (8), would refuse or hold back the rest, where oxigraph serve has no cap; so both are raised to 16,
    and the query workers kept ready with them (``settings``, ``CAIE_*`` variables from ``--set``, come last).
    """
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {
        **os.environ,
        "CAIE_BASE_URL": BASE,
        "CAIE_TOKENS": json.dumps({token: {"agent": "bench", "roles": []}}),
        "CAIE_QUERY_MAX_PER_CLIENT": "16",
        "CAIE_QUERY_MAX_CONCURRENT": "16",
        "CAIE_QUERY_WORKERS": "16",
        **settings,
    }
    url = f"http://127.0.0.1:{port}"
    command = [*CAIE, "serve", "--data-dir", str(workdir / "caie"), "--port", str(port)]
    with _running(command, url + "/health", workdir / "caie.log", env):
        yield Endpoint("ours", url, "/sparql", "" if anonymous else f"Bearer {token}")


@contextmanager
def baseline(workdir: Path) -> Iterator[Endpoint]:
    """``oxigraph serve`` on the prepared store, the default graph being the union of the named graphs (as ours)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        oxigraph_binary(),
        "serve",
        "--location",
        str(workdir / "oxigraph"),
        "--bind",
        f"127.0.0.1:{port}",
        "--union-default-graph",
    ]
    with _running(command, url + "/query?query=ASK%7B%7D", workdir / "oxigraph.log"):
        yield Endpoint("baseline", url, "/query")


def _rows(response: httpx.Response) -> list[str]:
    bindings = response.json()["results"]["bindings"]
    return sorted(json.dumps({name: term["value"] for name, term in row.items()}, sort_keys=True) for row in bindings)


def check_agree(endpoints: list[Endpoint], attestations: int) -> None:
    """Both endpoints give the same rows for a lookup and the analytic query, and the rows are what was loaded."""
    key = attestations // 2
    lookups = [_rows(e.get(LOOKUP[0] + str(key) + LOOKUP[1])) for e in endpoints]
    criterion = 7
    analytics = [_rows(e.get(ANALYTIC[0] + str(criterion) + ANALYTIC[1])) for e in endpoints]
    if len(lookups[0]) != 4 or any(rows != lookups[0] for rows in lookups):
        raise SystemExit(f"the endpoints disagree on attestation {key}: {lookups}")
    tally = {json.loads(row)["outcome"].removeprefix(EARL): int(json.loads(row)["n"]) for row in analytics[0]}
    expected = Counter(outcome(n) for n in range(criterion, attestations, CRITERIA))
    if tally != expected or any(rows != analytics[0] for rows in analytics):
        raise SystemExit(f"criterion {criterion}'s tally is {tally}, not {dict(expected)}, or the endpoints disagree")


@dataclass(frozen=True)
class Workload:
    name: str
    prefix: str
    suffix: str
    keys: int
    connections: int


@dataclass(frozen=True)
class Measure:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float

    @property
    def rate(self) -> float:
        return self.requests / self.seconds


def wrk(endpoint: Endpoint, workload: Workload, seconds: float, warmup: bool = False) -> Measure:
    """One wrk run; fails on any socket error or non-2xx answer, or when no request completed (but in a warm-up)."""
    threads = min(2, workload.connections)
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{workload.connections}",
        f"-d{seconds:g}s",
        "--timeout",
        "120s",
        "--latency",
        "-s",
        str(LUA),
        endpoint.url + endpoint.path,
        "--",
        endpoint.path + workload.prefix,
        workload.suffix,
        str(workload.keys),
        endpoint.authorization,
    ]
    run = subprocess.run(command, capture_output=True, text=True, check=False)  # its failure is reported below
    if run.returncode != 0:
        raise SystemExit(f"wrk failed on {endpoint.name} {workload.name}: {run.stderr or run.stdout}")
    output = run.stdout
    line = next(line for line in output.splitlines() if line.startswith("WRK_JSON "))
    # The first failed answer of each wrk thread (the Lua script's response()), to say why a run failed.
    seen = [line.removeprefix("WRK_ERROR ") for line in output.splitlines() if line.startswith("WRK_ERROR ")]
    result = json.loads(line.removeprefix("WRK_JSON "))
    failures = {name: result[name] for name in ("connect", "read", "write", "status", "timeout") if result[name]}
    if failures or not (result["requests"] or warmup):
        raise SystemExit(f"{endpoint.name} {workload.name}: wrk saw errors {failures}; first failed answers: {seen}")
    return Measure(result["requests"], result["duration_us"] / 1e6, result["p50_us"] / 1e3, result["p99_us"] / 1e3)


def ensure_wrk() -> None:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is missing: apt-get install -y wrk (make bench-sparql installs it)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attestations", type=int, default=300_000)
    parser.add_argument("--seconds", type=float, default=15.0, help="measured seconds per workload and endpoint")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured seconds before each measurement")
    parser.add_argument("--rounds", type=int, default=1, help="alternate ours and baseline this many times; medians")
    parser.add_argument("--anonymous", action="store_true", help="query ours without a bearer token")
    parser.add_argument("--only", choices=["lookup", "analytic"], help="run one workload")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="CAIE_NAME=VALUE",
        help="a setting for our service (repeatable), e.g. --set CAIE_QUERY_WORKERS=16",
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep the loaded stores here and reuse them (default: a temporary directory)"
    )
    args = parser.parse_args()
    ensure_wrk()
    workloads = [
        Workload("lookup", "?query=" + quote(LOOKUP[0], safe=""), quote(LOOKUP[1], safe=""), args.attestations, 16),
        Workload("analytic", "?query=" + quote(ANALYTIC[0], safe=""), quote(ANALYTIC[1], safe=""), CRITERIA, 4),
    ]
    workloads = [w for w in workloads if args.only in (None, w.name)]
    with tempfile.TemporaryDirectory(prefix="bench-sparql-") as scratch:
        workdir = args.workdir or Path(scratch)
        start = time.perf_counter()
        prepare(workdir, args.attestations)
        with (
            baseline(workdir) as raw,
            ours(workdir, args.anonymous, dict(item.split("=", 1) for item in args.set)) as mine,
        ):
            print(
                f"data: {args.attestations:,} attestations, {1 + 4 * args.attestations:,} triples; both stores loaded, "
                f"compacted and serving in {time.perf_counter() - start:.0f} s",
                flush=True,
            )
            check_agree([mine, raw], args.attestations)
            rates: dict[tuple[str, str], list[Measure]] = {}
            for round_ in range(args.rounds):
                for workload in workloads:
                    for endpoint in (mine, raw):
                        if args.warmup > 0:
                            wrk(endpoint, workload, args.warmup, warmup=True)
                        measure = wrk(endpoint, workload, args.seconds)
                        rates.setdefault((workload.name, endpoint.name), []).append(measure)
                        print(
                            f"round {round_ + 1} {workload.name:<8} {endpoint.name:<8} c={workload.connections:<2} "
                            f"{measure.rate:9.1f} req/s  p50 {measure.p50_ms:8.2f} ms  p99 {measure.p99_ms:8.2f} ms  "
                            f"({measure.requests} requests)",
                            flush=True,
                        )
    for workload in workloads:

        def median(name: str, field: str, workload: Workload = workload) -> float:  # this iteration's, bound
            return statistics.median(getattr(m, field) for m in rates[(workload.name, name)])

        ours_rate, raw_rate = median("ours", "rate"), median("baseline", "rate")
        print(
            f"SPARQL_{workload.name.upper()}: ours={ours_rate:.1f} baseline={raw_rate:.1f} ratio={ours_rate / raw_rate:.3f} "
            f"p50_ms={median('ours', 'p50_ms'):.2f} baseline_p50_ms={median('baseline', 'p50_ms'):.2f} "
            f"p99_ms={median('ours', 'p99_ms'):.2f} baseline_p99_ms={median('baseline', 'p99_ms'):.2f} "
            f"connections={workload.connections}"
        )


if __name__ == "__main__":
    main()
