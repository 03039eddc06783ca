"""Importing an outside evaluation record (a caie-spec record, another deployment's export) as a new evaluation.

This is the only way a record made elsewhere enters the store: the generic graph API never writes
evaluation graphs. Nothing is stored unless the record parses, its identifier is new, and it conforms to
the published record shapes (``shapes/record.ttl``). The stored graph says who imported it, when, and
(when the client says) where it came from, so the import is attributed to the importer and never passes
for a record made here.

A record in caie-spec's vocabulary must also conform to caie-spec's own shapes (:mod:`.caie`), and is stored
with the graph ``{evaluation}/aligned`` beside it: the record read in our vocabulary
(``queries/transforms/caie-materialize.rq``), so that our metric queries recompute its numbers. The
imported graph itself stays exactly the record as sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from urllib.parse import urlsplit

import rdflib
from pyoxigraph import Literal, NamedNode, RdfFormat, Triple

from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import BadRequest, Conflict, PayloadTooLarge, Unprocessable
from ..core.graph_edits import GraphEdit, GraphRef
from ..core.graphs import GraphService
from ..core.namespaces import DCTERMS, PROV, XSD
from ..core.rdf import parse_triples, to_rdflib
from ..core.roles import require_importer
from ..core.validation import default_record_shapes, validate_record
from ..core.validation_report import ValidationOutcome, Violation
from . import caie

ATTRIBUTED_TO = NamedNode(PROV + "wasAttributedTo")
GENERATED_AT = NamedNode(PROV + "generatedAtTime")
SOURCE = NamedNode(DCTERMS + "source")
PRIMARY_SOURCE = NamedNode(PROV + "hadPrimarySource")
PROVENANCE = frozenset({ATTRIBUTED_TO, GENERATED_AT, SOURCE, PRIMARY_SOURCE})
"""What the import states about the stored graph; a record that states it itself is refused."""

_NOT_IN_IRI = re.compile(r'[\x00-\x20<>"{}|\\^`]')
"""Characters RFC 3987 does not allow anywhere in an IRI."""
_SHOWN_VIOLATIONS = 5


@dataclass(frozen=True)
class ImportedRecord:
    """The new evaluation's graph as stored: its catalog digest and size include the import's provenance."""

    evaluation_id: str
    graph: str
    triples: int
    digest: str
    importer: str
    importer_iri: str
    imported_at: datetime
    source: str | None


def import_record(
    graphs: GraphService,
    evaluation_id: str,
    data: bytes,
    rdf_format: RdfFormat,
    importer: Credential | None,
    *,
    source: str | None = None,
    title: str | None = None,
    spec_record_max_triples: int | None = None,
) -> ImportedRecord:
    """Store ``data`` as the new evaluation ``evaluation_id``, after every check; 409 if the identifier is taken."""
    agent = require_importer(importer)
    ref = graphs.ref(GraphKind.EVALUATION.value, evaluation_id)
    source_iri = None if source is None else source_iri_of(source)
    _must_be_new(graphs, ref)
    record = parse_triples(data, rdf_format, ref.iri.value, graphs.rdf_limits)
    if spec_record_max_triples is not None and len(record) > spec_record_max_triples and caie.is_caie_record(record):
        raise PayloadTooLarge(
            f"the record has {len(record)} triples in caie-spec's vocabulary; this deployment "
            f"checks caie-spec records of at most {spec_record_max_triples} triples against "
            "caie-spec's shapes (CAIE_SPEC_RECORD_MAX_TRIPLES), whose checks take time that grows "
            "with the square of the record's size"
        )
    _check(record, ref)
    imported_at = graphs.clock()
    agent_iri = graphs.agent_iri(agent.agent)
    provenance = _provenance(ref, NamedNode(agent_iri), imported_at, source_iri)
    edits = [
        GraphEdit(
            ref,
            insert=record + provenance,
            replace=True,
            title=title or f"{ref.kind.value}/{ref.identifier}, imported by {agent.agent}",
        )
    ]
    if caie.is_caie_record(record):
        aligned = graphs.member(ref.kind, f"{ref.identifier}/aligned")
        edits.append(
            GraphEdit(
                aligned,
                insert=caie.materialize(record, ref.iri),
                batch_of=ref.iri.value,
                title=f"{ref.kind.value}/{ref.identifier}, the record read in the OB-CAIE EPO",
            )
        )
    entry = graphs.apply_edits(edits, agent, precondition=lambda _: _must_be_new(graphs, ref))[0]
    return ImportedRecord(
        ref.identifier, ref.iri.value, entry.triples, entry.digest, agent.agent, agent_iri, imported_at, source
    )


def source_iri_of(source: str) -> NamedNode:
    """The record's origin as an IRI, or 400: only absolute http(s) IRIs name where a record came from."""
    parts = urlsplit(source)
    if parts.scheme not in ("http", "https") or not parts.netloc or _NOT_IN_IRI.search(source):
        raise BadRequest(
            f"source {source!r} is not an absolute http(s) IRI: name where the record came from, "
            "e.g. https://example.org/records/evaluation.ttl"
        )
    try:
        return NamedNode(source)
    except ValueError as error:
        raise BadRequest(f"source {source!r} is not a valid IRI: {error}") from error


