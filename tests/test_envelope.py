"""The envelope and approval domain (service.envelope, service.envelope.approvals) on both store backends, no HTTP.

Also the fixtures the HTTP tests of /evaluations share: the specification files loaded once per session
and copied into each test's store (:func:`.conftest.restore`), the worked measles example, a snapshot of
every quad.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import pytest
import rdflib
from pyoxigraph import BlankNode, Literal, NamedNode, Quad, RdfFormat, Triple

from service import envelope
from service.api.models import EnvelopeBody, EvaluationBody
from service.core.config import Credential
from service.core.errors import Conflict, Forbidden, Unprocessable
from service.core.graphs import GraphService, WriteMode
from service.core.namespaces import CAIE_EPO, EARL, EPO
from service.core.store import Store
from service.envelope import approvals, rdf, rdf_read, scope_rdf
from service.envelope.checks import requirement_cycles
from service.envelope.rdf import envelope_digest, envelope_triples

from .conftest import BASE_URL, REPO, ROLES, dump, graphs_over, restore, shared_path

ALSO_VIRTUOSO = pytest.mark.backends("embedded", "remote", "virtuoso")
"""For the test that writes an evaluation's scope, envelope versions, rewrites, assessments and sign-off and reads
them back (the envelope and scope as written, the sign-off status, ``criterion-decisions.rq``), which Virtuoso
stores and answers differently (numbers as values, an out-of-scope flag spelled 0). The others run on the
embedded store and Oxigraph (the default): what they add is domain logic over the same reads and writes (a
write refused before it is made, the gaps the status names, a DSO appended to through the graph service, whose
large writes and whole reads ``tests/store`` checks on Virtuoso), and on Virtuoso each test's setup (dropping
the previous test's graphs, loading the specification) and updates take seconds."""


EXAMPLES = REPO / "examples" / "measles"


def example_evaluation() -> dict:
    return json.loads((EXAMPLES / "evaluation.json").read_text(encoding="utf-8"))


def example_envelope() -> dict:
    return json.loads((EXAMPLES / "envelope.json").read_text(encoding="utf-8"))


def snapshot(store: Store) -> Counter:
    """Every quad of the store (blank nodes blurred, as labels differ between reads)."""

    def term(t: object) -> str:
        return "_:b" if isinstance(t, BlankNode) else str(t)

    return Counter((term(q.subject), term(q.predicate), term(q.object), term(q.graph_name)) for q in dump(store))


def load_spec(store: Store, quads: list[Quad]) -> GraphService:
    """``quads`` (the specification files and their catalog) copied into the empty ``store``."""
    restore(store, quads)
    return graphs_over(store, BASE_URL)


@pytest.fixture
def graphs(store: Store, spec_quads: list[Quad]) -> Iterator[GraphService]:
    yield load_spec(store, spec_quads)


def agent(name: str) -> Credential:
    return Credential(agent=name, roles=frozenset(ROLES[name]))


def scope() -> envelope.Scope:
    return EvaluationBody.model_validate(example_evaluation()).to_domain("measles")


def content(body: dict | None = None) -> envelope.EnvelopeContent:
    return EnvelopeBody.model_validate(body or example_envelope()).to_domain()


def as_written(body: dict | None = None) -> envelope.EnvelopeContent:
    """``content(body)`` as the store reads it back: requirements and criteria ordered by id."""
    written = content(body)
    return envelope.EnvelopeContent(
        tuple(sorted(written.requirements, key=lambda r: r.id)),
        tuple(sorted(written.criteria, key=lambda c: c.id)),
        written.statement,
        written.judge_agreement,
    )


def signed_off(graphs: GraphService) -> None:
    """The measles example stored and its envelope signed off, through the domain functions."""
    envelope.put_scope(graphs, scope(), agent("theo"))
    approvals.assess_dso_appropriateness(graphs, "measles", True, "models what the public asks", agent("annie"))
    env, _ = envelope.put_envelope(graphs, "measles", content(), agent("theo"))
    for c in env.content.criteria:
        approvals.assess_relevance(
            graphs,
            "measles",
            c.id,
            c.in_scope,
            "relevant to the outbreak" if c.in_scope else "out of scope",
            agent("annie"),
        )
    approvals.assess_appropriateness(graphs, "measles", True, "covers what the public needs", agent("annie"))
    approvals.sign_off_envelope(graphs, "measles", agent("dana"), "signed for the ministry")


# ------------------------------------------------------------------------------------------- pure checks


def test_requirement_cycles_are_named_once() -> None:
    assert requirement_cycles({"R1": None, "R2": "R1"}) == []
    assert requirement_cycles({"R1": "R3", "R2": "R1", "R3": "R2", "R4": "R1"}) == [["R1", "R3", "R2", "R1"]]
    assert requirement_cycles({"A": "A"}) == [["A", "A"]]


