"""Pinned inputs: the graphs scenario derivation reads, recorded with the digests they had when they were used.

A derivation reads the scope's DSO, each of its knowledge graphs and every scenario shapes graph in the
store (``shapes/scenario-*``), and every opening-turn templates graph (``templates/*``: their languages decide
which probes a plan can make, docs/templates.md), but for the shapes and template sets made for another DSO
(their ontology or set declares ``dcterms:conformsTo`` DSOs other than the scope's, ``queries/inputs-for-other-dsos.rq``):
two domains share a store without either reading or pinning the other's rules. The envelope sign-off pins each of them (IRI, catalog digest, catalog
``dcterms:modified``), and so do every plan and every derivation. Planning compares the sign-off's pins
with the catalog: an input changed, removed or added since the sign-off is refused with 409 until a new
envelope version is signed off, which pins what is current then. A derivation is thus reproducible from
the record: it names exactly the graph contents (and, with its plan, the seed) it used.

As RDF (PROV-O's qualified pattern, with IRIs rather than blank nodes)::

    <carrier> epo:inputPin <carrier/inputs/1> ; prov:wasInfluencedBy <graph> .
    <carrier/inputs/1> a epo:InputPin ; prov:entity <graph> ;
        epo:inputDigest "…" ; epo:inputModified "…"^^xsd:dateTime .

A derivation is a ``prov:Activity``, so it also states ``prov:used <graph>`` and ``prov:qualifiedUsage``
its pins (typed ``prov:Usage``). Sign-offs and plans are entities (PROV-O makes Activity and Entity
disjoint), so they are influenced by their inputs rather than using them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from pyoxigraph import Literal, NamedNode, Triple

from ..core.catalog import CatalogEntry, GraphKind
from ..core.errors import Conflict
from ..core.graph_edits import GraphRef
from ..core.graphs import GraphService
from ..core.namespaces import EPO, PROV, RDF, XSD
from ..scenarios.rules import SCENARIO_SHAPES_PREFIX
from ..scope.model import Scope
from .model import ApprovalRecord, EnvelopeStatus


@dataclass(frozen=True)
class Pin:
    """One input graph as the catalog described it when it was used."""

    graph: str
    digest: str
    modified: datetime


@dataclass(frozen=True)
class InputChange:
    """An input whose digest is not the pinned one; ``None`` for a side where the graph is absent."""

    graph: str
    pinned: str | None
    current: str | None

    def describe(self) -> str:
        if self.pinned is None:
            return f"<{self.graph}> was not pinned and is now an input (digest {self.current})"
        if self.current is None:
            return f"<{self.graph}> (pinned digest {self.pinned}) no longer exists"
        return f"<{self.graph}> changed from digest {self.pinned} to {self.current}"


def _pin(entry: CatalogEntry) -> Pin:
    return Pin(entry.graph, entry.digest, entry.modified)


@dataclass(frozen=True)
class Inputs:
    """The graphs a derivation of a scope reads, and each one's current pin (``None``: it does not exist)."""

    dso: GraphRef
    kgs: tuple[GraphRef, ...]
    shapes: tuple[GraphRef, ...]
    pins: dict[str, Pin | None]
    templates: tuple[GraphRef, ...] = ()


def current_inputs(graphs: GraphService, scope: Scope) -> Inputs:
    """The scope's DSO and knowledge graphs and every scenario shapes and templates graph the catalog lists that
    was not made for another DSO, pinned now."""
    dso = graphs.ref(GraphKind.DSO.value, scope.dso)
    foreign = {row["graph"].value for row in graphs.rows("inputs-for-other-dsos", {"dsoGraph": dso.iri})}
    entries = {
        entry.graph: entry
        for kind in (GraphKind.DSO, GraphKind.KG, GraphKind.SHAPES, GraphKind.TEMPLATES)
        for entry in graphs.catalog(kind)
        if entry.graph not in foreign or kind in (GraphKind.DSO, GraphKind.KG)
    }
    kgs = tuple(graphs.ref(GraphKind.KG.value, kg) for kg in scope.knowledge_graphs)
    shapes = tuple(
        graphs.ref(GraphKind.SHAPES.value, e.identifier)
        for e in entries.values()
        if e.kind is GraphKind.SHAPES and e.identifier.startswith(SCENARIO_SHAPES_PREFIX)
    )
    templates = tuple(
        graphs.ref(GraphKind.TEMPLATES.value, e.identifier) for e in entries.values() if e.kind is GraphKind.TEMPLATES
    )
    named = sorted({ref.iri.value for ref in (dso, *kgs, *shapes, *templates)})
    return Inputs(
        dso, kgs, shapes, {graph: (_pin(entries[graph]) if graph in entries else None) for graph in named}, templates
    )


def pin_of(graphs: GraphService, graph: str) -> Pin | None:
    """``graph`` pinned as the catalog describes it now (``None``: it does not exist)."""
    entry = graphs.find_graph(graph)
    return _pin(entry) if entry else None


