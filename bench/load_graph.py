"""Loading a 1,000,000-triple graph through the HTTP API vs ``pyoxigraph.Store.bulk_load``.

Both load the same N-Triples file into an empty on-disk store, in the same run. Ours is a real
``caie serve`` process receiving ``PUT /graphs/ontologies/bench`` over loopback HTTP: it reads the
body, checks the syntax, computes the RDFC-1.0 digest, then writes the graph and its catalog record.
The content is shaped like an evaluation record's determinations (evaluation graphs themselves change
only through the lifecycle operations, so the generic graph API loads it as an ontology-kind graph,
with the one ``owl:Ontology`` declaration that kind requires).

    .venv/bin/python bench/load_graph.py [--triples 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pyoxigraph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.servers import free_port

EPO = "https://w3id.org/ob-caie/epo/"
EARL = "http://www.w3.org/ns/earl#"
PROV = "http://www.w3.org/ns/prov#"
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def write_record(path: Path, triples: int, base: str) -> None:
    """A synthetic evaluation record: determinations of probe responses, eight triples each."""
    outcomes = ("passed", "failed", "cantTell")
    with path.open("w", encoding="utf-8") as out:
        out.write(f"<{base}ontologies/bench> <{RDF_TYPE}> <http://www.w3.org/2002/07/owl#Ontology> .\n")
        for n in range(triples // 8):
            det = f"<{base}evaluations/bench/judgments/d{n}>"
            out.write(
                f"{det} <{RDF_TYPE}> <{EPO}Determination> .\n"
                f"{det} <{EARL}test> <{base}evaluations/bench/criteria/c{n % 40}> .\n"
                f"{det} <{EARL}subject> <{base}evaluations/bench/runs/r1/responses/{n}> .\n"
                f"{det} <{EARL}outcome> <{EARL}{outcomes[n % 3]}> .\n"
                f"{det} <{EARL}mode> <{EARL}automatic> .\n"
                f"{det} <{EARL}assertedBy> <{base}agents/judge-{n % 7}> .\n"
                f"{det} <{PROV}generatedAtTime> \"2026-08-{1 + n % 28:02d}T10:{n % 60:02d}:00Z\"^^<{XSD_DATETIME}> .\n"
                f"{det} <{EARL}info> \"Response {n} judged against criterion c{n % 40}: the reply \\\"asks first\\\".\" .\n"
            )


def baseline(path: Path, expected: int) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-bulk-") as directory:
        store = pyoxigraph.Store(directory)
        start = time.perf_counter()
        store.bulk_load(
            path=str(path), format=pyoxigraph.RdfFormat.N_TRIPLES, to_graph=pyoxigraph.NamedNode("http://bench/g")
        )
        store.flush()
        elapsed = time.perf_counter() - start
        assert len(store) == expected
        del store
    return elapsed


def ours(path: Path, expected: int) -> float:
    port = free_port()
    token = secrets.token_urlsafe(16)
    with tempfile.TemporaryDirectory(prefix="bench-caie-") as directory:
        env = {
            **os.environ,
            "CAIE_TOKENS": json.dumps({token: {"agent": "bench", "roles": ["admin"]}}),
            "CAIE_BASE_URL": f"http://127.0.0.1:{port}/",
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--data-dir", directory, "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(200):
                try:
                    httpx.get(url + "/health", timeout=1)
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            with path.open("rb") as body:
                start = time.perf_counter()
                response = httpx.put(
                    url + "/graphs/ontologies/bench",
                    content=body,
                    timeout=600,
                    headers={"Content-Type": "application/n-triples", "Authorization": f"Bearer {token}"},
                )
                elapsed = time.perf_counter() - start
            response.raise_for_status()
            assert response.json()["triples"] == expected, response.json()
        finally:
            server.terminate()
            server.wait(timeout=60)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-data-") as directory:
        path = Path(directory) / "record.nt"
        write_record(path, args.triples, "http://127.0.0.1/")
        triples = sum(1 for _ in path.open("rb"))
        print(f"record: {triples:,} triples, {path.stat().st_size / 1e6:.0f} MB of N-Triples")
        base = baseline(path, triples)
        print(f"baseline pyoxigraph.Store.bulk_load: {base:.2f} s")
        mine = ours(path, triples)
        print(f"ours     PUT /graphs/ontologies/bench (HTTP, checked, digested, catalogued): {mine:.2f} s")
        print(f"LOAD_1M: ours={mine:.2f} baseline={base:.2f} ratio={mine / base:.2f} triples={triples}")


if __name__ == "__main__":
    main()
