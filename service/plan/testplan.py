"""Step 3: derive scenarios for an evaluation, allocate the probe budget, sample probes, store the plan.

A plan is made on a signed-off envelope whose inputs (DSO, knowledge graphs, scenario shapes) still have
the digests its sign-off pinned (:mod:`service.envelope.inputs`; 409 naming each changed graph otherwise),
by an evaluation operator. It records strategy, budget, seed, the pinned inputs, the exact frame sizes (all
candidates, eligible, and per criterion the distinct opening turns its eligible scenarios give,
:mod:`.frames`), the allocation and the sampled probes; the derivation (its inputs,
seed and review sample: blocked and eligible scenarios, each with its consistency check) goes to the
evaluation's scenarios graph in the same transaction. Scenarios are named by content
(:func:`service.scenarios.facets.scenario_key`), so an exclusion keeps naming the same situation whatever
the frame's numbering.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import NamedNode, Triple
from rdflib import Graph
from rdflib.term import Node

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential, Settings
from ..core.errors import Conflict, NotFound, Unprocessable
from ..core.graph_edits import GraphEdit, GraphRef
from ..core.graphs import GraphService
from ..core.namespaces import PROV
from ..core.rdf import from_rdflib, to_rdflib
from ..core.store import Node as StoredNode
from ..core.validation import ox_term
from ..envelope import get_evaluation, iris_for
from ..envelope.approvals import read_state, records
from ..envelope.inputs import Pin, current_inputs, governing_sign_off, guards, pin_triples, require_unchanged
from ..envelope.model import Criterion, Envelope
from ..scenarios.derive import CriterionScope, DerivationInput, context_for, derive_with, scenario_iri, scenario_triples
from ..scenarios.engine import Context
from ..scenarios.facets import SCENARIO
from ..scenarios.frame import allowed_positions
from ..scenarios.rules import ROUTING
from ..scope.model import Stratum
from . import rdf as plan_rdf
from .allocation import Allocation, CriterionDemand, OverBudget, Strategy
from .drawing import Drawer
from .frames import prompt_frames
from .model import PlannedProbe, PlanRequest
from .openings import Opening, Openings, TemplateSet
from .strata import require_disjoint

PLANNERS = ("evaluation_operator",)

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class PlanSummary:
    iri: str
    number: int
    digest: str
    total: int
    eligible: int
    allocation: Allocation
    frames: Mapping[str, int]
    probes: tuple[PlannedProbe, ...]
    without_templates: tuple[str, ...]
    """The envelope's languages that have no opening-turn templates, so no probes."""
    identifiers: dict[str, str]
    """Each criterion's IRI to its identifier in the envelope."""


def _graph(graphs: GraphService, ref: GraphRef) -> Graph:
    return to_rdflib(graphs.triples(ref))


def scenarios_ref(graphs: GraphService, evaluation_id: str) -> GraphRef:
    return graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/scenarios")


def excluded_indices(graphs: GraphService, evaluation_id: str, context: Context) -> set[int]:
    """Indices, in ``context``'s frame, of the situations an expert excluded (queries/excluded-scenario-values.rq).

    An exclusion names a scenario by content; its facet values, as the scenarios graph describes it, place it
    in the current frame. One whose values are no longer all in the frame (or whose description does not
    match its key) names no candidate here.
    """
    evaluation = NamedNode(iris_for(graphs, evaluation_id).evaluation)
    scenarios = NamedNode(scenarios_ref(graphs, evaluation_id).iri.value)
    described: dict[str, list[tuple[bool, str, StoredNode]]] = {}
    for row in graphs.rows("excluded-scenario-values", {"evaluation": evaluation, "scenarios": scenarios}):
        scenario = row["scenario"].value
        on_person = row["node"].value != scenario
        described.setdefault(scenario, []).append((on_person, row["property"].value, row["value"]))
    terms = [{ox_term(value): value for value in facet.values} for facet in context.facets]
    found = set()
    for scenario, statements in described.items():
        values: dict[str, Node] = {}
        for facet, known in zip(context.facets, terms):
            matches = {
                known[v]
                for on_person, prop, v in statements
                if on_person == (facet.spec.node != SCENARIO) and prop == str(facet.spec.dso_property) and v in known
            }
            if len(matches) == 1:
                values[facet.name] = matches.pop()
        index = context.space.locate(values)
        if index is not None and scenario_iri(evaluation.value, values, context.facets) == scenario:
            found.add(index)
    return found


