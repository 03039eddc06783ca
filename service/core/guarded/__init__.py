"""Guarded execution of clients' SPARQL queries: time, result-size and memory limits, per-client caps and a
``SERVICE`` allow-list (docs/protection.md). The guard itself is :class:`.guard.QueryGuard`; this package's
top level stays free of store imports, so the store backends can use :mod:`.limits` and :mod:`.remote`."""

from __future__ import annotations

from .federation import refuse_unlisted_services, service_endpoints
from .limits import QueryLimits

__all__ = ["QueryLimits", "refuse_unlisted_services", "service_endpoints"]
