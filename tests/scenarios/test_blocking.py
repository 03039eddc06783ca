"""Consistency blocking (service.scenarios): each rule blocks its example and lets a near miss through;
every repository rule compiles; the fast path and the reference (owlrl + pySHACL on every candidate, the
specification as written) block the same candidates with the same rules and messages; a new shape file adds
a rule with no code change. Generated DSOs and shapes are in test_compiler.py.

The full frame's tables are compiled once per session (conftest.py); the reference runs on a few dozen
candidates only (seconds per chunk)."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path

import pytest
from rdflib import Graph, Literal, Namespace, URIRef

from service.scenarios.cache import CompiledTables
from service.scenarios.engine import Context
from service.scenarios.facets import Facet, Schema, build_facets
from service.scenarios.frame import rule_counts
from service.scenarios.production import OWL_RULES, Production
from service.scenarios.reference import reference_check, scenario_iri
from service.scenarios.rules import default_scenario_shape_paths, load_rule_shapes, top_level_shapes

from . import KE, LANG, NG, RDF, VE
from .conftest import DSO, KGS, MEASLES_CRITERION, MR_CRITERION, NG_CRITERION

SH = Namespace("http://www.w3.org/ns/shacl#")

SC = Namespace("https://w3id.org/ob-caie/shapes/scenario-consistency/")
SR = Namespace("https://w3id.org/ob-caie/shapes/scenario-routing/")
BASE = "urn:test"

BASE_VALUES = {
    "persona": VE.Caregiver,
    "age": VE.Adult,
    "vaccination": VE.FullyVaccinated,
    "infection": VE.NeverInfected,
    "immunity": VE.Immune,
    "pregnancy": Literal(False),
    "setting": VE.HouseholdSetting,
    "country": NG.country,
    "language": LANG.eng,
    "need": VE.ScheduleQuestion,
    "disease": VE.Measles,
    "style": VE.PlainStyle,
    "misconception": VE.NoStatedMisconception,
}


@pytest.fixture(scope="module")
def ctx(full: CompiledTables) -> Context:
    return full.context


@pytest.fixture(scope="module")
def production(full: CompiledTables) -> Production:
    return full.production


def index_of(ctx: Context, **changes: object) -> int:
    values = {**BASE_VALUES, **changes}
    return ctx.space.index([f.values.index(values[f.name]) for f in ctx.facets])


# (rule, change that it blocks, near miss that it lets through)
EXAMPLES = [
    (
        SC.ImmuneWithoutCause,
        {"vaccination": VE.Unvaccinated},
        {"vaccination": VE.Unvaccinated, "infection": VE.PastInfection},
    ),
    (
        SC.ImmuneWhileInfected,
        {"infection": VE.CurrentInfection},
        {"infection": VE.CurrentInfection, "immunity": VE.NotImmune},
    ),
    (
        SC.FullyVaccinatedInfant,
        {"age": VE.Infant, "persona": VE.Elder},
        {"age": VE.Infant, "persona": VE.Elder, "vaccination": VE.PartiallyVaccinated},
    ),
    (
        SC.PregnantInfant,
        {"age": VE.Infant, "pregnancy": Literal(True), "vaccination": VE.PartiallyVaccinated},
        {"age": VE.Adolescent, "pregnancy": Literal(True)},
    ),
    (SC.PregnantChild, {"age": VE.Child, "pregnancy": Literal(True)}, {"age": VE.Adult, "pregnancy": Literal(True)}),
    (
        SC.PregnantPersonNotPregnant,
        {"persona": VE.PregnantPerson},
        {"persona": VE.PregnantPerson, "pregnancy": Literal(True)},
    ),
    (SC.RoleBeyondAge, {"persona": VE.HealthWorker, "age": VE.Child}, {"persona": VE.Student, "age": VE.Child}),
    (SC.ElderNotOlderAdult, {"persona": VE.Elder}, {"persona": VE.Elder, "age": VE.OlderAdult}),
    (
        SC.OtherDiseaseQuestionAboutFocusDisease,
        {"need": VE.OtherDiseaseQuestion},
        {"need": VE.OtherDiseaseQuestion, "disease": VE.Polio},
    ),
    (
        SC.ImmunityContradictsInfectionHistory,
        {"infection": VE.PastInfection, "immunity": VE.NotImmune},
        {"infection": VE.PastInfection, "immunity": VE.UnknownImmunity},
    ),
]
CROSS_COUNTRY = [
    (SC.LanguageNotSpokenInCountry, {"language": LANG.swa}, {"language": LANG.hau}),
    (SC.SettingOfAnotherCountry, {"setting": KE["matatu-ride"]}, {"setting": NG["danfo-ride"]}),
]
"""Rules for third parties' data: the per-knowledge-graph frame never pairs a country with another's language
or setting, so in it they block nothing."""
PAIR_EXAMPLES = [
    (SR.OtherDiseaseForFocusCriterion, NG_CRITERION, {"disease": VE.Mumps, "need": VE.OtherDiseaseQuestion}),
    (SR.VaccineDoesNotProtect, MR_CRITERION, {"disease": VE.Mumps, "need": VE.OtherDiseaseQuestion}),
    (SR.ResourceOfAnotherCountry, NG_CRITERION, {"country": KE.country, "language": LANG.swa}),
    # a measles question asked about another disease is consistent (scope, not logic): routing keeps it from
    # every criterion about measles
    (SR.OtherDiseaseForFocusCriterion, MEASLES_CRITERION, {"disease": VE.Polio}),
    (SR.OtherDiseaseForFocusCriterion, MEASLES_CRITERION, {"disease": VE.Polio, "need": VE.VaccineSafety}),
]


def rules_of(blocks) -> set[str]:
    return {b.rule for b in blocks}


def test_base_scenario_is_eligible(ctx: Context, production: Production) -> None:
    assert production.blocks(index_of(ctx)) == ()


def test_every_repository_rule_compiles(ctx: Context, production: Production) -> None:
    """The repository's DSO and shapes are inside the supported subset and pass the cross-check."""
    assert production.fallback == {}
    assert set(production.compiled) == {r.iri for r in ctx.rules} | {OWL_RULES}


