"""Our own record, exported in caie-spec's layout (``GET /evaluations/{id}/record/caie``), conforms to caie-spec's
shapes S0..S9 (validated as the import validates a caie-spec record).

The record is the worked measles example (service/worked_example.py: scope and envelope from examples/measles,
the domain expert's assessments, the organizational expert's sign-off, an approved plan, a run on the
demonstration chatbot, rule judges, the domain expert's determination, attestations and one correction), with a
26-probe plan instead of 300 to keep the test cheap. What the export adds to meet the shapes is marked as its
declaration (docs/interop.md).
"""

from __future__ import annotations

import json
from fractions import Fraction

import rdflib
from rdflib.namespace import RDF, SKOS

from service import envelope, worked_example
from service.api.models import EnvelopeBody, EvaluationBody
from service.envelope import approvals
from service.plan.allocation import Strategy
from service.plan.approval import approve_plan
from service.plan.testplan import PlanRequest, create_plan
from service.publishing.caie_export import DECLARED
from service.scope import caie

from ..conftest import EMBEDDED_ONLY, Service
from ..test_envelope import load_spec, spec_quads  # noqa: F401
from .common import spec_file

pytestmark = EMBEDDED_ONLY
C = rdflib.Namespace("https://w3id.org/og-caie/epo#")
EARL = rdflib.Namespace("http://www.w3.org/ns/earl#")
ID = worked_example.EVALUATION_ID


def worked_example_with_a_small_plan(service: Service, spec: list) -> None:
    """load_worked_example's steps, with a 26-probe plan (two per in-scope criterion)."""
    graphs = load_spec(service.store, spec)
    body = json.loads((worked_example.EXAMPLE / "evaluation.json").read_text(encoding="utf-8"))
    content = EnvelopeBody.model_validate(json.loads((worked_example.EXAMPLE / "envelope.json").read_text(
        encoding="utf-8"))).to_domain()
    annie, dana, theo = worked_example.ANNIE, worked_example.DANA, worked_example.THEO
    envelope.put_scope(graphs, EvaluationBody.model_validate(body).to_domain(ID), theo, must_be_new=True)
    approvals.assess_dso_appropriateness(graphs, ID, True, "the DSO models what the public asks", annie)
    envelope.put_envelope(graphs, ID, content, theo)
    for criterion in content.criteria:
        approvals.assess_relevance(graphs, ID, criterion.id, criterion.in_scope, "relevant" if criterion.in_scope
                                   else "out of scope", annie)
    approvals.assess_appropriateness(graphs, ID, True, "the envelope fits a public information service", annie)
    approvals.sign_off_envelope(graphs, ID, dana, "signed off")
    plan = create_plan(graphs, ID, PlanRequest(Strategy.HIGHEST_WEIGHT_FIRST, 26, seed=7, review_sample=20), theo)
    approve_plan(graphs, ID, plan.number, annie, "approved", plan.digest)
    worked_example.run_and_judge(graphs, plan.number, lambda _: None)


def current_attestations(service: Service) -> dict[str, str]:
    listed = service.http.get(f"/evaluations/{ID}/attestations").json()["attestations"]
    return {a["criterion"]: a["outcome"].rsplit("#", 1)[-1] for a in listed if a["current"]}


def test_our_record_in_caie_spec_layout_conforms_to_its_shapes(service: Service, spec_quads: list) -> None:  # noqa: F811
    spec = caie.load_spec(spec_file())
    assert spec is not None
    worked_example_with_a_small_plan(service, spec_quads)
    current = current_attestations(service)
    assert len(current) >= 3 and "cantTell" in current.values()  # the correction is among them

    answer = service.http.get(f"/evaluations/{ID}/record/caie", headers={"Accept": "text/turtle"})
    assert answer.status_code == 200, answer.text
    exported = rdflib.Graph().parse(data=answer.text, format="turtle")
    as_ntriples = service.http.get(f"/evaluations/{ID}/record/caie", headers={"Accept": "application/n-triples"})
    assert len(rdflib.Graph().parse(data=as_ntriples.text, format="nt")) == len(exported)
    outcome = caie.validate(exported, spec)
    assert outcome.conforms, sorted({(caie.shape_name(v, spec), v.message) for v in outcome.violations})

    # The chain is ours: only the current attestations, with their outcomes.
    attestations = set(exported.subjects(RDF.type, C.Attestation))
    assert {str(exported.value(a, EARL.test)): str(exported.value(exported.value(a, EARL.result), EARL.outcome))
            .rsplit("#", 1)[-1] for a in attestations} == current
    # Everything the export declares is marked so, and none of our record's own items is.
    declared = set(exported.subjects(SKOS.editorialNote, rdflib.Literal(DECLARED)))
    assert any(exported.value(d, RDF.type) == C.ServiceAgreement for d in declared)
    assert not declared & (attestations | set(exported.subjects(RDF.type, C.AcceptanceCriterion)))
    # The out-of-scope criterion is not exported (caie-spec has no scope flag); every in-scope one is.
    in_scope = {str(c) for c in exported.subjects(RDF.type, C.AcceptanceCriterion)}
    # The draft report's figures are caie-spec's rule over those attestations: coverage by weight, shares by count.
    weights = {str(c): Fraction(str(w)) for c, w in exported.subject_objects(C.weight)}
    assert set(weights) == in_scope
    [report] = exported.subjects(RDF.type, C.Report)
    coverage = sum(weights[c] for c in current) / sum(weights.values())
    assert abs(Fraction(str(exported.value(report, C.coverage))) - coverage) < Fraction(1, 10**6)
    for name, wanted in (("passRate", "passed"), ("failRate", "failed"), ("cantTellRate", "cantTell")):
        share = Fraction(sum(1 for o in current.values() if o == wanted), len(current))
        assert abs(Fraction(str(exported.value(report, C[name]))) - share) < Fraction(1, 10**6), name


def test_an_unknown_record_is_404_and_an_unknown_format_406(service: Service) -> None:
    assert service.http.get(f"/evaluations/{ID}/record/caie", headers={"Accept": "text/turtle"}).status_code == 404
    assert service.http.get(f"/evaluations/{ID}/record/caie", headers={"Accept": "application/pdf"}).status_code == 406
