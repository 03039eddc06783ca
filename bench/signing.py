"""SIGNING (issue 27): what signing adds to recording 100,000 automatic determinations in batches.

Each batch is ``--batch`` determinations by one automated judge (a model judge's, ``earl:automatic``) on the worked
example's run (made first, unmeasured: ``caie_vaccine.worked_example``, on an on-disk embedded store), appended
through the service's batch append for judges, :func:`service.judgments.records.record_judgments` (what
``POST …/runs/{n}/model-judgments`` records with, in process: checks against the record, the run's tallies, the
append as one graph ``{evaluation}/judgments/{n}``, digested once by the catalog). Ours: signed, each batch by the
judge's own key, one credential per batch stating the batch graph's digest (``{batch}/credential``, in the same
write). Baseline: the same batches unsigned. Signed and unsigned batches alternate on the one store (which goes
first alternates too), so that both meet the same record size. Printed: the seconds each took for ``--total``
determinations and their ratio (issue 27's goal: at most 1.2).

    .venv/bin/python bench/signing.py [--total 100000] [--batch 1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from caie_vaccine.worked_example import EVALUATION_ID, THEO, load_worked_example
from determinations import BASE, units

from service.composition import build_services
from service.core.bootstrap import load_spec_files
from service.core.config import Settings
from service.credentials.signing import Signer
from service.judgments.model import AUTOMATIC, Determination, Judge
from service.judgments.records import record_judgments

OUTCOMES = tuple(f"http://www.w3.org/ns/earl#{o}" for o in ("passed", "failed", "cantTell", "inapplicable"))
JUDGE = Judge(f"{BASE}judges/bench-model", "model", "bench model judge", "1")


def determinations(pairs: list[tuple[str, str]], first: int) -> list[Determination]:
    return [
        Determination(criterion, probe, 1, OUTCOMES[(first + k) % 4], AUTOMATIC, JUDGE, f"bench determination {k}")
        for k, (probe, criterion) in enumerate(pairs, start=first)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--total", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        services = build_services(Settings(base_url=BASE, data_dir=Path(tmp) / "store"))
        start = time.perf_counter()
        load_spec_files(services.graphs)
        load_worked_example(services.graphs)
        print(f"setup: the worked example in {time.perf_counter() - start:.1f} s (not measured)", flush=True)
        pairs = units(services)
        rounds = args.total // args.batch
        seconds = {True: 0.0, False: 0.0}
        for n in range(rounds):
            batch = determinations(list(islice(cycle(pairs), n * args.batch, (n + 1) * args.batch)), n * args.batch)
            for signed in (n % 2 == 0, n % 2 == 1):
                started = time.perf_counter()
                record_judgments(
                    services.graphs,
                    EVALUATION_ID,
                    1,
                    batch,
                    (),
                    THEO,
                    signer=services.signer if signed else None,
                )
                seconds[signed] += time.perf_counter() - started
            if (n + 1) % 10 == 0:
                print(f"  {n + 1} rounds: signed {seconds[True]:.1f} s, unsigned {seconds[False]:.1f} s", flush=True)
        signer: Signer = services.signer
        credentials = services.store.select(
            "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?c a <https://www.w3.org/2018/credentials#VerifiableCredential> ;"
            f" <https://www.w3.org/2018/credentials#issuer> <{signer.keys.did(JUDGE.iri)}> }} }}"
        )[0]["n"].value
        services.close()
    recorded = rounds * args.batch
    ours, base = seconds[True], seconds[False]
    print(f"recorded: {recorded:,} determinations signed in {rounds} batches ({credentials} credentials by the judge)")
    print(f"recorded: {recorded:,} determinations unsigned in {rounds} batches")
    print(f"SIGNING: ours={ours:.1f} baseline={base:.1f} ratio={ours / base:.3f}")


if __name__ == "__main__":
    main()
