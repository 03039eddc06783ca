"""Review of step 3: scenarios (eligible or blocked, with why), plans and probes, paged and filtered;
an expert's exclusion of a scenario, recorded and attributed (append-only)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Triple

from ..core import queries
from ..envelope.approvals import list_approvals
from ..core.auth import require
from ..core.catalog import GraphKind, now
from ..core.config import Credential
from ..envelope import iris_for
from ..core.errors import BadRequest, NotFound
from ..core.graphs import GraphService
from ..core.namespaces import EPO, PROV, RDF, RDFS, XSD
from .rdf import plan_numbers
from .testplan import plan_iri_for, scenarios_ref

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
            "index": int(subject.rsplit("/", 1)[-1]),
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
    grouped = _by_subject(graphs.triples(graphs.member(GraphKind.EVALUATION, evaluation_id)))
    found = {}
    for statements in grouped.values():
        scenario = _values(statements, EPO + "excludesScenario")
        if scenario:
            found[scenario[0]] = {
                "reason": _values(statements, EPO + "exclusionReason")[0],
                "by": _values(statements, PROV + "wasAttributedTo")[0],
                "at": _values(statements, PROV + "generatedAtTime")[0],
            }
    return found


def exclude_scenario(graphs: GraphService, evaluation_id: str, index: int, reason: str, credential: Credential) -> dict[str, str]:
    """Record an expert's exclusion of scenario ``index``; later plans will not sample it."""
    require(credential, *REVIEWERS)
    if not reason.strip():
        raise BadRequest("an exclusion needs a reason")
    evaluation = iris_for(graphs, evaluation_id).evaluation
    scenario = f"{evaluation}/scenarios/{index}"
    if not any(t.subject.value == scenario for t in graphs.triples(scenarios_ref(graphs, evaluation_id))):
        raise NotFound(f"no derived scenario {index} in evaluation {evaluation_id!r}")
    node = NamedNode(f"{evaluation}/exclusions/{uuid.uuid4().hex}")
    when = now().isoformat()
    agent = NamedNode(graphs.agent_iri(credential.agent))
    graphs.update(graphs.member(GraphKind.EVALUATION, evaluation_id), credential, insert=[
        Triple(node, NamedNode(RDF + "type"), NamedNode(EPO + "ScenarioExclusion")),
        Triple(node, NamedNode(EPO + "excludesScenario"), NamedNode(scenario)),
        Triple(node, NamedNode(EPO + "exclusionReason"), Literal(reason.strip())),
        Triple(node, NamedNode(PROV + "wasAttributedTo"), agent),
        Triple(node, NamedNode(PROV + "generatedAtTime"), Literal(when, datatype=NamedNode(XSD + "dateTime"))),
    ])
    return {"exclusion": node.value, "scenario": scenario, "reason": reason.strip(), "by": agent.value, "at": when}


def plan_view(graphs: GraphService, evaluation_id: str, number: int) -> dict[str, object]:
    """A plan as JSON: strategy, budget, seed, frame sizes, allocation per criterion, approval."""
    plan = plan_iri_for(graphs, evaluation_id, number).value
    grouped = _by_subject(graphs.triples(graphs.member(GraphKind.EVALUATION, evaluation_id)))
    statements = grouped.get(plan)
    if not statements or EPO + "TestPlan" not in _values(statements, RDF + "type"):
        raise NotFound(f"evaluation {evaluation_id!r} has no plan {number}")

    def one(predicate: str) -> str:
        return _values(statements, predicate)[0]

    allocation = [
        {"criterion": row["criterion"].value, "probes": int(row["allocated"].value),
         "eligibleFrame": int(row["eligibleFrame"].value), "exercisedBy": int(row["exercising"].value),
         "scenarios": int(row["scenarios"].value)}
        for row in graphs.query(queries.load("plan-traceability"), {"plan": NamedNode(plan)})
    ]
    approvals = [r.to_json() for r in list_approvals(graphs, evaluation_id)[0] if r.subject == plan]
    return {
        "plan": plan, "number": number, "digest": one(EPO + "planDigest"),
        "strategy": one(EPO + "allocationStrategy").rsplit("/", 1)[-1],
        "budget": int(one(EPO + "probeBudget")), "seed": int(one(EPO + "seed")),
        "frameSize": int(one(EPO + "frameSize")), "eligibleFrameSize": int(one(EPO + "eligibleFrameSize")),
        "envelope": one(PROV + "wasDerivedFrom"), "envelopeDigest": one(EPO + "envelopeDigest"),
        "createdBy": one(PROV + "wasAttributedTo"), "created": one(PROV + "generatedAtTime"),
        "allocation": allocation,
        "probes": len(_values(statements, EPO + "includesProbe")),
        "approved": bool(approvals), "approvals": approvals,
    }


def list_plans(graphs: GraphService, evaluation_id: str) -> list[dict[str, object]]:
    """Every plan of the evaluation, oldest first."""
    evaluation = iris_for(graphs, evaluation_id).evaluation
    numbers = sorted(plan_numbers(graphs.triples(graphs.member(GraphKind.EVALUATION, evaluation_id)), evaluation))
    return [plan_view(graphs, evaluation_id, number) for number in numbers]


def list_probes(graphs: GraphService, evaluation_id: str, number: int, *, criterion: str | None = None,
                limit: int = 50, offset: int = 0) -> Page:
    plan_view(graphs, evaluation_id, number)
    prefix = plan_iri_for(graphs, evaluation_id, number).value + "/probes/"
    grouped = _by_subject(t for t in graphs.triples(graphs.member(GraphKind.EVALUATION, evaluation_id))
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

