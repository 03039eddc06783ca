"""The store layer: one interface (:class:`Store`), an embedded and a remote backend."""

from __future__ import annotations

from ..config import Settings
from .base import ChangeSet, QueryAnswer, Row, Store, Term
from .embedded import EmbeddedStore
from .remote import RemoteStore


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
        )
    return EmbeddedStore(settings.data_dir)


__all__ = ["ChangeSet", "EmbeddedStore", "QueryAnswer", "RemoteStore", "Row", "Store", "Term", "open_store"]
