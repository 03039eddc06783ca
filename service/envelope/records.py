"""Storing and reading an evaluation's scope and envelope in its graph, each write one checked transaction.

Checks run before anything is written; the write's precondition re-reads the graph under the write
lock and refuses (409) when it changed meanwhile or the envelope was signed off, so a check and its
write cannot interleave with another writer. The diffs and their guards are :mod:`.changes`; an envelope
version is read back by :mod:`.rdf_read`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pyoxigraph import NamedNode, RdfFormat, Triple

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import Conflict, NotFound, Unprocessable
from ..core.graph_edits import GraphRef
from ..core.graphs import GraphService
from ..core.memo import Recent
from ..core.namespaces import EPO
from ..core.rdf import parse_triples
from ..scope.model import Scope
from . import checks
from .changes import Change, envelope_change, exists_guard, scope_change
from .model import Envelope, EnvelopeContent, Evaluation
from .rdf import (
    WRITTEN,
    Index,
    Iris,
    dated,
    digest_triple,
    envelope_digest,
    envelope_triples,
    envelope_versions,
    epo,
    owned_by,
)
from .rdf_read import current_envelope_iri, read_content, read_envelope
from .scope_rdf import read_scope, scope_triples

AUTHORS = ("evaluation_operator", "domain_expert")
"""Who may write a scope or envelope (admin always may)."""

_SERVER_MAINTAINED = {EPO + "envelopeDigest", EPO + "configurationDigest", WRITTEN}


def iris_for(graphs: GraphService, evaluation_id: str) -> Iris:
    """The evaluation's IRIs (400 for an identifier that cannot be a path segment)."""
    iri = graphs.member(GraphKind.EVALUATION, evaluation_id).iri.value
    return Iris(iri[: -len(f"evaluations/{evaluation_id}")], evaluation_id)


def graph_ref(graphs: GraphService, evaluation_id: str) -> GraphRef:
    return graphs.member(GraphKind.EVALUATION, evaluation_id)


def signed_off_versions(graphs: GraphService, iris: Iris, index: Index) -> set[str]:
    """The envelope versions whose present content an organizational expert signed off
    (queries/envelope-sign-offs.rq; each version's digest recomputed from the record)."""
    signed = set()
    for row in graphs.rows("envelope-sign-offs", {"evaluation": NamedNode(iris.evaluation)}):
        env = row["envelope"].value
        if row["digest"].value == envelope_digest(env, [t for t in index.triples if owned_by(env, t)]):
            signed.add(env)
    return signed


def read_evaluation(iris: Iris, triples: list[Triple]) -> Evaluation | None:
    index = Index(triples)
    scope = read_scope(iris, index)
    if scope is None:
        return None
    current = current_envelope_iri(iris, index)
    versions = tuple(int(v.rsplit("/v", 1)[1]) for v in envelope_versions(iris, index))
    return Evaluation(iris.evaluation, scope, read_envelope(current, index) if current else None, versions)


def load(graphs: GraphService, evaluation_id: str) -> tuple[Iris, Index, Evaluation]:
    """The evaluation's graph, indexed, and what it states, or 404."""
    iris = iris_for(graphs, evaluation_id)
    triples = graphs.triples(graph_ref(graphs, evaluation_id))
    evaluation = read_evaluation(iris, triples)
    if evaluation is None:
        raise NotFound(f"no evaluation {evaluation_id!r}: POST /evaluations creates one")
    return iris, Index(triples), evaluation


_LOADED: Recent[tuple[Any, ...], tuple[Iris, Index, Evaluation]] = Recent(16)
"""Head graphs read (:func:`load`), by IRI and catalog digest."""
_ENVELOPES: Recent[tuple[Any, ...], tuple[Envelope, tuple[Triple, ...]]] = Recent(16)
"""Envelope versions read, by head graph IRI, catalog digest and version asked for (None: the current one)."""
T = TypeVar("T")


def _kept(
    graphs: GraphService,
    evaluation_id: str,
    memo: Recent[tuple[Any, ...], T],
    extra: tuple[Any, ...],
    read: Callable[[], T],
) -> T:
    """``read()``, kept in ``memo`` by the head graph's catalog digest (every write through the service moves it):
    parsing a 1,000-criterion head graph and digesting its envelope take about 0.5 s each, reads ask for them on
    every request. Kept only when the digest read before and after is the same, so a write in between keeps nothing."""
    ref = graph_ref(graphs, evaluation_id)
    before = graphs.find(ref)
    if before is None:
        return read()
    key = (ref.iri.value, before.digest, *extra)
    found = memo.get(key)
    if found is None:
        found = read()
        after = graphs.find(ref)
        if after is not None and after.digest == before.digest:
            memo.put(key, found)
    return found


