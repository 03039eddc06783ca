"""The part of the metrics bench record made through the service's own operations on the store
(bench/_metrics_data.py): an envelope of ``params.criteria`` criteria made from the measles example's fourteen, and
the scope, the DSO's appropriateness, the envelope, each criterion's relevance, the envelope's appropriateness and
the sign-off."""

from __future__ import annotations

import json
import random
from decimal import Decimal

from _metrics_params import EVALUATION_ID, Params
from caie_vaccine.worked_example import ANNIE, DANA, EXAMPLE, THEO
from pyoxigraph import NamedNode

from service import envelope
from service.api.models import EnvelopeBody, EvaluationBody
from service.core.graphs import GraphService
from service.core.namespaces import EPO
from service.envelope import approvals
from service.envelope.model import Criterion, EnvelopeContent, Requirement
from service.envelope.model import Judge as CriterionJudge


def envelope_content(params: Params, rng: random.Random) -> EnvelopeContent:
    """``params.criteria`` criteria made from the measles example's, each with its own identifier and weight."""
    example = EnvelopeBody.model_validate(
        json.loads((EXAMPLE / "envelope.json").read_text(encoding="utf-8"))
    ).to_domain()
    templates = [c for c in example.criteria if c.in_scope]
    criteria = []
    for n in range(params.criteria):
        t = templates[n % len(templates)]
        criteria.append(
            Criterion(
                id=f"k{n + 1:04d}",
                requirement=t.requirement,
                statement=f"{t.statement} (variant {n + 1})",
                weight=Decimal(rng.randint(1, 10)),
                weight_rationale=t.weight_rationale,
                judged_by=t.judged_by or CriterionJudge.HUMAN,
                dimension=t.dimension,
                category=t.category,
                concepts=t.concepts,
                expected_result=t.expected_result,
                in_scope=n >= params.out_of_scope,
            )
        )
    requirements: tuple[Requirement, ...] = example.requirements
    return EnvelopeContent(requirements, tuple(criteria), example.statement)


def scope_envelope_and_sign_off(graphs: GraphService, content: EnvelopeContent) -> None:
    scope = EvaluationBody.model_validate(json.loads((EXAMPLE / "evaluation.json").read_text(encoding="utf-8")))
    envelope.put_scope(graphs, scope.to_domain(EVALUATION_ID), THEO, must_be_new=True)
    approvals.assess_dso_appropriateness(graphs, EVALUATION_ID, True, "the DSO fits the bench", ANNIE)
    envelope.put_envelope(graphs, EVALUATION_ID, content, THEO)
    # assess_relevance's own write, with the state read once: read per criterion, 1,000 of them took over 30 minutes
    state = approvals.read_state(graphs, EVALUATION_ID)
    for criterion in content.criteria:
        iri = f"{state.status.envelope}/criteria/{criterion.id}"
        approvals.append_approval(
            graphs,
            state,
            ANNIE,
            "relevance",
            iri,
            criterion.in_scope,
            "relevant" if criterion.in_scope else "out of scope",
            [(EPO + "approves", NamedNode(iri))],
        )
    approvals.assess_appropriateness(graphs, EVALUATION_ID, True, "the envelope fits", ANNIE)
    approvals.sign_off_envelope(graphs, EVALUATION_ID, DANA, "signed off for the bench")
