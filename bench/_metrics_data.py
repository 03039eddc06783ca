"""The record bench/metrics_1m.py measures: an evaluation with 1,000 criteria and 1,000,000 determinations, in an
on-disk embedded store, cached by a digest of its parameters and of this file.

The small, checked part goes through the service's own operations on the store (the spec files, the measles
scope, an envelope of ``criteria`` criteria made from the measles example's fourteen, the DSO, relevance and
appropriateness assessments, the sign-off; after the plan, its approval and the run's start). The bulk is made
with the service's RDF functions (``plan.rdf.plan_triples``, ``runs.rdf.case_triples``,
``judgments.rdf.determination_triples`` / ``attestation_triples``), each graph with the catalog entry the
service writes for it (``Catalog.entry_quads``: RDFC-1.0 digest, size, ``cat:batchOf`` the record), written as
N-Quads and bulk-loaded: recording 1M determinations through the API takes about 18 minutes (929/s,
docs/performance.md), the cases through the runner longer still.

The record: ``criteria`` criteria (``out_of_scope`` of them out of scope, ``untested`` in scope but given no probe,
as a language without templates leaves them), one plan of ``answered + errors`` single-turn probes, each
allocated to one tested criterion and exercising ``exercises`` (its own and the next ones), one run in which
``errors`` probes ended in an execution error, ``judges`` determinations (a rule judge, a model judge, the
domain expert and an annotator) per answered probe and exercised criterion, in batches of ``batch`` per judge,
and one attestation per tested criterion aggregating every determination on it, ``superseded`` of them first
attested and then corrected by a superseding attestation. Outcomes are drawn from a seeded generator.

What the baseline reads, the same values as plain Python (:class:`Plain`), is pickled beside the store.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import random
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyoxigraph
from caie_vaccine.demo import DEMO_VERSION
from caie_vaccine.worked_example import ANNIE, DANA, EXAMPLE, THEO
from pyoxigraph import NamedNode, Quad, Triple

from service import envelope
from service.api.models import EnvelopeBody, EvaluationBody
from service.composition import build_services
from service.core.bootstrap import load_spec_files
from service.core.catalog import Catalog, CatalogEntry, GraphKind
from service.core.config import Credential, Settings
from service.core.digest import digest_and_size
from service.core.graphs import GraphService
from service.core.namespaces import EPO
from service.envelope import approvals, iris_for
from service.envelope.model import Criterion, EnvelopeContent, Requirement
from service.envelope.model import Judge as CriterionJudge
from service.judgments import rdf as judgments_rdf
from service.judgments.attestations import AGGREGATION, APPROPRIATENESS, SUFFICIENCY, aggregate
from service.judgments.model import AUTOMATIC, CANT_TELL, FAILED, INAPPLICABLE, MANUAL, PASSED, Determination, Judge
from service.plan import rdf as plan_rdf
from service.plan.allocation import Allocation, Strategy
from service.plan.approval import approve_plan
from service.plan.openings import Opening
from service.plan.testplan import PlannedProbe, PlanningInput, PlanRequest, planning_input
from service.runs import rdf as runs_rdf
from service.runs.model import CaseTrace, Exchange, ExecutionError, ExecutionSettings, TokenUsage, Turn
from service.runs.records import start_run
from service.scenarios.frame import FrameCounts

BASE = "http://bench.test/"
EVALUATION_ID = "metrics-1m"
NORA = Credential(agent="nora", name="nora (bench annotator)", roles=frozenset({"annotator"}))
EPOCH = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Params:
    criteria: int = 1000
    out_of_scope: int = 20
    untested: int = 30
    answered: int = 62_500
    errors: int = 625
    exercises: int = 4
    judges: int = 4
    batch: int = 1000
    superseded: int = 50
    seed: int = 11

    @property
    def determinations(self) -> int:
        return self.answered * self.exercises * self.judges


@dataclass
class Plain:
    """The record's values as plain Python, for the baseline: criteria as (IRI, weight, in scope), the frame size
    per criterion, the run's cases as (probe, criteria it exercises), determinations as (criterion, probe, outcome),
    attestations as (IRI, criterion, outcome, superseded IRI or None)."""

    evaluation: str
    run: str
    criteria: list[tuple[str, Decimal, bool]] = field(default_factory=list)
    frames: dict[str, int] = field(default_factory=dict)
    cases: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    determinations: list[tuple[str, str, str]] = field(default_factory=list)
    attestations: list[tuple[str, str, str, str | None]] = field(default_factory=list)


SOURCES = (
    Path(__file__),
    *(
        Path(__file__).resolve().parents[1] / "service" / step / "rdf.py"
        for step in ("envelope", "plan", "runs", "judgments")
    ),
)
"""The generator's code: this file and the RDF functions it writes with."""


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
    content = _envelope(params, rng)
    services = build_services(settings_for(directory))
    graphs = services.graphs
    load_spec_files(graphs)
    _head(graphs, content)
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
    probes = _probes(params, plan_iri, tested)
    frames = {c: rng.randint(400, 6000) for c in in_scope}
    quads = _plan_quads(services.catalog, iris.evaluation, plan_iri, planning, probes, frames, tested)
    services.close()
    _bulk(directory, quads)
    report(f"  data: plan of {len(probes)} probes written ({time.perf_counter() - started:.0f} s)")
    services = build_services(settings_for(directory))
    graphs = services.graphs
    approve_plan(graphs, EVALUATION_ID, 1, ANNIE, "approved for the metrics bench")
    run = start_run(graphs, EVALUATION_ID, 1, DEMO_VERSION, ExecutionSettings(), THEO)
    plain = Plain(iris.evaluation, run.iri, criteria, frames)
    stream = _record_quads(services.catalog, params, rng, iris.evaluation, run.iri, probes, tested, plain)
    services.close()
    _bulk(directory, stream)
    report(
        f"  data: {len(probes)} cases, {len(plain.determinations)} determinations, {len(plain.attestations)} "
        f"attestations bulk-loaded ({time.perf_counter() - started:.0f} s)"
    )
    plain_file.write_bytes(pickle.dumps(plain))
    return plain


