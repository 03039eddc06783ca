"""Status: whether a signed attestation was superseded, published as a W3C Bitstring Status List (VC Bitstring
Status List v1.0) that the service signs with its own key, one list per evaluation at ``{evaluation}/status-list``.

Each attestation's credential carries a ``BitstringStatusListEntry`` (``credentialStatus``) naming the list and its
bit, the attestation's judgments batch number (unique in the evaluation, and known when it is signed); the bit is
set once a later attestation supersedes it. The purpose is ``message`` with a one-bit status whose two messages
say ``current`` and ``superseded`` (docs/decisions.md: a superseded attestation was not revoked, it is still what
its expert stated then). The list is rebuilt from the record when asked (``queries/status-list.rq``), as every
credential is, and signed again: Ed25519 is deterministic and its ``validFrom`` is the latest listed credential's,
so the same record gives the same bytes.

The bitstring: bit 0 the first byte's highest, at least 16 KB (131,072 bits), GZIP-compressed, base64url without
padding, multibase ``u``.
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Iterable
from typing import Any

from pyoxigraph import NamedNode

from ..core.graphs import GraphService
from . import eddsa
from .contexts import CREDENTIALS_V2
from .keys import SERVICE, KeyRing
from .model import StatusEntry

STATUS = "https://www.w3.org/ns/credentials/status#"
PURPOSE = "message"
MESSAGES = ({"status": "0x0", "message": "current"}, {"status": "0x1", "message": "superseded"})
MIN_BITS = 131_072
"""The specification's least bitstring length (16 KB), which also keeps one list from telling how many entries
it has."""


def status_list_iri(evaluation: str) -> str:
    return f"{evaluation}/status-list"


def entry_json(credential: str, entry: StatusEntry) -> dict[str, Any]:
    """The ``credentialStatus`` of the credential ``credential``."""
    return {
        "id": f"{credential}/status",
        "type": "BitstringStatusListEntry",
        "statusPurpose": PURPOSE,
        "statusListIndex": str(entry.index),
        "statusListCredential": entry.status_list,
        "statusSize": 1,
        "statusMessage": [dict(m) for m in MESSAGES],
    }


def encoded_list(set_bits: Iterable[int], length: int = MIN_BITS) -> str:
    """The ``encodedList`` of a bitstring of at least ``length`` bits with ``set_bits`` set."""
    bits = sorted(set_bits)
    size = max(length, bits[-1] + 1 if bits else 0)
    data = bytearray((size + 7) // 8)
    for bit in bits:
        data[bit // 8] |= 0x80 >> (bit % 8)
    return "u" + base64.urlsafe_b64encode(gzip.compress(bytes(data), mtime=0)).decode("ascii").rstrip("=")


def bit_set(encoded: str, index: int) -> bool:
    """Whether bit ``index`` of an ``encodedList`` is set; ``ValueError`` when it is not one, or too short."""
    if not encoded.startswith("u"):
        raise ValueError("an encodedList is multibase base64url: it starts with 'u'")
    data = gzip.decompress(base64.urlsafe_b64decode(encoded[1:] + "=" * (-len(encoded[1:]) % 4)))
    if index >= len(data) * 8:
        raise ValueError(f"bit {index} is beyond the list's {len(data) * 8} bits")
    return bool(data[index // 8] & (0x80 >> (index % 8)))


def status_list(graphs: GraphService, keys: KeyRing, iri: str) -> dict[str, Any] | None:
    """The Bitstring Status List credential ``iri`` as the record now says, signed by the service's key; ``None``
    when no credential is listed on it."""
    rows = graphs.rows("status-list", {"list": NamedNode(iri)})
    if not rows:
        return None
    valid_from = max(row["validFrom"].value for row in rows)  # canonical UTC timestamps: they sort as times
    superseded = [int(row["index"].value) for row in rows if row["superseded"].value in ("true", "1")]
    unsecured = {
        "@context": [CREDENTIALS_V2],
        "id": iri,
        "type": ["VerifiableCredential", "BitstringStatusListCredential"],
        "issuer": keys.did(SERVICE),
        "validFrom": valid_from,
        "credentialSubject": {
            "id": f"{iri}#list",
            "type": "BitstringStatusList",
            "statusPurpose": PURPOSE,
            "encodedList": encoded_list(superseded),
        },
    }
    return eddsa.sign(unsecured, keys.private_key(SERVICE), keys.verification_method(SERVICE), valid_from)