@dataclass(frozen=True)
class PlanningInput:
    """What a derivation of a signed-off evaluation needs, and how its criteria map to IRIs."""

    derivation: DerivationInput
    criteria: tuple[Criterion, ...]
    criterion_iri: dict[str, str]
    envelope: Envelope
    evaluation: str
    head_digest: str
    """The record head's catalog digest when the input was read: a plan holds only while it is current."""
    pins: tuple[Pin, ...]
    """The inputs the sign-off pinned, which the derivation reads (checked to be current)."""
    dso: str
    """The DSO graph (the DSO release) the derivation reads."""
    openings: Openings
    without_templates: tuple[str, ...]
    """Languages of the envelope with no template set: left out of the frame, since no probe in them can be said."""
    population: tuple[Stratum, ...] = ()
    """The scope's user population (its strata), which strategy PopulationWeighted follows."""

    @property
    def identifiers(self) -> dict[str, str]:
        """Each criterion's IRI to its identifier in the envelope (:attr:`criterion_iri` the other way)."""
        return {iri: identifier for identifier, iri in self.criterion_iri.items()}


def planning_input(
    graphs: GraphService,
    evaluation_id: str,
    seed: int,
    review_sample: int,
    purpose: str = "derive scenarios or make a plan",
) -> PlanningInput:
    """The derivation input of an evaluation whose envelope is signed off, read from the store: the DSO, the
    knowledge graphs and the scenario shapes graphs, each still with the digest the sign-off pinned.

    409 when the envelope is not signed off, or when an input changed, appeared or disappeared since the
    sign-off (naming each graph with its pinned and current digest): derivation and planning on that
    envelope wait for a new envelope version, whose sign-off pins the inputs anew. ``purpose`` names what is
    refused then, in the message.
    """
    state = read_state(graphs, evaluation_id)
    evaluation, status = get_evaluation(graphs, evaluation_id), state.status
    sign_off = governing_sign_off(records(graphs, state.iris.evaluation), status)
    if not status.signed_off or evaluation.envelope is None or sign_off is None:
        raise Conflict(
            f"evaluation {evaluation_id!r}: the envelope must be signed off before scenarios are derived for a plan "
            f"(missing: {', '.join(status.missing) or 'the sign-off'})"
        )
    envelope, scope = evaluation.envelope, evaluation.scope
    inputs = current_inputs(graphs, scope)
    pins = require_unchanged(graphs, evaluation_id, status, sign_off, inputs, purpose)
    iris = iris_for(graphs, evaluation_id)
    in_scope = tuple(c for c in envelope.content.criteria if c.in_scope)
    criterion_iri = {c.id: iris.criterion(envelope.version, c.id) for c in in_scope}
    dso, kgs = _graph(graphs, inputs.dso), tuple(_graph(graphs, kg) for kg in inputs.kgs)
    openings = Openings(
        dso, kgs, (found for ref in inputs.templates if (found := TemplateSet.read(ref.iri.value, _graph(graphs, ref))))
    )
    boundary = frozenset(scope.use_boundary.languages) or None
    languages = openings.with_templates(boundary)
    if languages is not None and not languages:
        raise Conflict(
            f"evaluation {evaluation_id!r}: cannot {purpose}: no language of the envelope has opening-turn "
            f"templates ({', '.join(openings.lacking(boundary))}); add a templates graph for one "
            "(docs/templates.md)"
        )
    # An out-of-scope topic stays in the frame when a criterion bears on it: probes that check the
    # system declines out-of-scope questions count (methodology §5.4.1).
    targeted = {concept for c in in_scope for concept in c.concepts}
    excluded_concepts = frozenset(
        concept for item in scope.out_of_scope for concept in item.concepts if concept not in targeted
    )
    derivation = DerivationInput(
        dso=dso,
        kgs=kgs,
        shapes=tuple(_graph(graphs, shapes) for shapes in inputs.shapes),
        criteria=tuple(CriterionScope(criterion_iri[c.id], frozenset(c.concepts), c.triggers) for c in in_scope),
        allowed_countries=frozenset(scope.use_boundary.countries) or None,
        allowed_languages=languages,
        excluded_concepts=excluded_concepts,
        seed=seed,
        sample_size=review_sample,
        evaluation_iri=iris.evaluation,
    )
    return PlanningInput(
        derivation,
        in_scope,
        criterion_iri,
        envelope,
        iris.evaluation,
        state.head_digest,
        pins,
        inputs.dso.iri.value,
        openings,
        tuple(openings.lacking(boundary)),
        scope.population,
    )


