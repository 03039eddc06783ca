"""The blocking compiler is checked (issue 9, item 5): rules outside the supported subset, over the component
limit, or found different by the compile-time cross-check fall back to the reference, are recorded, and never
change an answer; the two reproduced disagreements; property tests over generated small DSOs and shapes;
exact sampling; malformed rules refused. Small worlds (8 candidates) let the reference check every candidate."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import PROV, RDF, RDFS

from service.scenarios.derive import DerivationInput, derive, scenario_triples
from service.scenarios.draw import NotEnoughEligible, count_eligible, eligible_lists, sample_eligible
from service.scenarios.engine import Context
from service.scenarios.production import OWL_RULES, Production
from service.scenarios.reference import reference_check, scenario_iri
from service.scenarios.rules import RuleError

from .worlds import DSO_CONSTRUCTS, EX, OLD_CRITERION, SHAPE_CONSTRUCTS, small_context, small_dso, small_shapes

EPO = "https://w3id.org/ob-caie/epo/"
BASE = "urn:test"
INSIDE_DSO = {"functional", "super-property", "domain-person", "range", "persona-value", "disjoint"}
INSIDE_SHAPES = {"core", "persona-sparql", "routing"}


def assert_same_as_reference(ctx: Context, production: Production) -> dict[int, tuple]:
    """Every candidate: the same blocks (rules and messages) as the reference, and the same pair blocks."""
    n = ctx.space.size
    ref, pairs = reference_check(ctx.reference, range(n), base=BASE, chunk=3)
    assert {i: production.blocks(i, scenario_iri(BASE, i)) for i in range(n)} == ref
    assert {k: production.pair_blocks(k[0], k[1], scenario_iri(BASE, k[0])) for k in pairs} == pairs
    return ref


def test_a_restriction_on_a_super_property_of_a_facet_property_falls_back() -> None:
    """The issue's first case: the fast path blocked every candidate; the reference blocks a quarter."""
    ctx = small_context(["subproperty-restriction"], [])
    production = Production(ctx)
    assert "restriction on <https://example.org/small/stage>" in production.fallback[OWL_RULES]
    ref = assert_same_as_reference(ctx, production)
    assert sum(1 for b in ref.values() if b) == 2 == ctx.space.size // 4  # young and pregnant


def test_sh_node_to_a_named_shape_falls_back() -> None:
    """The issue's second case: the fast path took the rule to read the persona only."""
    ctx = small_context([], ["named-node"])
    production = Production(ctx)
    assert production.fallback == {
        str(EX["rule-named-node"]): (
            "outside the supported subset: <http://www.w3.org/ns/shacl#node> points to the named shape "
            "<https://example.org/small/IsOld>"
        )
    }
    ref = assert_same_as_reference(ctx, production)
    assert sum(1 for b in ref.values() if b) == 2  # the young P1s


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sets(st.sampled_from(DSO_CONSTRUCTS), max_size=4),
    st.sets(st.sampled_from(SHAPE_CONSTRUCTS), min_size=1, max_size=3),
)
def test_fast_path_with_fallback_answers_as_the_reference(dso_constructs: set[str], shape_constructs: set[str]) -> None:
    ctx = small_context(sorted(dso_constructs), sorted(shape_constructs), [OLD_CRITERION])
    production = Production(ctx, cross_check=4)
    assert_same_as_reference(ctx, production)
    outside = shape_constructs - INSIDE_SHAPES
    if "subproperty-restriction" not in dso_constructs:  # ex:stage is then no facet property's relative
        outside.discard("sub-property-sparql")
    shapes_out = {str(EX[f"rule-{c}"]) for c in outside}
    assert shapes_out <= set(production.fallback)  # what is outside the subset always falls back
    if dso_constructs - INSIDE_DSO:
        assert OWL_RULES in production.fallback
    for why in production.fallback.values():
        assert why.startswith(("outside the supported subset: ", "the compile-time cross-check"))


def test_a_component_over_the_limit_falls_back() -> None:
    ctx = small_context(["functional"], ["core", "persona-sparql"])
    production = Production(ctx, max_component=3)  # each rule (and the OWL group) reads two facets: four combinations
    assert set(production.fallback) >= {str(EX["rule-core"]), str(EX["rule-persona-sparql"])}
    assert all("over the limit of 3" in why for why in production.fallback.values())
    assert_same_as_reference(ctx, production)
    assert Production(ctx, max_component=8).fallback == {}  # the OWL group and both rules link all three facets