def _envelope(params: Params, rng: random.Random) -> EnvelopeContent:
    """``params.criteria`` criteria made from the measles example's, each with its own identifier and weight."""
    example = EnvelopeBody.model_validate(
        json.loads((EXAMPLE / "envelope.json").read_text(encoding="utf-8"))
    ).to_domain()
    templates = [c for c in example.criteria if c.in_scope]
    criteria = []
    for n in range(params.criteria):
        t = templates[n % len(templates)]
        criteria.append(
            Criterion(
                id=f"k{n + 1:04d}",
                requirement=t.requirement,
                statement=f"{t.statement} (variant {n + 1})",
                weight=Decimal(rng.randint(1, 10)),
                weight_rationale=t.weight_rationale,
                judged_by=t.judged_by or CriterionJudge.HUMAN,
                dimension=t.dimension,
                category=t.category,
                concepts=t.concepts,
                expected_result=t.expected_result,
                in_scope=n >= params.out_of_scope,
            )
        )
    requirements: tuple[Requirement, ...] = example.requirements
    return EnvelopeContent(requirements, tuple(criteria), example.statement)


def _head(graphs: GraphService, content: EnvelopeContent) -> None:
    scope = EvaluationBody.model_validate(json.loads((EXAMPLE / "evaluation.json").read_text(encoding="utf-8")))
    envelope.put_scope(graphs, scope.to_domain(EVALUATION_ID), THEO, must_be_new=True)
    approvals.assess_dso_appropriateness(graphs, EVALUATION_ID, True, "the DSO fits the bench", ANNIE)
    envelope.put_envelope(graphs, EVALUATION_ID, content, THEO)
    # assess_relevance's own write, with the state read once: read per criterion, 1,000 of them took over 30 minutes
    state = approvals.read_state(graphs, EVALUATION_ID)
    for criterion in content.criteria:
        iri = f"{state.status.envelope}/criteria/{criterion.id}"
        approvals.append_approval(
            graphs,
            state,
            ANNIE,
            "relevance",
            iri,
            criterion.in_scope,
            "relevant" if criterion.in_scope else "out of scope",
            [(EPO + "approves", NamedNode(iri))],
        )
    approvals.assess_appropriateness(graphs, EVALUATION_ID, True, "the envelope fits", ANNIE)
    approvals.sign_off_envelope(graphs, EVALUATION_ID, DANA, "signed off for the bench")


