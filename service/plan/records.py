"""Reading step 3's plans: each plan as recorded, with whether it is approved now, and its probes, filtered
and paged; and an expert's exclusion of a scenario, recorded and attributed (append-only).

Plans and probes are read through published queries (``queries/plans.rq``, ``plan-traceability.rq``,
``plan-languages-without-templates.rq``, ``probes.rq``, ``probe-count.rq``, ``probe-follow-ups.rq``) with bound parameters; this module checks the parameters and turns rows
into :mod:`.model` values. The review of scenarios is :mod:`service.scenarios.records`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable

from pyoxigraph import Literal, NamedNode, Triple

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import BadRequest, NotFound
from ..core.graphs import GraphService
from ..core.iris import minted_number, named_node
from ..core.namespaces import EPO, PROV, RDF, XSD
from ..core.rdf import integer, local_name
from ..core.store import Row, Term
from ..envelope import iris_for
from ..scenarios.facets import SCENARIO_KEY_LENGTH
from ..scenarios.model import Exclusion, Page, RecordedExclusion
from ..scenarios.records import check_page, page_rows
from .approval import plan_status
from .model import CriterionAllocation, PlanApprovalStatus, PlanView, Probe
from .rdf import probe_iri
from .testplan import plan_iri_for, scenario_at, scenarios_ref

REVIEWERS = ("domain_expert", "evaluation_operator")


def exclude_scenario(
    graphs: GraphService, evaluation_id: str, scenario: str, reason: str, credential: Credential
) -> RecordedExclusion:
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
    elif scenario.isascii() and scenario.isdigit():  # "²".isdigit(), but int("²") fails
        iri = scenario_at(graphs, evaluation_id, int(scenario))
    else:
        raise NotFound(
            f"no scenario {scenario!r} in evaluation {evaluation_id!r}: name it by its key "
            f"({SCENARIO_KEY_LENGTH} hex digits) or its index"
        )
    if not graphs.rows(
        "scenario-exists", {"graph": scenarios_ref(graphs, evaluation_id).iri, "scenario": NamedNode(iri)}
    ):
        raise NotFound(f"no derived scenario {scenario} (<{iri}>) in evaluation {evaluation_id!r}")
    key = uuid.uuid4().hex
    node = NamedNode(f"{evaluation}/exclusions/{key}")
    when = graphs.clock().isoformat()
    agent = NamedNode(graphs.agent_iri(credential.agent))
    graphs.append(
        record,
        "exclusions",
        [
            Triple(node, NamedNode(RDF + "type"), NamedNode(EPO + "ScenarioExclusion")),
            Triple(node, NamedNode(EPO + "inEvaluation"), NamedNode(evaluation)),
            Triple(node, NamedNode(EPO + "excludesScenario"), NamedNode(iri)),
            Triple(node, NamedNode(EPO + "exclusionReason"), Literal(reason.strip())),
            Triple(node, NamedNode(PROV + "wasAttributedTo"), agent),
            Triple(node, NamedNode(PROV + "generatedAtTime"), Literal(when, datatype=NamedNode(XSD + "dateTime"))),
        ],
        credential,
        key=key,
        title=f"exclusion of scenario {scenario} by {credential.agent}",
    )
    return RecordedExclusion(node.value, iri, Exclusion(reason.strip(), agent.value, when))


Approval = Callable[[Row], PlanApprovalStatus]
"""Whether a plan is approved, from its row of ``queries/plans.rq``: by default :func:`.approval.plan_status`, from the
plan's and the envelope's content; the workspace's pages weigh the recorded digests (:mod:`service.workspace.plans`)."""


def _plan_view(graphs: GraphService, evaluation_id: str, row: Row, approval: Approval | None = None) -> PlanView:
    plan = row["plan"].value
    number = minted_number(plan)
    allocation = tuple(
        CriterionAllocation(
            r["criterion"].value,
            int(r["allocated"].value),
            int(r["promptFrame"].value),
            int(r["exercising"].value),
            int(r["scenarios"].value),
        )
        for r in graphs.rows("plan-traceability", {"plan": NamedNode(plan)})
    )
    return PlanView(
        iri=plan,
        number=number,
        recorded_digest=row["digest"].value if "digest" in row else None,
        strategy=local_name(row["strategy"].value),
        budget=int(row["budget"].value),
        seed=int(row["seed"].value),
        frame_size=int(row["frameSize"].value),
        eligible_frame_size=int(row["eligibleFrameSize"].value),
        envelope=row["envelope"].value,
        envelope_digest=row["envelopeDigest"].value,
        created_by=row["createdBy"].value,
        created=row["created"].value,
        allocation=allocation,
        probes=int(row["probes"].value),
        approval=approval(row) if approval else plan_status(graphs, evaluation_id, number),
        without_templates=tuple(
            r["language"].value for r in graphs.rows("plan-languages-without-templates", {"plan": NamedNode(plan)})
        ),
    )


