"""The record bench/metrics_1m.py measures: an evaluation with 1,000 criteria and 1,000,000 determinations, in an
on-disk embedded store, cached by a digest of its parameters and of the generator's code (:data:`SOURCES`).

The small, checked part goes through the service's own operations on the store (the spec files; the measles
scope, an envelope of ``criteria`` criteria made from the measles example's fourteen, the DSO, relevance and
appropriateness assessments, the sign-off, in bench/_metrics_service_steps.py; after the plan, its approval and the
run's start). The bulk is made (bench/_metrics_quads.py) with the service's RDF functions (``plan.rdf.plan_triples``,
``runs.rdf.case_triples``, ``judgments.rdf.determination_triples`` / ``attestation_triples``), each graph with the
catalog entry the service writes for it (``Catalog.entry_quads``: RDFC-1.0 digest, size, ``cat:batchOf`` the record),
written as N-Quads and bulk-loaded: recording 1M determinations through the API takes about 18 minutes (929/s,
docs/performance.md), the cases through the runner longer still.

The record: ``criteria`` criteria (``out_of_scope`` of them out of scope, ``untested`` in scope but given no probe,
as a language without templates leaves them), one plan of ``answered + errors`` single-turn probes, each
allocated to one tested criterion and exercising ``exercises`` (its own and the next ones), one run in which
``errors`` probes ended in an execution error, ``judges`` determinations (a rule judge, a model judge, the
domain expert and an annotator) per answered probe and exercised criterion, in batches of ``batch`` per judge,
and one attestation per tested criterion aggregating every determination on it, ``superseded`` of them first
attested and then corrected by a superseding attestation. Outcomes are drawn from a seeded generator.

What the baseline reads, the same values as plain Python (:class:`Plain`, with :class:`Params` in
bench/_metrics_params.py), is pickled beside the store.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import random
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from decimal import Decimal
from pathlib import Path

import pyoxigraph
from _metrics_params import BASE, EVALUATION_ID, Params, Plain
from _metrics_quads import bench_probes, plan_quads, record_quads
from _metrics_service_steps import envelope_content, scope_envelope_and_sign_off
from caie_vaccine.demo import DEMO_VERSION
from caie_vaccine.worked_example import ANNIE, THEO
from pyoxigraph import Quad

from service.composition import build_services
from service.core.bootstrap import load_spec_files
from service.core.config import Settings
from service.envelope import iris_for
from service.plan.approval import approve_plan
from service.plan.testplan import planning_input
from service.runs.model import ExecutionSettings
from service.runs.records import start_run

HERE = Path(__file__).resolve().parent
SOURCES = (
    *(HERE / f"_metrics_{part}.py" for part in ("data", "params", "service_steps", "quads")),
    *(HERE.parent / "service" / step / "rdf.py" for step in ("envelope", "plan", "runs", "judgments")),
)
"""The generator's code: this file, the three beside it it builds with, and the RDF functions they write with."""


def store_dir(root: Path, params: Params) -> Path:
    """Where the record for ``params`` is kept under ``root``: named by a digest of the parameters and of the
    generator's code, so a changed generator makes a new store."""
    text = json.dumps(asdict(params), sort_keys=True) + "".join(p.read_text(encoding="utf-8") for p in SOURCES)
    return root / f"metrics-1m-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def settings_for(directory: Path) -> Settings:
    return Settings(base_url=BASE, data_dir=directory)


def build(directory: Path, params: Params, report: Callable[[str], object] = print) -> Plain:
    """The record in the store at ``directory``, made unless it is there (``directory`` and, written last,
    ``directory.plain.pickle``); its values as plain Python."""
    plain_file = directory.with_suffix(".plain.pickle")
    if directory.exists() and plain_file.exists():
        return pickle.loads(plain_file.read_bytes())
    shutil.rmtree(directory, ignore_errors=True)
    started = time.perf_counter()
    rng = random.Random(params.seed)
    content = envelope_content(params, rng)
    services = build_services(settings_for(directory))
    graphs = services.graphs
    load_spec_files(graphs)
    scope_envelope_and_sign_off(graphs, content)
    report(
        f"  data: scope, envelope of {params.criteria} criteria, assessments and sign-off through the service "
        f"({time.perf_counter() - started:.0f} s)"
    )
    iris = iris_for(graphs, EVALUATION_ID)
    planning = planning_input(graphs, EVALUATION_ID, params.seed, 0)
    version = planning.envelope.version
    criteria = [(iris.criterion(version, c.id), Decimal(c.weight or 0), c.in_scope) for c in content.criteria]
    in_scope = [iri for iri, _, scoped in criteria if scoped]
    tested = in_scope[: len(in_scope) - params.untested]
    plan_iri = f"{iris.evaluation}/plans/1"
    probes = bench_probes(params, plan_iri, tested)
    frames = {c: rng.randint(400, 6000) for c in in_scope}
    quads = plan_quads(services.catalog, iris.evaluation, plan_iri, planning, probes, frames, tested)
    services.close()
    _bulk(directory, quads)
    report(f"  data: plan of {len(probes)} probes written ({time.perf_counter() - started:.0f} s)")
    services = build_services(settings_for(directory))
    graphs = services.graphs
    approve_plan(graphs, EVALUATION_ID, 1, ANNIE, "approved for the metrics bench")
    run = start_run(graphs, EVALUATION_ID, 1, DEMO_VERSION, ExecutionSettings(), THEO)
    plain = Plain(iris.evaluation, run.iri, criteria, frames)
    stream = record_quads(services.catalog, params, rng, iris.evaluation, run.iri, probes, tested, plain)
    services.close()
    _bulk(directory, stream)
    report(
        f"  data: {len(probes)} cases, {len(plain.determinations)} determinations, {len(plain.attestations)} "
        f"attestations bulk-loaded ({time.perf_counter() - started:.0f} s)"
    )
    plain_file.write_bytes(pickle.dumps(plain))
    return plain


def _bulk(directory: Path, quads: Iterable[Quad]) -> None:
    """Write ``quads`` as N-Quads in chunks and bulk-load them into the (closed) store at ``directory``."""
    store = pyoxigraph.Store(str(directory))
    chunk: list[Quad] = []
    for quad in quads:
        chunk.append(quad)
        if len(chunk) >= 500_000:
            store.bulk_extend(chunk)
            chunk = []
    if chunk:
        store.bulk_extend(chunk)
    store.flush()
    store.optimize()
    del store