def _must_be_new(graphs: GraphService, ref: GraphRef) -> None:
    """An import makes a new evaluation; it never replaces or merges into one."""
    if graphs.find(ref) is not None:
        raise Conflict(
            f"evaluation {ref.identifier!r} already exists (<{ref.iri.value}>): "
            "import under a new id; an existing record changes only through its lifecycle operations"
        )


def _check(record: list[Triple], ref: GraphRef) -> None:
    """422 unless the record is non-empty, leaves the import's provenance to the import, and meets the record shapes."""
    if not record:
        raise Unprocessable("the record is empty: send the evaluation record's triples")
    stated = sorted({t.predicate.value for t in record if t.subject == ref.iri and t.predicate in PROVENANCE})
    if stated:
        raise Unprocessable(
            f"the record states {', '.join(stated)} of <{ref.iri.value}> itself; "
            "the import records who imported it, when and from where: remove these statements"
        )
    graph = to_rdflib(record)
    outcome = validate_record(graph, default_record_shapes())
    if not outcome.conforms:
        raise _refusal("the record does not conform to the record shapes (shapes/record.ttl)", outcome)
    if caie.is_caie_record(record):
        _check_caie(graph)


def _check_caie(graph: rdflib.Graph) -> None:
    """422 unless a record in caie-spec's vocabulary conforms to caie-spec's shapes, each failed shape named."""
    spec = caie.load_spec()
    if spec is None:
        raise Unprocessable(
            f"the record is in caie-spec's vocabulary ({caie.CAIE_BASE}) and this deployment cannot "
            f"check it: caie-spec's shapes, EPO and model extract are not in {caie.spec_dir()} "
            "(set CAIE_SPEC_DIR); nothing was stored"
        )
    outcome = caie.validate(graph, spec)
    if outcome.conforms:
        return
    named = tuple(replace(v, source_shape=caie.shape_name(v, spec)) for v in outcome.violations)
    failed = ", ".join(caie.failed_shapes(outcome, spec))
    raise _refusal(
        f"the record does not conform to caie-spec's shapes (failed: {failed})", replace(outcome, violations=named)
    )


def _refusal(what: str, outcome: ValidationOutcome) -> Unprocessable:
    """422 naming the first violations (focus node, message, and a caie-spec shape's name) and counting the rest."""

    def shown(v: Violation) -> str:
        shape = f" ({v.source_shape})" if (v.source_shape or "").startswith("ogc:") else ""
        return f"{v.focus_node}: {v.message}{shape}"

    listed = "; ".join(shown(v) for v in outcome.violations[:_SHOWN_VIOLATIONS])
    more = len(outcome.violations) - _SHOWN_VIOLATIONS
    return Unprocessable(
        f"{what}: {len(outcome.violations)} violation(s): {listed}{f'; and {more} more' if more > 0 else ''}",
        detail=outcome.violations,
    )


def _provenance(ref: GraphRef, agent: NamedNode, at: datetime, source: NamedNode | None) -> list[Triple]:
    """The stored graph is attributed to the importer, dated, and linked to its origin when known."""
    triples = [
        Triple(ref.iri, ATTRIBUTED_TO, agent),
        Triple(ref.iri, GENERATED_AT, Literal(at.isoformat(), datatype=NamedNode(XSD + "dateTime"))),
    ]
    if source is not None:
        triples += [Triple(ref.iri, SOURCE, source), Triple(ref.iri, PRIMARY_SOURCE, source)]
    return triples
