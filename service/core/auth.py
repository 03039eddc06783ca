"""Bearer-token credentials (RFC 6750) and role checks; tokens come only from configuration."""

from __future__ import annotations

import hmac

from .config import Credential, Settings
from .errors import Forbidden, Unauthenticated


def authenticate(settings: Settings, authorization: str | None) -> Credential | None:
    """The credential of an ``Authorization: Bearer <token>`` header; ``None`` when there is no header."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
    token = token.strip()
    for known, credential in settings.credentials.items():
        if hmac.compare_digest(known.encode(), token.encode()):
            return credential
    raise Unauthenticated("the bearer token is not known to this deployment")


def require(credential: Credential | None, *roles: str) -> Credential:
    """The credential, if present and (when ``roles`` are named) holding one of them or admin."""
    if credential is None:
        raise Unauthenticated("this action needs a credential: send 'Authorization: Bearer <token>'")
    if roles and not (credential.roles & {*roles, "admin"}):
        raise Forbidden(f"agent {credential.agent!r} lacks the role for this action: needs one of {', '.join(roles)}")
    return credential
