"""Signing a record graph as a Verifiable Credential by its agent's key.

:class:`Signer` is what a step that records a person's decision is given: it turns the graph it is about to write
into the credential graph written beside it, in the same write (:mod:`.documents` says the layout). Checking is
:mod:`.presentations`' (a credential as served) and :func:`.eddsa.verify`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from pyoxigraph import Literal, NamedNode, Triple

from ..core.graph_edits import GraphEdit, GraphRef
from ..core.namespaces import EPO
from . import eddsa
from .documents import credential_triples, timestamp, unsecured
from .keys import KeyRing
from .model import Proof, StatusEntry, StoredCredential

PROV_ATTRIBUTED = "http://www.w3.org/ns/prov#wasAttributedTo"


def credential_iri(graph: str) -> str:
    """The credential graph (and credential ``id``) that signs the record graph ``graph``."""
    return f"{graph}/credential"


class Signer:
    """Signs record graphs with the keys of a :class:`.keys.KeyRing`."""

    def __init__(self, keys: KeyRing) -> None:
        self.keys = keys

    def sign(
        self,
        graph: str,
        subject: str,
        triples: Sequence[Triple],
        agent: str,
        at: datetime,
        status: StatusEntry | None = None,
    ) -> StoredCredential:
        """The credential, signed by ``agent``'s key (an agent IRI), whose subject is ``subject`` with the triples
        of the graph ``graph``, valid from ``at``, its status published at ``status`` (:mod:`.status`) if given."""
        created = timestamp(at)
        draft = StoredCredential(
            iri=credential_iri(graph),
            issuer=self.keys.did(agent),
            valid_from=created,
            subject=subject,
            signed_graph=graph,
            proof=Proof(created, self.keys.verification_method(agent), ""),
            status=status,
        )
        signed = eddsa.sign(
            unsecured(draft, triples), self.keys.private_key(agent), draft.proof.verification_method, created
        )
        return replace(draft, proof=replace(draft.proof, proof_value=signed["proof"]["proofValue"]))

    def credential_graph(
        self,
        graph: str,
        subject: str,
        triples: Sequence[Triple],
        agent: str,
        at: datetime,
        status: StatusEntry | None = None,
    ) -> list[Triple]:
        """:meth:`sign`'s credential as the triples of its graph."""
        return credential_triples(self.sign(graph, subject, triples, agent, at, status))

    def credential_edit(
        self,
        credential: GraphRef,
        subject: str,
        triples: Sequence[Triple],
        agent: str,
        at: datetime,
        batch_of: str,
        status: StatusEntry | None = None,
    ) -> GraphEdit:
        """:meth:`sign`'s credential as the new graph ``credential`` ({graph}/credential, signing the graph
        ``graph``), catalogued as a batch of ``batch_of``: an edit for the write that records ``graph``, so that
        neither lands without the other."""
        signed = credential.iri.value.removesuffix("/credential")
        return GraphEdit(
            credential,
            insert=self.credential_graph(signed, subject, triples, agent, at, status),
            title=f"the credential signing {credential.identifier.removesuffix('/credential')} ({credential.iri.value})",
            batch_of=batch_of,
            expected_digest=None,
        )

    def digest_graph(self, graph: str, digest: str, agent: str, at: datetime) -> list[Triple]:
        """The triples of the graph ``{graph}/credential`` for a credential by ``agent``'s key that states the digest
        of the graph ``graph`` (``core.digest.graph_digest``) rather than its triples: its subject is the node
        ``graph`` with ``epo:graphDigest`` and ``prov:wasAttributedTo``, stated in the credential's own graph (a
        judge's batch of determinations: one signature, however many determinations)."""
        node = NamedNode(graph)
        stated = [
            Triple(node, NamedNode(EPO + "graphDigest"), Literal(digest)),
            Triple(node, NamedNode(PROV_ATTRIBUTED), NamedNode(agent)),
        ]
        return stated + self.credential_graph(graph, graph, stated, agent, at)