def plan_view(graphs: GraphService, evaluation_id: str, number: int, approval: Approval | None = None) -> PlanView:
    """A plan: strategy, budget, seed, frame sizes, allocation per criterion, whether it is approved now."""
    evaluation = NamedNode(iris_for(graphs, evaluation_id).evaluation)
    plan = plan_iri_for(graphs, evaluation_id, number)
    rows = graphs.rows("plans", {"evaluation": evaluation, "plan": plan})
    if not rows:
        raise NotFound(f"evaluation {evaluation_id!r} has no plan {number}")
    return _plan_view(graphs, evaluation_id, rows[0], approval)


def list_plans(graphs: GraphService, evaluation_id: str, approval: Approval | None = None) -> list[PlanView]:
    """Every plan of the evaluation, oldest first."""
    evaluation = NamedNode(iris_for(graphs, evaluation_id).evaluation)
    return [
        _plan_view(graphs, evaluation_id, row, approval) for row in graphs.rows("plans", {"evaluation": evaluation})
    ]


def _criterion_filter(criterion: str) -> dict[str, Term]:
    """A criterion named by IRI (it has a scheme) or by its identifier (``c01``), as a parameter of probes.rq."""
    if ":" in criterion:
        return {"criterion": named_node(criterion, "the criterion")}
    return {"criterionId": Literal(criterion)}


def list_probes(
    graphs: GraphService,
    evaluation_id: str,
    number: int,
    *,
    criterion: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page[Probe]:
    """The plan's probes in number order, optionally only those allocated to ``criterion`` (IRI or identifier);
    404 when the evaluation has no such plan."""
    check_page(limit, offset)
    bindings = {
        "plan": plan_iri_for(graphs, evaluation_id, number),
        **(_criterion_filter(criterion) if criterion else {}),
    }
    counted = graphs.rows(
        "probe-count", {"evaluation": NamedNode(iris_for(graphs, evaluation_id).evaluation), **bindings}
    )
    if not counted:
        raise NotFound(f"evaluation {evaluation_id!r} has no plan {number}")
    probes = _probes(graphs, bindings["plan"], page_rows(graphs, "probes", bindings, limit, offset))
    return Page(probes, int(counted[0]["probes"].value), limit, offset)


def plan_size(graphs: GraphService, evaluation_id: str, number: int) -> int:
    """How many probes plan ``number`` holds (numbered 1 to that); 404 when the evaluation has no such plan."""
    counted = graphs.rows(
        "probe-count",
        {
            "evaluation": NamedNode(iris_for(graphs, evaluation_id).evaluation),
            "plan": plan_iri_for(graphs, evaluation_id, number),
        },
    )
    if not counted:
        raise NotFound(f"evaluation {evaluation_id!r} has no plan {number}")
    return int(counted[0]["probes"].value)


def probes_numbered(graphs: GraphService, evaluation_id: str, number: int, numbers: Iterable[int]) -> tuple[Probe, ...]:
    """The probes of plan ``number`` numbered ``numbers``, in number order, each asked for by its IRI: a page whose
    cost does not grow with the plan (a listing's page groups and orders the whole plan first)."""
    plan = plan_iri_for(graphs, evaluation_id, number)
    rows = graphs.rows_over("probes", ("plan", "probe"), [(plan, NamedNode(probe_iri(plan.value, n))) for n in numbers])
    return _probes(graphs, plan, sorted(rows, key=lambda row: int(row["number"].value)))


def _probes(graphs: GraphService, plan: Term, rows: list[Row]) -> tuple[Probe, ...]:
    """Rows of ``probes.rq`` as probes, with their follow-up turns."""
    follow_ups = _follow_ups(graphs, plan, [int(row["number"].value) for row in rows])
    return tuple(
        Probe(
            iri=row["probe"].value,
            number=int(row["number"].value),
            criterion=row["criterion"].value,
            exercises=tuple(sorted(row["exercises"].value.split())),
            scenario=row["scenario"].value,
            opening_prompt=row["openingPrompt"].value,
            language=row["language"].value if "language" in row else None,
            assigned_to=row["assignedTo"].value if "assignedTo" in row else None,
            follow_ups=tuple(follow_ups.get(row["probe"].value, ())),
            awaiting_native_review="textReviewStatus" in row and row["textReviewStatus"].value != EPO + "Reviewed",
        )
        for row in rows
    )


def _follow_ups(graphs: GraphService, plan: Term, numbers: list[int]) -> dict[str, list[str]]:
    """The follow-up turns of the plan's probes numbered ``numbers`` (a page), in order, by probe IRI."""
    if not numbers:
        return {}
    found: dict[str, list[str]] = {}
    for row in graphs.rows(
        "probe-follow-ups", {"plan": plan, "first": integer(min(numbers)), "last": integer(max(numbers))}
    ):
        found.setdefault(row["probe"].value, []).append(row["text"].value)
    return found
