"""Recording 100,000 determinations through the batch API, and whether a batch costs more as the record grows.

Ours: ``POST /evaluations/measles/runs/1/determinations`` (the service's FastAPI app in process, through
Starlette's test client: real routing, body validation, checks against the record and the append), in batches
of ``--batch`` determinations by the domain expert on the worked example's run (made first, unmeasured:
``caie_vaccine.worked_example``, on an on-disk embedded store). Each batch is checked against the record (the
run's answered cases, the plan's criteria) and appended as one graph ``{evaluation}/judgments/{n}``, digested
once. Baseline: the same determinations' triples written with one ``pyoxigraph.Store.extend`` per batch into an
on-disk store: the floor of writing them at all, with no checks, digest or catalog. Printed: both rates, and
``growth``, the median seconds of the last ten batches over the first ten's (1 when a batch's cost does not
grow with the record).

    .venv/bin/python bench/determinations.py [--total 100000] [--batch 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from itertools import cycle, islice
from pathlib import Path

import pyoxigraph
from pyoxigraph import NamedNode, Quad

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from caie_vaccine.worked_example import EVALUATION_ID, load_worked_example
from fastapi.testclient import TestClient

from service.api import create_app
from service.composition import Services, build_services
from service.core.bootstrap import load_spec_files
from service.core.config import Settings
from service.judgments.model import MANUAL, Determination, Judge
from service.judgments.rdf import determination_triples
from service.judgments.records import answered_cases
from service.runs.records import plan_probes, run_view

BASE = "http://bench.test/"
TOKEN = "bench-annie"


def units(services: Services) -> list[tuple[str, str]]:
    """(probe, criterion) pairs the run can be judged on: each answered probe with each criterion it exercises."""
    graphs = services.graphs
    run = run_view(graphs, EVALUATION_ID, 1)
    answered = answered_cases(graphs, run.iri)
    return [(p.iri, c) for p in plan_probes(graphs, EVALUATION_ID, run.plan) if p.iri in answered for c in p.exercises]


def body(batch: list[tuple[str, str]], first: int) -> dict:
    outcomes = ("passed", "failed", "cantTell", "inapplicable")
    return {
        "determinations": [
            {
                "probe": probe,
                "criterion": criterion,
                "outcome": outcomes[(first + k) % 4],
                "rationale": f"bench determination {first + k}",
            }
            for k, (probe, criterion) in enumerate(batch)
        ]
    }


def baseline(batches: list[list[tuple[str, str]]], cases: dict[str, str], directory: Path) -> float:
    """Seconds to write the same determinations' triples, one ``Store.extend`` per batch."""
    store = pyoxigraph.Store(str(directory))
    judge = Judge(f"{BASE}agents/annie", "person", "annie", "domain_expert")
    start = time.perf_counter()
    for n, batch in enumerate(batches, start=1):
        graph = NamedNode(f"{BASE}evaluations/{EVALUATION_ID}/judgments/{n}")
        quads = [
            Quad(t.subject, t.predicate, t.object, graph)
            for k, (probe, criterion) in enumerate(batch, start=1)
            for t in determination_triples(
                f"{graph.value}/determinations/{k}",
                f"{BASE}evaluations/{EVALUATION_ID}",
                cases[probe],
                Determination(criterion, probe, 1, "http://www.w3.org/ns/earl#passed", MANUAL, judge, "bench"),
                judge.iri,
                datetime.now(UTC),
            )
        ]
        store.extend(quads)
    store.flush()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--total", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            base_url=BASE,
            data_dir=Path(tmp) / "store",
            tokens=f'{{"{TOKEN}": {{"agent": "annie", "roles": ["domain_expert"]}}}}',
        )
        services = build_services(settings)
        start = time.perf_counter()
        load_spec_files(services.graphs)
        load_worked_example(services.graphs)
        print(
            f"setup: the worked example run and judged in {time.perf_counter() - start:.1f} s (not measured)",
            flush=True,
        )
        pairs = units(services)
        batches = [
            list(islice(cycle(pairs), n * args.batch, (n + 1) * args.batch)) for n in range(args.total // args.batch)
        ]
        client = TestClient(create_app(settings, services.store))
        seconds = []
        for n, batch in enumerate(batches):
            started = time.perf_counter()
            answer = client.post(
                f"/evaluations/{EVALUATION_ID}/runs/1/determinations",
                json=body(batch, n * args.batch),
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
            seconds.append(time.perf_counter() - started)
            if answer.status_code != 201:
                raise SystemExit(f"batch {n + 1}: {answer.status_code} {answer.text[:300]}")
            if (n + 1) % 10 == 0:
                print(f"  {n + 1} batches, {sum(seconds):.1f} s, last {seconds[-1]:.2f} s", flush=True)
        cases = {
            p: c.case
            for p, c in answered_cases(services.graphs, run_view(services.graphs, EVALUATION_ID, 1).iri).items()
        }
        floor = baseline(batches, cases, Path(tmp) / "baseline")
        services.close()
    recorded = len(batches) * args.batch
    ours, base = recorded / sum(seconds), recorded / floor
    growth = statistics.median(seconds[-10:]) / statistics.median(seconds[:10])
    print(
        f"ours: {recorded} determinations in {len(batches)} batches through the API in {sum(seconds):.1f} s "
        f"({ours:.0f}/s); first ten batches median {statistics.median(seconds[:10]):.3f} s, last ten "
        f"{statistics.median(seconds[-10:]):.3f} s"
    )
    print(f"baseline: the same triples by Store.extend per batch in {floor:.1f} s ({base:.0f}/s)")
    print(
        f"DETERMINATIONS: ours={ours:.0f} baseline={base:.0f} ratio={ours / base:.3f} recorded={recorded} "
        f"growth={growth:.2f}"
    )


if __name__ == "__main__":
    main()
