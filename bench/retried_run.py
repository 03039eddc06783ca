"""What reading a run with retried execution errors costs: one run of N cases (default 20,000) on the embedded store,
every 20th ended in an execution error and every 40th retried and answered (docs/decisions.md, "Retrying execution
errors"), each query the run page and the metrics read about its cases timed (median of 11) with what it counts.

Run: ``.venv/bin/python bench/retried_run.py [N]``.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import UTC, datetime

from pyoxigraph import Literal, NamedNode, Quad, Triple

from service.core import queries
from service.core.namespaces import EPO, PROV, RDF, XSD
from service.core.store import ChangeSet, EmbeddedStore
from service.core.store.base import bind
from service.runs import rdf
from service.runs.model import CaseTrace, Exchange, ExecutionError, ExecutionSettings, Turn

EVALUATION = "http://caie.bench/evaluations/e"
RUN, PLAN = f"{EVALUATION}/runs/1", f"{EVALUATION}/plans/1"
RETRY = f"{RUN}/retries/1"
QUERIES = (
    "runs",
    "run-recorded-probes",
    "run-execution-errors",
    "run-retries",
    "execution-errors",
    "criterion-case-counts",
    "run-tally-state",
    "workspace-run-cases",
)


def _in(graph: str, triples: list[Triple]) -> list[Quad]:
    return [Quad(t.subject, t.predicate, t.object, NamedNode(graph)) for t in triples]


def record(cases: int) -> list[Quad]:
    now = datetime.now(UTC)
    answered = (Turn("user", "hi"), Turn("assistant", "hello"))
    trace = (Exchange("hello", started=now, ended=now, latency_s=0.1),)
    run = [
        (RDF + "type", NamedNode(EPO + "Run")),
        (EPO + "inEvaluation", NamedNode(EVALUATION)),
        (EPO + "executesPlan", NamedNode(PLAN)),
        (EPO + "planDigest", Literal("d")),
        (EPO + "targetFingerprint", Literal("f")),
        (EPO + "targetConfiguration", Literal("{}")),
        (EPO + "executionSettings", Literal("{}")),
        (PROV + "wasAssociatedWith", NamedNode(f"{EVALUATION}/theo")),
        (PROV + "startedAtTime", Literal(now.isoformat(), datatype=NamedNode(XSD + "dateTime"))),
    ]
    quads = _in(RUN, [Triple(NamedNode(RUN), NamedNode(p), o) for p, o in run])
    quads += _in(RETRY, rdf.retry_triples(RETRY, RUN, ExecutionSettings(), f"{EVALUATION}/theo", now))
    for n in range(1, cases + 1):
        probe, case = NamedNode(f"{PLAN}/probes/{n}"), f"{RUN}/cases/{n}"
        quads += _in(
            PLAN,
            [
                Triple(NamedNode(PLAN), NamedNode(EPO + "includesProbe"), probe),
                Triple(probe, NamedNode(EPO + "exercises"), NamedNode(f"{EVALUATION}/criteria/c{n % 7}")),
                Triple(probe, NamedNode(EPO + "openingPrompt"), Literal("hi", language="en")),
            ],
        )
        first = (
            ExecutionError(
                probe=probe.value, target="f", kind="http_status", status=503, turn=1, attempts=1, message="503"
            )
            if n % 20 == 0
            else CaseTrace(probe.value, "f", answered, trace)
        )
        quads += _in(case, rdf.case_triples(case, RUN, first))
        if n % 40 == 0:
            attempt = f"{case}/attempts/2"
            quads += _in(
                attempt,
                rdf.case_triples(attempt, RUN, CaseTrace(probe.value, "f", answered, trace))
                + rdf.attempt_triples(attempt, 2, case, RETRY),
            )
    return quads


def main(cases: int) -> None:
    store = EmbeddedStore()
    store.apply(ChangeSet(insert=record(cases)))
    given = {
        "run": NamedNode(RUN),
        "evaluation": NamedNode(EVALUATION),
        "plan": NamedNode(PLAN),
        "latest": Literal(True),
    }
    for name in QUERIES:
        text = queries.load(name)
        header = text.split("\nPREFIX", 1)[0]
        query = bind(text, {v: term for v, term in given.items() if f"?{v} " in header})
        times, rows = [], []
        for _ in range(11):
            started = time.perf_counter()
            rows = store.select(query)
            times.append(time.perf_counter() - started)
        counted = {k: rows[0][k].value for k in ("cases", "errors", "attempts", "recorded") if rows and k in rows[0]}
        print(f"{name:24} {statistics.median(times) * 1000:8.1f} ms  {len(rows):6} rows  {counted}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
