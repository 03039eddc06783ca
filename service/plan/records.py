"""Review of step 3: scenarios (eligible or blocked, with why), plans and probes, paged and filtered;
an expert's exclusion of a scenario, recorded and attributed (append-only)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Triple

from ..core import queries
from ..core.store import Row
from .approval import plan_ref, plan_status
from ..core.auth import require
from ..core.catalog import GraphKind, now
from ..core.config import Credential
from ..envelope import iris_for
from ..core.errors import BadRequest, NotFound
from ..core.graphs import GraphService
from ..core.namespaces import EPO, PROV, RDF, RDFS, XSD
from ..scenarios.facets import SCENARIO_KEY_LENGTH
from .testplan import plan_iri_for, scenario_at, scenarios_ref

REVIEWERS = ("domain_expert", "evaluation_operator")
STATUS = {"eligible": EPO + "EligibleScenario", "blocked": EPO + "BlockedScenario"}


@dataclass(frozen=True)
class Page:
    items: list[dict[str, object]]
    total: int
    limit: int
    offset: int

    def to_json(self) -> dict[str, object]:
        return {"total": self.total, "limit": self.limit, "offset": self.offset, "items": self.items}


def _by_subject(triples: Iterable[Triple]) -> dict[str, list[Triple]]:
    grouped: dict[str, list[Triple]] = defaultdict(list)
    for triple in triples:
        grouped[triple.subject.value].append(triple)
    return grouped


def _values(statements: list[Triple], predicate: str) -> list[str]:
    return sorted(t.object.value for t in statements if t.predicate.value == predicate)


def _page(items: list[dict[str, object]], limit: int, offset: int) -> Page:
    if not 1 <= limit <= 1000 or offset < 0:
        raise BadRequest("limit must be 1..1000 and offset at least 0")
    return Page(items[offset: offset + limit], len(items), limit, offset)


def list_scenarios(graphs: GraphService, evaluation_id: str, *, status: str | None = None, rule: str | None = None,
                   facets: dict[str, str] | None = None, limit: int = 50, offset: int = 0) -> Page:
    """The derived scenarios, oldest index first, with facets, status, blocking rules and messages."""
    if status is not None and status not in STATUS:
        raise BadRequest(f"status must be one of {', '.join(STATUS)}, not {status!r}")
    grouped = _by_subject(graphs.triples(scenarios_ref(graphs, evaluation_id)))
    excluded = _exclusions(graphs, evaluation_id)
    items = []
    for subject, statements in grouped.items():
        types = _values(statements, RDF + "type")
        if EPO + "Scenario" not in types:
            continue
        person = grouped.get(subject + "#person", [])
        facet_values = {t.predicate.value.rsplit("/", 1)[-1]: t.object.value for t in person + statements
                        if t.predicate.value.startswith(("https://w3id.org/ob-caie/dso/", EPO)) and t.predicate.value != EPO + "blockedBy"}
        facet_values.update({"persona": v for v in _values(person, RDF + "type") if not v.endswith("/Person")})
        item = {
            "scenario": subject,
            "index": min((int(v) for v in _values(statements, EPO + "scenarioIndex")), default=-1),
            "status": "blocked" if STATUS["blocked"] in types else "eligible",
            "blockedBy": _values(statements, EPO + "blockedBy"),
            "messages": _values(statements, RDFS + "comment"),
            "facets": facet_values,
            "excluded": excluded.get(subject),
        }
        if status and item["status"] != status or rule and rule not in item["blockedBy"]:
            continue
        if facets and any(facet_values.get(name) != value for name, value in facets.items()):
            continue
        items.append(item)
    items.sort(key=lambda item: item["index"])
    return _page(items, limit, offset)


def blocking_summary(graphs: GraphService, evaluation_id: str) -> list[dict[str, object]]:
    """How many reviewed scenarios each rule blocked, and how many are eligible (queries/blocked-scenarios-by-rule.rq)."""
    graph = NamedNode(scenarios_ref(graphs, evaluation_id).iri.value)
    return [{"rule": row["rule"].value, "scenarios": int(row["scenarios"].value)}
            for row in graphs.query(queries.load("blocked-scenarios-by-rule"), {"graph": graph})]


def _exclusions(graphs: GraphService, evaluation_id: str) -> dict[str, dict[str, str]]:
    """Excluded scenario IRI to why, by whom and when (queries/scenario-exclusions.rq; the latest wins)."""
    evaluation = NamedNode(iris_for(graphs, evaluation_id).evaluation)
    return {
        row["scenario"].value: {"reason": row["reason"].value, "by": row["agent"].value, "at": row["time"].value}
        for row in graphs.rows("scenario-exclusions", {"evaluation": evaluation})
    }


def exclude_scenario(graphs: GraphService, evaluation_id: str, scenario: str, reason: str, credential: Credential) -> dict[str, str]:
    """Record an expert's exclusion of a scenario as a batch of the record; later plans will not sample it.

    ``scenario`` is its key (the last segment of its IRI, which names the situation by content) or its index
    in the frame of the signed-off envelope's pinned inputs, which resolves to that key.
    """
    require(credential, *REVIEWERS)
    if not reason.strip():
        raise BadRequest("an exclusion needs a reason")
    record = graphs.member(GraphKind.EVALUATION, evaluation_id)
    evaluation = iris_for(graphs, evaluation_id).evaluation
    if len(scenario) == SCENARIO_KEY_LENGTH and all(c in "0123456789abcdef" for c in scenario):
        iri = f"{evaluation}/scenarios/{scenario}"
    elif scenario.isdigit():
        iri = scenario_at(graphs, evaluation_id, int(scenario))
    else:
        raise NotFound(f"no scenario {scenario!r} in evaluation {evaluation_id!r}: name it by its key "
                       f"({SCENARIO_KEY_LENGTH} hex digits) or its index")
    if not any(t.subject.value == iri for t in graphs.triples(scenarios_ref(graphs, evaluation_id))):
        raise NotFound(f"no derived scenario {scenario} (<{iri}>) in evaluation {evaluation_id!r}")
    key = uuid.uuid4().hex
    node = NamedNode(f"{evaluation}/exclusions/{key}")
    when = now().isoformat()
    agent = NamedNode(graphs.agent_iri(credential.agent))
    graphs.append(record, "exclusions", [
        Triple(node, NamedNode(RDF + "type"), NamedNode(EPO + "ScenarioExclusion")),
        Triple(node, NamedNode(EPO + "inEvaluation"), NamedNode(evaluation)),
        Triple(node, NamedNode(EPO + "excludesScenario"), NamedNode(iri)),
        Triple(node, NamedNode(EPO + "exclusionReason"), Literal(reason.strip())),
        Triple(node, NamedNode(PROV + "wasAttributedTo"), agent),
        Triple(node, NamedNode(PROV + "generatedAtTime"), Literal(when, datatype=NamedNode(XSD + "dateTime"))),
    ], credential, key=key, title=f"exclusion of scenario {iri.rsplit('/', 1)[-1]} by {credential.agent}")
    return {"exclusion": node.value, "scenario": iri, "reason": reason.strip(), "by": agent.value, "at": when}


def _plan_json(graphs: GraphService, evaluation_id: str, row: Row) -> dict[str, object]:
    plan = row["plan"].value
    number = int(plan.rsplit("/", 1)[-1])
    allocation = [
        {"criterion": r["criterion"].value, "probes": int(r["allocated"].value),
         "eligibleFrame": int(r["eligibleFrame"].value), "exercisedBy": int(r["exercising"].value),
         "scenarios": int(r["scenarios"].value)}
        for r in graphs.rows("plan-traceability", {"plan": NamedNode(plan)})
    ]
    status = plan_status(graphs, evaluation_id, number)
    return {
        "plan": plan, "number": number, "digest": status.digest,
        "recordedDigest": row["digest"].value if "digest" in row else None,
        "strategy": row["strategy"].value.rsplit("/", 1)[-1],
        "budget": int(row["budget"].value), "seed": int(row["seed"].value),
        "frameSize": int(row["frameSize"].value), "eligibleFrameSize": int(row["eligibleFrameSize"].value),
        "envelope": row["envelope"].value, "envelopeDigest": row["envelopeDigest"].value,
        "createdBy": row["createdBy"].value, "created": row["created"].value,
        "allocation": allocation, "probes": int(row["probes"].value),
        "approval": status,
    }


def plan_view(graphs: GraphService, evaluation_id: str, number: int) -> dict[str, object]:
    """A plan: strategy, budget, seed, frame sizes, allocation per criterion, whether it is approved now."""
    evaluation = NamedNode(iris_for(graphs, evaluation_id).evaluation)
    plan = plan_iri_for(graphs, evaluation_id, number)
    rows = graphs.rows("plans", {"evaluation": evaluation, "plan": plan})
    if not rows:
        raise NotFound(f"evaluation {evaluation_id!r} has no plan {number}")
    return _plan_json(graphs, evaluation_id, rows[0])


def list_plans(graphs: GraphService, evaluation_id: str) -> list[dict[str, object]]:
    """Every plan of the evaluation, oldest first."""
    evaluation = NamedNode(iris_for(graphs, evaluation_id).evaluation)
    return [_plan_json(graphs, evaluation_id, row) for row in graphs.rows("plans", {"evaluation": evaluation})]


def list_probes(graphs: GraphService, evaluation_id: str, number: int, *, criterion: str | None = None,
                limit: int = 50, offset: int = 0) -> Page:
    plan_view(graphs, evaluation_id, number)
    prefix = plan_iri_for(graphs, evaluation_id, number).value + "/probes/"
    grouped = _by_subject(t for t in graphs.triples(plan_ref(graphs, evaluation_id, number))
                          if t.subject.value.startswith(prefix))
    items = []
    for subject, statements in grouped.items():
        target = _values(statements, EPO + "allocatedTo")[0]
        if criterion and criterion not in (target, target.rsplit("/", 1)[-1]):
            continue
        items.append({
            "probe": subject, "number": int(subject.rsplit("/", 1)[-1]), "criterion": target,
            "exercises": _values(statements, EPO + "exercises"),
            "scenario": _values(statements, EPO + "fromScenario")[0],
            "openingPrompt": _values(statements, EPO + "openingPrompt")[0],
            "language": next(iter(_values(statements, EPO + "language")), None),
            "assignedTo": next(iter(_values(statements, EPO + "assignedTo")), None),
        })
    items.sort(key=lambda item: item["number"])
    return _page(items, limit, offset)

