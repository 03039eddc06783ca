"""The worked measles example of ``make run``: an evaluation taken through steps 1 to 5, offered to
``caie serve --examples`` as the entry point ``measles`` of the group ``caie.examples`` (:data:`WORKED_EXAMPLE`).

Scope and envelope from ``examples/measles/*.json``; the domain expert assesses the DSO, each criterion (the
out-of-scope c12 as not relevant: the record keeps that decision as hers) and the envelope, the
organizational expert signs it off, the operator makes a 300-probe plan (weights across
criteria, the scope's population within each) and the domain expert approves it. Then (:func:`run_and_judge`) the operator runs it against the
demonstration chatbot and applies the worked example's rule judges (``examples/judges/``: machine steps, asserted
by the rules), and the domain expert's determinations and attestations are imported from
``examples/measles/human-steps.jsonl``: demonstration data written case by case, each rationale quoting its reply,
through the importer users get.
Finally (:func:`report_and_sign`) the operator makes the run's report, the domain expert signs it off and the
organizational expert accepts it, so its page shows a final report. The demo agents act under their own names; nothing is written when the evaluation already exists, so restarts
change nothing. The people's decisions that the service signs are signed by their own keys (``signer``, the
deployment's; without one, keys made for this load, whose ``did:key`` each credential carries).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from service import envelope
from service.api.models import EnvelopeBody, EvaluationBody
from service.core.config import Credential
from service.core.errors import NotFound
from service.core.graphs import GraphService
from service.core.plugins import WorkedExample
from service.credentials.keys import KeyRing
from service.credentials.signing import Signer
from service.envelope import approvals
from service.judgments.automated import judge_run
from service.judgments.human_steps import import_steps, read_steps
from service.plan.allocation import Strategy
from service.plan.approval import approve_plan
from service.plan.testplan import PlanRequest, create_plan
from service.reports.records import make_report
from service.reports.signoffs import sign
from service.runs.model import ExecutionSettings
from service.runs.records import start_run
from service.runs.runner import continue_run

from .demo import DemoChatbot

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "measles"
"""The example's scope, envelope and expert steps: data in the repository this package is installed from."""
EVALUATION_ID = "measles"


def _agent(name: str, role: str) -> Credential:
    return Credential(agent=name, name=f"{name} (demo {role.replace('_', ' ')})", roles=frozenset({role}))


ANNIE = _agent("annie", "domain_expert")
DANA = _agent("dana", "organizational_expert")
THEO = _agent("theo", "evaluation_operator")


def load_worked_example(
    graphs: GraphService, report: Callable[[str], None] = lambda _: None, *, signer: Signer | None = None
) -> bool:
    """Take the measles example through scope, envelope, approvals and an approved plan; whether it was new."""
    signer = signer or Signer(KeyRing(None))
    try:
        envelope.get_evaluation(graphs, EVALUATION_ID)
        return False
    except NotFound:
        pass
    scope = EvaluationBody.model_validate(json.loads((EXAMPLE / "evaluation.json").read_text(encoding="utf-8")))
    content = EnvelopeBody.model_validate(json.loads((EXAMPLE / "envelope.json").read_text(encoding="utf-8")))
    envelope.put_scope(graphs, scope.to_domain(EVALUATION_ID), THEO, must_be_new=True)
    approvals.assess_dso_appropriateness(
        graphs,
        EVALUATION_ID,
        True,
        "the vaccine-education DSO and its rules model what the public asks about measles and its vaccine",
        ANNIE,
    )
    envelope.put_envelope(graphs, EVALUATION_ID, content.to_domain(), THEO)
    for criterion in content.to_domain().criteria:
        rationale = (
            "bears on what residents need during the outbreak"
            if criterion.in_scope
            else f"out of scope: {criterion.weight_rationale}"
        )
        approvals.assess_relevance(graphs, EVALUATION_ID, criterion.id, criterion.in_scope, rationale, ANNIE)
    approvals.assess_appropriateness(
        graphs, EVALUATION_ID, True, "the envelope fits a public information service", ANNIE
    )
    approvals.sign_off_envelope(graphs, EVALUATION_ID, DANA, "signed off for the ministry")
    report("worked example: envelope assessed and signed off; deriving scenarios and a 300-probe plan ...")
    plan = create_plan(
        graphs, EVALUATION_ID, PlanRequest(Strategy.POPULATION_WEIGHTED, 300, seed=7, review_sample=500), THEO
    )
    approve_plan(graphs, EVALUATION_ID, plan.number, ANNIE, "approved for the first run", plan.digest)
    report(
        f"worked example: plan {plan.number} approved ({plan.eligible:,} eligible of {plan.total:,} candidate scenarios)"
    )
    run_number = run_and_judge(graphs, plan.number, report, signer)
    report_and_sign(graphs, run_number, report, signer)
    return True


