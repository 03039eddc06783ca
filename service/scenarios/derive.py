"""The entry point of scenario derivation: ``derive(DerivationInput) -> Derivation``, and its RDF.

Independent of HTTP and of the envelope code: the envelope module builds a :class:`DerivationInput` of
plain values (graphs, IRIs, numbers). A derivation enumerates the candidates (:mod:`.facets`), compiles the
rules (:mod:`.production`), counts the frame exactly (:mod:`.frame`) and draws a seeded sample of candidate
indices, ``random.Random(seed).sample(range(N), k)``, which works for any N and gives the same sample for
the same seed. Every sampled candidate is kept, eligible or blocked with the rules that blocked it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import PROV, RDF, RDFS, XSD
from rdflib.term import Node

from ..core.namespaces import EARL as EARL_NS
from .cache import build_context, compiled_tables
from .engine import Block, Context, Criterion
from .facets import EPO, Facet, describe
from .frame import FrameCounts, allowed_positions
from .production import Production
from .rules import Rule, default_scenario_shape_paths, load_rule_shapes

EARL = Namespace(EARL_NS)


@dataclass(frozen=True)
class CriterionScope:
    """An acceptance criterion and the DSO concepts it bears on (``epo:bearsOnConcept``)."""

    iri: str
    concepts: frozenset[str]


@dataclass(frozen=True)
class DerivationInput:
    """Everything a derivation depends on, as plain values.

    ``allowed_countries`` / ``allowed_languages``: IRIs in the use boundary, ``None`` for all;
    ``excluded_concepts``: out-of-scope DSO concepts (a class or broader concept excludes what it covers);
    ``shapes``: scenario shape files or graphs, by default every ``shapes/scenario-*.ttl``.
    """

    dso: Graph
    kgs: tuple[Graph, ...]
    criteria: tuple[CriterionScope, ...] = ()
    allowed_countries: frozenset[str] | None = None
    allowed_languages: frozenset[str] | None = None
    excluded_concepts: frozenset[str] = frozenset()
    seed: int = 0
    sample_size: int = 100
    evaluation_iri: str = "https://example.org/evaluations/1"
    shapes: tuple[str | Path | Graph, ...] = ()


@dataclass(frozen=True)
class ScenarioResult:
    """One sampled candidate: its index, IRI, facet values, and why it is blocked (empty: eligible)."""

    index: int
    iri: str
    values: dict[str, Node]
    blocks: tuple[Block, ...]
    probe_for: tuple[str, ...] = ()
    pair_blocks: dict[str, tuple[Block, ...]] = field(default_factory=dict)

    @property
    def eligible(self) -> bool:
        return not self.blocks


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


def scenario_iri(evaluation: str, index: int) -> str:
    return f"{evaluation}/scenarios/{index}"


def _parts(inp: DerivationInput) -> tuple:
    """What the compiled tables depend on, in the order of :func:`.cache.build_context`."""
    shapes = load_rule_shapes(inp.shapes or default_scenario_shape_paths())
    return (inp.dso, inp.kgs, shapes, tuple(Criterion(c.iri, c.concepts) for c in inp.criteria),
            inp.allowed_countries, inp.allowed_languages, inp.excluded_concepts)


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
    indices = sorted(random.Random(inp.seed).sample(range(n), min(inp.sample_size, n)))
    allowed = {c.iri: allowed_positions(ctx, c) for c in ctx.criteria}
    results = []
    for i in indices:
        iri = scenario_iri(inp.evaluation_iri, i)
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
        results.append(ScenarioResult(i, iri, ctx.space.values(i), blocks, tuple(probe_for), pair_blocks))
    derivation = Derivation(inp.evaluation_iri, inp.seed, ctx.facets, tuple(ctx.rules), counts, tuple(results),
                            tuple(inp.criteria))
    return derivation, ctx, production


def scenario_triples(derivation: Derivation) -> Graph:
    """The derivation as RDF: the sampled scenarios, a consistency check per scenario (EARL, caie-spec
    style, with IRIs rather than blank nodes), the frames with their exact sizes, and the activity."""
    g = Graph()
    ev = derivation.evaluation_iri
    activity = URIRef(f"{ev}/derivation")
    g.add((activity, RDF.type, EPO.ScenarioDerivation))
    g.add((activity, RDFS.comment, Literal(
        f"seed {derivation.seed}; {len(derivation.scenarios)} of {derivation.counts.total} candidates sampled; "
        f"{derivation.counts.eligible} eligible")))
    candidates, eligible = URIRef(f"{ev}/frames/candidates"), URIRef(f"{ev}/frames/eligible")
    g.add((candidates, RDF.type, EPO.SamplingFrame))
    g.add((candidates, RDFS.label, Literal("all candidate scenarios, blocked or eligible", lang="en")))
    g.add((candidates, EPO.frameSize, Literal(derivation.counts.total, datatype=XSD.integer)))
    g.add((eligible, RDF.type, EPO.SamplingFrame))
    g.add((eligible, RDFS.label, Literal("eligible scenarios", lang="en")))
    g.add((eligible, EPO.frameSize, Literal(derivation.counts.eligible, datatype=XSD.integer)))
    g.add((eligible, PROV.wasDerivedFrom, candidates))
    for frame in (candidates, eligible):
        g.add((frame, PROV.wasGeneratedBy, activity))
    for k, cc in enumerate(derivation.counts.per_criterion):
        frame = URIRef(f"{ev}/frames/criteria/{k}")
        g.add((frame, RDF.type, EPO.SamplingFrame))
        g.add((frame, EPO.frameFor, URIRef(cc.criterion)))
        g.add((frame, EPO.frameSize, Literal(cc.eligible, datatype=XSD.integer)))
        g.add((frame, RDFS.comment, Literal(
            f"{cc.in_frame} candidates bear on the criterion's concepts; {cc.eligible} of them are eligible probes")))
        g.add((frame, PROV.wasDerivedFrom, eligible))
        g.add((frame, PROV.wasGeneratedBy, activity))
    for s in derivation.scenarios:
        node = URIRef(s.iri)
        for t in describe(s.iri, derivation.facets, s.values):
            g.add(t)
        g.add((node, RDF.type, EPO.EligibleScenario if s.eligible else EPO.BlockedScenario))
        g.add((node, PROV.wasGeneratedBy, activity))
        g.add((node, RDFS.label, Literal(f"scenario {s.index}", lang="en")))
        for b in s.blocks:
            g.add((node, EPO.blockedBy, URIRef(b.rule)))
            g.add((node, RDFS.comment, Literal(b.message, lang="en")))
        check = URIRef(f"{ev}/checks/{s.index}")
        result = URIRef(f"{ev}/checks/{s.index}#result")
        g.add((check, RDF.type, EPO.ConsistencyCheck))
        g.add((check, EARL.subject, node))
        g.add((check, EARL.mode, EARL.automatic))
        g.add((check, EARL.assertedBy, activity))
        g.add((check, EARL.result, result))
        for b in s.blocks:
            g.add((check, EARL.test, URIRef(b.rule)))
        g.add((result, RDF.type, EARL.TestResult))
        g.add((result, EARL.outcome, EARL.passed if s.eligible else EARL.failed))
        info = "no consistency rule is violated" if s.eligible else "; ".join(f"{b.message} ({b.rule})" for b in s.blocks)
        g.add((result, EARL.info, Literal(info, lang="en")))
    return g
