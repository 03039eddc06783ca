"""What a signed record is: a credential as the record stores it, and a credential's check.

The vocabularies are the VC Data Model 2.0's (``cred:``) and Data Integrity's (``sec:``), as the credentials v2
context maps them (``contexts/credentials-v2.jsonld``).
"""

from __future__ import annotations

from dataclasses import dataclass

CRED = "https://www.w3.org/2018/credentials#"
SEC = "https://w3id.org/security#"
DCTERMS = "http://purl.org/dc/terms/"
VERIFIABLE_CREDENTIAL = CRED + "VerifiableCredential"
DATA_INTEGRITY_PROOF = SEC + "DataIntegrityProof"
VC_MEDIA = "application/vc"
VP_MEDIA = "application/vp"
"""The media types of a Verifiable Credential and Presentation (VC Data Model 2.0, §C)."""


@dataclass(frozen=True)
class Proof:
    """A ``DataIntegrityProof`` of ``eddsa-rdfc-2022`` for the purpose ``assertionMethod``."""

    created: str
    """``xsd:dateTime``, in its canonical form (seconds, ``Z``)."""
    verification_method: str
    """``did:key:z…#z…``."""
    proof_value: str
    """The Ed25519 signature, multibase base58btc."""


@dataclass(frozen=True)
class StatusEntry:
    """Where a credential's status is published: bit ``index`` of the W3C Bitstring Status List credential
    ``status_list`` (:mod:`.status`)."""

    index: int
    status_list: str


@dataclass(frozen=True)
class StoredCredential:
    """A credential as the record holds it, apart from its subject's triples (the signed record graph's own).

    ``iri`` is the credential graph's (``{graph}/credential`` for the record graph ``{graph}``), which is also the
    credential's ``id``; ``subject`` is the node the credential is about; ``signed_graph`` the graph whose triples
    are its ``credentialSubject``."""

    iri: str
    issuer: str
    """The signer's ``did:key``."""
    valid_from: str
    subject: str
    signed_graph: str
    proof: Proof
    status: StatusEntry | None = None
    """Its ``credentialStatus``: an attestation's, whose bit says whether it was superseded; none on the others."""


@dataclass(frozen=True)
class CredentialCheck:
    """One credential's verification: who signed it and what is wrong with it (nothing: it verifies)."""

    credential: str
    signer: str
    """The issuer's ``did:key``."""
    problems: tuple[str, ...]

    @property
    def verified(self) -> bool:
        return not self.problems
