"""Knowledge graph personas as seed scenarios.

A persona is an individual of a knowledge graph typed by one of the persona facet's values (the facet
whose values are the DSO's persona classes, :data:`.facets.SUBCLASSES`), such as the Kano caregiver asking
about her infant. Its facet values are read from the graph: a facet on the asker from the persona itself, a
facet on the person asked about from the node it links to by the DSO's subject link (the persona itself
when it links none), the persona's own types for the persona facet. Where the persona states several values
(two languages) or none (the disease, the conversation style), any of them will do: the persona spans a
box of the frame (per facet, its stated values, or every value its knowledge graph's part spans), and the
seed is one eligible candidate of that box drawn exactly (:func:`.draw.sample_eligible`) with a random
stream seeded by the derivation's seed and the persona's IRI. When every candidate of the box is blocked,
the seed is one of them, so the rules say why. Seeds are then checked by the same rules as every candidate
(:mod:`.derive`); a persona with a stated facet none of whose values is in the frame is reported with the
facet and values, never dropped silently.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF
from rdflib.term import Node

from .draw import NotEnoughEligible, sample_eligible
from .facets import ASKER, SUBCLASSES, SUBJECT, Facet
from .production import Production
from .space import graph_name


@dataclass(frozen=True)
class Seed:
    """One persona: its index in the frame (``None`` when it is not in it) and, then, why not."""

    persona: str
    graph: str
    index: int | None
    problem: str = ""


def _stated(graph: Graph, node: Node, facet: Facet) -> set[Node]:
    prop = facet.spec.dso_property
    found = set(graph.objects(node, prop))
    if prop == RDF.type:  # the persona facet: the persona's own types among the persona classes
        found &= set(facet.unrestricted)
    return {
        Literal(bool(v.toPython())) if isinstance(v, Literal) and isinstance(v.toPython(), bool) else v for v in found
    }


def personas(kg: Graph, facets: Sequence[Facet]) -> list[URIRef]:
    """The personas of one knowledge graph: its individuals typed by a persona class (sorted)."""
    persona = next((f for f in facets if f.spec.value_kind == SUBCLASSES), None)
    if persona is None:
        return []
    return sorted({s for c in persona.unrestricted for s in kg.subjects(RDF.type, c) if isinstance(s, URIRef)}, key=str)


def seeds(production: Production, seed: int) -> list[Seed]:
    """Every knowledge graph's personas as seeds, located in the frame (see the module docstring)."""
    ctx = production.ctx
    space, facets, schema = ctx.space, ctx.space.facets, ctx.schema
    link = facets[0].spec.nodes.subject_link if facets else None
    out = []
    for k, kg in enumerate(ctx.kgs):
        name = graph_name(kg, k)
        part = next((p for p in space.parts if p.name in (name, "")), None)
        for persona in personas(kg, facets):
            if part is None:
                out.append(
                    Seed(
                        str(persona),
                        name,
                        None,
                        "its knowledge graph spans no part of the frame (the "
                        "envelope or the inputs leave out its country or languages)",
                    )
                )
                continue
            subject = (schema.graph.value(persona, link) if link is not None else None) or persona
            box: list[set[int]] = []
            problems = []
            for f, facet in enumerate(facets):
                node = {SUBJECT: subject, ASKER: persona}.get(facet.spec.node)
                stated = _stated(schema.graph, node, facet) if node is not None else set()
                spanned = set(part.positions[f])
                options = {d for d in spanned if facet.values[d] in stated} if stated else spanned
                if not options:
                    problems.append(
                        f"its {facet.name} ({', '.join(sorted(v.n3() for v in stated))}) is not in the frame"
                        if stated
                        else f"the frame has no {facet.name} for {name}"
                    )
                box.append(options)
            if problems:
                out.append(Seed(str(persona), name, None, "; ".join(problems)))
                continue
            rng = random.Random(f"{seed}:{persona}")
            try:
                index = sample_eligible(production, 1, rng, box)[0]
            except NotEnoughEligible:  # every situation of the persona is blocked: one of them shows why
                index = space.index([rng.choice(sorted(options)) for options in box])
            out.append(Seed(str(persona), name, index))
    return out
