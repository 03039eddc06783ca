"""The worked measles example of ``make run``: an evaluation taken through steps 1 to 3.

Scope and envelope from ``examples/measles/*.json``; the domain expert assesses the DSO, each criterion (the
out-of-scope c12 as not relevant: the record keeps that decision as hers) and the envelope, the
organizational expert signs it off, the operator makes a 300-probe plan (highest weight
first) and the domain expert approves it. The demo agents act under their own names; nothing is
written when the evaluation already exists, so restarts change nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from . import envelope
from .envelope import approvals
from .api.models import EnvelopeBody, EvaluationBody
from .core.config import Credential
from .core.errors import NotFound
from .core.graphs import GraphService
from .plan.allocation import Strategy
from .plan.approval import approve_plan
from .plan.testplan import PlanRequest, create_plan

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "measles"
EVALUATION_ID = "measles"


def _agent(name: str, role: str) -> Credential:
    return Credential(agent=name, name=f"{name} (demo {role.replace('_', ' ')})", roles=frozenset({role}))


ANNIE = _agent("annie", "domain_expert")
DANA = _agent("dana", "organizational_expert")
THEO = _agent("theo", "evaluation_operator")


def load_worked_example(graphs: GraphService, report: Callable[[str], None] = lambda _: None) -> bool:
    """Take the measles example through scope, envelope, approvals and an approved plan; whether it was new."""
    try:
        envelope.get_evaluation(graphs, EVALUATION_ID)
        return False
    except NotFound:
        pass
    scope = EvaluationBody.model_validate(json.loads((EXAMPLE / "evaluation.json").read_text(encoding="utf-8")))
    content = EnvelopeBody.model_validate(json.loads((EXAMPLE / "envelope.json").read_text(encoding="utf-8")))
    envelope.put_scope(graphs, scope.to_domain(EVALUATION_ID), THEO, must_be_new=True)
    approvals.assess_dso_appropriateness(graphs, EVALUATION_ID, True, "the vaccine-education DSO and its rules model "
                                         "what the public asks about measles and its vaccine", ANNIE)
    envelope.put_envelope(graphs, EVALUATION_ID, content.to_domain(), THEO)
    for criterion in content.to_domain().criteria:
        rationale = ("bears on what residents need during the outbreak" if criterion.in_scope
                     else f"out of scope: {criterion.weight_rationale}")
        approvals.assess_relevance(graphs, EVALUATION_ID, criterion.id, criterion.in_scope, rationale, ANNIE)
    approvals.assess_appropriateness(graphs, EVALUATION_ID, True, "the envelope fits a public information service", ANNIE)
    approvals.sign_off_envelope(graphs, EVALUATION_ID, DANA, "signed off for the ministry")
    report("worked example: envelope assessed and signed off; deriving scenarios and a 300-probe plan ...")
    plan = create_plan(graphs, EVALUATION_ID, PlanRequest(Strategy.HIGHEST_WEIGHT_FIRST, 300, seed=7, review_sample=500), THEO)
    approve_plan(graphs, EVALUATION_ID, plan.number, ANNIE, "approved for the first run", plan.digest)
    report(f"worked example: plan {plan.number} approved ({plan.eligible:,} eligible of {plan.total:,} candidate scenarios)")
    return True