def test_immune_without_cause_is_blocked_with_its_rule(ctx: Context, production: Production) -> None:
    i = index_of(ctx, vaccination=VE.Unvaccinated)
    blocks = production.blocks(i, scenario_iri(BASE, i))
    assert rules_of(blocks) == {str(SC.ImmuneWithoutCause), str(VE.ImmuneWithoutCause)}
    assert any("immune to measles although unvaccinated and never infected" in b.message for b in blocks)
    assert any("owl:Nothing" in b.message for b in blocks)  # the DSO class, found by OWL 2 RL


@pytest.mark.parametrize("rule,blocked,near_miss", EXAMPLES, ids=[str(e[0]).rsplit("/", 1)[1] for e in EXAMPLES])
def test_rule_blocks_example_and_passes_near_miss(
    ctx: Context, production: Production, rule, blocked, near_miss
) -> None:
    assert str(rule) in rules_of(production.blocks(index_of(ctx, **blocked)))
    near = production.blocks(index_of(ctx, **near_miss))
    assert str(rule) not in rules_of(near)
    if near_miss.get("age") != VE.Infant:  # every persona is impossible for an infant (RoleBeyondAge and others)
        assert near == ()


@pytest.mark.parametrize(
    "rule,criterion,values", PAIR_EXAMPLES, ids=[str(e[0]).rsplit("/", 1)[1] for e in PAIR_EXAMPLES]
)
def test_routing_rule_blocks_pair(ctx: Context, production: Production, rule, criterion, values) -> None:
    i = index_of(ctx, **values)
    assert production.blocks(i) == ()
    assert str(rule) in rules_of(production.pair_blocks(i, criterion.iri))
    assert production.pair_blocks(index_of(ctx), criterion.iri) == ()


def test_elder_child_is_an_owl_clash_too(ctx: Context, production: Production) -> None:
    assert {str(SC.ElderNotOlderAdult), str(VE.hasAgeGroup)} <= rules_of(
        production.blocks(index_of(ctx, persona=VE.Elder))
    )


