"""What a graph's content must be before it is stored, by kind: an ontology or DSO declares its ontology, a
shapes graph declares a shape, a judges graph names its DSO, a knowledge graph conforms to its DSO.

:class:`GraphChecks` is a part of :class:`.graphs.GraphService` (its base class), kept apart to keep each file
short; the functions below read a graph's own title and ontology from its triples.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

from pyoxigraph import NamedNode, Triple

from .catalog import Catalog, CatalogEntry, GraphKind
from .digest import blank_skolems
from .errors import Forbidden, Unprocessable
from .graph_edits import GraphRef
from .namespaces import DCAT, DCTERMS, OWL, RDF, RDFS, SH
from .rdf import to_rdflib
from .store import Row, Store, Term
from .validation_report import ValidationOutcome

_TYPE = RDF + "type"


class KnowledgeGraphInvalid(Unprocessable):
    """A knowledge graph that violates its DSO; ``detail`` is the :class:`.validation_report.ValidationOutcome`."""

    def __init__(self, message: str, *, detail: ValidationOutcome) -> None:
        super().__init__(message, detail=detail)
        self.outcome = detail


class GraphChecks(ABC):
    """The kind-specific checks of a graph's content before it is stored (see the module docstring)."""

    _store: Store
    _catalog: Catalog

    @abstractmethod
    def ref(self, kind: str, identifier: str) -> GraphRef: ...

    @abstractmethod
    def rows(
        self, name: str, bindings: Mapping[str, Term], *, limit: int | None = None, offset: int = 0
    ) -> list[Row]: ...

    @abstractmethod
    def find_graph(self, iri: str) -> CatalogEntry | None: ...

    def _check(self, ref: GraphRef, content: list[Triple], dso: str | None) -> str | None:
        """Kind-specific checks before storing; returns the DSO a knowledge graph conforms to."""
        if ref.kind in (GraphKind.ONTOLOGY, GraphKind.DSO) and ontology_of(content) is None:
            raise Unprocessable(f"a graph of kind {ref.kind.value!r} must declare one owl:Ontology")
        if ref.kind is GraphKind.SHAPES and not any(
            t.predicate.value == _TYPE and _text(t.object).startswith(SH) for t in content
        ):
            raise Unprocessable("a shapes graph must declare at least one sh:NodeShape or sh:PropertyShape")
        if ref.kind is GraphKind.JUDGES and not _names_its_dso(content):  # else it would judge for no DSO, unseen
            raise Unprocessable(
                "a judges graph must name the DSO its rules judge for: dcterms:conformsTo <DSO ontology "
                "IRI> on its dcat:Dataset node (docs/judgments.md \"Which DSO a judges graph serves\")"
            )
        if ref.kind is not GraphKind.KG:
            return None
        from . import validation  # owlrl and pySHACL imported by the first KG write, not by every reader (`caie query`)
        from .kg_shapes import kg_shapes, stored_shapes

        dso_entry = self._dso_for(content, dso)
        dso_graph = to_rdflib(blank_skolems(self._store.graph_triples(NamedNode(dso_entry.graph))))
        shapes = kg_shapes(dso_graph, stored_shapes(self))  # the generic ones and those the DSO declares
        outcome = validation.validate_kg(to_rdflib(content), dso_graph, shapes)
        if not outcome.conforms:
            count = len(outcome.violations)
            first = outcome.violations[0].message if outcome.violations else "see the report"
            raise KnowledgeGraphInvalid(
                f"the knowledge graph violates its DSO <{dso_entry.defines_ontology}>: {count} violation(s), first: {first}",
                detail=outcome,
            )
        return dso_entry.defines_ontology

    def _dso_for(self, content: list[Triple], dso: str | None) -> CatalogEntry:
        if dso is not None:
            entry = self._catalog.entry(self.ref(GraphKind.DSO.value, dso).iri)
            if entry is None:
                raise Unprocessable(f"no DSO graph {dso!r} is loaded: load it under /graphs/dso/{dso} first")
            return entry
        declared = {
            t.object.value
            for t in content
            if t.predicate.value == DCTERMS + "conformsTo" and isinstance(t.object, NamedNode)
        }
        for ontology in sorted(declared):
            entry = self._catalog.graph_defining(ontology, GraphKind.DSO)
            if entry is not None:
                return entry
        if declared:
            raise Unprocessable(
                f"the knowledge graph conforms to {', '.join(sorted(declared))}, but no loaded DSO defines it"
            )
        raise Unprocessable("a knowledge graph must name its DSO: dcterms:conformsTo <DSO ontology IRI>, or ?dso=<id>")


def _text(term: Term) -> str:
    """A term's value; the empty string for a quoted triple (RDF-star, which an upload may hold), which has none."""
    return "" if isinstance(term, Triple) else term.value


def refuse_record(ref: GraphRef) -> None:
    """Evaluation records change only through the lifecycle's own operations, which check roles and rules."""
    if ref.kind is GraphKind.EVALUATION:
        raise Forbidden(
            f"<{ref.iri.value}> is part of an evaluation record: records change only through the "
            "lifecycle operations (scope, envelope, approvals, plans, exclusions), and outside "
            "records come in through the import, which validates them"
        )


def ontology_of(content: list[Triple]) -> str | None:
    """The ontology the graph declares (the first ``owl:Ontology`` IRI), if any."""
    ontologies = sorted(
        t.subject.value
        for t in content
        if t.predicate.value == _TYPE and _text(t.object) == OWL + "Ontology" and isinstance(t.subject, NamedNode)
    )
    return ontologies[0] if ontologies else None


def _names_its_dso(content: list[Triple]) -> bool:
    """Whether a dcat:Dataset or owl:Ontology node of the graph declares ``dcterms:conformsTo`` an IRI
    (``queries/judges-for-dso.rq`` reads the same)."""
    declared = {
        t.subject
        for t in content
        if t.predicate.value == _TYPE and _text(t.object) in (DCAT + "Dataset", OWL + "Ontology")
    }
    return any(
        t.predicate.value == DCTERMS + "conformsTo" and t.subject in declared and isinstance(t.object, NamedNode)
        for t in content
    )


def title_of(content: list[Triple], ref: GraphRef) -> str:
    """The graph's own title: of the graph IRI, its ontology or its dcat:Dataset, else ``kind/id``."""
    datasets = {_text(t.subject) for t in content if t.predicate.value == _TYPE and _text(t.object) == DCAT + "Dataset"}
    subjects = {ref.iri.value, ontology_of(content), *datasets}
    for predicate in (DCTERMS + "title", RDFS + "label"):
        for triple in content:
            subject, value = triple.subject, triple.object
            if (
                triple.predicate.value == predicate
                and isinstance(subject, NamedNode)
                and subject.value in subjects
                and not isinstance(value, Triple)
            ):
                return value.value
    return f"{ref.kind.value}/{ref.identifier}"
