"""An evaluation record in caie-spec's layout (https://w3id.org/og-caie/epo#), for caie-spec's own shapes.

Two parts (docs/interop.md):

* what our record holds, mapped onto caie-spec's chain by ``queries/transforms/caie-export.rq`` (our IRIs kept);
* what caie-spec's shapes require and our record does not hold: the record bundle and its members, the parties
  and their roles, the contracting items (need, proposal, service agreement, declarations, statement of work,
  access to the test item), the population the domain expert speaks for, the DSO release's approval, the draft
  report and its computation (:mod:`.caie_declarations`). These are DECLARATIONS THE EXPORT ADDS: each is minted
  under ``{evaluation}/record/caie#`` (hash IRIs of the export's own URL, so they dereference to it), carries
  ``skos:editorialNote`` saying so, and is dated just before the step that needs it. They describe no agreement or
  party that the service recorded; a reader must not take them for facts.

The draft report's figures are those of our metric queries (``queries/coverage.rq``,
``queries/outcome-distribution.rq``) over the record: coverage by weight, shares by count of covered criteria, as
caie-spec's rule has them; only current attestations count, and only those are exported.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from pyoxigraph import NamedNode, Quad, QuerySolutions, QueryTriples, Store, Triple

from ..core import queries
from ..core.namespaces import PROV, RDFS
from ..core.store.base import bind
from .caie_declarations import CAIE, RDF_TYPE, Declarations, caie, prov, text

OGC = "https://w3id.org/og-caie/"
EXPORT_PATH = "/record/caie"
"""Where the export is served under the evaluation: the record bundle's IRI, and the base of what it declares."""


def caie_record(quads: list[Quad], evaluation: NamedNode) -> list[Triple]:
    """The record (``export.record_quads``) in caie-spec's layout: the mapped chain plus the export's declarations."""
    record = Store()
    record.bulk_extend(quads)  # the record's own named graphs, which the metric queries read
    # the mapping reads the record as one graph: the union of its named graphs as the default graph
    answer = record.query(
        bind(queries.load("transforms/caie-export"), {"evaluation": evaluation}), use_default_graph_as_union=True
    )
    if not isinstance(answer, QueryTriples):
        raise TypeError("queries/transforms/caie-export.rq must be a CONSTRUCT query")
    mapped: list[Triple] = list(answer)
    bundle = NamedNode(evaluation.value + EXPORT_PATH)
    declared = Declarations(bundle.value, mapped, _figures(record, evaluation)).triples()
    everything = list(dict.fromkeys(mapped + declared))
    return everything + _membership(everything, bundle)


def _figures(record: Store, evaluation: NamedNode) -> tuple[Fraction, dict[str, Fraction]]:
    """Coverage and the outcome shares (by count of covered criteria) of the record, by our metric queries."""
    [row] = _select(record, "coverage", evaluation)
    coverage = Fraction(Decimal(row["coveredWeight"].value)) / Fraction(Decimal(row["applicableWeight"].value))
    counts = {
        r["outcome"].value.rsplit("#", 1)[-1]: int(r["criteria"].value)
        for r in _select(record, "outcome-distribution", evaluation)
    }
    covered = int(row["covered"].value) or 1
    return coverage, {o: Fraction(counts.get(o, 0), covered) for o in ("passed", "failed", "cantTell")}


def _select(record: Store, name: str, evaluation: NamedNode) -> QuerySolutions:
    answer = record.query(bind(queries.load(name), {"evaluation": evaluation}))
    if not isinstance(answer, QuerySolutions):
        raise TypeError(f"queries/{name}.rq must be a SELECT query")
    return answer


def _membership(triples: list[Triple], record: NamedNode) -> list[Triple]:
    """The bundle and every item and agent as its member (caie-spec's ogc:inRecord)."""
    members = {
        t.subject
        for t in triples
        if t.predicate == RDF_TYPE
        and isinstance(t.subject, NamedNode)
        and not isinstance(t.object, Triple)
        and t.object.value.startswith((CAIE, PROV + "Agent"))
    }
    out = [
        Triple(record, RDF_TYPE, prov("Entity")),
        Triple(record, RDF_TYPE, prov("Bundle")),
        Triple(record, NamedNode(RDFS + "label"), text("the evaluation record in caie-spec's layout")),
        Triple(record, caie("independenceLevel"), caie("person")),
    ]
    return out + [
        Triple(m, NamedNode(OGC + "inRecord"), record) for m in sorted(members, key=lambda n: n.value) if m != record
    ]