def test_reference_and_production_agree_on_examples_and_a_sample(ctx: Context, production: Production) -> None:
    indices = {index_of(ctx)} | {index_of(ctx, **e[1]) for e in EXAMPLES} | {index_of(ctx, **e[2]) for e in EXAMPLES}
    indices |= {index_of(ctx, **e[2]) for e in PAIR_EXAMPLES}
    indices |= set(random.Random(7).sample(range(ctx.space.size), 6))
    ref, pairs = reference_check(ctx.reference, sorted(indices), base=BASE)
    for i in indices:
        assert production.blocks(i, scenario_iri(BASE, i)) == ref[i], ctx.space.values(i)
    for (i, c), blocks in pairs.items():
        assert production.pair_blocks(i, c, scenario_iri(BASE, i)) == blocks, (ctx.space.values(i), c)
    assert any(ref.values()) and not all(ref.values()) and any(pairs.values())


# ------------------------------------------------------------------------------------------ rules are data

NEW_RULE = """
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix ve: <https://w3id.org/ob-caie/dso/vaccine-education/> .
@prefix ex: <https://example.org/rules/> .
ex:NoStudentsInMarkets a sh:NodeShape ;
    rdfs:label "no students in markets"@en ;
    rdfs:comment "A made-up rule, to show that a shape file adds a rule."@en ;
    sh:targetClass ve:Student ;
    sh:message "students are not studied at markets here"@en ;
    sh:property [ sh:path ve:inSetting ; sh:not [ sh:hasValue ve:MarketSetting ] ] .
"""


def test_a_new_shape_file_adds_a_rule(tmp_path: Path) -> None:
    """On a small frame: every persona, age group and setting, the other facets at the base scenario's value
    (the new rule ties persona and setting into the largest component, which the full frame makes costly)."""
    path = tmp_path / "scenario-extra.ttl"
    path.write_text(NEW_RULE)
    shapes = load_rule_shapes([*default_scenario_shape_paths(), path])
    full_facets = build_facets(Schema(DSO, KGS))
    small = tuple(
        f if f.name in ("persona", "age", "setting") else Facet(f.spec, (BASE_VALUES[f.name],), f.unrestricted)
        for f in full_facets
    )
    ctx = Context(DSO, KGS, small, shapes)
    setting = ctx.space.position["setting"]
    nigerian = {ctx.facets[setting].values[d] for d in ctx.space.parts[0].positions[setting]}  # the DSO's and Nigeria's
    assert NG["danfo-ride"] in nigerian and KE["matatu-ride"] not in nigerian and len(ctx.space.parts) == 1
    assert ctx.space.size == math.prod(len(f.values) for f in full_facets if f.name in ("persona", "age")) * len(
        nigerian
    )
    rule = next(r for r in ctx.rules if r.iri == "https://example.org/rules/NoStudentsInMarkets")
    assert rule.facets == {"persona", "setting"}
    # no compile-time cross-check (it runs the reference on a sample of its own): the tables alone answer, and
    # the reference is run below on the two candidates that matter
    production = Production(ctx, cross_check=-1)
    assert rule.iri in production.compiled and production.fallback == {}
    i = index_of(ctx, persona=VE.Student, age=VE.Adolescent, setting=VE.MarketSetting)
    near = index_of(ctx, persona=VE.Student, age=VE.Adolescent)
    assert rules_of(production.blocks(i)) == {rule.iri}
    assert production.blocks(near) == ()
    ref, _ = reference_check(ctx.reference, [i, near], base=BASE, with_pairs=False)
    assert ref[i] == production.blocks(i, scenario_iri(BASE, i)) and ref[near] == ()


@pytest.mark.parametrize("path", default_scenario_shape_paths(), ids=lambda p: p.name)
def test_shape_files_are_documented_rules(path: Path) -> None:
    shapes = Graph().parse(path)
    assert set(shapes.subjects(RDF.type, SH.NodeShape))
    for shape in top_level_shapes(shapes):
        assert shapes.value(shape, URIRef("http://www.w3.org/2000/01/rdf-schema#label")) is not None
        assert shapes.value(shape, URIRef("http://www.w3.org/2000/01/rdf-schema#comment")) is not None
        assert shapes.value(shape, SH.message) is not None or all(
            shapes.value(c, SH.message) is not None for c in shapes.objects(shape, SH.sparql)
        )


def test_cross_country_combinations_are_not_in_the_frame(ctx: Context, production: Production) -> None:
    """Each knowledge graph spans its own country, languages and settings: what the two country rules would
    block is not a candidate, and exactly no candidate of the full frame is blocked by them."""
    for _rule, blocked, near_miss in CROSS_COUNTRY:
        assert ctx.space.locate({**BASE_VALUES, **blocked}) is None
        assert production.blocks(index_of(ctx, **near_miss)) == ()
    counts = rule_counts(production)
    assert all(counts.get(str(rule), 0) == 0 for rule, _, _ in CROSS_COUNTRY)
    assert counts[str(SC.ImmuneWithoutCause)] > 0