def test_digest_is_relative_to_the_envelope_and_counts_content_only() -> None:
    iris = envelope.Iris(BASE_URL, "e1")
    other = envelope.Iris("https://elsewhere.example/", "e2")
    v1 = envelope_digest(iris.envelope(1), envelope_triples(iris, 1, content()))
    v2 = envelope_digest(iris.envelope(2), envelope_triples(iris, 2, content(), iris.envelope(1)))
    elsewhere = envelope_digest(other.envelope(1), envelope_triples(other, 1, content()))
    assert v1 == v2 == elsewhere and len(v1) == 64
    body = example_envelope()
    body["criteria"][3]["weight"] = 7.5
    assert envelope_digest(iris.envelope(1), envelope_triples(iris, 1, content(body))) != v1
    same_weight = example_envelope()
    same_weight["criteria"][0]["weight"] = "10.00"
    assert envelope_digest(iris.envelope(1), envelope_triples(iris, 1, content(same_weight))) == v1


def test_the_judge_agreement_threshold_is_envelope_content_with_a_default_when_absent() -> None:
    iris = envelope.Iris(BASE_URL, "e1")
    declared = content()
    assert declared.judge_agreement == envelope.JudgeAgreement(
        Decimal("0.8"), envelope.AgreementMeasure.KRIPPENDORFF_ALPHA, 10
    )
    v1 = envelope_digest(iris.envelope(1), envelope_triples(iris, 1, declared))
    kappa = example_envelope()
    kappa["judgeAgreement"]["measure"] = "cohen-kappa"
    stricter = example_envelope()
    stricter["judgeAgreement"]["minimumUnits"] = 11
    absent = example_envelope()
    del absent["judgeAgreement"]
    digests = {
        envelope_digest(iris.envelope(1), envelope_triples(iris, 1, content(body)))
        for body in (kappa, stricter, absent)
    }
    assert v1 not in digests and len(digests) == 3
    read = rdf_read.read_content(iris.envelope(1), rdf.Index(envelope_triples(iris, 1, content(kappa))))
    assert read.judge_agreement == envelope.JudgeAgreement(Decimal("0.8"), envelope.AgreementMeasure.COHEN_KAPPA, 10)
    assert (
        content(absent).judge_agreement is None
        and content(absent).agreement_threshold == envelope.DEFAULT_JUDGE_AGREEMENT
    )
    for bad in ({"minimum": 1.5}, {"measure": "percent"}, {"minimumUnits": 0}):
        body = example_envelope()
        body["judgeAgreement"].update(bad)
        with pytest.raises(ValueError):
            content(body)


def test_the_example_has_distinct_weights_and_what_the_methodology_asks() -> None:
    env = content()
    weights = [c.weight for c in env.criteria]
    assert len(env.criteria) >= 10 and len(set(weights)) == len(weights)
    top = max(env.criteria, key=lambda c: c.weight or Decimal(0))
    assert "vaccination status" in top.statement
    assert any("must not increase transmission risk" in r.statement for r in env.requirements)
    assert {c.judged_by for c in env.criteria} == set(envelope.Judge)


# ------------------------------------------------------------------------------------------- domain on both backends


def test_envelope_reads_back_as_written(graphs: GraphService) -> None:
    """On Virtuoso too: :func:`test_criteria_are_dated_and_c12s_decision_is_read_by_a_query` reads back the same."""
    envelope.put_scope(graphs, scope(), agent("theo"))
    env, created = envelope.put_envelope(graphs, "measles", content(), agent("theo"))
    assert created and env.version == 1
    assert env.content == as_written()
    assert envelope.get_evaluation(graphs, "measles").scope == scope()


def test_validation_names_every_problem_and_writes_nothing(graphs: GraphService, store: Store) -> None:
    envelope.put_scope(graphs, scope(), agent("theo"))
    body = copy.deepcopy(example_envelope())
    body["requirements"][0]["parent"] = "R2"
    body["criteria"][0]["concepts"].append("ve:NoSuchConcept")
    body["criteria"][1]["requirement"] = "R9"
    before = snapshot(store)
    with pytest.raises(Unprocessable) as refused:
        envelope.put_envelope(graphs, "measles", content(body), agent("theo"))
    message = refused.value.message
    assert "requirement cycle: R1 -> R2 -> R1" in message
    assert "NoSuchConcept" in message and "unknown requirement 'R9'" in message
    assert snapshot(store) == before


