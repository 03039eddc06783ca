"""Coverage, outcome distribution and probe pass rates of an evaluation with 1,000 criteria and 1,000,000
determinations, over HTTP on the embedded store (issue 11: at most 1 s).

The record (bench/_metrics_data.py): 1,000 criteria (20 out of scope, 30 in scope and never probed), one plan of
63,125 single-turn probes each exercising four criteria, one run (625 cases ended in an execution error),
1,000,000 determinations by four judges in batches of 1,000, and one attestation per probed criterion (50 of
them corrected by a superseding one), each aggregating every determination on its criterion; made once through
the service's operations and RDF functions and bulk-loaded, then kept under ``--cache`` by a digest of the
generator's parameters and code.

Ours: ``GET /evaluations/metrics-1m/metrics`` (``Accept: application/json``) from a real ``caie serve`` process on
that store over loopback HTTP: one warm-up, then the median of ``--repeat`` (3) requests. Baseline, the floor: the
same numbers computed in plain Python from the same values held in lists and dicts (built before timing; median
of ``--repeat`` runs). Printed last::

    METRICS_1M: ours=<s> baseline=<s> ratio=<ours/baseline> identical=<1|0> ... target_s=1 met=<1|0>

``identical`` is 1 when the HTTP answer's coverage, distribution and every criterion's k, n, N and cases equal
the baseline's. ``coverage_s``, ``distribution_s``: each query alone through ``GraphService.rows`` in process after
the server stops (where the time goes); ``pass_rates_s``: the pass-rate rows as the service reads them (the run's
tallies, checked current), of which ``tallies_s`` is ``pass-rate-tallies.rq``; ``recount_s``: ``pass-rate-counts.rq``
over every determination, what the tallies spare a request (and what a report and its verification still run).
The run's tallies are counted once from the bulk-loaded record before timing (``recount_tallies``, as the first
judgments batch through the API would), when the store does not have them yet.

    .venv/bin/python bench/metrics_1m.py [--cache DIR] [--store DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import httpx
from pyoxigraph import NamedNode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _metrics_data import build, settings_for, store_dir
from _metrics_params import BASE, EVALUATION_ID, Params, Plain

from service.composition import build_services
from service.core.config import Credential
from service.judgments.attestations import aggregate
from service.judgments.model import CANT_TELL, FAILED, PASSED
from service.judgments.tallies import facts_ref, pass_rate_rows, recount_tallies, tallies_ref
from service.runs.records import run_view
from tests.servers import free_port

COUNTED = (PASSED, FAILED, CANT_TELL)
BENCH = Credential(agent="bench", roles=frozenset({"admin"}))
Numbers = dict[str, Any]
"""What is compared: ``coverage`` (applicable, covered, applicable weight, covered weight), ``distribution``
(outcome -> (criteria, weight)) and ``passRates`` (criterion -> (k, n, N, cases))."""


def plain_numbers(plain: Plain) -> Numbers:
    """The baseline: DESIGN.md's definitions (and pass-rate-counts.rq's per-case outcome) over plain values."""
    weights = {c: w for c, w, in_scope in plain.criteria if in_scope}
    superseded = {old for _, _, _, old in plain.attestations if old is not None}
    attested: dict[str, list[str]] = defaultdict(list)
    for iri, criterion, outcome, _ in plain.attestations:
        if iri not in superseded and outcome in COUNTED:
            attested[criterion].append(outcome)
    outcomes = {c: aggregate(found) for c, found in attested.items() if c in weights}
    distribution = {
        o: (
            sum(1 for v in outcomes.values() if v == o),
            sum((weights[c] for c, v in outcomes.items() if v == o), Decimal(0)),
        )
        for o in COUNTED
    }
    coverage = (
        len(weights),
        len(outcomes),
        sum(weights.values(), Decimal(0)),
        sum((weights[c] for c in outcomes), Decimal(0)),
    )
    ruled: dict[tuple[str, str], list[str]] = defaultdict(list)
    for criterion, probe, outcome in plain.determinations:
        ruled[(criterion, probe)].append(outcome)
    tally: dict[str, list[int]] = {}
    for probe, exercised in plain.cases:
        for criterion in exercised:
            if criterion in weights:
                counts = tally.setdefault(criterion, [0, 0, 0])
                counts[2] += 1
                outcome = aggregate(ruled.get((criterion, probe), []))
                counts[1] += outcome is not None
                counts[0] += outcome == PASSED
    rates = {c: (k, n, plain.frames.get(c), cases) for c, (k, n, cases) in tally.items()}
    return {"coverage": coverage, "distribution": distribution, "passRates": rates}


def served_numbers(answer: dict[str, Any]) -> Numbers:
    """The same numbers from the service's JSON answer (service/api/shapes.py ``metrics_json``)."""
    coverage = answer["coverage"]
    distribution = {
        "http://www.w3.org/ns/earl#" + share["outcome"]: (share["criteria"], Decimal(share["weight"]))
        for share in answer["distribution"]["outcomes"]
    }
    rates = {r["criterion"]: (r["k"], r["n"], r["N"], r["cases"]) for r in answer["passRates"]}
    return {
        "coverage": (
            coverage["applicable"],
            coverage["covered"],
            Decimal(coverage["applicableWeight"]),
            Decimal(coverage["coveredWeight"]),
        ),
        "distribution": distribution,
        "passRates": rates,
    }