def test_cross_country_rules_still_block_a_frame_that_pairs_countries() -> None:
    """Without the per-knowledge-graph declarations (a third party's frame), the two rules block as before,
    and the fast path agrees with the reference (a small frame: country, language and setting vary)."""
    facets = tuple(
        Facet(
            replace(f.spec, per_kg=False, via=()),
            f.values if f.name in ("country", "language", "setting") else (BASE_VALUES[f.name],),
            f.unrestricted,
        )
        for f in build_facets(Schema(DSO, KGS))
    )
    ctx = Context(DSO, KGS, facets, load_rule_shapes(default_scenario_shape_paths()))
    assert len(ctx.space.parts) == 1
    production = Production(
        ctx, cross_check=-1
    )  # the tables alone answer: the reference is run on the candidates below
    assert production.fallback == {}
    indices = [index_of(ctx, **e[1]) for e in CROSS_COUNTRY] + [index_of(ctx, **e[2]) for e in CROSS_COUNTRY]
    ref, _ = reference_check(ctx.reference, indices, base=BASE, with_pairs=False)
    for (rule, _, _), i in zip(CROSS_COUNTRY, indices):
        assert str(rule) in rules_of(production.blocks(i))
    for i in indices:
        assert production.blocks(i, scenario_iri(BASE, i)) == ref[i]
    assert ref[indices[2]] == ref[indices[3]] == ()


def test_a_stated_misconception_blocks_nothing_and_multiplies_the_frame(ctx: Context, production: Production) -> None:
    """The misconception facet (six values: five misconceptions and none) is read by no consistency rule: every
    candidate with a misconception is blocked exactly as the same one stating none. Counted by hand: the
    per-knowledge-graph frame of 74,027,520 candidates (docs/blocking.md, before the facet) times 6; the new
    past-infection rule blocks one infection history of four times one immunity status of three, in every part."""
    assert ctx.space.size == 74_027_520 * 6
    for misconception in (VE.MisconceptionAutism, VE.MisconceptionOneDose):
        assert production.blocks(index_of(ctx, misconception=misconception)) == ()
        for _rule, blocked, _near in EXAMPLES:
            assert rules_of(production.blocks(index_of(ctx, misconception=misconception, **blocked))) == rules_of(
                production.blocks(index_of(ctx, **blocked))
            )
    counts = rule_counts(production)
    assert counts[str(SC.ImmunityContradictsInfectionHistory)] == ctx.space.size // 12
    assert str(SC.OtherDiseaseAskedAsFocusQuestion) not in counts  # scope, not a consistency rule: removed


def test_immunity_comes_from_the_dsos_evidence_not_from_the_rule() -> None:
    """sc:ImmunityContradictsInfectionHistory names no infection history: without the DSO's sourced fact that past
    measles infection confers immunity, a past case that is not immune blocks nothing; with it, it is blocked.
    A small frame (infection and immunity vary), fast path and reference."""

    def small(dso: Graph) -> Context:
        facets = tuple(
            f if f.name in ("infection", "immunity") else Facet(f.spec, (BASE_VALUES[f.name],), f.unrestricted)
            for f in build_facets(Schema(dso, KGS))
        )
        return Context(dso, KGS, facets, load_rule_shapes(default_scenario_shape_paths()))

    without = Graph()
    for triple in DSO:
        if triple[1] != VE.confersImmunity:
            without.add(triple)
    assert (VE.PastInfection, VE.confersImmunity, VE.Immune) in DSO
    for dso, expected in ((DSO, True), (without, False)):
        ctx = small(dso)
        production = Production(ctx, cross_check=-1)  # the reference is run below on the candidate that matters
        i = index_of(ctx, infection=VE.PastInfection, immunity=VE.NotImmune)
        ref, _ = reference_check(ctx.reference, [i], base=BASE, with_pairs=False)
        assert ref[i] == production.blocks(i, scenario_iri(BASE, i))
        assert (str(SC.ImmunityContradictsInfectionHistory) in rules_of(ref[i])) == expected
