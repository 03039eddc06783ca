"""Guarded execution of clients' SPARQL queries: time, result-size and memory limits, per-client caps and a
``SERVICE`` allow-list (docs/protection.md)."""

from __future__ import annotations

from .federation import refuse_unlisted_services, service_endpoints
from .guard import GuardedStore, QueryGuard
from .limits import QueryLimits

__all__ = ["GuardedStore", "QueryGuard", "QueryLimits", "refuse_unlisted_services", "service_endpoints"]
