"""The service's Ed25519 keys: one per deciding agent and one for the service itself, made on first use.

Each key is a file ``{directory}/{name}.pem`` (PKCS #8, unencrypted, mode 0600, in a directory of mode 0700),
``name`` the agent's IRI's SHA-256 (an IRI is no file name); the service's own is ``service.pem``. Without a
directory (a store kept in memory: tests) the keys are kept in memory, for as long as the record is.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

from .multibase import did_key, verification_method

SERVICE = "service"
"""The name of the service's own key."""


class KeyRing:
    """Ed25519 keys by agent IRI (see the module docstring); safe to share between threads."""

    def __init__(self, directory: Path | None) -> None:
        self._directory = directory
        self._keys: dict[str, Ed25519PrivateKey] = {}
        self._lock = threading.Lock()

    def private_key(self, agent: str) -> Ed25519PrivateKey:
        """``agent``'s key (an agent IRI, or :data:`SERVICE`), made and kept on first use."""
        with self._lock:
            key = self._keys.get(agent)
            if key is None:
                key = self._keys[agent] = self._load_or_make(agent)
            return key

    def public_key(self, agent: str) -> bytes:
        return self.private_key(agent).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def did(self, agent: str) -> str:
        return did_key(self.public_key(agent))

    def verification_method(self, agent: str) -> str:
        return verification_method(self.public_key(agent))

    def _load_or_make(self, agent: str) -> Ed25519PrivateKey:
        if self._directory is None:
            return Ed25519PrivateKey.generate()
        name = SERVICE if agent == SERVICE else hashlib.sha256(agent.encode("utf-8")).hexdigest()
        path = self._directory / f"{name}.pem"
        if path.exists():
            loaded = load_pem_private_key(path.read_bytes(), password=None)
            if not isinstance(loaded, Ed25519PrivateKey):
                raise ValueError(f"{path} does not hold an Ed25519 key")
            return loaded
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        # written whole to a file of mode 0600 from the start, then linked into place: a reader never sees half a
        # key, and of two processes making one agent's key the first to link wins and the other loads it
        temporary = path.with_name(f".{name}.{os.getpid()}.{threading.get_ident()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(pem)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            return self._load_or_make(agent)
        finally:
            temporary.unlink()
        return key
