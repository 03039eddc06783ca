"""Rule judges on a run (issue 10 §4): every judging rule in the store's judges graphs (``graphs/judges/*``,
docs/judgments.md) on every answered case of a run, recorded as automatic determinations through
:func:`.records.record_determinations`.

What a rule reads besides the conversation comes from the record: the probe's language tag (its language's
code in the DSO or KGs), its scenario facts (each declared facet's values on its node, read for the whole plan by
one query, ``queries/plan-probe-facts.rq``), its country's knowledge graph (the scope's KG that describes the
country its scenario's asker lives in: the facet linked by ``epo:country``), the scope's other knowledge graphs
and the criteria it exercises, by identifier. An operator starts it; a rule whose criterion the plan does not
test is not applied.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyoxigraph import NamedNode
from rdflib import Graph, URIRef
from rdflib.term import Node

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import Unprocessable
from ..core.graphs import GraphService
from ..core.rdf import to_rdflib
from ..core.roles import EVALUATION_OPERATOR
from ..envelope import get_evaluation
from ..envelope.inputs import current_inputs
from ..plan.openings import Openings
from ..runs.model import Turn
from ..runs.records import plan_probes, run_view
from ..scenarios.facets import read_nodes, read_specs
from .expected import rdflib_term
from .model import JudgingRule, ProbeContext
from .records import answered_cases, plan_criteria, record_determinations
from .rules import judge, read_rules

EPO_COUNTRY = "https://w3id.org/ob-caie/epo/country"
PROBES_PER_FACTS_QUERY = 100
"""Probes whose scenario facts one request asks for: about 4,000 rows, well under a remote store's row cap."""


def judging_rules(graphs: GraphService, dso: NamedNode) -> tuple[JudgingRule, ...]:
    """Every judging rule of the store's judges graphs made for the DSO graph ``dso`` (``dcterms:conformsTo`` its
    ontology, ``queries/judges-for-dso.rq``): a judges graph naming no DSO judges for none; 422 naming a malformed
    rule."""
    ours = {row["graph"].value for row in graphs.rows("judges-for-dso", {"dsoGraph": dso})}
    rules: list[JudgingRule] = []
    for entry in graphs.catalog(GraphKind.JUDGES):
        if entry.graph in ours:
            rules += read_rules(to_rdflib(graphs.triples(graphs.ref(GraphKind.JUDGES.value, entry.identifier))))
    return tuple(rules)


def judge_run(graphs: GraphService, evaluation_id: str, run_number: int, credential: Credential | None) -> list[str]:
    """Apply every judging rule to every answered case of run ``run_number``; the determinations' IRIs.
    403 unless an evaluation operator; 422 when there is no rule, or no answered case, or a rule is malformed."""
    agent = require(credential, EVALUATION_OPERATOR)
    run = run_view(graphs, evaluation_id, run_number)
    inputs = current_inputs(graphs, get_evaluation(graphs, evaluation_id).scope)
    rules = judging_rules(graphs, inputs.dso.iri)
    if not rules:
        raise Unprocessable(
            "no judging rule for the evaluation's DSO in the store: load one into /graphs/judges/{id} "
            "(docs/judgments.md)"
        )
    cases = answered_cases(graphs, run.iri)
    if not cases:
        raise Unprocessable(f"run {run_number} has no answered case to judge")
    determinations = []
    for probe, context in probe_contexts(graphs, evaluation_id, run.plan, set(cases)).items():
        turns = [t for sent, reply in cases[probe].turns for t in (Turn("user", sent), Turn("assistant", reply))]
        determinations += judge(turns, context, rules)
    if not determinations:
        raise Unprocessable(f"no judging rule applies to a criterion run {run_number}'s probes exercise")
    return record_determinations(graphs, evaluation_id, run_number, determinations, agent)


def probe_contexts(
    graphs: GraphService, evaluation_id: str, plan: str, probes: set[str] | None = None
) -> dict[str, ProbeContext]:
    """What a judge knows of each probe of ``plan`` (of ``probes`` only, when given) besides the conversation:
    language tag, scenario facts, country knowledge graph and the scope's other ones, exercised criteria."""
    inputs = current_inputs(graphs, get_evaluation(graphs, evaluation_id).scope)
    dso = to_rdflib(graphs.triples(inputs.dso))
    kgs = [to_rdflib(graphs.triples(kg)) for kg in inputs.kgs]
    openings = Openings(dso, kgs, ())
    wanted = [probe for probe in plan_probes(graphs, evaluation_id, plan) if probes is None or probe.iri in probes]
    facts = probe_facts(graphs, evaluation_id, plan, dso, [probe.iri for probe in wanted])
    country_property = next((str(s.dso_property) for s in read_specs(dso) if str(s.epo_property) == EPO_COUNTRY), "")
    identifiers = plan_criteria(graphs, plan).identifiers  # a rule names its criterion by dcterms:identifier
    contexts = {}
    for probe in wanted:
        tag = openings.tag(probe.language) if probe.language else None
        known = facts.get(probe.iri, {})
        places = known.get(country_property, frozenset())
        country = next((kg for kg in kgs if any((place, None, None) in kg for place in places)), Graph())
        contexts[probe.iri] = ProbeContext(
            probe.iri,
            tag or "und",
            country,
            dso,
            {identifiers[criterion]: criterion for criterion in probe.exercises},
            facts=known,
            others=tuple(kg for kg in kgs if kg is not country),
        )
    return contexts


def probe_facts(
    graphs: GraphService, evaluation_id: str, plan: str, dso: Graph, probes: Sequence[str]
) -> dict[str, dict[str, frozenset[Node]]]:
    """Each of ``probes``' scenario facts: for every facet the DSO declares (``epo:ScenarioFacet``), its DSO
    property to the values the probe's scenario gives it on the facet's node."""
    nodes = read_nodes(dso)
    placed = {(str(spec.dso_property), spec.node) for spec in read_specs(dso)}
    link = nodes.subject_link or URIRef(EPO_COUNTRY)  # an IRI no scenario links persons by: no subject rows
    scenarios = graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/scenarios").iri
    # asked about a batch of probes at a time: a plan's facts (about 40 rows a probe) outgrow a remote store's
    # row cap (Virtuoso's 10,000) at a few hundred probes
    rows = graphs.rows_over(
        "plan-probe-facts",
        ("plan", "subjectLink", "scenarios", "probe"),
        [(NamedNode(plan), NamedNode(str(link)), scenarios, NamedNode(probe)) for probe in sorted(probes)],
        chunk=PROBES_PER_FACTS_QUERY,
    )
    found: dict[str, dict[str, set[Node]]] = {}
    for row in rows:
        node = row["node"].value
        node_names: tuple[str, ...]
        if nodes.subject_link is None and node == "asker":  # without a subject link the asker is the subject
            node_names = ("asker", "subject")
        else:
            node_names = (node,)
        prop = row["property"].value
        if any((prop, name) in placed for name in node_names):
            found.setdefault(row["probe"].value, {}).setdefault(prop, set()).add(rdflib_term(row["value"]))
    return {probe: {prop: frozenset(values) for prop, values in props.items()} for probe, props in found.items()}
