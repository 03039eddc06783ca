"""Stored credentials read back: the credential graph beside a signed record graph, and the signed graph's
triples as the store holds them now (so that a triple changed behind the service's back shows as a credential that
no longer verifies, :mod:`.presentations`). A credential that states a graph's digest rather than its triples
(:meth:`.signing.Signer.digest_graph`) holds its subject's triples in its own graph: those are its subject."""

from __future__ import annotations

from typing import Any

from pyoxigraph import NamedNode, Triple

from ..core.errors import NotFound
from ..core.graphs import GraphService
from .documents import secured, stored_credential
from .model import StoredCredential


def read(graphs: GraphService, credential: str) -> tuple[StoredCredential, list[Triple]]:
    """The credential ``credential`` (a credential graph's IRI) and its signed graph's triples; 404 when the record
    has no such credential."""
    signed_graph = credential.removesuffix("/credential")
    entries = graphs.find_graphs([credential, signed_graph])
    if credential == signed_graph or len(entries) < 2:
        raise NotFound(f"no credential <{credential}> (a signed record graph's, {{graph}}/credential)")
    found, signed = entries[credential], entries[signed_graph]
    triples = graphs.triples(graphs.member(found.kind, found.identifier))
    stored = stored_credential(credential, signed_graph, triples)
    stated = [t for t in triples if t.subject == NamedNode(stored.subject)]
    return stored, stated or graphs.triples(graphs.member(signed.kind, signed.identifier))


def document(graphs: GraphService, credential: str) -> dict[str, Any]:
    """The credential's JSON-LD, proof included, as a verifier gets it."""
    stored, subject_triples = read(graphs, credential)
    return secured(stored, subject_triples)
