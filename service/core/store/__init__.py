"""The store layer: one interface (:class:`Store`), an embedded and a remote backend."""

from __future__ import annotations

from typing import TypedDict

from ..config import Settings, read_secret
from ..iris import catalog_graph_iri
from .base import (
    ChangeSet,
    Node,
    QueryAnswer,
    Row,
    Store,
    StoreAuthorizationFailed,
    StoreLimitExceeded,
    Term,
    iri_term,
    row_triple,
    subject_term,
)
from .embedded import EmbeddedStore
from .remote import RemoteStore


class RemoteCredentials(TypedDict, total=False):
    """The credential arguments of :class:`RemoteStore`."""

    username: str | None
    password: str | None
    token: str | None
    auth_scheme: str | None


def remote_credentials(settings: Settings) -> RemoteCredentials:
    """The :class:`RemoteStore` credential arguments the settings give (user and password, or a token)."""
    token = read_secret(settings.remote_token, settings.remote_token_file, "remote_token")
    password = read_secret(settings.remote_password, settings.remote_password_file, "remote_password")
    scheme = settings.remote_auth
    if scheme == "bearer" and not token:
        raise ValueError("CAIE_REMOTE_AUTH=bearer needs CAIE_REMOTE_TOKEN or CAIE_REMOTE_TOKEN_FILE")
    if scheme in ("basic", "digest") and (not settings.remote_user or password is None):
        raise ValueError(f"CAIE_REMOTE_AUTH={scheme} needs CAIE_REMOTE_USER and CAIE_REMOTE_PASSWORD (or _FILE)")
    if settings.remote_user and password is None:
        raise ValueError("CAIE_REMOTE_USER needs CAIE_REMOTE_PASSWORD or CAIE_REMOTE_PASSWORD_FILE")
    use_token = scheme == "bearer" or (scheme is None and token is not None and not settings.remote_user)
    if use_token:
        return {"token": token, "auth_scheme": "bearer"}
    return {"username": settings.remote_user, "password": password, "auth_scheme": scheme}


def open_store(settings: Settings) -> Store:
    """The backend the settings name."""
    if settings.store == "remote":
        missing = [
            name
            for name in ("remote_query_url", "remote_update_url", "remote_store_url")
            if getattr(settings, name) is None
        ]
        if missing:
            raise ValueError(f"the remote store needs {', '.join('CAIE_' + m.upper() for m in missing)}")
        return RemoteStore(
            settings.remote_query_url or "",
            settings.remote_update_url or "",
            settings.remote_store_url or "",
            timeout_s=settings.remote_timeout_s,
            **remote_credentials(settings),
            catalog=catalog_graph_iri(settings.base_url),
            page_size=settings.remote_page_size,
            row_cap=settings.remote_row_cap,
        )
    return EmbeddedStore(settings.data_dir)


__all__ = [
    "ChangeSet",
    "EmbeddedStore",
    "Node",
    "QueryAnswer",
    "RemoteCredentials",
    "RemoteStore",
    "Row",
    "Store",
    "StoreAuthorizationFailed",
    "StoreLimitExceeded",
    "Term",
    "iri_term",
    "open_store",
    "remote_credentials",
    "row_triple",
    "subject_term",
]