HUMAN_STEPS = EXAMPLE / "human-steps.jsonl"
"""The domain expert's determinations and attestations: demonstration data written case by case (its first line
says so), read through the importer users get (:mod:`service.judgments.human_steps`)."""


def run_and_judge(graphs: GraphService, plan_number: int, report: Callable[[str], None], signer: Signer) -> int:
    """Run the plan on the demonstration chatbot, apply the rule judges (machine steps, asserted by the rules), and
    import the domain expert's determinations and attestations from the shipped file; the run's number."""
    settings = ExecutionSettings(concurrency=8)
    run = start_run(graphs, EVALUATION_ID, plan_number, DemoChatbot().version, settings, THEO)
    done = continue_run(graphs, EVALUATION_ID, run.number, DemoChatbot(), settings, THEO)
    automatic = judge_run(graphs, EVALUATION_ID, run.number, THEO)
    report(
        f"worked example: run {run.number} on the demonstration chatbot ({done.run.traces} traces, "
        f"{done.run.errors} execution errors), {len(automatic)} rule-judge determinations"
    )
    steps = read_steps(HUMAN_STEPS.read_bytes(), "jsonl")
    made = import_steps(graphs, EVALUATION_ID, run.number, steps, ANNIE, signer=signer)
    report(
        f"worked example: {len(made.determinations)} determinations and {len(made.attestations)} attestations "
        f"imported from {HUMAN_STEPS.name} (demonstration data)"
    )
    return run.number


def report_and_sign(graphs: GraphService, run_number: int, report: Callable[[str], None], signer: Signer) -> None:
    """The run's report, signed off by the domain expert and accepted by the organizational expert."""
    made = make_report(graphs, EVALUATION_ID, run_number, LIMITATIONS, RECOMMENDATIONS, "NotFit", THEO)
    sign(
        graphs,
        EVALUATION_ID,
        made.number,
        "sign-off",
        "demonstration data: the figures match the attested record",
        ANNIE,
        signer,
    )
    sign(
        graphs,
        EVALUATION_ID,
        made.number,
        "acceptance",
        "demonstration data: accepted as a worked example only",
        DANA,
        signer,
    )
    report(f"worked example: report {made.number} on run {run_number} signed off and accepted (not fit to deploy)")


LIMITATIONS = [
    (
        "What to believe: the failures. Each failed criterion rests on replies a reader can open and check (a pregnant "
        "woman offered the vaccine, a feverish baby sent to a clinic without calling ahead, a wrong Nigerian schedule, "
        "English replies to Swahili and Hausa questions, misconceptions left standing)."
    ),
    (
        "What not to believe: that this says anything about a real public-health chatbot. The system tested is the "
        "built-in demonstration chatbot, whose failures are deliberate; the people in the record (annie, dana, theo) are "
        "demonstration agents, and the expert's determinations and attestations are demonstration data written by the "
        "developers (examples/measles/human-steps.jsonl), not a domain expert's judgment."
    ),
    (
        "The pass rates of criteria judged only by rule judges rest on the rules' reading of the replies; the report gives "
        "each judge's agreement with the expert where she determined the same replies, and a judge below the envelope's "
        "threshold decided nothing alone."
    ),
    (
        "Two criteria (c08, c10) are attested cantTell on insufficient evidence: they count as covered, and the report "
        "states the share of coverage that rests on such evidence."
    ),
    (
        "Follow-up turns are scripted, and the population shares are an estimate (the scope says so): a resident's own "
        "follow-up questions and the real mix of askers are not tested."
    ),
    "Texts in languages none of the developers reads natively are awaiting a native speaker's review.",
]
RECOMMENDATIONS = [
    "give each country's schedule from the ministry's own source before any deployment",
    "tell residents with fever and rash to phone ahead before going to a clinic",
    "never offer a measles-containing vaccine to a pregnant person; refer her for immunoglobulin after exposure",
    "have a domain expert determine a sample of every criterion before trusting a rule judge alone",
]

WORKED_EXAMPLE = WorkedExample(EVALUATION_ID, load_worked_example)