def _probes(params: Params, plan: str, tested: list[str]) -> list[PlannedProbe]:
    """Probe k is allocated to tested criterion k mod |tested| and exercises it and the next ``exercises - 1``."""
    probes = []
    for k in range(params.answered + params.errors):
        own = k % len(tested)
        exercised = tuple(tested[(own + j) % len(tested)] for j in range(params.exercises))
        opening = Opening(
            f"Bench question {k + 1}: my child was near someone with measles, what should I do?", "en", None
        )
        probes.append(
            PlannedProbe(
                k + 1,
                k,
                f"{plan.rsplit('/plans/', 1)[0]}/scenarios/bench-{k + 1}",
                tested[own],
                exercised,
                opening,
                None,
                None,
            )
        )
    return probes


def _entry(
    catalog: Catalog, graph: str, identifier: str, title: str, agent: str, triples: list[Triple], record: str
) -> Iterator[Quad]:
    digest, size = digest_and_size(triples)
    node = NamedNode(graph)
    yield from (Quad(t.subject, t.predicate, t.object, node) for t in triples)
    yield from catalog.entry_quads(
        CatalogEntry(
            graph, GraphKind.EVALUATION, identifier, title, agent, datetime.now(UTC), size, digest, batch_of=record
        )
    )


def _plan_quads(
    catalog: Catalog,
    evaluation: str,
    plan: str,
    planning: PlanningInput,
    probes: list[PlannedProbe],
    frames: dict[str, int],
    tested: list[str],
) -> list[Quad]:
    allocated: dict[str, int] = {c: 0 for c in tested}
    for p in probes:
        allocated[p.criterion] += 1
    request = PlanRequest(Strategy.HIGHEST_WEIGHT_FIRST, len(probes), seed=7)
    counts = FrameCounts(total=74_027_520, eligible=6_862_050, per_criterion=())
    untested = tuple(c for c in frames if c not in allocated)
    content = plan_rdf.plan_triples(
        plan,
        request,
        planning.envelope.iri,
        planning.envelope.digest,
        counts,
        frames,
        Allocation(allocated, unallocated=untested),
        probes,
        evaluation,
        catalog.agent_iri(THEO.agent).value,
        EPOCH,
        planning.pins,
        f"{plan}/derivation",
        plan_rdf.Provenance(planning.dso, (f"{BASE}graphs/shapes/scenario-consistency#rule-1",), ()),
        planning.identifiers,
    )
    content.append(plan_rdf.digest_triple(plan, plan_rdf.plan_digest(content)))
    identifier = f"{EVALUATION_ID}/plans/1"
    return list(_entry(catalog, plan, identifier, f"test plan 1 of {EVALUATION_ID}", THEO.agent, content, evaluation))


