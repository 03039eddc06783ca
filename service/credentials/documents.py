"""A record graph as a Verifiable Credential's JSON-LD, and the credential's own statements as the record keeps them.

The ``credentialSubject`` is the signed graph's node ``subject`` with every triple of the graph: the nodes it
reaches are embedded where first met (a node met again is referred to by ``id``), so the credential's default graph
is the record graph's triples and the credential's own. Literals are taken in their canonical form
(:func:`service.core.digest.canonical_literals`) and skolem IRIs as blank nodes, as the record's digests are: a
store that keeps values rather than spellings gives back the document that was signed.

In the record, the credential is the graph ``{graph}/credential``, beside the graph ``{graph}`` it signs (a
judgments batch: ``…/judgments/{n}/credential``)::

    <{graph}/credential> a cred:VerifiableCredential ; cred:issuer <did:key:z…> ; cred:validFrom "…"^^xsd:dateTime ;
        cred:credentialSubject <the subject> ; sec:proof <{graph}/credential/proof> .
    <{graph}/credential/proof> a sec:DataIntegrityProof ; sec:cryptosuite "eddsa-rdfc-2022"^^sec:cryptosuiteString ;
        sec:verificationMethod <did:key:z…#z…> ; sec:proofPurpose sec:assertionMethod ;
        dcterms:created "…"^^xsd:dateTime ; sec:proofValue "z…"^^sec:multibase .

(In the credential's JSON-LD the proof is a blank node in a graph of its own; the record names it, so that its
statements stay in the credential graph.) An attestation's credential also has a status entry (:mod:`.status`)::

    <{graph}/credential> cred:credentialStatus <{graph}/credential/status> .
    <{graph}/credential/status> a status:BitstringStatusListEntry ; status:statusListIndex "{n}" ;
        status:statusListCredential <{evaluation}/status-list> .

(its purpose, size and messages are :mod:`.status`' constants, written into the JSON-LD).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from ..core.digest import blank_skolems, canonical_literals
from ..core.namespaces import RDF
from .contexts import CREDENTIALS_V2
from .eddsa import CRYPTOSUITE, PROOF_TYPE, PURPOSE, XSD_STRING
from .model import CRED, DATA_INTEGRITY_PROOF, DCTERMS, SEC, VERIFIABLE_CREDENTIAL, Proof, StatusEntry, StoredCredential
from .status import STATUS, entry_json

RDF_TYPE = RDF + "type"
XSD_DATE_TIME = "http://www.w3.org/2001/XMLSchema#dateTime"


def _value(term: NamedNode | BlankNode | Literal) -> dict[str, str]:
    if isinstance(term, NamedNode):
        return {"id": term.value}
    if isinstance(term, BlankNode):
        return {"id": f"_:{term.value}"}
    if term.language:
        return {"@value": term.value, "@language": term.language}
    if term.datatype.value == XSD_STRING:
        return {"@value": term.value}
    return {"@value": term.value, "@type": term.datatype.value}


def subject_node(subject: str, triples: Sequence[Triple]) -> dict[str, Any]:
    """The JSON-LD node of ``subject`` with all of ``triples`` (see the module docstring); ``ValueError`` when a
    triple's subject is not reached from ``subject``."""
    statements = blank_skolems(canonical_literals(triples))
    by_subject: dict[NamedNode | BlankNode, list[Triple]] = {}
    for t in statements:
        if isinstance(t.subject, Triple) or isinstance(t.object, Triple):
            raise ValueError("a credential cannot hold quoted triples")  # noqa: TRY004  # a content error, caught as one
        by_subject.setdefault(t.subject, []).append(t)
    embedded: set[NamedNode | BlankNode] = set()

    def node(term: NamedNode | BlankNode) -> dict[str, Any]:
        embedded.add(term)
        out: dict[str, Any] = _value(term)
        for t in sorted(by_subject.get(term, []), key=lambda t: (t.predicate.value, str(t.object))):
            if t.predicate.value == RDF_TYPE and isinstance(t.object, NamedNode):
                out.setdefault("type", []).append(t.object.value)
                continue
            value = t.object
            entry = node(value) if value in by_subject and value not in embedded else _value(value)  # type: ignore[arg-type]
            out.setdefault(t.predicate.value, []).append(entry)
        return out

    root = NamedNode(subject)
    document = node(root)
    unreached = set(by_subject) - embedded
    if unreached:
        raise ValueError(
            f"{len(unreached)} node(s) of the graph not reached from {subject}, e.g. {min(map(str, unreached))}"
        )
    return document


