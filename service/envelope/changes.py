"""A change to an evaluation's graph, as :mod:`.records` writes it: the diff of the scope or of the current envelope
version against the graph as read, and the guards that must still hold under the write lock (nothing else changed
the scope, the envelope or the evaluation's existence meanwhile; a signed-off version stays frozen).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from pyoxigraph import NamedNode, Triple

from ..core.config import Credential
from ..core.digest import canonical_literals
from ..core.errors import Conflict
from ..core.graph_edits import GraphRef
from ..core.graphs import GraphService
from ..core.namespaces import EPO
from ..scope.model import Scope
from .model import EnvelopeContent
from .rdf import (
    Index,
    Iris,
    dated,
    digest_triple,
    envelope_digest,
    envelope_triples,
    envelope_versions,
    epo,
    owned_by,
    undated,
)
from .rdf_read import current_envelope_iri
from .scope_rdf import scope_owned, scope_triples


@dataclass
class Change:
    """A diff of the evaluation graph and what must still hold when it is applied."""

    delete: list[Triple] = field(default_factory=list)
    insert: list[Triple] = field(default_factory=list)
    guards: list[Callable[[Index], None]] = field(default_factory=list)

    def diff(self, old: list[Triple], new: list[Triple]) -> None:
        old_set, new_set = set(old), set(new)
        self.delete += [t for t in old if t not in new_set]
        self.insert += [t for t in dict.fromkeys(new) if t not in old_set]

    def apply(self, graphs: GraphService, ref: GraphRef, agent: Credential, title: str | None) -> None:
        """Apply the diff to ``ref`` (the evaluation's graph), checking every guard under the write lock."""
        if not (self.delete or self.insert):
            return

        def precondition(current: list[Triple]) -> None:
            index = Index(current)
            for guard in self.guards:
                guard(index)

        graphs.update(
            ref,
            agent,
            insert=self.insert,
            delete=self.delete,
            title=title,
            precondition=precondition,
        )


def _unchanged(what: str, select: Callable[[Triple], bool], before: list[Triple]) -> Callable[[Index], None]:
    expected = {t for t in before if select(t)}

    def guard(index: Index) -> None:
        if {t for t in index.triples if select(t)} != expected:
            raise Conflict(f"the {what} changed while this request was checked; send it again")

    return guard


def scope_change(iris: Iris, index: Index, scope: Scope, change: Change, signed: set[str]) -> None:
    old = [t for t in index.triples if scope_owned(iris, t)]
    new = scope_triples(iris, scope)
    before = len(change.delete) + len(change.insert)
    change.diff(old, new)
    change.guards.append(_unchanged("scope", lambda t: scope_owned(iris, t), index.triples))
    changed = len(change.delete) + len(change.insert) > before
    frozen = [v for v in envelope_versions(iris, index) if v in signed]
    if changed and frozen:
        raise Conflict(
            f"the scope of evaluation {iris.evaluation_id!r} is fixed: envelope <{frozen[-1]}> was signed off under it"
        )


def envelope_change(
    iris: Iris, index: Index, content: EnvelopeContent, change: Change, signed: set[str], at: datetime
) -> bool:
    """Add the rewrite of the current envelope version (v1 if none) to ``change``, its changed criteria dated ``at``;
    True if v1 is new."""
    current = current_envelope_iri(iris, index)
    iri = current or iris.envelope(1)
    version = int(iri.rsplit("/v", 1)[1])
    old = [t for t in index.triples if owned_by(iri, t)]
    new = dated(
        iri,
        envelope_triples(iris, version, content, index.one(iri, "http://www.w3.org/ns/prov#wasRevisionOf")),
        iri,
        old,
        at,
    )
    new.append(digest_triple(iri, envelope_digest(iri, new)))
    # Compared by value: a store may give a literal back in another spelling (Virtuoso: decimal 10 as integer);
    # and without dates, so that a record written before criteria were dated is not changed by the same content.
    if current is not None and set(canonical_literals(undated(old))) == set(canonical_literals(undated(new))):
        return False
    if current is not None and iri in signed:
        raise Conflict(
            f"envelope v{version} of evaluation {iris.evaluation_id!r} is signed off and frozen "
            f"(digest {envelope_digest(iri, old)}): POST /evaluations/{iris.evaluation_id}/envelope/versions "
            f"to start v{version + 1}, then PUT the change"
        )
    change.diff(old, new)
    if current is None:
        change.insert.append(Triple(NamedNode(iris.evaluation), epo("operationalEnvelope"), NamedNode(iri)))

    # A sign-off appended meanwhile names the content it read: once this change commits, it signs nothing.
    def guard(now: Index) -> None:
        if current_envelope_iri(iris, now) != current:
            raise Conflict("a new envelope version was started while this request was checked; send it again")

    change.guards += [guard, _unchanged("envelope", lambda t: owned_by(iri, t), index.triples)]
    return current is None


def exists_guard(iris: Iris, exists: bool) -> Callable[[Index], None]:
    def guard(index: Index) -> None:
        if index.has_type(iris.evaluation, EPO + "Evaluation") != exists:
            state = "was created" if not exists else "was deleted"
            raise Conflict(f"evaluation {iris.evaluation_id!r} {state} while this request was checked")

    return guard