def test_status_names_what_sign_off_still_needs(graphs: GraphService) -> None:
    envelope.put_scope(graphs, scope(), agent("theo"))
    envelope.put_envelope(graphs, "measles", content(), agent("theo"))
    approvals.assess_relevance(graphs, "measles", "c01", True, "core", agent("annie"))
    approvals.assess_relevance(graphs, "measles", "c02", False, "not for this deployment", agent("annie"))
    approvals.assess_relevance(graphs, "measles", "c12", True, "sourcing matters", agent("annie"))
    status = approvals.envelope_status(graphs, "measles")
    assert (
        status.relevance["c01"] == "passed" and status.relevance["c02"] == "failed" and status.relevance["c03"] is None
    )
    assert not status.signed_off and status.dso_appropriate is None
    assert "appropriateness of the DSO" in status.missing[0] and "not assessed" in status.missing[0]
    assert any("envelope's appropriateness" in m for m in status.missing)
    assert any("'c02': assessed not relevant" in m for m in status.missing)
    # out of scope, yet assessed relevant: the flag and the expert's decision disagree
    assert any("'c12': assessed relevant" in m for m in status.missing)
    with pytest.raises(Conflict, match="cannot be signed off yet"):
        approvals.sign_off_envelope(graphs, "measles", agent("dana"))


def test_out_of_scope_needs_the_experts_decision_and_a_changed_dso_a_new_assessment(graphs: GraphService) -> None:
    envelope.put_scope(graphs, scope(), agent("theo"))
    with pytest.raises(Forbidden):
        approvals.assess_dso_appropriateness(graphs, "measles", True, "fine", agent("theo"))
    dso = approvals.assess_dso_appropriateness(graphs, "measles", True, "models the questions", agent("annie"))
    assert dso.kind == "dso-appropriateness" and dso.subject == BASE_URL + "graphs/dso/vaccine-education"
    assert dso.envelope_digest is None
    envelope.put_envelope(graphs, "measles", content(), agent("theo"))
    for c in content().criteria:
        if c.in_scope:
            approvals.assess_relevance(graphs, "measles", c.id, True, "relevant", agent("annie"))
    approvals.assess_appropriateness(graphs, "measles", True, "fits", agent("annie"))
    status = approvals.envelope_status(graphs, "measles")
    assert status.dso_appropriate == "passed"
    assert status.missing == [
        ("relevance of criterion 'c12': out of scope without the domain expert's assessment that it is not relevant")
    ]

    approvals.assess_relevance(graphs, "measles", "c12", False, "sourcing does not change the advice", agent("annie"))
    assert approvals.envelope_status(graphs, "measles").missing == []
    # the DSO changes: the assessment named its former content, so sign-off waits for a new one
    graphs.write(
        graphs.ref("dso", "vaccine-education"),
        b'<https://w3id.org/ob-caie/dso/vaccine-education> <http://www.w3.org/2000/01/rdf-schema#comment> "revised" .',
        RdfFormat.N_TRIPLES,
        agent("admin"),
        mode=WriteMode.APPEND,
    )
    with pytest.raises(Conflict, match="appropriateness of the DSO .* not assessed for its present content"):
        approvals.sign_off_envelope(graphs, "measles", agent("dana"))
    approvals.assess_dso_appropriateness(graphs, "measles", True, "the revision changes nothing", agent("annie"))
    assert approvals.sign_off_envelope(graphs, "measles", agent("dana")).kind == "envelope-sign-off"
    rows = graphs.rows("dso-assessments", {"evaluation": NamedNode(BASE_URL + "evaluations/measles")})
    assert [r["outcome"].value.rsplit("#", 1)[1] for r in rows] == ["passed", "passed"]
    assert rows[0]["digest"].value != rows[1]["digest"].value == graphs.find_graph(dso.subject).digest


def _decisions(graphs: GraphService, version: int = 1) -> dict[str, dict[str, str]]:
    """criterion-decisions.rq on the current content of envelope ``version``: each criterion's row by id."""
    env, _ = envelope.envelope_at(graphs, "measles", version)
    rows = graphs.rows("criterion-decisions", {"envelope": NamedNode(env.iri), "digest": Literal(env.digest)})
    return {r["identifier"].value: {k: v.value for k, v in r.items()} for r in rows}