def test_the_cross_check_catches_a_wrong_analysis() -> None:
    """A rule whose facets the analysis got wrong (here made so by hand) compiles to wrong tables; the
    compile-time cross-check against the reference finds it and the rule falls back."""
    ctx = small_context([], ["core"])
    ctx.rules[0] = dataclasses.replace(ctx.rules[0], facets=frozenset({"age"}))
    production = Production(ctx, cross_check=8)
    assert production.fallback[str(EX["rule-core"])].startswith("the compile-time cross-check found other blocks")
    assert_same_as_reference(ctx, production)


def test_reference_chunks_isolate_equalities() -> None:
    """Functional clashes make owlrl derive equalities of DSO terms; the reference isolates the candidates
    that do, so any chunking gives the verdicts of one candidate at a time."""
    ctx = small_context(["functional", "disjoint", "persona-value"], ["core"])
    one_by_one = reference_check(ctx.reference, range(8), base=BASE, chunk=1)
    assert reference_check(ctx.reference, range(8), base=BASE, chunk=None) == one_by_one
    assert reference_check(ctx.reference, range(8), base=BASE, chunk=3) == one_by_one
    rules = {b.rule for blocks in one_by_one[0].values() for b in blocks}
    assert "https://w3id.org/ob-caie/dso/vaccine-education/hasAgeGroup" in rules  # prp-fp, at its source


def test_a_malformed_rule_is_refused() -> None:
    shapes = small_shapes(["core"])
    shapes.add((EX.broken, RDF.type, URIRef("http://www.w3.org/ns/shacl#NodeShape")))
    constraint = BNode()
    shapes.add((EX.broken, URIRef("http://www.w3.org/ns/shacl#sparql"), constraint))
    shapes.add((constraint, URIRef("http://www.w3.org/ns/shacl#select"), Literal("SELECT $this WHERE { $this <oops }")))
    dso = small_dso([])
    with pytest.raises(RuleError, match="does not parse"):
        Context(dso, [], small_context([], []).facets, shapes)


def test_exact_sampling_draws_every_eligible_candidate_and_no_other() -> None:
    ctx = small_context(["functional", "disjoint", "persona-value"], ["core"])
    production = Production(ctx)
    eligible = {i for i in range(8) if not production.blocks(i)}
    assert 0 < len(eligible) < 8 and sum(count_eligible(lists) for lists in eligible_lists(production)) == len(eligible)
    drawn = sample_eligible(production, len(eligible), random.Random(3))
    assert set(drawn) == eligible and drawn == sample_eligible(production, len(eligible), random.Random(3))
    with pytest.raises(NotEnoughEligible):
        sample_eligible(production, len(eligible) + 1, random.Random(3))
    fallback = Production(small_context(["functional", "disjoint", "persona-value"], ["core", "named-node"]))
    assert fallback.fallback and set(sample_eligible(fallback, 1, random.Random(1))) <= {
        i for i in range(8) if not fallback.blocks(i)
    }


def test_the_derivation_records_compiled_rules_and_fallbacks() -> None:
    dso = small_dso(["functional"])
    inp = DerivationInput(
        dso=dso,
        kgs=(),
        shapes=(small_shapes(["core", "closed"]),),
        seed=1,
        sample_size=8,
        evaluation_iri="https://example.org/evaluations/small",
    )
    d = derive(inp)
    ctx = small_context(["functional"], ["core", "closed"])
    ref, _ = reference_check(ctx.reference, range(8), base=BASE, with_pairs=False)
    assert d.counts.exact and d.counts.eligible == sum(1 for b in ref.values() if not b)
    g: Graph = scenario_triples(d)
    activity = URIRef(f"{inp.evaluation_iri}/derivation")
    roles = {}
    for usage in g.objects(activity, PROV.qualifiedUsage):
        roles[str(g.value(usage, PROV.entity))] = (str(g.value(usage, PROV.hadRole)), g.value(usage, RDFS.comment))
    assert roles[str(EX["rule-core"])] == (EPO + "CompiledRuleTable", None)
    role, why = roles[str(EX["rule-closed"])]
    assert role == EPO + "ReferenceFallback" and str(why) == "outside the supported subset: it uses sh:closed"
    assert len(roles) == 3 and all((activity, PROV.used, URIRef(r)) in g for r in roles)  # and the OWL axioms