def present(evaluation_id: str, inputs: Mapping[str, Pin | None]) -> tuple[Pin, ...]:
    """The pins of ``inputs``; 409 naming any graph the scope names that does not exist."""
    missing = [graph for graph, pin in inputs.items() if pin is None]
    if missing:
        raise Conflict(
            f"evaluation {evaluation_id!r} reads graphs that do not exist: "
            + ", ".join(f"<{g}>" for g in missing)
            + "; load them or change the scope",
            detail=missing,
        )
    return tuple(pin for pin in inputs.values() if pin is not None)


def changes(pinned: Sequence[Pin], current: Mapping[str, Pin | None]) -> list[InputChange]:
    """Every graph pinned or current whose digest differs (absent on either side counts as a change)."""
    before = {pin.graph: pin.digest for pin in pinned}
    now = {graph: pin.digest if pin else None for graph, pin in current.items()}
    return [
        InputChange(graph, before.get(graph), now.get(graph))
        for graph in sorted(before.keys() | now.keys())
        if before.get(graph) != now.get(graph)
    ]


def changed_since(graphs: GraphService, pinned: Sequence[Pin]) -> list[InputChange]:
    """The pinned graphs whose catalog digest is not the pinned one now (a deleted graph counts)."""
    current = {pin.graph: graphs.find_graph(pin.graph) for pin in pinned}
    return changes(pinned, {graph: _pin(entry) if entry else None for graph, entry in current.items()})


def governing_sign_off(found: Iterable[ApprovalRecord], status: EnvelopeStatus) -> ApprovalRecord | None:
    """The sign-off that froze the current envelope content: the first passed one naming its digest."""
    return next(
        (
            r
            for r in found
            if r.kind == "envelope-sign-off"
            and r.subject == status.envelope
            and r.envelope_digest == status.digest
            and r.outcome == "passed"
        ),
        None,
    )


def recorded_pins(graphs: GraphService, carrier: str) -> tuple[Pin, ...]:
    """The inputs a sign-off, plan or derivation pinned (queries/pinned-inputs.rq)."""
    return tuple(
        Pin(row["graph"].value, row["digest"].value, datetime.fromisoformat(row["modified"].value))
        for row in graphs.rows("pinned-inputs", {"carrier": NamedNode(carrier)})
    )


def require_unchanged(
    graphs: GraphService,
    evaluation_id: str,
    status: EnvelopeStatus,
    sign_off: ApprovalRecord,
    inputs: Inputs,
    refused: str,
) -> tuple[Pin, ...]:
    """The sign-off's pins, when every input still has its pinned digest; else 409 naming each change.

    ``refused`` says what cannot be done then (``"make a plan"``), for the message.
    """
    pinned = recorded_pins(graphs, sign_off.iri)
    found = changes(pinned, inputs.pins)
    if found:
        why = (
            "the sign-off pinned no inputs (it was made before inputs were pinned)"
            if not pinned
            else "; ".join(change.describe() for change in found)
        )
        raise Conflict(
            f"evaluation {evaluation_id!r}: cannot {refused}: the inputs of envelope v{status.version} changed after "
            f"it was signed off: {why}. Start a new envelope version (POST /evaluations/{evaluation_id}/envelope/versions), "
            f"assess it and sign it off to pin the current inputs",
            detail=[change.describe() for change in found],
        )
    return pinned


def guards(pins: Iterable[Pin]) -> dict[str, str]:
    """Write guards holding each input at its pinned digest until the write commits."""
    return {pin.graph: pin.digest for pin in pins}


def pin_triples(carrier: str, pins: Iterable[Pin], *, activity: bool = False) -> list[Triple]:
    """The RDF of ``carrier``'s pins (see the module docstring): nodes ``{carrier}/inputs/{n}`` in IRI order."""
    owner = NamedNode(carrier)
    link = NamedNode(PROV + ("used" if activity else "wasInfluencedBy"))
    out: list[Triple] = []
    for number, pin in enumerate(sorted(pins, key=lambda p: p.graph), start=1):
        node, graph = NamedNode(f"{carrier}/inputs/{number}"), NamedNode(pin.graph)
        out += [
            Triple(owner, NamedNode(EPO + "inputPin"), node),
            Triple(owner, link, graph),
            Triple(node, NamedNode(RDF + "type"), NamedNode(EPO + "InputPin")),
            Triple(node, NamedNode(PROV + "entity"), graph),
            Triple(node, NamedNode(EPO + "inputDigest"), Literal(pin.digest)),
            Triple(
                node,
                NamedNode(EPO + "inputModified"),
                Literal(pin.modified.isoformat(), datatype=NamedNode(XSD + "dateTime")),
            ),
        ]
        if activity:
            out += [
                Triple(owner, NamedNode(PROV + "qualifiedUsage"), node),
                Triple(node, NamedNode(RDF + "type"), NamedNode(PROV + "Usage")),
            ]
    return out