def _loaded(graphs: GraphService, evaluation_id: str) -> tuple[Iris, Index, Evaluation]:
    """:func:`load`, kept: for reads only (a write reads the graph afresh under its precondition)."""
    return _kept(graphs, evaluation_id, _LOADED, (), lambda: load(graphs, evaluation_id))


def get_evaluation(graphs: GraphService, evaluation_id: str) -> Evaluation:
    return _loaded(graphs, evaluation_id)[2]


def envelope_at(graphs: GraphService, evaluation_id: str, version: int | None = None) -> tuple[Envelope, list[Triple]]:
    """An envelope version (the current one by default) and its triples, or 404."""

    def read() -> tuple[Envelope, tuple[Triple, ...]]:
        iris, index, _ = _loaded(graphs, evaluation_id)
        iri = iris.envelope(version) if version is not None else current_envelope_iri(iris, index)
        if iri is None or not index.has_type(iri, EPO + "OperationalEnvelope"):
            which = f"version {version} of the envelope" if version else "an envelope"
            raise NotFound(
                f"evaluation {evaluation_id!r} has no {which}: PUT /evaluations/{evaluation_id}/envelope writes it"
            )
        return read_envelope(iri, index), tuple(t for t in index.triples if owned_by(iri, t))

    envelope, triples = _kept(graphs, evaluation_id, _ENVELOPES, (version,), read)
    return envelope, list(triples)


# ------------------------------------------------------------------------------------------- checks


def _dso_terms(graphs: GraphService, dso: str) -> set[str]:
    entry = graphs.find(graphs.member(GraphKind.DSO, dso)) if checks.IDENTIFIER.match(dso) else None
    if entry is None:
        raise Unprocessable(f"the DSO {dso!r} is not loaded: PUT it to /graphs/dso/{dso} first")
    return checks.declared_terms(graphs.triples(graphs.member(GraphKind.DSO, dso)))


def validate_scope(graphs: GraphService, scope: Scope) -> None:
    """Every check of :func:`checks.check_scope`, after the DSO and KGs are found loaded and consistent."""
    dso_terms = _dso_terms(graphs, scope.dso)
    dso_entry = graphs.find(graphs.member(GraphKind.DSO, scope.dso))
    assert dso_entry is not None
    kg_terms: set[str] = set()
    problems = []
    if not scope.knowledge_graphs:
        problems.append("an evaluation needs at least one context knowledge graph")
    for kg in scope.knowledge_graphs:
        entry = graphs.find(graphs.member(GraphKind.KG, kg)) if checks.IDENTIFIER.match(kg) else None
        if entry is None:
            problems.append(f"the knowledge graph {kg!r} is not loaded: PUT it to /graphs/kg/{kg} first")
        elif entry.conforms_to != dso_entry.defines_ontology:
            problems.append(
                f"the knowledge graph {kg!r} conforms to <{entry.conforms_to}>, not to the DSO {scope.dso!r} <{dso_entry.defines_ontology}>"
            )
        else:
            kg_terms |= checks.declared_terms(graphs.triples(graphs.member(GraphKind.KG, kg)))
    checks.raise_if(problems, "scope")
    checks.check_scope(scope, dso_terms, kg_terms)


def validate_envelope(graphs: GraphService, scope: Scope, content: EnvelopeContent) -> None:
    checks.check_envelope(content, _dso_terms(graphs, scope.dso), scope.dso)


# ------------------------------------------------------------------------------------------- operations


def put_scope(
    graphs: GraphService, scope: Scope, agent: Credential, *, must_be_new: bool = False
) -> tuple[Evaluation, bool]:
    """Create or replace the evaluation's scope (its envelope and approvals stay); whether it was created."""
    require(agent, *AUTHORS)
    iris = iris_for(graphs, scope.id)
    triples = graphs.triples(graph_ref(graphs, scope.id))
    index = Index(triples)
    exists = index.has_type(iris.evaluation, EPO + "Evaluation")
    if exists and must_be_new:
        raise Conflict(f"evaluation {scope.id!r} exists: PUT /evaluations/{scope.id} replaces its scope")
    validate_scope(graphs, scope)
    change = Change(guards=[exists_guard(iris, exists)])
    scope_change(iris, index, scope, change, signed_off_versions(graphs, iris, index))
    change.apply(graphs, graph_ref(graphs, iris.evaluation_id), agent, scope.title)
    return get_evaluation(graphs, scope.id), not exists


