"""The entry point of scenario derivation: ``derive(DerivationInput) -> Derivation``, and its RDF.

Independent of HTTP and of the envelope code: the envelope module builds a :class:`DerivationInput` of
plain values (graphs, IRIs, numbers). A derivation enumerates the candidates (:mod:`.facets`), compiles the
rules (:mod:`.production`), counts the frame exactly (:mod:`.frame`) and draws a seeded sample of candidate
indices, ``random.Random(seed).sample(range(N), k)``, which works for any N and gives the same sample for
the same seed. Every sampled candidate is kept, eligible or blocked with the rules that blocked it. The
knowledge graphs' personas join the sample as seed scenarios (:mod:`.seeds`, ``epo:seededBy``), checked by
the same rules; a persona not in the frame is reported on the derivation (``unseeded``, a comment in RDF).

A scenario's IRI is ``{evaluation}/scenarios/{key}`` with its content key (:func:`.facets.scenario_key`), so
the same situation has the same IRI in every derivation; its index, stable only for the same inputs, is
recorded as ``epo:scenarioIndex``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import OWL, PROV, RDF, RDFS, XSD
from rdflib.term import Node

from ..core.namespaces import EARL as EARL_NS
from .cache import build_context, compiled_tables
from .engine import Block, Context, Criterion
from .facets import EPO, Facet, describe, scenario_key
from .frame import FrameCounts, allowed_positions, rule_counts
from .production import OWL_RULES, Production
from .reference import Trigger
from .rules import Rule, load_rule_shapes
from .seeds import seeds

EARL = Namespace(EARL_NS)


@dataclass(frozen=True)
class CriterionScope:
    """An acceptance criterion, the DSO concepts it bears on (``epo:bearsOnConcept``) and the scenario facts
    that make it bear on a probe (``epo:bearsWhen``, docs/routing.md)."""

    iri: str
    concepts: frozenset[str]
    triggers: tuple[Trigger, ...] = ()


@dataclass(frozen=True)
class DerivationInput:
    """Everything a derivation depends on, as plain values.

    ``allowed_countries`` / ``allowed_languages``: IRIs in the use boundary, ``None`` for all;
    ``excluded_concepts``: out-of-scope DSO concepts (a class or broader concept excludes what it covers);
    ``shapes``: the scenario shapes graphs (the rules), as the store holds them; there is no default, so no
    derivation silently reads rules from anywhere else.
    """

    dso: Graph
    kgs: tuple[Graph, ...]
    shapes: tuple[Graph, ...]
    criteria: tuple[CriterionScope, ...] = ()
    allowed_countries: frozenset[str] | None = None
    allowed_languages: frozenset[str] | None = None
    excluded_concepts: frozenset[str] = frozenset()
    seed: int = 0
    sample_size: int = 100
    evaluation_iri: str = "https://example.org/evaluations/1"


@dataclass(frozen=True)
class ScenarioResult:
    """One sampled candidate: its index (in this derivation's frame), IRI (by content), facet values, and why
    it is blocked (empty: eligible)."""

    index: int
    iri: str
    values: dict[str, Node]
    blocks: tuple[Block, ...]
    probe_for: tuple[str, ...] = ()
    pair_blocks: dict[str, tuple[Block, ...]] = field(default_factory=dict)
    seeded_by: tuple[str, ...] = ()
    """The knowledge graph personas this scenario was seeded from (:mod:`.seeds`)."""

    @property
    def eligible(self) -> bool:
        return not self.blocks

    @property
    def key(self) -> str:
        """Its content key, as its IRI was minted with (:func:`scenario_iri`)."""
        return scenario_key(self.values)


@dataclass(frozen=True)
class Derivation:
    """The result: facets, rules, exact frame counts and the sampled scenarios."""

    evaluation_iri: str
    seed: int
    facets: tuple[Facet, ...]
    rules: tuple[Rule, ...]
    counts: FrameCounts
    scenarios: tuple[ScenarioResult, ...]
    criteria: tuple[CriterionScope, ...]
    sample_size: int = 0
    compiled: tuple[str, ...] = ()
    fallbacks: tuple[tuple[str, str], ...] = ()
    """Rules decided by compiled tables, and rules left to the reference with the reason (IRIs; the DSO's
    OWL 2 RL axioms as a unit are named by the DSO's ontology IRI)."""
    unseeded: tuple[tuple[str, str], ...] = ()
    """Knowledge graph personas that are not in the frame, each with why (:mod:`.seeds`)."""
    blocked_by_rule: Mapping[str, int] = field(default_factory=dict)
    """How many candidates of the frame each compiled rule blocks, exactly (:func:`.frame.rule_counts`; a candidate
    two rules block counts for both)."""


def scenario_iri(evaluation: str, values: Mapping[str, Node], facets: Sequence[Facet] | None = None) -> str:
    """The scenario with these facet values: ``{evaluation}/scenarios/{content key}`` (``facets``: those the values
    are over, unless ``values`` is a :class:`.facets.Situation`, see :func:`.facets.scenario_key`)."""
    return f"{evaluation}/scenarios/{scenario_key(values, facets)}"


def _parts(
    inp: DerivationInput,
) -> tuple[
    Graph, tuple[Graph, ...], Graph, tuple[Criterion, ...], frozenset[str] | None, frozenset[str] | None, frozenset[str]
]:
    """What the compiled tables depend on, in the order of :func:`.cache.build_context`."""
    shapes = load_rule_shapes(inp.shapes)
    return (
        inp.dso,
        inp.kgs,
        shapes,
        tuple(Criterion(c.iri, c.concepts, c.triggers) for c in inp.criteria),
        inp.allowed_countries,
        inp.allowed_languages,
        inp.excluded_concepts,
    )


def context_for(inp: DerivationInput) -> Context:
    """A fresh prepared :class:`Context` of an input (facets restricted by the envelope, rules loaded)."""
    return build_context(*_parts(inp))


def derive(inp: DerivationInput) -> Derivation:
    """Derive, check and count the scenarios of ``inp``; sample ``inp.sample_size`` of them with ``inp.seed``."""
    return derive_with(inp)[0]


def derive_with(inp: DerivationInput) -> tuple[Derivation, Context, Production]:
    """:func:`derive`, also returning the prepared context and compiled rules (to draw probes from).

    The context, tables and counts come from the in-process cache (:mod:`.cache`) when the same inputs were
    compiled before; they are shared and read-only.
    """
    compiled = compiled_tables(*_parts(inp))
    ctx, production, counts = compiled.context, compiled.production, compiled.counts
    n = ctx.space.size
    found = seeds(production, inp.seed)
    seeded: dict[int, list[str]] = {}
    for s in found:
        if s.index is not None:
            seeded.setdefault(s.index, []).append(s.persona)
    indices = sorted(set(random.Random(inp.seed).sample(range(n), min(inp.sample_size, n))) | set(seeded))
    allowed = {c.iri: allowed_positions(ctx, c) for c in ctx.criteria}
    production.check_fallbacks(indices)  # one reference run for the whole sample, if any rule fell back
    results = []
    for i in indices:
        values = ctx.space.values(i)
        iri = scenario_iri(inp.evaluation_iri, values)
        blocks = production.blocks(i, iri)
        digits = ctx.space.digits(i)
        pair_blocks: dict[str, tuple[Block, ...]] = {}
        probe_for = []
        for c in ctx.criteria:
            if all(d in a for d, a in zip(digits, allowed[c.iri])):
                pb = production.pair_blocks(i, c.iri, iri)
                if pb:
                    pair_blocks[c.iri] = pb
                elif not blocks:
                    probe_for.append(c.iri)
        results.append(ScenarioResult(i, iri, values, blocks, tuple(probe_for), pair_blocks, tuple(seeded.get(i, ()))))
    owl_unit = str(next(ctx.dso.subjects(RDF.type, OWL.Ontology), OWL_RULES))
    name = {OWL_RULES: owl_unit}
    derivation = Derivation(
        inp.evaluation_iri,
        inp.seed,
        ctx.facets,
        tuple(ctx.rules),
        counts,
        tuple(results),
        tuple(inp.criteria),
        inp.sample_size,
        tuple(name.get(r, r) for r in production.compiled),
        tuple((name.get(r, r), why) for r, why in sorted(production.fallback.items())),
        tuple((s.persona, s.problem) for s in found if s.index is None),
        {name.get(r, r): n for r, n in rule_counts(production).items()},
    )
    return derivation, ctx, production


def _rule_usages(g: Graph, activity: URIRef, base: str, derivation: Derivation) -> None:
    """How each rule was checked: a qualified usage (PROV) with the role ``epo:CompiledRuleTable`` or
    ``epo:ReferenceFallback``, the latter with the reason as its comment."""
    rows: list[tuple[str, URIRef, str | None]] = [(r, EPO.CompiledRuleTable, None) for r in derivation.compiled]
    rows += [(r, EPO.ReferenceFallback, why) for r, why in derivation.fallbacks]
    for k, (rule, role, why) in enumerate(sorted(rows, key=lambda row: row[0])):
        usage = URIRef(f"{base}/rules/{k}")
        g.add((activity, PROV.used, URIRef(rule)))
        g.add((activity, PROV.qualifiedUsage, usage))
        g.add((usage, RDF.type, PROV.Usage))
        g.add((usage, PROV.entity, URIRef(rule)))
        g.add((usage, PROV.hadRole, role))
        if rule in derivation.blocked_by_rule:
            g.add((usage, EPO.blockedCount, Literal(derivation.blocked_by_rule[rule], datatype=XSD.integer)))
        if why:
            g.add((usage, RDFS.comment, Literal(why, lang="en")))


def scenario_node(
    iri: str, facets: Sequence[Facet], values: Mapping[str, Node], index: int
) -> list[tuple[Node, Node, Node]]:
    """A scenario's description (:func:`.facets.describe`) with its label and its index in this frame."""
    node = URIRef(iri)
    return [
        *describe(iri, facets, values),
        (node, RDFS.label, Literal(f"scenario {scenario_key(values, facets)}", lang="en")),
        (node, EPO.scenarioIndex, Literal(index, datatype=XSD.integer)),
    ]


def scenario_triples(derivation: Derivation, activity_iri: str | None = None) -> Graph:
    """The derivation as RDF: the activity (``activity_iri``, by default ``{evaluation}/derivation``) with its
    seed and sample size, the frames with their exact sizes, and the sampled scenarios, each with a
    consistency check (EARL, caie-spec style, with IRIs rather than blank nodes). Frames and checks are
    named under the activity, since another derivation (other inputs) may size and judge them otherwise."""
    g = Graph()
    ev = derivation.evaluation_iri
    base = activity_iri or f"{ev}/derivation"
    activity = URIRef(base)
    g.add((activity, RDF.type, EPO.ScenarioDerivation))
    g.add((activity, EPO.seed, Literal(derivation.seed, datatype=XSD.integer)))
    g.add((activity, EPO.reviewSampleSize, Literal(derivation.sample_size, datatype=XSD.integer)))
    g.add(
        (
            activity,
            RDFS.comment,
            Literal(
                f"seed {derivation.seed}; {len(derivation.scenarios)} of {derivation.counts.total} candidates sampled; "
                f"{derivation.counts.eligible} eligible"
            ),
        )
    )
    candidates, eligible = URIRef(f"{base}/frames/candidates"), URIRef(f"{base}/frames/eligible")
    g.add((candidates, RDF.type, EPO.SamplingFrame))
    g.add((candidates, RDFS.label, Literal("all candidate scenarios, blocked or eligible", lang="en")))
    g.add((candidates, EPO.frameSize, Literal(derivation.counts.total, datatype=XSD.integer)))
    g.add((eligible, RDF.type, EPO.SamplingFrame))
    g.add((eligible, RDFS.label, Literal("eligible scenarios", lang="en")))
    g.add((eligible, EPO.frameSize, Literal(derivation.counts.eligible, datatype=XSD.integer)))
    g.add((eligible, PROV.wasDerivedFrom, candidates))
    for frame in (candidates, eligible):
        g.add((frame, PROV.wasGeneratedBy, activity))
    if not derivation.counts.exact:
        g.add(
            (
                eligible,
                RDFS.comment,
                Literal(
                    "an upper bound: counted over the compiled rules only, since some rules fell back to the reference "
                    "and the frame is too large to check candidate by candidate",
                    lang="en",
                ),
            )
        )
    _rule_usages(g, activity, base, derivation)
    for persona, why in derivation.unseeded:
        g.add((activity, RDFS.comment, Literal(f"the persona {persona} seeds no scenario: {why}", lang="en")))
    for k, cc in enumerate(derivation.counts.per_criterion):
        frame = URIRef(f"{base}/frames/criteria/{k}")
        g.add((frame, RDF.type, EPO.SamplingFrame))
        g.add((frame, EPO.frameFor, URIRef(cc.criterion)))
        g.add((frame, EPO.frameSize, Literal(cc.eligible, datatype=XSD.integer)))
        g.add(
            (
                frame,
                RDFS.comment,
                Literal(
                    f"{cc.in_frame} candidates bear on the criterion's concepts; {cc.eligible} of them are eligible probes"
                ),
            )
        )
        g.add((frame, PROV.wasDerivedFrom, eligible))
        g.add((frame, PROV.wasGeneratedBy, activity))
    for s in derivation.scenarios:
        node = URIRef(s.iri)
        for t in scenario_node(s.iri, derivation.facets, s.values, s.index):
            g.add(t)
        g.add((node, RDF.type, EPO.EligibleScenario if s.eligible else EPO.BlockedScenario))
        g.add((node, PROV.wasGeneratedBy, activity))
        for persona in s.seeded_by:
            g.add((node, EPO.seededBy, URIRef(persona)))
        for b in s.blocks:
            g.add((node, EPO.blockedBy, URIRef(b.rule)))
            g.add((node, RDFS.comment, Literal(b.message, lang="en")))
        check = URIRef(f"{base}/checks/{s.key}")
        result = URIRef(f"{base}/checks/{s.key}#result")
        g.add((check, RDF.type, EPO.ConsistencyCheck))
        g.add((check, EARL.subject, node))
        g.add((check, EARL.mode, EARL.automatic))
        g.add((check, EARL.assertedBy, activity))
        g.add((check, EARL.result, result))
        for b in s.blocks:
            g.add((check, EARL.test, URIRef(b.rule)))
        g.add((result, RDF.type, EARL.TestResult))
        g.add((result, EARL.outcome, EARL.passed if s.eligible else EARL.failed))
        info = (
            "no consistency rule is violated" if s.eligible else "; ".join(f"{b.message} ({b.rule})" for b in s.blocks)
        )
        g.add((result, EARL.info, Literal(info, lang="en")))
    return g
