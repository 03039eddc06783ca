"""Shapes and judges graphs that nothing will read, reported rather than ignored (docs/new-domain.md "Graphs nothing
reads"): when such a graph is loaded (the ``/graphs`` write's answer) and when an envelope is signed off.

Who reads what, as the readers decide it:

- derivation reads the shapes graphs whose identifier starts with ``scenario-``, unless they conform to DSOs other
  than the scope's (:mod:`.inputs`);
- a knowledge graph's load reads the shapes its DSO names (``epo:knowledgeGraphShapes``, :mod:`..core.kg_shapes`);
  the engine's own shapes (the generic KG shapes, the record shapes) it reads from its files, and a stored copy of
  them is theirs;
- rule judges read the judges graphs conforming to the evaluation's DSO (``queries/judges-for-dso.rq``).

So a graph is unread when no DSO loaded now would have it read: a DSO loaded later can change that, which is why
sign-off reports again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from pyoxigraph import Literal, NamedNode
from rdflib import Graph
from rdflib.namespace import OWL, RDF

from ..core.catalog import CatalogEntry, GraphKind
from ..core.config import Credential
from ..core.graphs import GraphService
from ..core.kg_shapes import GENERIC
from ..core.store import Row
from ..core.validation import SHAPES_DIR
from ..credentials.signing import Signer
from ..scenarios.rules import SCENARIO_SHAPES_PREFIX
from .approvals import sign_off_envelope
from .model import ApprovalRecord


@dataclass(frozen=True)
class Unread:
    """A shapes or judges graph nothing will read, and why."""

    graph: str
    why: str

    def describe(self) -> str:
        return f"<{self.graph}> is read by nothing: {self.why}"


@dataclass
class _Declared:
    """What a graph declares that its readers go by (``queries/graph-readers.rq``)."""

    conforms_to: set[str]
    ontologies: set[str]
    kg_shapes_of: set[str]
    rules: int = 0


@cache
def engine_shapes() -> frozenset[str]:
    """The ontology IRIs of the shapes the engine applies from its own files."""
    files = (GENERIC, SHAPES_DIR / "record.ttl")
    return frozenset(str(s) for path in files for s in Graph().parse(path).subjects(RDF.type, OWL.Ontology))


def unread_graphs(graphs: GraphService, only: Sequence[str] | None = None) -> list[Unread]:
    """Every shapes and judges graph (those of ``only``, graph IRIs, when given) that no reader will read, by IRI."""
    entries = [
        entry
        for kind in (GraphKind.SHAPES, GraphKind.JUDGES)
        for entry in graphs.catalog(kind)
        if only is None or entry.graph in only
    ]
    if not entries:
        return []
    dsos = {entry.graph: entry.defines_ontology for entry in graphs.catalog(GraphKind.DSO)}
    declared: dict[str, _Declared] = defaultdict(lambda: _Declared(set(), set(), set()))
    for row in graphs.rows_over("graph-readers", ["graph"], [[NamedNode(entry.graph)] for entry in entries]):
        found = declared[_value(row, "graph")]
        for values, name in (
            (found.conforms_to, "conformsTo"),
            (found.ontologies, "ontology"),
            (found.kg_shapes_of, "kgShapesOf"),
        ):
            values.update({_value(row, name)} - {""})
        found.rules = max(found.rules, int(_value(row, "rules") or 0))
    loaded = {ontology for ontology in dsos.values() if ontology}
    reasons = ((entry, _why(entry, declared[entry.graph], loaded, set(dsos))) for entry in entries)
    return sorted((Unread(entry.graph, why) for entry, why in reasons if why), key=lambda unread: unread.graph)


def _value(row: Row, name: str) -> str:
    """A row's IRI or literal text, ``""`` where the row leaves it unbound."""
    term = row.get(name)
    return term.value if isinstance(term, (NamedNode, Literal)) else ""


def _why(entry: CatalogEntry, found: _Declared, loaded: set[str], dso_graphs: set[str]) -> str | None:
    """Why no reader reads the graph, or ``None`` when one does."""
    named = ", ".join(f"<{iri}>" for iri in sorted(found.conforms_to))
    if entry.kind is GraphKind.JUDGES:
        if not found.conforms_to:
            return (
                "its dcat:Dataset names no DSO (dcterms:conformsTo), and rule judges read a judges graph only "
                "for the DSO it names"
            )
        return (
            None
            if found.conforms_to & loaded
            else (
                f"it judges for {named} (dcterms:conformsTo), which no loaded DSO declares: load that DSO, or name one"
            )
        )
    if found.ontologies & engine_shapes() or found.kg_shapes_of & dso_graphs:
        return None  # knowledge-graph shapes: the engine's own, or those a loaded DSO names
    if entry.identifier.startswith(SCENARIO_SHAPES_PREFIX):
        return (
            None
            if not found.conforms_to or found.conforms_to & loaded
            else (
                f"its scenario rules are for {named} (dcterms:conformsTo), which no loaded DSO declares, so no "
                "derivation reads them: load that DSO, or name one"
            )
        )
    if found.rules:
        return (
            f"it holds {found.rules} scenario rule(s) (epo:ConsistencyRule), but derivation reads only the shapes "
            f"graphs whose identifier starts with {SCENARIO_SHAPES_PREFIX!r}: load it as "
            f"/graphs/shapes/{SCENARIO_SHAPES_PREFIX}{entry.identifier}"
        )
    ontology = ", ".join(f"<{iri}>" for iri in sorted(found.ontologies)) or "none (no owl:Ontology)"
    return (
        f"it is no scenario rules graph (derivation reads only shapes/{SCENARIO_SHAPES_PREFIX}*), and no loaded "
        f"DSO names its ontology, {ontology}, as its knowledge graphs' shapes (epo:knowledgeGraphShapes)"
    )


def sign_off_reporting_unread(
    graphs: GraphService,
    evaluation_id: str,
    credential: Credential | None,
    comment: str | None = None,
    signer: Signer | None = None,
) -> tuple[ApprovalRecord, list[Unread]]:
    """The envelope's sign-off (:func:`.approvals.sign_off_envelope`), and the graphs nothing reads as it is made:
    rules or judges meant for this evaluation may be among them, and the sign-off pins what derivation reads."""
    record = sign_off_envelope(graphs, evaluation_id, credential, comment, signer)
    return record, unread_graphs(graphs)
