"""The ``eddsa-rdfc-2022`` cryptosuite (W3C Data Integrity EdDSA Cryptosuites v1.0, §3.3), signing and verifying.

Transformation: the document (or the proof configuration) as RDF by JSON-LD's toRdf (pyld, with only the shipped
contexts, :mod:`.contexts`), canonicalized by RDFC-1.0 (pyoxigraph) and written as canonical N-Quads, sorted.
Hashing: SHA-256 of the canonical proof configuration, then of the canonical document, concatenated (64 bytes).
Signing: Ed25519 over those bytes; ``proofValue`` is the signature as multibase base58btc.

The canonical N-Quads are written here rather than by a serializer, because RDFC-1.0 fixes every character: the
escapes are N-Quads' canonical ones (``\\b \\t \\n \\f \\r \\" \\\\``, other control characters as ``\\u00XX``),
as rdf-canonize writes them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pyld import jsonld
from pyld.jsonld import JsonLdError
from pyoxigraph import BlankNode, CanonicalizationAlgorithm, Dataset, DefaultGraph, Literal, NamedNode, Quad

from ..core.errors import ServiceError
from .contexts import document_loader
from .multibase import from_multibase, multibase, public_key_of

CRYPTOSUITE = "eddsa-rdfc-2022"
PROOF_TYPE = "DataIntegrityProof"
PURPOSE = "assertionMethod"
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_ESCAPES.update({chr(c): f"\\u{c:04X}" for c in [*range(0x20), 0x7F] if chr(c) not in _ESCAPES})
_ESCAPE_TABLE = str.maketrans(_ESCAPES)


def _term(value: dict[str, str]) -> NamedNode | BlankNode | Literal:
    """One pyld RDF term as pyoxigraph's."""
    if value["type"] == "IRI":
        return NamedNode(value["value"])
    if value["type"] == "blank node":
        return BlankNode(value["value"].removeprefix("_:"))
    if value.get("language"):
        return Literal(value["value"], language=value["language"])
    return Literal(value["value"], datatype=NamedNode(value.get("datatype", XSD_STRING)))


def _written(term: NamedNode | BlankNode | Literal) -> str:
    if isinstance(term, NamedNode):
        return f"<{term.value}>"
    if isinstance(term, BlankNode):
        return f"_:{term.value}"
    text = '"' + term.value.translate(_ESCAPE_TABLE) + '"'
    if term.language:
        return f"{text}@{term.language}"
    return text if term.datatype.value == XSD_STRING else f"{text}^^<{term.datatype.value}>"


def canonical_nquads(document: dict[str, Any]) -> str:
    """The RDFC-1.0 canonical N-Quads of a JSON-LD document (toRdf with the shipped contexts only)."""
    rdf = jsonld.to_rdf(document, {"documentLoader": document_loader})
    dataset = Dataset()
    for graph, quads in rdf.items():
        name = (
            DefaultGraph()
            if graph == "@default"
            else BlankNode(graph[2:])
            if graph.startswith("_:")
            else NamedNode(graph)
        )
        for quad in quads:
            subject, predicate, value = (_term(quad[k]) for k in ("subject", "predicate", "object"))
            dataset.add(Quad(subject, predicate, value, name))  # type: ignore[arg-type]  # pyld's kinds are RDF's
    dataset.canonicalize(CanonicalizationAlgorithm.RDFC_1_0)
    lines = set()
    for quad in dataset:
        parts = [_written(quad.subject), _written(quad.predicate), _written(quad.object)]
        if not isinstance(quad.graph_name, DefaultGraph):
            parts.append(_written(quad.graph_name))
        lines.add(" ".join(parts) + " .\n")
    return "".join(sorted(lines))


def hash_data(unsecured: dict[str, Any], proof_options: dict[str, Any]) -> bytes:
    """SHA-256 of the canonical proof configuration (``proof_options`` under the document's ``@context``), then of
    the canonical document (§3.3.4-3.3.5)."""
    configuration = {"@context": unsecured["@context"], **proof_options}
    return (
        hashlib.sha256(canonical_nquads(configuration).encode("utf-8")).digest()
        + hashlib.sha256(canonical_nquads(unsecured).encode("utf-8")).digest()
    )


def sign(unsecured: dict[str, Any], key: Ed25519PrivateKey, method: str, created: str) -> dict[str, Any]:
    """``unsecured`` with a ``DataIntegrityProof`` by ``key``, whose verification method is ``method``."""
    options = {
        "type": PROOF_TYPE,
        "cryptosuite": CRYPTOSUITE,
        "created": created,
        "verificationMethod": method,
        "proofPurpose": PURPOSE,
    }
    signature = key.sign(hash_data(unsecured, options))
    return {**unsecured, "proof": {**options, "proofValue": multibase(signature)}}


def verify(secured: dict[str, Any]) -> list[str]:
    """What is wrong with the credential's proof, each saying the credential and its signer (empty: it verifies).

    The key is the verification method's own ``did:key``, which must be the issuer's: the credential's signer is
    its issuer."""
    name = secured.get("id", "the credential")
    proof = secured.get("proof")
    if not isinstance(proof, dict):
        return [f"{name} has no proof (or more than one, which this verifier does not check)"]
    method = str(proof.get("verificationMethod", ""))
    signer = f"signed by {secured.get('issuer', 'no issuer')} with {method or 'no verification method'}"
    problems = []
    if proof.get("type") != PROOF_TYPE or proof.get("cryptosuite") != CRYPTOSUITE:
        problems.append(f"its proof is not a {PROOF_TYPE} of {CRYPTOSUITE}")
    if proof.get("proofPurpose") != PURPOSE:
        problems.append(f"its proof's purpose is {proof.get('proofPurpose')!r}, not {PURPOSE!r}")
    if method.partition("#")[0] != secured.get("issuer"):
        problems.append("its verification method is not the issuer's key")
    try:
        public = Ed25519PublicKey.from_public_bytes(public_key_of(method))
        signature = from_multibase(str(proof.get("proofValue", "")))
    except ValueError as error:
        problems.append(str(error))
    else:
        unsecured = {k: v for k, v in secured.items() if k != "proof"}
        options = {k: v for k, v in proof.items() if k != "proofValue"}
        try:
            public.verify(signature, hash_data(unsecured, options))
        except InvalidSignature:
            problems.append("its signature does not verify: the credential or its proof was changed after signing")
        except (JsonLdError, ServiceError) as error:  # a context not shipped, a document that is not JSON-LD
            problems.append(f"it cannot be read as JSON-LD with the shipped contexts: {_cause(error)}")
    return [f"{name} ({signer}): {problem}" for problem in problems]


def _cause(error: BaseException) -> str:
    """The innermost reason pyld wrapped (its errors chain the loader's as ``__cause__``)."""
    while isinstance(error, JsonLdError) and error.__cause__ is not None:
        error = error.__cause__
    return str(getattr(error, "message", None) or error)