def timed(
    repeat: int, call: Callable[[], Any], cpu: Callable[[], float] = time.process_time
) -> tuple[float, float, Any]:
    """The median wall-clock and ``cpu`` seconds of ``repeat`` calls, and the last call's value."""
    seconds, spent, value = [], [], None
    for _ in range(repeat):
        started, used = time.perf_counter(), cpu()
        value = call()
        seconds.append(time.perf_counter() - started)
        spent.append(cpu() - used)
    return statistics.median(seconds), statistics.median(spent), value


def process_cpu(pid: int) -> Callable[[], float]:
    """CPU seconds (user and system, every thread) process ``pid`` has used so far, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    return read


def serve(directory: Path, log: IO[bytes] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """``caie serve`` on ``directory`` at a free port; its standard error to ``log`` when given."""
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service.cli",
            "serve",
            "--data-dir",
            str(directory),
            "--base-url",
            BASE,
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
        cwd=Path(__file__).resolve().parents[1],
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            httpx.get(url + "/health", timeout=1)
            return server, url
        except httpx.HTTPError:
            if server.poll() is not None:
                raise SystemExit(f"caie serve exited with {server.returncode}")
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("caie serve did not answer /health within 60 s")


def over_http(directory: Path, repeat: int) -> tuple[float, float, float, dict[str, Any]]:
    """The first request's seconds; the median wall-clock and server CPU seconds of ``repeat`` requests after it;
    the answer."""
    server, url = serve(directory)
    try:
        with httpx.Client(base_url=url, timeout=3600, headers={"Accept": "application/json"}) as client:

            def get() -> httpx.Response:
                answer = client.get(f"/evaluations/{EVALUATION_ID}/metrics")
                if answer.status_code != 200:
                    raise SystemExit(
                        f"GET /evaluations/{EVALUATION_ID}/metrics: {answer.status_code} {answer.text[:500]}"
                    )
                return answer

            first, _, _ = timed(1, get)
            median, cpu, answer = timed(repeat, get, process_cpu(server.pid))
    finally:
        server.terminate()
        server.wait(timeout=60)
    return first, median, cpu, answer.json()


def ensure_tallies(directory: Path) -> None:
    """The run's pass-rate tallies and the facts they rest on, counted from the bulk-loaded record once
    (``recount_tallies``: what the first judgments batch through the API does), unless the store has them; not
    measured."""
    services = build_services(settings_for(directory))
    try:
        graphs = services.graphs
        if (
            graphs.find(tallies_ref(graphs, EVALUATION_ID, 1)) is None
            or graphs.find(facts_ref(graphs, EVALUATION_ID, 1)) is None
        ):
            started = time.perf_counter()
            recount_tallies(graphs, EVALUATION_ID, run_view(graphs, EVALUATION_ID, 1), BENCH)
            print(
                f"tallies: run 1's tallies and facts counted from the record in {time.perf_counter() - started:.1f} s (once, not measured)",
                flush=True,
            )
    finally:
        services.close()


def per_query(directory: Path, evaluation: str) -> dict[str, tuple[float, float]]:
    """Each part of the pass rates and each metric query alone, in process (no HTTP, no shaping): one warm-up, then
    one timed run (wall, CPU). ``pass-rate-counts`` is the recount from every determination that the tallies spare."""
    services = build_services(settings_for(directory))
    graphs, bound = services.graphs, {"evaluation": NamedNode(evaluation)}
    try:
        parts: dict[str, Callable[[], object]] = {
            name: (lambda name=name: graphs.rows(name, bound))
            for name in ("coverage", "outcome-distribution", "pass-rate-tallies", "pass-rate-counts")
        }
        parts["pass-rates"] = lambda: pass_rate_rows(graphs, bound, evaluation, None)
        found = {}
        for name, run in parts.items():
            run()
            found[name] = timed(1, run)[:2]
        return found
    finally:
        services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("CAIE_BENCH_CACHE", "/tmp/ob-caie-bench")),
        help="where generated records are kept, by a digest of the generator (default %(default)s)",
    )
    parser.add_argument("--store", type=Path, help="use this store directory as it is (made there if absent)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-queries", action="store_true", help="skip the per-query timings")
    args = parser.parse_args()
    params = Params()
    directory = args.store or store_dir(args.cache, params)
    started = time.perf_counter()
    plain = build(directory, params, lambda line: print(line, flush=True))
    print(
        f"data: {directory} ({len(plain.criteria)} criteria, {len(plain.cases)} cases, {len(plain.determinations)} "
        f"determinations, {len(plain.attestations)} attestations; ready in {time.perf_counter() - started:.0f} s, not measured)",
        flush=True,
    )
    ensure_tallies(directory)
    base, base_cpu, expected = timed(args.repeat, lambda: plain_numbers(plain))
    print(
        f"baseline: plain Python over the same values in {base:.3f} s, CPU {base_cpu:.3f} s (median of {args.repeat})",
        flush=True,
    )
    first, ours, ours_cpu, answer = over_http(directory, args.repeat)
    print(
        f"ours: GET /evaluations/{EVALUATION_ID}/metrics in {ours:.3f} s, server CPU {ours_cpu:.3f} s (median of "
        f"{args.repeat}; first request {first:.3f} s)",
        flush=True,
    )
    got = served_numbers(answer)
    identical = got == expected
    for key in expected:
        if got[key] != expected[key]:
            print(f"  differs: {key}", flush=True)
    queries = {} if args.no_queries else per_query(directory, plain.evaluation)
    if queries:
        print(
            "queries in process: " + ", ".join(f"{name} {s:.3f} s (CPU {c:.3f} s)" for name, (s, c) in queries.items()),
            flush=True,
        )
    extras = "".join(
        f" {key}_s={queries[name][0]:.3f} {key}_cpu={queries[name][1]:.3f}"
        for key, name in (
            ("coverage", "coverage"),
            ("distribution", "outcome-distribution"),
            ("pass_rates", "pass-rates"),
            ("tallies", "pass-rate-tallies"),
            ("recount", "pass-rate-counts"),
        )
        if name in queries
    )
    coverage = expected["coverage"]
    print(
        f"METRICS_1M: ours={ours:.3f} baseline={base:.3f} ratio={ours / base:.3f} identical={int(identical)} "
        f"ours_cpu={ours_cpu:.3f} baseline_cpu={base_cpu:.3f} first_s={first:.3f} criteria={len(plain.criteria)} "
        f"determinations={len(plain.determinations)} attestations={len(plain.attestations)} covered={coverage[1]} "
        f"applicable={coverage[0]}{extras} target_s=1 met={int(ours <= 1)}"
    )


if __name__ == "__main__":
    main()
