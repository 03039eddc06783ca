"""The bulk of the metrics bench record as quads, made with the service's RDF functions (``plan.rdf.plan_triples``,
``runs.rdf.case_triples``, ``judgments.rdf.determination_triples`` / ``attestation_triples``), each graph with the
catalog entry the service writes for it (``Catalog.entry_quads``: RDFC-1.0 digest, size, ``cat:batchOf`` the
record), for bench/_metrics_data.py to bulk-load: the plan's probes and graph, then the run's cases, the
determinations in batches per judge and the attestations, outcomes drawn from the seeded generator."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from _metrics_params import BASE, EPOCH, EVALUATION_ID, NORA, Params, Plain
from caie_vaccine.demo import DEMO_VERSION
from caie_vaccine.worked_example import ANNIE, THEO
from pyoxigraph import NamedNode, Quad, Triple

from service.core.catalog import Catalog, CatalogEntry, GraphKind
from service.core.digest import digest_and_size
from service.judgments import rdf as judgments_rdf
from service.judgments.attestations import AGGREGATION, APPROPRIATENESS, SUFFICIENCY, aggregate
from service.judgments.model import AUTOMATIC, CANT_TELL, FAILED, INAPPLICABLE, MANUAL, PASSED, Determination, Judge
from service.plan import rdf as plan_rdf
from service.plan.allocation import Allocation, Strategy
from service.plan.openings import Opening
from service.plan.testplan import PlannedProbe, PlanningInput, PlanRequest
from service.runs import rdf as runs_rdf
from service.runs.model import CaseTrace, Exchange, ExecutionError, TokenUsage, Turn
from service.scenarios.frame import FrameCounts


def bench_probes(params: Params, plan: str, tested: list[str]) -> list[PlannedProbe]:
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


def plan_quads(
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


def record_quads(
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