def _record_quads(
    catalog: Catalog,
    params: Params,
    rng: random.Random,
    evaluation: str,
    run: str,
    probes: list[PlannedProbe],
    tested: list[str],
    plain: Plain,
) -> Iterator[Quad]:
    """The run's cases, then the determinations in batches per judge, then one attestation per tested criterion."""
    plan = f"{evaluation}/plans/1"
    errored = set(rng.sample(range(len(probes)), params.errors))
    answered = [p for k, p in enumerate(probes) if k not in errored]
    for k, probe in enumerate(probes):
        case = f"{run}/cases/{probe.number}"
        at = EPOCH + timedelta(days=1, seconds=k)
        sent = (Turn("user", probe.opening.text),)
        if k in errored:
            result: CaseTrace | ExecutionError = ExecutionError(
                plan_rdf.probe_iri(plan, probe.number),
                DEMO_VERSION.fingerprint,
                "timeout",
                "no answer within 60 s",
                3,
                1,
                turns=sent,
            )
        else:
            reply = f"Reply {probe.number}: check whether your child has had two doses of a measles vaccine."
            exchange = Exchange(reply, at, at + timedelta(seconds=1), 0.95, TokenUsage(40, 30, 70), "stop")
            result = CaseTrace(
                plan_rdf.probe_iri(plan, probe.number),
                DEMO_VERSION.fingerprint,
                sent + (Turn("assistant", reply),),
                (exchange,),
            )
        plain.cases.append((result.probe, probe.exercises))
        yield from _entry(
            catalog,
            case,
            case.removeprefix(f"{BASE}evaluations/"),
            f"case of probe {probe.number}",
            THEO.agent,
            runs_rdf.case_triples(case, run, result),
            evaluation,
        )
    judges = [
        Judge(f"{BASE}graphs/judges/bench#rule", "rule", "bench rule", "1.0.0+bench"),
        Judge(f"{BASE}agents/model-judges/bench", "model", "bench model judge", "bench-judge 1"),
        Judge(catalog.agent_iri(ANNIE.agent).value, "person", ANNIE.agent, "domain_expert"),
        Judge(catalog.agent_iri(NORA.agent).value, "person", NORA.agent, "annotator"),
    ][: params.judges]
    passing = {c: rng.uniform(0.55, 0.98) for c in tested}
    by_criterion: dict[str, list[tuple[str, str]]] = {c: [] for c in tested}
    number = 0
    for judge in judges:
        units = [(p, c) for p in answered for c in p.exercises]
        for start in range(0, len(units), params.batch):
            number += 1
            graph = f"{evaluation}/judgments/{number}"
            at = EPOCH + timedelta(days=2, minutes=number)
            triples = judgments_rdf.judge_triples(judge)
            for k, (probe, criterion) in enumerate(units[start : start + params.batch], start=1):
                outcome = _outcome(rng, passing[criterion])
                d = Determination(
                    criterion,
                    plan_rdf.probe_iri(plan, probe.number),
                    1,
                    outcome,
                    MANUAL if judge.kind == "person" else AUTOMATIC,
                    judge,
                    f"bench ruling {k}",
                )
                iri = f"{graph}/determinations/{k}"
                triples += judgments_rdf.determination_triples(
                    iri, evaluation, f"{run}/cases/{probe.number}", d, judge.iri, at
                )
                by_criterion[criterion].append((iri, outcome))
                plain.determinations.append((criterion, d.probe, outcome))
            yield from _entry(
                catalog,
                graph,
                f"{EVALUATION_ID}/judgments/{number}",
                f"judgments {number}: {len(units[start : start + params.batch])} determinations on run 1",
                ANNIE.agent if judge.kind == "person" else THEO.agent,
                triples,
                evaluation,
            )
    corrected = set(rng.sample(tested, params.superseded))
    expert = catalog.agent_iri(ANNIE.agent).value
    for criterion in tested:
        made = by_criterion[criterion]
        started_from = aggregate([o for _, o in made]) or CANT_TELL
        previous = None
        for attempt in range(2 if criterion in corrected else 1):
            number += 1
            graph = f"{evaluation}/judgments/{number}"
            iri = f"{graph}/attestations/1"
            outcome = rng.choices((PASSED, FAILED, CANT_TELL, INAPPLICABLE), (70, 20, 7, 3))[0]
            sufficiency = "insufficient" if outcome == CANT_TELL else "sufficient"
            appropriateness = "inappropriate" if outcome == INAPPLICABLE else "appropriate"
            triples = judgments_rdf.attestation_triples(
                iri,
                evaluation,
                criterion,
                run,
                outcome,
                f"bench attestation {number}",
                (AGGREGATION, started_from),
                [d for d, _ in made],
                SUFFICIENCY[sufficiency],
                APPROPRIATENESS[appropriateness],
                expert,
                EPOCH + timedelta(days=3, minutes=number),
                previous,
                "corrected after review" if previous else None,
            )
            plain.attestations.append((iri, criterion, outcome, previous))
            yield from _entry(
                catalog,
                graph,
                f"{EVALUATION_ID}/judgments/{number}",
                f"judgments {number}: attestation of {criterion.rsplit('/', 1)[-1]} for run 1",
                ANNIE.agent,
                triples,
                evaluation,
            )
            previous = iri


def _outcome(rng: random.Random, passing: float) -> str:
    roll = rng.random()
    if roll < 0.03:
        return INAPPLICABLE
    if roll < 0.07:
        return CANT_TELL
    return PASSED if roll < 0.07 + 0.93 * passing else FAILED


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