def unsecured(credential: StoredCredential, subject_triples: Sequence[Triple]) -> dict[str, Any]:
    """The credential's JSON-LD without its proof: what is signed."""
    document = {
        "@context": [CREDENTIALS_V2],
        "id": credential.iri,
        "type": ["VerifiableCredential"],
        "issuer": credential.issuer,
        "validFrom": credential.valid_from,
        "credentialSubject": subject_node(credential.subject, subject_triples),
    }
    if credential.status is not None:
        document["credentialStatus"] = entry_json(credential.iri, credential.status)
    return document


def proof_options(proof: Proof) -> dict[str, str]:
    """The proof without its value (the proof configuration, less its ``@context``)."""
    return {
        "type": PROOF_TYPE,
        "cryptosuite": CRYPTOSUITE,
        "created": proof.created,
        "verificationMethod": proof.verification_method,
        "proofPurpose": PURPOSE,
    }


def secured(credential: StoredCredential, subject_triples: Sequence[Triple]) -> dict[str, Any]:
    """The credential's JSON-LD with its proof: what a verifier gets."""
    proof = {**proof_options(credential.proof), "proofValue": credential.proof.proof_value}
    return {**unsecured(credential, subject_triples), "proof": proof}


def credential_triples(credential: StoredCredential) -> list[Triple]:
    """The credential's statements as the record keeps them (the module docstring)."""
    node, proof = NamedNode(credential.iri), NamedNode(f"{credential.iri}/proof")
    status = []
    if credential.status is not None:
        entry = NamedNode(f"{credential.iri}/status")
        status = [
            Triple(node, NamedNode(CRED + "credentialStatus"), entry),
            Triple(entry, NamedNode(RDF_TYPE), NamedNode(STATUS + "BitstringStatusListEntry")),
            Triple(entry, NamedNode(STATUS + "statusListIndex"), Literal(str(credential.status.index))),
            Triple(entry, NamedNode(STATUS + "statusListCredential"), NamedNode(credential.status.status_list)),
        ]
    return [
        *status,
        Triple(node, NamedNode(RDF_TYPE), NamedNode(VERIFIABLE_CREDENTIAL)),
        Triple(node, NamedNode(CRED + "issuer"), NamedNode(credential.issuer)),
        Triple(node, NamedNode(CRED + "validFrom"), Literal(credential.valid_from, datatype=NamedNode(XSD_DATE_TIME))),
        Triple(node, NamedNode(CRED + "credentialSubject"), NamedNode(credential.subject)),
        Triple(node, NamedNode(SEC + "proof"), proof),
        Triple(proof, NamedNode(RDF_TYPE), NamedNode(DATA_INTEGRITY_PROOF)),
        Triple(
            proof, NamedNode(SEC + "cryptosuite"), Literal(CRYPTOSUITE, datatype=NamedNode(SEC + "cryptosuiteString"))
        ),
        Triple(proof, NamedNode(SEC + "verificationMethod"), NamedNode(credential.proof.verification_method)),
        Triple(proof, NamedNode(SEC + "proofPurpose"), NamedNode(SEC + PURPOSE)),
        Triple(
            proof, NamedNode(DCTERMS + "created"), Literal(credential.proof.created, datatype=NamedNode(XSD_DATE_TIME))
        ),
        Triple(
            proof,
            NamedNode(SEC + "proofValue"),
            Literal(credential.proof.proof_value, datatype=NamedNode(SEC + "multibase")),
        ),
    ]


def stored_credential(iri: str, signed_graph: str, triples: Sequence[Triple]) -> StoredCredential:
    """The credential ``iri`` from its graph's triples (:func:`credential_triples`, as any store gives them back);
    ``ValueError`` naming what is missing."""
    values = {
        (t.subject.value, t.predicate.value): t.object
        for t in canonical_literals(triples)
        if not isinstance(t.subject, Triple) and not isinstance(t.object, Triple)
    }
    proof, entry = f"{iri}/proof", f"{iri}/status"

    def one(node: str, predicate: str) -> str:
        term = values.get((node, predicate))
        if term is None:
            raise ValueError(f"the credential graph <{iri}> has no {predicate} of <{node}>")
        return term.value

    return StoredCredential(
        iri=iri,
        issuer=one(iri, CRED + "issuer"),
        valid_from=one(iri, CRED + "validFrom"),
        subject=one(iri, CRED + "credentialSubject"),
        signed_graph=signed_graph,
        proof=Proof(
            created=one(proof, DCTERMS + "created"),
            verification_method=one(proof, SEC + "verificationMethod"),
            proof_value=one(proof, SEC + "proofValue"),
        ),
        status=StatusEntry(int(one(entry, STATUS + "statusListIndex")), one(entry, STATUS + "statusListCredential"))
        if (iri, CRED + "credentialStatus") in values
        else None,
    )


def timestamp(at: datetime) -> str:
    """``at`` (timezone-aware) as the canonical ``xsd:dateTime`` a credential states: whole seconds, UTC, ``Z``."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
