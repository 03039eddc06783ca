"""Appending a 100-triple batch to an evaluation record of 10,000 and of 1,000,000 triples.

Ours is ``GraphService.append`` on the embedded on-disk store, as approvals and judgments use it: a new
batch graph, digested once, catalogued as ``cat:batchOf`` the record, guarded on the head graph's digest
(a conditional update, then its read-back). The goal is an append whose cost does not grow with the
record: the median at 1M at most 2x the median at 10k. For the record, the script also times what an
append cost before batches: re-reading and re-digesting the whole record once.

Each record is built directly in the store, unmeasured: half its triples in the head graph
``evaluations/bench``, half in batch graphs of 1,000 triples under ``evaluations/bench/judgments/{n}``,
each with its real catalog entry and digest.

    .venv/bin/python bench/append.py [--appends 20] [--sizes 10000 1000000]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph
from pyoxigraph import NamedNode, Quad, RdfFormat, Triple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.composition import Services, build_services
from service.core.catalog import CatalogEntry, GraphKind, now
from service.core.config import Credential, Settings
from service.core.digest import digest_and_size
from service.core.graphs import GraphRef
from service.core.rdf import parse_triples
from service.core.store import ChangeSet, EmbeddedStore

BASE = "http://bench.test/"
EPO, EARL = "https://w3id.org/ob-caie/epo/", "http://www.w3.org/ns/earl#"
BATCH_TRIPLES = 1_000
APPEND_TRIPLES = 100
AGENT = Credential(agent="bench", roles=frozenset({"admin"}))
_OUTCOMES = ("passed", "failed", "cantTell")


def determinations(start: int, count: int) -> bytes:
    """``count`` triples of probe-level determinations (eight per determination), numbered from ``start``."""
    lines = []
    for n in range(start, start + count):
        det, k = f"<{BASE}evaluations/bench/judgments/d{n // 8}>", n % 8
        lines.append(
            det
            + (
                f" <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{EPO}Determination> .",
                f" <{EARL}test> <{BASE}evaluations/bench/criteria/c{n % 40}> .",
                f" <{EARL}subject> <{BASE}evaluations/bench/runs/r1/responses/{n // 8}> .",
                f" <{EARL}outcome> <{EARL}{_OUTCOMES[n % 3]}> .",
                f" <{EARL}mode> <{EARL}automatic> .",
                f" <{EARL}assertedBy> <{BASE}agents/judge-{n % 7}> .",
                (
                    f' <http://www.w3.org/ns/prov#generatedAtTime> "2026-08-{1 + n % 28:02d}T10:{n % 60:02d}:00Z"'
                    f"^^<http://www.w3.org/2001/XMLSchema#dateTime> ."
                ),
                f' <{EARL}info> "determination {n // 8}: the reply asks first" .',
            )[k]
        )
    return ("\n".join(lines) + "\n").encode()


@dataclass
class Record:
    """An evaluation record in an on-disk store of its own, and the services over that store."""

    services: Services
    head: GraphRef
    head_digest: str
    triples: int
    batches: int


def load_graph(services: Services, ref: GraphRef, data: bytes, record: GraphRef | None) -> str:
    """Store one graph with its catalog entry (setup, unmeasured: bulk-loaded if large); its digest."""
    triples = parse_triples(data, RdfFormat.N_TRIPLES, ref.iri.value)
    digest, size = digest_and_size(triples)
    entry = CatalogEntry(
        graph=ref.iri.value,
        kind=ref.kind,
        identifier=ref.identifier,
        title=ref.identifier,
        agent=AGENT.agent,
        modified=now(),
        triples=size,
        digest=digest,
        batch_of=record.iri.value if record else None,
    )
    quads = services.catalog.entry_quads(entry)
    if size > 10 * BATCH_TRIPLES:
        services.store.bulk_load_new_graph(ref.iri, data, RdfFormat.N_TRIPLES, ref.iri.value)
    else:
        quads += [Quad(t.subject, t.predicate, t.object, ref.iri) for t in triples]
    services.store.apply(ChangeSet(insert=quads))
    return digest


def open_services(directory: Path) -> Services:
    return build_services(Settings(base_url=BASE), EmbeddedStore(directory), recover=False)


def build_record(directory: Path, triples: int) -> Record:
    """A record of ``triples`` triples: half in its head graph, half in batches of 1,000.

    The store is compacted before it is measured: RocksDB otherwise compacts a freshly loaded store in
    the background for a while, and on two cores that would be timed as part of the appends.
    """
    services = open_services(directory)
    head = services.graphs.member(GraphKind.EVALUATION, "bench")
    in_head = triples // 2
    head_digest = load_graph(services, head, determinations(0, in_head), None)
    batches = (triples - in_head) // BATCH_TRIPLES
    for number in range(1, batches + 1):
        batch = services.graphs.member(GraphKind.EVALUATION, f"bench/judgments/{number}")
        load_graph(services, batch, determinations(in_head + (number - 1) * BATCH_TRIPLES, BATCH_TRIPLES), head)
    services.close()
    del services
    gc.collect()  # the RocksDB lock goes with the last reference to the store
    compacting = pyoxigraph.Store(str(directory))
    compacting.optimize()
    del compacting
    return Record(open_services(directory), head, head_digest, in_head + batches * BATCH_TRIPLES, batches)


def append_once(record: Record, n: int) -> float:
    """Seconds of one ``GraphService.append`` of a fresh 100-triple batch (the ``n``-th)."""
    batch: list[Triple] = parse_triples(
        determinations(10**9 + n * APPEND_TRIPLES, APPEND_TRIPLES), RdfFormat.N_TRIPLES, BASE
    )
    start = time.perf_counter()
    record.services.graphs.append(
        record.head, "judgments", batch, AGENT, guards={record.head.iri.value: record.head_digest}
    )
    return time.perf_counter() - start


def whole_record_digest_seconds(record: Record) -> float:
    """What an append cost before batches: the whole record read back and digested once."""
    store, head = record.services.store, record.head.iri
    graphs = [head] + [NamedNode(e.graph) for e in record.services.catalog.entries() if e.batch_of == head.value]
    start = time.perf_counter()
    digest_and_size([t for graph in graphs for t in store.graph_triples(graph)])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs=2, default=[10_000, 1_000_000], metavar=("SMALL", "LARGE"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-append-") as directory:
        records = []
        for size in args.sizes:
            start = time.perf_counter()
            records.append(build_record(Path(directory) / str(size), size))
            print(f"record {records[-1].triples:,} triples built in {time.perf_counter() - start:.1f} s", flush=True)
        # Alternate between the two records, so that load from other processes weighs on both alike.
        latencies: list[list[float]] = [[], []]
        for n in range(args.appends + 2):
            for side, record in enumerate(records):
                latencies[side].append(append_once(record, n))
        medians = []
        for record, measured in zip(records, latencies):
            kept = measured[2:]  # two warm-up appends
            medians.append(statistics.median(kept))
            print(
                f"record {record.triples:>9,} triples (head {record.triples - record.batches * BATCH_TRIPLES:,} + "
                f"{record.batches} batches): {len(kept)} appends of {APPEND_TRIPLES} triples, median "
                f"{medians[-1] * 1000:.2f} ms  (min {min(kept) * 1000:.2f}, max {max(kept) * 1000:.2f})"
            )
        old_path = whole_record_digest_seconds(records[1])
        print(
            f"before batches, each append re-read and re-digested the whole record: {old_path:.2f} s at "
            f"{records[1].triples:,} triples ({old_path / medians[1]:.0f}x the append)"
        )
        for record in records:
            record.services.close()
    print(f"APPEND: ours={medians[1]:.5f} baseline={medians[0]:.5f} ratio={medians[1] / medians[0]:.2f}")


if __name__ == "__main__":
    main()