@ALSO_VIRTUOSO
def test_criteria_are_dated_and_c12s_decision_is_read_by_a_query(graphs: GraphService) -> None:
    signed_off(graphs)
    # the envelope and scope read back as written (test_envelope_reads_back_as_written, here on Virtuoso too)
    assert envelope.envelope_at(graphs, "measles", 1)[0].content == as_written()
    assert envelope.get_evaluation(graphs, "measles").scope == scope()
    decisions = _decisions(graphs)
    assert set(decisions) == {c.id for c in content().criteria}
    c12 = decisions["c12"]
    assert c12["outcome"] == EARL + "failed" and c12["inScope"] in ("false", "0") and c12["rationale"] == "out of scope"
    assert c12["assessedBy"] == BASE_URL + "agents/annie"
    assert all(d["outcome"] == EARL + "passed" for k, d in decisions.items() if k != "c12")
    # each criterion was written before the expert assessed it
    assert all(datetime.fromisoformat(d["written"]) < datetime.fromisoformat(d["assessed"]) for d in decisions.values())

    # a new version keeps each criterion's date; changing one criterion dates it anew, and only it
    v2 = envelope.new_version(graphs, "measles", agent("theo"))
    assert {k: d["written"] for k, d in _decisions(graphs, 2).items()} == {
        k: d["written"] for k, d in decisions.items()
    }
    body = example_envelope()
    body["criteria"][3]["weight"] = 7.25
    changed, _ = envelope.put_envelope(graphs, "measles", content(body), agent("theo"))
    assert changed.version == 2 and changed.content == as_written(body)
    after = _decisions(graphs, 2)
    assert [k for k in after if after[k]["written"] != decisions[k]["written"]] == ["c04"]
    assert all("outcome" not in d for d in after.values())  # v2 is not assessed yet
    # dates are not content: the same content has the same digest whatever its dates
    assert v2.digest == envelope.envelope_at(graphs, "measles", 1)[0].digest != changed.digest
    envelope.put_envelope(graphs, "measles", content(), agent("theo"))
    assert envelope.envelope_at(graphs, "measles", 2)[0].digest == v2.digest
    assert _decisions(graphs, 2)["c04"]["written"] not in {decisions["c04"]["written"], after["c04"]["written"]}


# ------------------------------------------------------------------------------------------- interoperability


def _with_supers(triples: list[Triple]) -> rdflib.Graph:
    """The record as rdflib triples, with every super-class and super-property ontologies/epo.ttl states (the
    RDFS entailments caie-spec's shapes need to see our terms as theirs)."""
    epo = rdflib.Graph().parse(REPO / "ontologies" / "epo.ttl", format="turtle")
    g = rdflib.Graph()
    for t in triples:
        s, p = rdflib.URIRef(t.subject.value), rdflib.URIRef(t.predicate.value)
        o = (
            rdflib.URIRef(t.object.value)
            if isinstance(t.object, NamedNode)
            else rdflib.Literal(t.object.value, datatype=rdflib.URIRef(t.object.datatype.value))
        )
        for prop in epo.transitive_objects(p, rdflib.RDFS.subPropertyOf):
            g.add((s, prop, o))
        if p == rdflib.RDF.type:
            for cls in epo.transitive_objects(o, rdflib.RDFS.subClassOf):
                g.add((s, rdflib.RDF.type, cls))
    return g


def test_the_examples_criteria_conform_to_caie_spec_and_to_the_record_shapes() -> None:
    """caie-spec's S2-AcceptanceCriterion (derived from a requirement; one text, expected result, positive weight,
    weight rationale and date), run on the example's criteria with our EPO's entailments; and shapes/record.ttl."""
    import pyshacl

    caie_shapes = rdflib.Graph().parse(shared_path("interop", "caie-spec", "explorer", "data", "epo.shapes.ttl"))
    shape = rdflib.URIRef("https://w3id.org/og-caie/S2-AcceptanceCriterion")
    only = rdflib.Graph()
    for s, p, o in caie_shapes.triples((shape, None, None)):
        only.add((s, p, o))
        if isinstance(o, rdflib.BNode):
            only += caie_shapes.cbd(o)
    iris = envelope.Iris(BASE_URL, "measles")
    triples = scope_rdf.scope_triples(iris, scope()) + rdf.dated(
        iris.envelope(1), envelope_triples(iris, 1, content()), None, [], datetime.now(UTC)
    )
    data = _with_supers(triples)
    assert len(set(data.subjects(rdflib.RDF.type, rdflib.URIRef(CAIE_EPO + "AcceptanceCriterion")))) == len(
        content().criteria
    )
    conforms, _, report = pyshacl.validate(data, shacl_graph=only)
    assert conforms, report
    conforms, _, report = pyshacl.validate(data, shacl_graph=rdflib.Graph().parse(REPO / "shapes" / "record.ttl"))
    assert conforms, report
    method = rdflib.URIRef(iris.under("method"))
    assert str(data.value(method, rdflib.URIRef(EPO + "methodVersion"))) == "1.0.0"
    assert (rdflib.URIRef(iris.evaluation), rdflib.URIRef(EPO + "evaluationMethod"), method) in data
