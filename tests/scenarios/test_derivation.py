"""Scenario derivation (service.scenarios.derive): seeded sampling, exact frame counts checked against
brute-force enumeration and against the reference path, per-criterion counts, exact sampling of eligible
candidates, and the RDF record (with how each rule was checked). Tables come from the process's cache,
shared with test_blocking.py and test_cache.py where the inputs are the same."""

from __future__ import annotations

import math
import random
from itertools import chain, product

import pytest
from rdflib import Literal, Namespace, URIRef
from rdflib.namespace import RDFS

from service.scenarios import CriterionScope, DerivationInput, derive, scenario_triples
from service.scenarios.derive import derive_with
from service.scenarios.draw import sample_eligible
from service.scenarios.engine import Criterion
from service.scenarios.facets import scenario_key
from service.scenarios.frame import allowed_positions, count_frame, in_frame
from service.scenarios.reference import reference_check

from . import KE, LANG, NG, RDF, VE
from .conftest import CRITERIA as BLOCKING_CRITERIA
from .conftest import DSO, KGS, TINY
from .conftest import SHAPES as RULES
from .conftest import TINY_CRITERIA as CACHE_CRITERIA

XSD = Namespace("http://www.w3.org/2001/XMLSchema#")

EPO = Namespace("https://w3id.org/ob-caie/epo/")
EARL = Namespace("http://www.w3.org/ns/earl#")
EVAL = "https://example.org/evaluations/e1"
SHAPES = (RULES,)
CRITERIA = (
    CriterionScope(
        "https://example.org/criteria/measles-schedule", frozenset({str(VE.Measles), str(VE.ScheduleQuestion)})
    ),
    CriterionScope("https://example.org/criteria/mr", frozenset({str(VE.MR)})),
    CriterionScope("https://example.org/criteria/ng-schedule", frozenset({str(NG["measles-schedule"])})),
)
OUT_OF_SCOPE = frozenset(str(VE[d]) for d in ("Polio", "Cholera", "COVID19", "Malaria", "Rubella")) | frozenset(
    str(VE[s])
    for s in (
        "SchoolSetting",
        "ClinicSetting",
        "PlaceOfWorshipSetting",
        "WorkplaceSetting",
        "MarketSetting",
        "PublicTransportSetting",
    )
)


def small_input(**kw) -> DerivationInput:
    """Nigeria and Kenya, English (spoken in both) and one language of each, one setting, measles and mumps, three
    styles: two per-KG products (each country with English and its own language), 414,720 candidates (622,080
    while the frame paired every country with every language)."""
    base = {
        "dso": DSO,
        "kgs": KGS,
        "shapes": SHAPES,
        "criteria": CRITERIA,
        "allowed_countries": frozenset({str(NG.country), str(KE.country)}),
        "allowed_languages": frozenset({str(LANG.eng), str(LANG.hau), str(LANG.swa)}),
        "excluded_concepts": OUT_OF_SCOPE
        | {
            str(VE.TreatmentQuestion),
            str(VE.SymptomRecognition),
            str(VE.Misconception),
        },  # no stated misconception: enumerable
        "seed": 11,
        "sample_size": 25,
        "evaluation_iri": EVAL,
    }
    base.update(kw)
    return DerivationInput(**base)


@pytest.fixture(scope="module")
def derivation():
    return derive(small_input())


def test_same_seed_same_sample_other_seed_other_sample(derivation) -> None:
    again = derive(small_input())
    assert [s.index for s in again.scenarios] == [s.index for s in derivation.scenarios]
    assert [s.blocks for s in again.scenarios] == [s.blocks for s in derivation.scenarios]
    other = derive(small_input(seed=12))
    assert [s.index for s in other.scenarios] != [s.index for s in derivation.scenarios]


def test_facets_follow_the_envelope(derivation) -> None:
    values = {f.name: f.values for f in derivation.facets}
    assert values["country"] == (KE.country, NG.country)
    assert values["disease"] == (VE.Measles, VE.Mumps)
    assert values["setting"] == (VE.HouseholdSetting,)  # local settings fall under excluded broader ones
    assert VE.PublicTransportSetting not in values["setting"] and KE["matatu-ride"] not in values["setting"]
    assert values["style"] == (VE.AnxiousStyle, VE.PlainStyle, VE.SkepticalStyle)


