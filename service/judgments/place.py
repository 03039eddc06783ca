"""The place a probe is graded against, and the languages spoken there, as the DSO declares them.

A check that compares a reply with "the country's" facts needs the one place the probe's knowledge graph
describes. No code names its class: the DSO already says it in its facet declarations (docs/blocking.md,
docs/domain.md "What judging reads"). The facet whose ``epo:scenarioProperty`` is ``epo:country``
takes its values from the place class (``epo:valuesFrom``), and each knowledge graph describes one such place;
the facet whose ``epo:scenarioProperty`` is ``epo:language`` reaches its values from the place through the
properties it names in ``epo:valuesPerKnowledgeGraphVia`` (the place's languages).
"""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import Graph, URIRef
from rdflib.namespace import RDF
from rdflib.term import Identifier, Node

from ..core.errors import Unprocessable
from ..core.namespaces import EPO
from ..scenarios.facets import read_specs
from .checks import label
from .expected import per_graphs
from .model import ProbeContext


@dataclass(frozen=True)
class Declared:
    """What the DSO declares of places: the place class (``None``: no place facet), the language properties and
    the language class (``None``: no language facet)."""

    place_class: URIRef | None
    language_properties: tuple[URIRef, ...]
    language_class: URIRef | None = None


@dataclass(frozen=True)
class Place:
    """The one place a knowledge graph describes, with its label for rationales."""

    node: Node
    label: str


def declared(dso: Graph) -> Declared:
    """The DSO's place class and language properties, read once per graph."""
    return per_graphs((dso,), _declared)


def _declared(dso: Graph) -> Declared:
    specs = read_specs(dso)
    place = next((spec for spec in specs if str(spec.epo_property) == EPO + "country"), None)
    language = next((spec for spec in specs if str(spec.epo_property) == EPO + "language"), None)
    return Declared(
        place.value_class if place is not None else None,
        language.via if language is not None else (),
        language.value_class if language is not None else None,
    )


def place(context: ProbeContext) -> Place:
    """The one place of the DSO's place class the probe's knowledge graph describes; 422 saying why there is none."""
    found = find_place(context.dso, context.country)
    if isinstance(found, str):
        raise Unprocessable(f"the probe's knowledge graph must describe one place to judge against: {found}")
    return found


def find_place(dso: Graph, graph: Graph) -> Place | str:
    """The one place of ``dso``'s place class that ``graph`` describes, or why there is none (the DSO declares no
    place class, or the graph does not describe one), read once per pair of graphs."""
    return per_graphs((dso, graph), _place)


def _place(dso: Graph, graph: Graph) -> Place | str:
    kind = declared(dso).place_class
    if kind is None:
        return (
            "the DSO declares no facet with epo:scenarioProperty epo:country, whose epo:valuesFrom is the place class"
        )
    nodes = sorted({s for s in graph.subjects(RDF.type, kind) if isinstance(s, Identifier)})
    if len(nodes) != 1:
        return f"it describes {len(nodes)} of {kind.n3()}"
    return Place(nodes[0], label(graph, nodes[0]) or str(nodes[0]))


def places(context: ProbeContext) -> tuple[Place, ...]:
    """The places the probe's knowledge graph and the evaluation's other ones describe, one each at most: what a
    reply may name a place by (their labels)."""
    return tuple(
        found
        for graph in (context.country, *context.others)
        if isinstance(found := find_place(context.dso, graph), Place)
    )
