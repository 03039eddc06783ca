"""The reference path: the specification run as written, on every candidate at once.

OWL 2 RL closure (owlrl) over DSO + KGs + the candidates' RDF, its clashes on each scenario and person
(:mod:`.owl`), then pySHACL with the scenario shapes; a scenario is blocked if either finds something on
it, and a scenario-criterion pair if a routing shape reports on its probe. Slow (owlrl is about 16 ms per
candidate, pySHACL runs each SPARQL constraint once per focus node) but obviously right: the fast path
(:mod:`.production`) is tested to block exactly the same candidates with the same rules and messages.

pySHACL's cost grows with the square of the candidates in one data graph (measured: 500 candidates 105 s,
1,000 candidates 438 s: each pre-bound constraint query still scans every scenario), so the candidates are
checked in chunks of ``chunk`` (default 200), each chunk exactly as above. Candidates share no nodes but
the DSO's and KGs' (equalities are not generated, see :mod:`.owl`), so chunking changes no result; it only
makes the baseline faster, never the comparison easier.
"""

from __future__ import annotations

from collections.abc import Sequence

from rdflib import URIRef
from rdflib.term import Node

from .engine import Block, Context, probe_triples, run_shacl
from .facets import describe, person_iri


def scenario_iri(base: str, index: int) -> str:
    return f"{base}/scenarios/{index}"


Result = tuple[dict[int, tuple[Block, ...]], dict[tuple[int, str], tuple[Block, ...]]]


def reference_check(ctx: Context, indices: Sequence[int], base: str = "urn:x-ob-caie:reference",
                    with_pairs: bool = True, chunk: int | None = 200) -> Result:
    """Blocks of each candidate ``index`` and of each (index, criterion IRI) pair; unblocked ones map to ()."""
    indices = list(indices)
    size = chunk or max(len(indices), 1)
    blocks: dict[int, tuple[Block, ...]] = {}
    pairs: dict[tuple[int, str], tuple[Block, ...]] = {}
    for start in range(0, len(indices), size):
        b, p = _check(ctx, indices[start:start + size], base, with_pairs)
        blocks.update(b)
        pairs.update(p)
    return blocks, pairs


def _check(ctx: Context, indices: Sequence[int], base: str, with_pairs: bool) -> Result:
    data: list[tuple[Node, Node, Node]] = []
    node_of: dict[Node, int] = {}
    probe_of: dict[Node, tuple[int, str]] = {}
    for i in indices:
        s = scenario_iri(base, i)
        data += describe(s, ctx.facets, ctx.space.values(i))
        node_of[URIRef(s)] = i
        node_of[person_iri(s)] = i
        if with_pairs:
            for k, c in enumerate(ctx.criteria):
                probe = f"{s}#probe-{k}"
                data += probe_triples(probe, s, c.iri)
                probe_of[URIRef(probe)] = (i, c.iri)
    if with_pairs:
        data += ctx.criterion_triples()
    blocks: dict[int, set[Block]] = {i: set() for i in indices}
    pairs: dict[tuple[int, str], set[Block]] = {(i, c.iri): set() for i in indices for c in ctx.criteria} if with_pairs else {}
    closure = ctx.owl.closure(data)
    for node, i in node_of.items():
        blocks[i] |= {Block(f.rule, f.message) for f in ctx.owl.findings(closure, node)}
    shapes = [r.iri for r in ctx.rules] if with_pairs else [r.iri for r in ctx.consistency_rules]
    if shapes:
        for focus, rule, message in run_shacl(ctx, data, shapes):
            if focus in node_of:
                blocks[node_of[focus]].add(Block(rule, message))
            elif focus in probe_of:
                pairs[probe_of[focus]].add(Block(rule, message))
    return ({i: tuple(sorted(b)) for i, b in blocks.items()}, {k: tuple(sorted(b)) for k, b in pairs.items()})