def test_exact_counts_match_brute_force(derivation) -> None:
    """Every candidate enumerated (test_cache.py shows cached tables equal fresh ones)."""
    _, ctx, production = derive_with(small_input())
    counts = count_frame(production)
    n = ctx.space.size
    assert counts == derivation.counts
    assert counts.total == n == derivation.counts.total and n < 10**6
    flags = production.blocked_many(range(n))
    assert counts.eligible == n - sum(flags) == derivation.counts.eligible
    assert 0 < counts.eligible < n
    # the candidates' digits in index order, each tested on the facets a criterion constrains
    constraints = [
        [(f, a) for f, a in enumerate(allowed_positions(ctx, c)) if len(a) < ctx.space.radices[f]] for c in ctx.criteria
    ]
    members: list[list[int]] = [[] for _ in ctx.criteria]
    in_order = chain.from_iterable(product(*part.positions) for part in ctx.space.parts)  # per KG, one product
    for i, digits in enumerate(in_order):
        if i % 9973 == 0:
            assert digits == ctx.space.digits(i)
        for k, constrained in enumerate(constraints):
            if all(digits[f] in a for f, a in constrained):
                members[k].append(i)
    assert any(constraints) and all(in_frame(ctx, c, m[len(m) // 2]) for c, m in zip(ctx.criteria, members))
    for c, cc, mine in zip(ctx.criteria, counts.per_criterion, members):
        eligible = [i for i in mine if not flags[i] and not production.pair_blocks(i, c.iri)]
        assert (cc.in_frame, cc.eligible) == (len(mine), len(eligible)), c.iri


def test_per_criterion_frames() -> None:
    counts = derive(small_input(sample_size=0)).counts
    by = {c.criterion: c for c in counts.per_criterion}
    measles = by["https://example.org/criteria/measles-schedule"]
    assert measles.in_frame == counts.total // 2 // 6  # one of two diseases, one of six information needs
    assert 0 < measles.eligible < measles.in_frame
    mr = by["https://example.org/criteria/mr"]  # MR does not prevent mumps: those pairs are blocked
    assert mr.in_frame == counts.total and mr.eligible < counts.eligible
    ng = by["https://example.org/criteria/ng-schedule"]  # Kenyan scenarios (half the frame) and mumps questions blocked
    assert ng.in_frame == counts.total and 0 < ng.eligible < counts.eligible // 2


def test_counts_agree_with_the_reference_on_a_tiny_frame() -> None:
    """The 64-candidate frame of test_cache.py (tables shared through the cache): its counts against the
    reference on a seeded third of it, each candidate and pair as the specification judges it."""
    inp = DerivationInput(
        dso=DSO,
        kgs=KGS,
        shapes=SHAPES,
        evaluation_iri=EVAL,
        sample_size=0,
        criteria=tuple(CriterionScope(c.iri, c.concepts) for c in CACHE_CRITERIA),
        **TINY,
    )
    derivation, ctx, production = derive_with(inp)
    counts = derivation.counts
    assert counts.total == ctx.space.size == 64 and counts.exact
    blocked = production.blocked_many(range(ctx.space.size))
    assert counts.eligible == blocked.count(False) and 0 < counts.eligible < counts.total
    checked = sorted(random.Random(4).sample(range(ctx.space.size), 20))
    ref, pairs = reference_check(ctx.reference, checked)
    assert [bool(ref[i]) for i in checked] == [blocked[i] for i in checked]
    assert any(pairs.values()) and any(ref.values()) and not all(ref.values())
    for (i, c), blocks in pairs.items():
        assert bool(blocks) == bool(production.pair_blocks(i, c))
    for k, cc in enumerate(counts.per_criterion):
        c = Criterion(ctx.criteria[k].iri, ctx.criteria[k].concepts)
        members = [i for i in range(ctx.space.size) if in_frame(ctx, c, i)]
        assert cc.in_frame == len(members)
        assert cc.eligible == sum(1 for i in members if not blocked[i] and not production.pair_blocks(i, c.iri))


def test_sampling_is_exact_where_eligible_candidates_are_sparse() -> None:
    """The full frame's eligible probes for a Nigerian schedule criterion are a small fraction of its frame;
    exact sampling draws them uniformly without rejection, the same for the same seed."""
    inp = DerivationInput(
        dso=DSO,
        kgs=KGS,
        shapes=SHAPES,
        seed=1,
        sample_size=5,
        evaluation_iri=EVAL,
        criteria=tuple(CriterionScope(c.iri, c.concepts) for c in BLOCKING_CRITERIA),
    )
    derivation, ctx, production = derive_with(inp)
    ng = ctx.criteria[1]
    count = next(c for c in derivation.counts.per_criterion if c.criterion == ng.iri)
    assert 0 < count.eligible * 50 < count.in_frame  # under 2 % of the frame is eligible
    allowed = allowed_positions(ctx, ng)
    drawn = sample_eligible(production, 40, random.Random(9), allowed, ng.iri)
    assert len(set(drawn)) == 40 and drawn == sample_eligible(production, 40, random.Random(9), allowed, ng.iri)
    assert all(
        in_frame(ctx, ng, i, allowed) and not production.blocks(i) and not production.pair_blocks(i, ng.iri)
        for i in drawn
    )


def test_scenario_record(derivation) -> None:
    g = scenario_triples(derivation)
    blocked = [s for s in derivation.scenarios if not s.eligible]
    eligible = [s for s in derivation.scenarios if s.eligible]
    assert blocked and len([s for s in derivation.scenarios if not s.seeded_by]) <= 25 <= len(derivation.scenarios)
    for s in derivation.scenarios:
        node = URIRef(s.iri)
        assert node == URIRef(f"{EVAL}/scenarios/{scenario_key(s.values)}") and len(s.key) == 32
        assert g.value(node, EPO.scenarioIndex) == Literal(s.index, datatype=XSD.integer)
        assert (node, RDF.type, EPO.Scenario) in g
        assert (node, RDF.type, EPO.EligibleScenario if s.eligible else EPO.BlockedScenario) in g
        assert {str(r) for r in g.objects(node, EPO.blockedBy)} == {b.rule for b in s.blocks}
        check, result = URIRef(f"{EVAL}/derivation/checks/{s.key}"), URIRef(f"{EVAL}/derivation/checks/{s.key}#result")
        assert (check, RDF.type, EPO.ConsistencyCheck) in g and (check, EARL.subject, node) in g
        assert (check, EARL.mode, EARL.automatic) in g and (check, EARL.result, result) in g
        assert (result, EARL.outcome, EARL.passed if s.eligible else EARL.failed) in g
        assert g.value(result, EARL.info) is not None
        assert g.value(node, EPO.country) is not None and g.value(node, EPO.language) is not None
    frame = URIRef(f"{EVAL}/derivation/frames/eligible")
    assert g.value(frame, EPO.frameSize) == Literal(derivation.counts.eligible, datatype=XSD.integer)
    assert g.value(URIRef(f"{EVAL}/derivation/frames/candidates"), EPO.frameSize) == Literal(
        derivation.counts.total, datatype=XSD.integer
    )
    assert g.value(URIRef(f"{EVAL}/derivation"), EPO.seed) == Literal(derivation.seed, datatype=XSD.integer)
    assert len(set(g.subjects(EPO.frameFor, None))) == len(CRITERIA)
    assert all(not s.blocks for s in eligible)


def test_full_frame_is_counted_without_enumeration() -> None:
    d = derive(
        DerivationInput(
            dso=DSO,
            kgs=KGS,
            shapes=SHAPES,
            seed=1,
            sample_size=5,
            evaluation_iri=EVAL,
            criteria=tuple(CriterionScope(c.iri, c.concepts) for c in BLOCKING_CRITERIA),
        )
    )
    _, ctx, _ = derive_with(
        DerivationInput(
            dso=DSO,
            kgs=KGS,
            shapes=SHAPES,
            evaluation_iri=EVAL,
            sample_size=0,
            criteria=tuple(CriterionScope(c.iri, c.concepts) for c in BLOCKING_CRITERIA),
        )
    )
    parts = ctx.space.parts  # one product per knowledge graph, its own country and that country's languages
    assert len(parts) == len(KGS) and d.counts.total == sum(math.prod(p.radices) for p in parts) > 7 * 10**7
    assert d.counts.total < math.prod(len(f.values) for f in d.facets) // 4  # the cross product is 5x larger
    assert 0 < d.counts.eligible < d.counts.total and 5 <= len(d.scenarios) <= 5 + 7  # the sample and the KG personas


def test_kg_personas_enter_as_seed_scenarios(derivation) -> None:
    """The Kano caregiver asking about her infant is located in the frame with the values her knowledge graph
    states, checked (eligible) and marked epo:seededBy; the Lagos parent, whose danfo ride the envelope leaves
    out, is reported with the facet and value that keep her out."""
    kano = str(NG["persona-kano-caregiver"])
    seeded = [s for s in derivation.scenarios if kano in s.seeded_by]
    assert len(seeded) == 1 and seeded[0].eligible
    values = seeded[0].values
    assert (values["persona"], values["age"], values["language"], values["country"]) == (
        VE.Caregiver,
        VE.Infant,
        LANG.hau,
        NG.country,
    )
    assert values["need"] in (VE.ScheduleQuestion, VE.ExposureAdvice)
    g = scenario_triples(derivation)
    assert (URIRef(seeded[0].iri), EPO.seededBy, URIRef(kano)) in g
    why = dict(derivation.unseeded)[str(NG["persona-lagos-commuter-parent"])]
    assert "its setting" in why and NG["danfo-ride"].n3() in why
    assert any(str(NG["persona-lagos-commuter-parent"]) in str(c) for c in g.objects(None, RDFS.comment))
