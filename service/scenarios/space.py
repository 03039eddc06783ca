"""The frame of a derivation as a union of per-knowledge-graph products: index <-> candidate.

Each knowledge graph spans one product of facet values: its own country, that country's languages, the
DSO's generic settings plus its own, and every value of the facets no knowledge graph restricts. How a facet
is restricted is data on its declaration (:class:`.facets.FacetSpec`: ``epo:valuesPerKnowledgeGraph``,
``epo:valuesPerKnowledgeGraphVia`` from ``epo:viaFacet``, ``epo:includesDsoValues``), so a blocked count
means a situation that cannot happen, never a language of one country paired with another country.

A part's values on each facet are a subset of that facet's global sorted value list, given as *global value
positions*; :meth:`FacetSpace.digits` returns global positions, so the compiled component tables (keyed by
global positions, :mod:`.production`) apply to every part. A candidate's index is its part's offset plus
its mixed-radix index within the part (first facet most significant). With no knowledge graph, or no facet
restricted per knowledge graph, the frame is the one full product, as before.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import prod

from rdflib import Graph, URIRef
from rdflib.namespace import DCAT, RDF
from rdflib.term import Node

from .facets import Facet, FacetDeclarationError, Schema, Situation


@dataclass(frozen=True)
class Part:
    """One product sub-space: per facet, the global value positions it spans (sorted), and where it starts."""

    name: str
    positions: tuple[tuple[int, ...], ...]
    offset: int

    @property
    def radices(self) -> tuple[int, ...]:
        return tuple(len(p) for p in self.positions)

    @property
    def size(self) -> int:
        return prod(self.radices)

    def contains(self, digits: Mapping[int, int] | Sequence[int]) -> bool:
        """Whether global positions (all facets, or facet position -> value position) lie in this part."""
        items = digits.items() if isinstance(digits, Mapping) else enumerate(digits)
        return all(d in self.positions[f] for f, d in items)


class FacetSpace:
    """The union of :class:`Part` products over the facets' global value lists: index <-> global positions.

    ``radices`` are the global value counts (what component tables are built over); ``size`` is the number
    of candidates, the sum of the parts' sizes.
    """

    def __init__(
        self, facets: Sequence[Facet], parts: Sequence[tuple[str, Sequence[Sequence[int]]]] | None = None
    ) -> None:
        self.facets = tuple(facets)
        self.names = tuple(f.name for f in self.facets)
        self.radices = tuple(len(f.values) for f in self.facets)
        self.position = {name: i for i, name in enumerate(self.names)}
        if parts is None:
            parts = [("", [range(r) for r in self.radices])]
        built, offset = [], 0
        for name, positions in parts:
            part = Part(name, tuple(tuple(sorted(set(p))) for p in positions), offset)
            if part.size:
                built.append(part)
                offset += part.size
        self.parts = tuple(built)
        self.size = offset
        self._offsets = [p.offset for p in self.parts]
        self._index = {f: {v: d for d, v in enumerate(facet.values)} for f, facet in enumerate(self.facets)}

    def part_of(self, index: int) -> Part:
        if not 0 <= index < self.size:
            raise IndexError(f"scenario index {index} outside the frame of {self.size}")
        return self.parts[bisect.bisect_right(self._offsets, index) - 1]

    def digits(self, index: int) -> tuple[int, ...]:
        """Global value positions of candidate ``index``."""
        part = self.part_of(index)
        local = index - part.offset
        out = [0] * len(self.radices)
        for i in range(len(self.radices) - 1, -1, -1):
            local, d = divmod(local, len(part.positions[i]))
            out[i] = part.positions[i][d]
        return tuple(out)

    def index(self, digits: Sequence[int]) -> int:
        """The index of the candidate with these global positions; ``IndexError`` when no part spans them."""
        for part in self.parts:
            if part.contains(digits):
                local = 0
                for d, positions in zip(digits, part.positions):
                    local = local * len(positions) + positions.index(d)
                return part.offset + local
        raise IndexError(f"no part of the frame spans the value positions {tuple(digits)}")

    def values(self, index: int) -> Situation:
        """Facet name -> value of candidate ``index``."""
        return Situation(self.facets, {f.name: f.values[d] for f, d in zip(self.facets, self.digits(index))})

    def locate(self, values: Mapping[str, Node]) -> int | None:
        """The index of the candidate with exactly these facet values; ``None`` when it is not in this frame
        (a facet missing or extra, a value the envelope or the inputs no longer allow, or values no
        knowledge graph spans together)."""
        if set(values) != set(self.names):
            return None
        digits = []
        for f, name in enumerate(self.names):
            d = self._index[f].get(values[name])
            if d is None:
                return None
            digits.append(d)
        try:
            return self.index(digits)
        except IndexError:
            return None

    def random_with(self, rng: random.Random, fixed: Mapping[int, int]) -> int | None:
        """A random candidate whose global positions include ``fixed`` (facet -> position), or ``None``."""
        parts = [p for p in self.parts if p.contains(fixed)]
        if not parts:
            return None
        part = rng.choice(parts)
        digits = [fixed[f] if f in fixed else rng.choice(part.positions[f]) for f in range(len(self.radices))]
        return self.index(digits)


def graph_name(kg: Graph, k: int) -> str:
    """How a knowledge graph is named in the frame: its dcat:Dataset IRI, else its position."""
    return str(next(kg.subjects(RDF.type, DCAT.Dataset), f"knowledge graph {k + 1}"))


def _instances(schema: Schema, graph: Graph, cls: Node | None) -> set[Node]:
    if cls is None:
        return set()
    return {s for c in schema.subclasses(cls) for s in graph.subjects(RDF.type, c) if isinstance(s, URIRef)}


def kg_parts(schema: Schema, kgs: Sequence[Graph], facets: Sequence[Facet]) -> list[tuple[str, list[list[int]]]] | None:
    """Per knowledge graph, the global positions of each facet's values in its part (see the module
    docstring); ``None`` (one full product) when no facet is restricted per knowledge graph or there is no
    knowledge graph. Raises :class:`.facets.FacetDeclarationError` when two parts share a candidate or a
    declaration's ``epo:viaFacet`` is not a facet."""
    restricted = [f for f in facets if f.spec.per_kg or f.spec.via]
    if not restricted or not kgs:
        return None
    names = {f.name for f in facets}
    for f in restricted:
        if f.spec.via and f.spec.via_facet not in names:
            raise FacetDeclarationError(
                f"the facet {f.name!r} is restricted via {f.spec.via_facet!r}, which is not a facet"
            )
    parts = []
    for k, kg in enumerate(kgs):
        chosen: dict[str, set[Node]] = {}
        for f in sorted(restricted, key=lambda f: bool(f.spec.via)):  # own values first, then those reached from them
            if f.spec.via and f.spec.via_facet is not None:  # a facet's via facet is checked above to exist
                start = chosen.get(f.spec.via_facet, set(next(g for g in facets if g.name == f.spec.via_facet).values))
                found = {o for s in start for p in f.spec.via for g in (schema.dso, kg) for o in g.objects(s, p)}
                if f.spec.includes_dso:
                    found |= _instances(schema, schema.dso, f.spec.value_class)
            else:
                found = _instances(schema, kg, f.spec.value_class)
            chosen[f.name] = found
        positions = [[d for d, v in enumerate(f.values) if f.name not in chosen or v in chosen[f.name]] for f in facets]
        parts.append((graph_name(kg, k), positions))
    for a in range(len(parts)):
        for b in range(a + 1, len(parts)):
            if all(set(x) & set(y) for x, y in zip(parts[a][1], parts[b][1])):
                raise FacetDeclarationError(
                    f"the knowledge graphs {parts[a][0]} and {parts[b][0]} span the same "
                    "candidates (two graphs for one country?): merge them or restrict one"
                )
    return parts
