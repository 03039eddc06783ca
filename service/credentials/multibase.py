"""Multibase base58btc and ``did:key`` for Ed25519 public keys, written here (a dozen lines; no well-kept base58
package is installed, and the two encodings are fixed by their specifications).

- base58btc: the Bitcoin alphabet; each leading zero byte is one ``1`` (draft-msporny-base58).
- Multibase: the prefix ``z`` says base58btc (W3C Controlled Identifiers, §2.4 Multibase).
- ``did:key`` (W3C CCG did:key v0.7): ``did:key:`` + multibase(multicodec ``ed25519-pub`` 0xed01 + the 32-byte key);
  its one verification method is ``did:key:z…#z…``, the fragment the same multibase value (a ``Multikey``).
"""

from __future__ import annotations

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_INDEX = {c: i for i, c in enumerate(ALPHABET)}
ED25519_PUB = b"\xed\x01"
"""The multicodec prefix of an Ed25519 public key (0xed as an unsigned varint)."""


def base58btc(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    digits = []
    while number:
        number, rest = divmod(number, 58)
        digits.append(ALPHABET[rest])
    zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * zeros + "".join(reversed(digits))


def from_base58btc(text: str) -> bytes:
    """The bytes ``text`` encodes; ``ValueError`` naming the first character outside the alphabet."""
    number = 0
    for character in text:
        if character not in _INDEX:
            raise ValueError(f"{character!r} is not a base58btc character")
        number = number * 58 + _INDEX[character]
    zeros = len(text) - len(text.lstrip("1"))
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    return b"\0" * zeros + body


def multibase(data: bytes) -> str:
    """``data`` as multibase base58btc (``z…``)."""
    return "z" + base58btc(data)


def from_multibase(text: str) -> bytes:
    if not text.startswith("z"):
        raise ValueError(f"{text[:12]!r}… is not multibase base58btc (it must start with 'z')")
    return from_base58btc(text[1:])


def did_key(public_key: bytes) -> str:
    """The ``did:key`` of a raw 32-byte Ed25519 public key."""
    return "did:key:" + multibase(ED25519_PUB + public_key)


def verification_method(public_key: bytes) -> str:
    """The ``did:key`` verification method of the key: ``did:key:z…#z…``."""
    did = did_key(public_key)
    return f"{did}#{did.removeprefix('did:key:')}"


def public_key_of(did_or_method: str) -> bytes:
    """The raw Ed25519 public key a ``did:key`` (or its verification method) names; ``ValueError`` saying why not."""
    did, _, fragment = did_or_method.partition("#")
    if not did.startswith("did:key:"):
        raise ValueError(f"{did_or_method} is not a did:key")
    value = did.removeprefix("did:key:")
    if fragment and fragment != value:
        raise ValueError(f"{did_or_method}: the fragment is not the key's own multibase value")
    decoded = from_multibase(value)
    if not decoded.startswith(ED25519_PUB) or len(decoded) != 34:
        raise ValueError(f"{did_or_method} is not an Ed25519 did:key (multicodec 0xed01 and 32 bytes)")
    return decoded[2:]
