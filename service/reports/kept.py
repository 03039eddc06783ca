"""What is read from an evaluation's record for its reports' pages, kept in this process by the record's state.

The state is a digest of every graph of the record with its catalog digest (:func:`.records.record_digests`, one
query: 40 to 80 ms at 100,000 determinations): any write to the record through the service, a batch appended (a
determination, an attestation, a sign-off) or a graph replaced, gives another, so a value kept is never served for a
record that has changed since. A value is kept only when the state read after reading it is the one read before: a
write in between keeps nothing. Values are shared between requests: callers never mutate them.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar, cast
from weakref import WeakKeyDictionary

from ..core.graphs import GraphService
from ..core.memo import Recent
from .records import record_digests

T = TypeVar("T")

_KEPT: WeakKeyDictionary[GraphService, Recent[tuple[Hashable, ...], Any]] = WeakKeyDictionary()
"""Per graph service (one per store): values by what they are, the evaluation and the record's state."""
_LOCK = threading.Lock()
KEEP = 64
"""Values kept per store: each report's page and drill-down, each criterion evidence page read (small)."""


def record_state(digests: Mapping[str, str]) -> str:
    """A digest of the record's graphs and their catalog digests."""
    listed = "\n".join(sorted(f"{graph} {digest}" for graph, digest in digests.items()))
    return hashlib.sha256(listed.encode()).hexdigest()


def kept(
    graphs: GraphService,
    evaluation: str,
    what: tuple[Hashable, ...],
    read: Callable[[], T],
    digests: Mapping[str, str] | None = None,
) -> T:
    """``read()``, kept by ``what`` it is and the state of ``evaluation``'s record (its IRI); ``digests``: the
    record's graph digests when the caller has just read them."""
    with _LOCK:
        memo = _KEPT.setdefault(graphs, Recent(KEEP))
    state = record_state(record_digests(graphs, evaluation) if digests is None else digests)
    key = (evaluation, *what, state)
    found = memo.get(key)
    if found is None:
        found = read()
        if record_state(record_digests(graphs, evaluation)) == state:
            memo.put(key, found)
    return cast(T, found)