def put_envelope(
    graphs: GraphService, evaluation_id: str, content: EnvelopeContent, agent: Credential
) -> tuple[Envelope, bool]:
    """Write the current (unsigned) envelope version, or v1; whether v1 was created. 409 once signed off."""
    require(agent, *AUTHORS)
    iris, index, evaluation = load(graphs, evaluation_id)
    validate_envelope(graphs, evaluation.scope, content)
    change = Change(guards=[exists_guard(iris, True)])
    created = envelope_change(iris, index, content, change, signed_off_versions(graphs, iris, index), graphs.clock())
    change.apply(graphs, graph_ref(graphs, iris.evaluation_id), agent, evaluation.scope.title)
    return envelope_at(graphs, evaluation_id)[0], created


def new_version(graphs: GraphService, evaluation_id: str, agent: Credential) -> Envelope:
    """Copy the signed-off current envelope as unsigned version n+1, which can then be changed."""
    require(agent, *AUTHORS)
    iris, index, evaluation = load(graphs, evaluation_id)
    current = current_envelope_iri(iris, index)
    if current is None:
        raise Conflict(
            f"evaluation {evaluation_id!r} has no envelope yet: PUT /evaluations/{evaluation_id}/envelope writes v1"
        )
    version = int(current.rsplit("/v", 1)[1])
    if current not in signed_off_versions(graphs, iris, index):
        raise Conflict(
            f"envelope v{version} is not signed off: change it in place with PUT /evaluations/{evaluation_id}/envelope"
        )
    iri = iris.envelope(version + 1)
    new = dated(
        iri,
        envelope_triples(iris, version + 1, read_content(current, index), current),
        current,
        [t for t in index.triples if owned_by(current, t)],
        graphs.clock(),
    )
    new.append(digest_triple(iri, envelope_digest(iri, new)))
    link = epo("operationalEnvelope")
    change = Change(
        delete=[Triple(NamedNode(iris.evaluation), link, NamedNode(current))],
        insert=[*new, Triple(NamedNode(iris.evaluation), link, NamedNode(iri))],
    )

    def guard(now: Index) -> None:
        if current_envelope_iri(iris, now) != current:
            raise Conflict(f"version {version + 1} of the envelope was started by another request")

    change.guards.append(guard)
    change.apply(graphs, graph_ref(graphs, iris.evaluation_id), agent, evaluation.scope.title)
    return envelope_at(graphs, evaluation_id)[0]


@dataclass(frozen=True)
class RdfPut:
    evaluation: Evaluation
    created: bool
    ignored: list[Triple]


def put_rdf(graphs: GraphService, evaluation_id: str, data: bytes, rdf_format: RdfFormat, agent: Credential) -> RdfPut:
    """An evaluation (scope, optionally its envelope) sent as RDF: read, checked like JSON, stored in one write.

    Relative IRIs resolve against ``{evaluation}/``. Triples outside the shape the service writes
    are not stored; they are returned (``ignored``) so the client sees what was left out.
    """
    require(agent, *AUTHORS)
    iris = iris_for(graphs, evaluation_id)
    body = Index(parse_triples(data, rdf_format, iris.evaluation + "/", graphs.rdf_limits))
    scope = read_scope(iris, body)
    if scope is None:
        raise Unprocessable(f"the body states no <{iris.evaluation}> a epo:Evaluation")
    body_envelope = current_envelope_iri(iris, body)
    content = read_content(body_envelope, body) if body_envelope else None
    validate_scope(graphs, scope)
    if content is not None:
        validate_envelope(graphs, scope, content)
    index = Index(graphs.triples(graph_ref(graphs, evaluation_id)))
    exists = index.has_type(iris.evaluation, EPO + "Evaluation")
    change = Change(guards=[exists_guard(iris, exists)])
    scope_change(iris, index, scope, change, signed_off_versions(graphs, iris, index))
    canonical = set(scope_triples(iris, scope))
    if content is not None and body_envelope is not None:
        envelope_change(iris, index, content, change, signed_off_versions(graphs, iris, index), graphs.clock())
        canonical |= set(
            envelope_triples(
                iris,
                int(body_envelope.rsplit("/v", 1)[1]),
                content,
                body.one(body_envelope, "http://www.w3.org/ns/prov#wasRevisionOf"),
            )
        )
        canonical.add(Triple(NamedNode(iris.evaluation), epo("operationalEnvelope"), NamedNode(body_envelope)))
    change.apply(graphs, graph_ref(graphs, iris.evaluation_id), agent, scope.title)
    ignored = [t for t in body.triples if t not in canonical and t.predicate.value not in _SERVER_MAINTAINED]
    return RdfPut(get_evaluation(graphs, evaluation_id), not exists, ignored)
