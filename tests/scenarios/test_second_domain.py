"""A second, small DSO (bed nets, examples/bednets) derives, blocks and draws probes with no
code change: its facets, its knowledge graph's part of the frame, its SHACL rule, its OWL axiom and its
routing rule are all data. 48 candidates, so the reference checks every one of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import Graph, Literal, Namespace, URIRef

from service.core.errors import Unprocessable
from service.plan.openings import Openings, TemplateSet
from service.plan.sampling import sample_scenarios
from service.scenarios import CriterionScope, DerivationInput, scenario_triples
from service.scenarios.derive import Derivation, derive_with
from service.scenarios.engine import Context
from service.scenarios.facets import Schema, build_facets
from service.scenarios.frame import allowed_positions
from service.scenarios.production import OWL_RULES, Production
from service.scenarios.reference import reference_check, scenario_iri
from service.scenarios.rules import load_rule_shapes

HERE = Path(__file__).parents[2] / "examples" / "bednets"
BN = Namespace("https://example.org/dso/bednets/")
KG = Namespace("https://example.org/kg/ghana/")
LANG = Namespace("http://lexvo.org/id/iso639-3/")
EPO = Namespace("https://w3id.org/ob-caie/epo/")
CHILD_PARENT = "https://example.org/shapes/bednets-consistency/ChildParent"
CHILD_FOR_HANGING = "https://example.org/shapes/bednets-routing/ChildForHangingCriterion"
HANGING = CriterionScope("https://example.org/criteria/hanging", frozenset({str(BN.HowToHang)}))


@pytest.fixture(scope="module")
def derived() -> tuple[Derivation, Context, Production]:
    dso = Graph().parse(HERE / "dso.ttl")
    kg = Graph().parse(HERE / "kg-ghana.ttl")
    shapes = load_rule_shapes(sorted(HERE.glob("scenario-*.ttl")))
    return derive_with(
        DerivationInput(
            dso=dso,
            kgs=(kg,),
            shapes=(shapes,),
            criteria=(HANGING,),
            sample_size=100,
            evaluation_iri="https://example.org/evaluations/bednets",
        )
    )


def test_facets_and_frame_come_from_the_declarations(derived) -> None:
    derivation, ctx, _ = derived
    assert [f.name for f in ctx.facets] == ["persona", "age", "net", "country", "language", "need"]
    values = {f.name: f.values for f in ctx.facets}
    assert values["persona"] == (BN.Parent, BN.Traveller) and values["net"] == (Literal(False), Literal(True))
    assert values["language"] == (LANG.eng, LANG.fra, LANG.twi)  # the DSO's languages; Ghana's part spans two
    language = ctx.space.position["language"]
    assert [values["language"][d] for d in ctx.space.parts[0].positions[language]] == [LANG.eng, LANG.twi]
    assert ctx.space.size == derivation.counts.total == 2 * 2 * 2 * 1 * 2 * 3 == len(derivation.scenarios)


def test_both_rules_block_and_the_fast_path_equals_the_reference(derived) -> None:
    derivation, ctx, production = derived
    assert production.fallback == {} and set(production.compiled) == {CHILD_PARENT, CHILD_FOR_HANGING, OWL_RULES}
    indices = list(range(ctx.space.size))
    ref, pairs = reference_check(ctx.reference, indices, base="urn:test")
    for i in indices:
        assert production.blocks(i, scenario_iri("urn:test", i)) == ref[i], ctx.space.values(i)
        assert production.pair_blocks(i, HANGING.iri, scenario_iri("urn:test", i)) == pairs[(i, HANGING.iri)]
    rules = {b.rule for blocks in ref.values() for b in blocks}
    assert rules == {CHILD_PARENT, str(BN.WashingWithoutNet)}
    for s in derivation.scenarios:
        v = s.values
        expected = set()
        if v["persona"] == BN.Parent and v["age"] == BN.Child:
            expected.add(CHILD_PARENT)
        if v["need"] == BN.Washing and v["net"] == Literal(False):
            expected.add(str(BN.WashingWithoutNet))
        assert {b.rule for b in s.blocks} == expected, v
    assert derivation.counts.eligible == sum(1 for s in derivation.scenarios if s.eligible) == 48 - 12 - 8 + 2


def test_the_routing_rule_keeps_children_from_the_hanging_criterion(derived) -> None:
    derivation, ctx, production = derived
    (count,) = derivation.counts.per_criterion
    probes = [s for s in derivation.scenarios if HANGING.iri in s.probe_for]
    assert count.in_frame == 48 // 3 and count.eligible == len(probes) == 8  # adults' hanging questions
    assert all(s.values["need"] == BN.HowToHang and s.values["age"] == BN.Adult for s in probes)
    child = next(
        s
        for s in derivation.scenarios
        if s.eligible and s.values["age"] == BN.Child and s.values["need"] == BN.HowToHang
    )
    assert {b.rule for b in child.pair_blocks[HANGING.iri]} == {CHILD_FOR_HANGING}
    drawn = sample_scenarios(
        ctx.space, production, allowed_positions(ctx, ctx.criteria[0]), HANGING.iri, 2, seed=3, stream="hanging"
    )
    assert len(set(drawn)) == 2 and all(i in {s.index for s in probes} for i in drawn)


def test_the_persona_seeds_a_scenario(derived) -> None:
    derivation, _, _ = derived
    (seeded,) = [s for s in derivation.scenarios if s.seeded_by]
    assert seeded.seeded_by == (str(KG["persona-accra-parent"]),) and seeded.eligible
    assert (seeded.values["language"], seeded.values["need"], seeded.values["net"]) == (
        LANG.twi,
        BN.HowToHang,
        Literal(True),
    )
    assert (URIRef(seeded.iri), EPO.seededBy, KG["persona-accra-parent"]) in scenario_triples(derivation)


def test_openings_need_templates_for_the_domain_languages(derived) -> None:
    """Planning says the probes' opening turns from template sets (data, one per language): with the domain's
    English set an English probe is written from it; Twi (and French, outside Ghana's part) lack a set, so
    no probe is made in them; with no set at all, English probes get a sentence naming their values."""
    derivation, ctx, _ = derived
    english = TemplateSet.read("urn:test:templates", Graph().parse(HERE / "templates-en.ttl"))
    assert english is not None
    openings = Openings(ctx.dso, ctx.kgs, [english])
    assert openings.lacking(None) == [str(LANG.fra), str(LANG.twi)]
    parent = next(
        s
        for s in derivation.scenarios
        if s.eligible
        and s.values["language"] == LANG.eng
        and s.values["persona"] == BN.Parent
        and s.values["need"] == BN.HowToHang
    )
    values = {name: str(v).lower() if isinstance(v, Literal) else str(v) for name, v in parent.values.items()}
    said = openings.opening(values, {})
    assert said is not None and (said.text, said.tag) == ("I'm a parent. How do I hang a bed net?", "en")
    assert openings.opening({**values, "language": str(LANG.twi)}, {}) is None
    bare = Openings(ctx.dso, ctx.kgs, []).opening(values, {str(BN.Parent): "parent"})
    assert bare is not None and bare.tag == "en" and bare.templates is None and "parent" in bare.text


def test_an_incomplete_facet_declaration_is_refused_by_name() -> None:
    dso = Graph().parse(HERE / "dso.ttl")
    dso.remove((BN.NetFacet, EPO.facetProperty, None))
    with pytest.raises(Unprocessable, match="NetFacet.*facetProperty"):
        build_facets(Schema(dso, []))


def test_what_an_opening_says_is_declared_with_the_facets(derived) -> None:
    """Which facets a turn says, in what order, and which slots it fills are the DSO's declarations: giving the
    boolean net facet a position (and the set a text keyed by its property) makes it a part, said when true;
    a slot names any facet. No code names ``net``."""
    _derivation, ctx, _ = derived
    dso = Graph().parse(HERE / "dso.ttl")
    dso.add((BN.NetFacet, EPO.openingPosition, Literal(0)))
    templates = Graph().parse(HERE / "templates-en.ttl")
    templates.add((BN.usesNet, EPO.openingText, Literal("I sleep under a net.", lang="en")))
    templates.set((BN.Parent, EPO.openingText, Literal("I'm a parent ({age}).", lang="en")))
    templates.add((BN.Adult, EPO.openingText, Literal("grown up", lang="en")))
    english = TemplateSet.read("urn:test:templates", templates)
    assert english is not None
    openings = Openings(dso, ctx.kgs, [english])
    values = {
        "persona": str(BN.Parent),
        "age": str(BN.Adult),
        "net": "true",
        "country": str(KG.ghana),
        "language": str(LANG.eng),
        "need": str(BN.HowToHang),
    }
    said = openings.opening(values, {})
    assert said is not None and said.text == "I sleep under a net. I'm a parent (grown up). How do I hang a bed net?"
    unsaid = openings.opening({**values, "net": "false"}, {})
    assert unsaid is not None and unsaid.text == "I'm a parent (grown up). How do I hang a bed net?"
    child = openings.opening({**values, "age": str(BN.Child)}, {})  # no text: the DSO's label in the set's language
    assert child is not None and child.text.startswith("I sleep under a net. I'm a parent (child).")
    assert openings.opening({**values, "age": "https://example.org/dso/bednets/Unknown"}, {}) is None
    assert openings.triggers(ctx.facets) == ("persona", "language")  # the persona's text has a slot
