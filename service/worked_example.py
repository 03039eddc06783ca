"""The worked measles example of ``make run``: an evaluation taken through steps 1 to 5.

Scope and envelope from ``examples/measles/*.json``; the domain expert assesses the DSO, each criterion (the
out-of-scope c12 as not relevant: the record keeps that decision as hers) and the envelope, the
organizational expert signs it off, the operator makes a 300-probe plan (highest weight
first) and the domain expert approves it. Then (:func:`run_and_judge`) the operator runs it against the
demonstration chatbot and applies the worked example's rule judges (``examples/judges/``), the domain expert
adds her own determination on a reply the call-ahead rule failed, and attests each criterion that has
determinations from the aggregation rule's outcome, correcting her first attestation by a superseding one.
Finally (:func:`report_and_sign`) the operator makes the run's report, the domain expert signs it off and the
organizational expert accepts it, so its page shows a final report. The demo agents act under their own names; nothing is written when the evaluation already exists, so restarts
change nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pyoxigraph import NamedNode

from . import envelope
from .envelope import approvals
from .api.models import EnvelopeBody, EvaluationBody
from .core.config import Credential
from .core.errors import NotFound
from .core.graphs import GraphService
from .core.store import Row
from .envelope import iris_for
from .plan.allocation import Strategy
from .plan.approval import approve_plan
from .plan.testplan import PlanRequest, create_plan
from .reports.records import make_report
from .reports.signoffs import sign
from .judgments.attestations import aggregate, attest
from .judgments.automated import judge_run
from .judgments.model import CANT_TELL, FAILED
from .judgments.records import Ruling, record_rulings
from .runs.demo import DemoChatbot
from .runs.model import ExecutionSettings
from .runs.records import start_run
from .runs.runner import continue_run

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
    plan = create_plan(graphs, EVALUATION_ID, PlanRequest(Strategy.POPULATION_WEIGHTED, 300, seed=7, review_sample=500), THEO)
    approve_plan(graphs, EVALUATION_ID, plan.number, ANNIE, "approved for the first run", plan.digest)
    report(f"worked example: plan {plan.number} approved ({plan.eligible:,} eligible of {plan.total:,} candidate scenarios)")
    run_number = run_and_judge(graphs, plan.number, report)
    report_and_sign(graphs, run_number, report)
    return True


def run_and_judge(graphs: GraphService, plan_number: int, report: Callable[[str], None]) -> int:
    """Run the plan on the demonstration chatbot, judge it by rule and by hand, and attest (module docstring); the
    run's number."""
    settings = ExecutionSettings(concurrency=8)
    run = start_run(graphs, EVALUATION_ID, plan_number, DemoChatbot().version, settings, THEO)
    done = continue_run(graphs, EVALUATION_ID, run.number, DemoChatbot(), settings, THEO)
    automatic = judge_run(graphs, EVALUATION_ID, run.number, THEO)
    report(f"worked example: run {run.number} on the demonstration chatbot ({done.run.traces} traces, "
           f"{done.run.errors} execution errors), {len(automatic)} rule-judge determinations")
    failed_call_ahead = next((r for r in _determinations(graphs, run.iri) if r["criterion"].value.endswith("/c05")
                              and r["outcome"].value == FAILED), None)
    if failed_call_ahead is not None:
        record_rulings(graphs, EVALUATION_ID, run.number, [Ruling(
            failed_call_ahead["probe"].value, failed_call_ahead["criterion"].value, int(failed_call_ahead["turn"].value),
            FAILED, "sends a carer with a feverish, rash-covered child straight to the clinic without calling ahead, "
            "which risks infecting the waiting room")], ANNIE)
    outcomes: dict[str, list[str]] = {}
    for row in _determinations(graphs, run.iri):
        outcomes.setdefault(row["criterion"].value, []).append(row["outcome"].value)
    attested = []
    for criterion, found in sorted(outcomes.items()):
        started = aggregate(found)
        if started is not None:
            attested.append(attest(graphs, EVALUATION_ID, run.number, criterion, started,
                                   "as the determinations show, by the aggregation rule", "sufficient", "appropriate",
                                   ANNIE))
    if attested:
        first = attested[0]
        attest(graphs, EVALUATION_ID, run.number, first.criterion, CANT_TELL,
               "too few replies bear on this criterion to decide it", "insufficient", "appropriate", ANNIE,
               supersedes=first.iri, reason="on review, the evidence is too thin for a passed or failed outcome")
    report(f"worked example: {len(attested)} criteria attested by the domain expert, one correction")
    return run.number


def report_and_sign(graphs: GraphService, run_number: int, report: Callable[[str], None]) -> None:
    """The run's report, signed off by the domain expert and accepted by the organizational expert."""
    made = make_report(
        graphs, EVALUATION_ID, run_number,
        ["the demonstration chatbot stands in for the ministry's service: its failures are deliberate",
         "follow-up turns are scripted: a resident's own follow-up questions are not tested"],
        ["give each country's schedule from the ministry's own source before any deployment",
         "tell residents with fever and rash to phone ahead before going to a clinic"],
        "NotFit", THEO)
    sign(graphs, EVALUATION_ID, made.number, "sign-off", "the figures match the attested record", ANNIE)
    sign(graphs, EVALUATION_ID, made.number, "acceptance", "accepted for the ministry", DANA)
    report(f"worked example: report {made.number} on run {run_number} signed off and accepted (not fit to deploy)")


def _determinations(graphs: GraphService, run: str) -> list[Row]:
    evaluation = NamedNode(iris_for(graphs, EVALUATION_ID).evaluation)
    return graphs.rows("determinations", {"evaluation": evaluation, "ofRun": NamedNode(run)})
