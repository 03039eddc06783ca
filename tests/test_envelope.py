"""The envelope and approval domain (service.envelope, service.envelope.approvals) on both store backends, no HTTP.

Also the fixtures the HTTP tests of /evaluations share: the specification files loaded once per session
and copied into each test's store (:func:`.conftest.restore`), the worked measles example, a snapshot of
every quad.
"""

from __future__ import annotations

import copy
import functools
import json
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal

import pytest
from pyoxigraph import BlankNode, Quad

from service import envelope
from service.envelope import approvals
from service.api.models import EnvelopeBody, EvaluationBody
from service.core.bootstrap import load_spec_files
from service.core.config import Credential
from service.envelope.checks import requirement_cycles
from service.envelope.rdf import envelope_triples, envelope_digest
from service.core.errors import Conflict, Forbidden, Unauthenticated, Unprocessable
from service.core.graphs import GraphService
from service.core.store import EmbeddedStore, Store

from .conftest import ALL_QUADS, BASE_URL, REPO, ROLES, dump, graphs_over, restore

pytestmark = pytest.mark.backends("embedded", "remote", "virtuoso")

EXAMPLES = REPO / "examples" / "measles"


def example_evaluation() -> dict:
    return json.loads((EXAMPLES / "evaluation.json").read_text(encoding="utf-8"))


def example_envelope() -> dict:
    return json.loads((EXAMPLES / "envelope.json").read_text(encoding="utf-8"))


def snapshot(store: Store) -> Counter:
    """Every quad of the store (blank nodes blurred, as labels differ between reads)."""
    def term(t: object) -> str:
        return "_:b" if isinstance(t, BlankNode) else str(t)

    return Counter(tuple(term(row[k]) for k in ("s", "p", "o", "g")) for row in store.select(ALL_QUADS))


@functools.cache
def _specification() -> tuple[Quad, ...]:
    scratch = EmbeddedStore()
    load_spec_files(graphs_over(scratch, BASE_URL))
    quads = tuple(dump(scratch))
    scratch.close()
    return quads


@pytest.fixture(scope="session")
def spec_quads() -> list[Quad]:
    """The specification files (DSO, KGs, EPO, shapes) and their catalog, loaded once per process.

    Modules that use this fixture import it, and pytest then keeps one session fixture per importing module:
    the load itself is cached here so that it happens once, not once per module.
    """
    return list(_specification())


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


def signed_off(graphs: GraphService) -> None:
    """The measles example stored and its envelope signed off, through the domain functions."""
    envelope.put_scope(graphs, scope(), agent("theo"))
    env, _ = envelope.put_envelope(graphs, "measles", content(), agent("theo"))
    for c in env.content.criteria:
        approvals.assess_relevance(graphs, "measles", c.id, True, "relevant to the outbreak", agent("annie"))
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
    envelope.put_scope(graphs, scope(), agent("theo"))
    env, created = envelope.put_envelope(graphs, "measles", content(), agent("theo"))
    assert created and env.version == 1
    assert env.content == envelope.EnvelopeContent(
        tuple(sorted(content().requirements, key=lambda r: r.id)), tuple(sorted(content().criteria, key=lambda c: c.id)),
        content().statement,
    )
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
    status = approvals.envelope_status(graphs, "measles")
    assert status.relevance["c01"] == "passed" and status.relevance["c02"] == "failed" and status.relevance["c03"] is None
    assert not status.signed_off
    assert any("appropriateness" in m for m in status.missing)
    assert any("'c02': assessed not relevant" in m for m in status.missing)
    assert not any("'c12'" in m for m in status.missing)  # out of scope: needs no assessment
    with pytest.raises(Conflict, match="cannot be signed off yet"):
        approvals.sign_off_envelope(graphs, "measles", agent("dana"))