def scenario_at(graphs: GraphService, evaluation_id: str, index: int) -> str:
    """The IRI of the scenario at ``index`` in the frame of the signed-off envelope's pinned inputs.

    409 as :func:`planning_input`; 404 for an index outside the frame. Only the facets are built, no rules run.
    """
    planning = planning_input(
        graphs, evaluation_id, 0, 0, f"resolve scenario index {index} (name the scenario by its key)"
    )
    space = context_for(planning.derivation).space
    if not 0 <= index < space.size:
        raise NotFound(
            f"no scenario {index} in evaluation {evaluation_id!r}: its frame has {space.size:,} candidates "
            f"(0 to {space.size - 1:,}) under the inputs pinned at sign-off"
        )
    return scenario_iri(planning.evaluation, space.values(index))


MAX_PLAN_BUDGET: int = Settings.model_fields["max_plan_budget"].default
"""The budget cap of a caller that names none: the deployment's default (``CAIE_MAX_PLAN_BUDGET`` unset)."""


def create_plan(
    graphs: GraphService,
    evaluation_id: str,
    request: PlanRequest,
    credential: Credential,
    progress: Progress | None = None,
    *,
    max_budget: int = MAX_PLAN_BUDGET,
) -> PlanSummary:
    """Derive, allocate, sample and store a new test plan (not yet approved); 422 naming ``max_budget`` (the
    settings' ``max_plan_budget``) when the request asks for more probes, before any derivation."""
    require(credential, *PLANNERS)
    if request.budget > max_budget:
        raise Unprocessable(
            f"budget: {request.budget:,} probes is more than one plan may have here "
            f"(at most {max_budget:,}, set by CAIE_MAX_PLAN_BUDGET)"
        )
    report = progress or (lambda stage, done, total: None)
    report("deriving scenarios", 0, 1)
    planning = planning_input(graphs, evaluation_id, request.seed, request.review_sample)
    inp, in_scope, criterion_iri, envelope = (
        planning.derivation,
        planning.criteria,
        planning.criterion_iri,
        planning.envelope,
    )
    derivation, context, production = derive_with(inp)
    report("deriving scenarios", 1, 1)
    eligible = {count.criterion: count.eligible for count in derivation.counts.per_criterion}
    labels = plan_rdf.labels(inp.dso, inp.kgs)
    # a criterion's frame is the number of distinct opening turns among its eligible scenarios (frames.py):
    # facets that never reach the prompt are not test inputs, so the allocation caps on this, not on eligible
    frames = prompt_frames(production, planning.openings, labels).counts
    demands = [
        CriterionDemand(
            criterion_iri[c.id],
            Decimal(c.weight or 0),
            frames[criterion_iri[c.id]],
            frozenset(c.concepts) | {c.dimension, c.category},
        )
        for c in in_scope
    ]
    bearing = {c.iri: allowed_positions(context, c, defaults=False) for c in context.criteria}  # where it bears
    identifier = planning.identifiers  # each criterion's random streams are named by it
    if request.strategy is Strategy.POPULATION_WEIGHTED:
        if not planning.population:
            raise Unprocessable(
                f"strategy {request.strategy.value} follows the scope's population, and the scope of "
                f"{evaluation_id!r} declares none (docs/allocation.md)"
            )
        require_disjoint(context, planning.evaluation, planning.population)

    def say(index: int) -> Opening | None:
        return planning.openings.opening({name: str(v) for name, v in context.space.values(index).items()}, labels)

    drawer = Drawer(
        context,
        production,
        say,
        demands,
        eligible,
        identifier,
        request.strategy,
        request.seed,
        request.annotators,
        excluded_indices(graphs, evaluation_id, context),
        planning.evaluation,
        planning.population,
    )
    try:
        drawn = drawer.draw(request.budget, report)
    except OverBudget as refused:  # the refusal names a budget that draws, counting the shared opening-turn pools
        raise drawer.refusal(refused, request.budget, report) from refused
    allocation = drawn.allocation
    probes: list[PlannedProbe] = []
    for demand, picks in drawn.picks:
        assignees = _assignees(allocation, demand.iri)
        for position, pick in enumerate(picks):
            facet_values = context.space.values(pick.index)
            values = {name: str(value) for name, value in facet_values.items()}
            digits = context.space.digits(pick.index)
            exercises = tuple(
                iri
                for iri, positions in bearing.items()
                if all(d in a for d, a in zip(digits, positions)) and not production.pair_blocks(pick.index, iri)
            )
            probes.append(
                PlannedProbe(
                    number=len(probes) + 1,
                    scenario=pick.index,
                    scenario_iri=scenario_iri(planning.evaluation, facet_values),
                    criterion=demand.iri,
                    exercises=exercises or (demand.iri,),
                    opening=pick.opening,
                    language=planning.openings.language_of(values),
                    assigned_to=graphs.agent_iri(assignees[position]) if assignees else None,
                    stratum=pick.stratum,
                )
            )
    evaluation = planning.evaluation
    record = graphs.member(GraphKind.EVALUATION, evaluation_id)
    plan_graph = graphs.next_batch(record, "plans")
    plan_iri, number = plan_graph.iri.value, int(plan_graph.key)
    activity = f"{plan_iri}/derivation"
    checked = tuple(sorted(rule.iri for rule in context.rules if rule.kind != ROUTING))
    content = plan_rdf.plan_triples(
        plan_iri,
        request,
        envelope.iri,
        envelope.digest,
        derivation.counts,
        frames,
        allocation,
        probes,
        evaluation,
        graphs.agent_iri(credential.agent),
        graphs.clock(),
        planning.pins,
        activity,
        plan_rdf.Provenance(planning.dso, checked, planning.without_templates),
        identifier,
    )
    digest = plan_rdf.plan_digest(content)
    described = {s.index for s in derivation.scenarios}
    review = [
        *from_rdflib(scenario_triples(derivation, activity)),
        *pin_triples(activity, planning.pins, activity=True),
        Triple(NamedNode(activity), NamedNode(PROV + "used"), NamedNode(envelope.iri)),
        *plan_rdf.probe_scenarios([p.scenario for p in probes if p.scenario not in described], context, evaluation),
    ]
    report("storing the plan", 0, 1)  # the last point where a departed client or a stopping service cancels
    graphs.apply_edits(
        [
            GraphEdit(
                plan_graph,
                insert=content + [plan_rdf.digest_triple(plan_iri, digest)],
                batch_of=record.iri.value,
                title=f"test plan {number} of {evaluation_id}",
            ),
            GraphEdit(scenarios_ref(graphs, evaluation_id), insert=review, title=f"scenarios of {evaluation_id}"),
        ],
        credential,
        guards={record.iri.value: planning.head_digest, **guards(planning.pins)},
    )
    return PlanSummary(
        plan_iri,
        number,
        digest,
        derivation.counts.total,
        derivation.counts.eligible,
        allocation,
        frames,
        tuple(probes),
        planning.without_templates,
        identifier,
    )


def _assignees(allocation: Allocation, criterion: str) -> list[str]:
    """The annotator of each of the criterion's probes, in order (expertise matching only)."""
    return [agent for agent, count in sorted(allocation.assignments.get(criterion, {}).items()) for _ in range(count)]


def plan_iri_for(graphs: GraphService, evaluation_id: str, number: int) -> NamedNode:
    return NamedNode(graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/plans/{number}").iri.value)
