"""Rule judges on a run (issue 10 §4): every judging rule in the store's judges graphs (``graphs/judges/*``,
docs/judgments.md) on every answered case of a run, recorded as automatic determinations through
:func:`.records.record_determinations`.

What a rule reads besides the conversation comes from the record: the probe's language tag (its language's
code in the DSO or KGs), its country's knowledge graph (the scope's KG that describes the country its scenario's
asker lives in: the facet linked by ``epo:country``) and the criteria it exercises, by identifier. An operator
starts it; a rule whose criterion the plan does not test is not applied.
"""

from __future__ import annotations

from pyoxigraph import NamedNode
from rdflib import Graph, URIRef

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
from ..scenarios.facets import read_specs
from .model import JudgingRule, ProbeContext
from .records import answered_cases, record_determinations
from .rules import judge, read_rules

EPO_COUNTRY = "https://w3id.org/ob-caie/epo/country"


def judging_rules(graphs: GraphService, dso: NamedNode) -> tuple[JudgingRule, ...]:
    """Every judging rule of the store's judges graphs but those made for another DSO than the graph ``dso``
    (``queries/inputs-for-other-dsos.rq``); 422 naming a malformed one."""
    foreign = {row["graph"].value for row in graphs.rows("inputs-for-other-dsos", {"dsoGraph": dso})}
    rules: list[JudgingRule] = []
    for entry in graphs.catalog(GraphKind.JUDGES):
        if entry.graph not in foreign:
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
        raise Unprocessable("no judging rule for the evaluation's DSO in the store: load one into /graphs/judges/{id} "
                            "(docs/judgments.md)")
    cases = answered_cases(graphs, run.iri)
    if not cases:
        raise Unprocessable(f"run {run_number} has no answered case to judge")
    dso = to_rdflib(graphs.triples(inputs.dso))
    kgs = [to_rdflib(graphs.triples(kg)) for kg in inputs.kgs]
    openings = Openings(dso, kgs, ())
    countries = _probe_countries(graphs, evaluation_id, run.plan, dso)
    determinations = []
    for probe in plan_probes(graphs, evaluation_id, run.plan):
        case = cases.get(probe.iri)
        if case is None:
            continue
        tag = openings.tag(probe.language) if probe.language else None
        country = next((kg for kg in kgs if (URIRef(countries.get(probe.iri, "")), None, None) in kg), Graph())
        context = ProbeContext(probe.iri, tag or "und", country, dso,
                               {criterion.rsplit("/", 1)[-1]: criterion for criterion in probe.exercises})
        turns = [t for sent, reply in case.turns for t in (Turn("user", sent), Turn("assistant", reply))]
        determinations += judge(turns, context, rules)
    if not determinations:
        raise Unprocessable(f"no judging rule applies to a criterion run {run_number}'s probes exercise")
    return record_determinations(graphs, evaluation_id, run_number, determinations, agent)


def _probe_countries(graphs: GraphService, evaluation_id: str, plan: str, dso: Graph) -> dict[str, str]:
    """Each probe's country, by the DSO's country facet property (none when the DSO declares no country facet)."""
    spec = next((s for s in read_specs(dso) if str(s.epo_property) == EPO_COUNTRY), None)
    if spec is None:
        return {}
    scenarios = graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/scenarios").iri
    rows = graphs.rows("plan-probe-facet", {"plan": NamedNode(plan), "scenarios": scenarios,
                                            "property": NamedNode(str(spec.dso_property))})
    return {row["probe"].value: row["value"].value for row in rows}
