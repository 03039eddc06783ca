"""Remembered answers to recording POSTs sent with an ``Idempotency-Key`` (issue 23 §8, docs/api.md).

Each key is a graph of its own in the store, ``{base}.well-known/idempotency/{h}``, where ``h`` is a SHA-256 of
the agent, the method, the path and the key: every replica and a restarted service see it, and the key itself is
never stored. The catalog types the graph ``cat:IdempotencyRecord`` and holds its digest, so every write to it is
a conditional write (:mod:`.commits`):

1. *claim*: before the request runs, the graph is written on condition that it is absent (or still the expired
   record read). Of two requests with one key at the same moment one claim commits; the other's is refused, and
   that request is answered 409 without running. A claim is kept for the TTL: a request cut off by a crash
   leaves its key taken until then, since what it recorded is not known (never run twice);
2. *complete*: a success is written over the claim, with the digest of what was sent, kept for the TTL;
3. *release*: anything else removes the claim, so that the client may fix the request and send it again.

Expired records are forgotten lazily: a few are purged whenever a new claim is made.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pyoxigraph import Literal, NamedNode, Quad, Triple

from . import queries
from .catalog import Catalog, now
from .commits import ConcurrentWrite, GraphWrite, StaleWrite, commit
from .digest import graph_digest
from .namespaces import CATALOG, PROV
from .rdf import RDF_TYPE, date_time, integer
from .store import ChangeSet, Row, Store

SEGMENT = ".well-known/idempotency/"
"""Where record graphs are minted, under the deployment's base (outside every record and the graph kinds)."""
PURGE_BATCH = 8
"""Expired records purged with each new claim: enough to keep up with one claim each, a bounded cost per request."""

_RECORD = NamedNode(CATALOG + "IdempotencyRecord")
_DIGEST = NamedNode(CATALOG + "digest")
_KEPT_UNTIL, _METHOD, _PATH, _REQUEST_DIGEST = (
    NamedNode(CATALOG + name) for name in ("keptUntil", "requestMethod", "requestPath", "requestDigest")
)
_STATUS, _HEADERS, _BODY = (NamedNode(CATALOG + name) for name in ("answerStatus", "answerHeaders", "answerBody"))
_ATTRIBUTED = NamedNode(PROV + "wasAttributedTo")


@dataclass(frozen=True)
class Answer:
    """A response as the client got it: status, header fields (Content-Length left out), body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True)
class Remembered:
    """An idempotency record as stored: in progress while ``answer`` is ``None``."""

    graph: NamedNode
    digest: str
    """The record graph's catalog digest: the next write to it holds only while it is still this."""
    kept_until: datetime
    request_digest: str | None
    answer: Answer | None

    def expired(self, at: datetime) -> bool:
        return self.kept_until <= at


@dataclass(frozen=True)
class Claim:
    """A key this request holds while it runs: the record graph, its digest, and who sent what where."""

    graph: NamedNode
    digest: str
    request: tuple[Triple, ...]
    """The record's type, agent, method and path: kept when the answer is written over the claim."""


class Idempotency:
    """The idempotency records of one deployment's store (see the module docstring)."""

    def __init__(self, store: Store, catalog: Catalog, ttl_s: float) -> None:
        self._store = store
        self._catalog = catalog
        self._ttl = timedelta(seconds=ttl_s)

    def record_iri(self, agent: str, method: str, path: str, key: str) -> NamedNode:
        """The record graph of ``key`` as sent by ``agent`` with ``method`` to ``path``: keys are scoped by all four."""
        scope = json.dumps([agent, method, path, key]).encode()  # JSON: no two scopes give one text
        return NamedNode(f"{self._catalog.base_url}{SEGMENT}{hashlib.sha256(scope).hexdigest()}")

    def find(self, graph: NamedNode) -> Remembered | None:
        """The record ``graph``, expired or not; ``None`` when there is none."""
        rows = self._store.select(queries.load("idempotency-record"), {"catalog": self._catalog.graph, "record": graph})
        return _remembered(graph, rows[0]) if rows else None

    def claim(self, graph: NamedNode, agent: str, method: str, path: str, expired: Remembered | None) -> Claim | None:
        """Claim the key of ``graph`` for a request about to run, or ``None`` when another request claimed it
        first. ``expired`` is the expired record read, which the claim replaces. A few expired records are purged.
        """
        # purged first, so that a claim is never taken for expired by its own purge (with a TTL shorter than it)
        if graph in self.purge() or expired is None:
            expected = None
        else:
            expected = expired.digest
        request = (
            Triple(graph, RDF_TYPE, _RECORD),
            Triple(graph, _ATTRIBUTED, self._catalog.agent_iri(agent)),
            Triple(graph, _METHOD, Literal(method)),
            Triple(graph, _PATH, Literal(path)),
        )
        digest = self._write(graph, expected, [*request, Triple(graph, _KEPT_UNTIL, date_time(now() + self._ttl))])
        return Claim(graph, digest, request) if digest is not None else None

    def complete(self, claim: Claim, digest: str, answer: Answer) -> None:
        """Remember ``answer`` to the claimed request whose request digest is ``digest``, kept for the TTL."""
        node = claim.graph
        headers = json.dumps([list(pair) for pair in answer.headers])
        self._write(
            node,
            claim.digest,
            [
                *claim.request,
                Triple(node, _KEPT_UNTIL, date_time(now() + self._ttl)),
                Triple(node, _REQUEST_DIGEST, Literal(digest)),
                Triple(node, _STATUS, integer(answer.status)),
                Triple(node, _HEADERS, Literal(headers)),
                Triple(node, _BODY, Literal(answer.body.decode("utf-8"))),
            ],
        )

    def release(self, claim: Claim) -> None:
        """Forget the claim of a request that did not succeed, so that the key may be used again."""
        self._forget([(claim.graph, claim.digest)])

    def purge(self, limit: int = PURGE_BATCH) -> list[NamedNode]:
        """Forget up to ``limit`` expired records (each only while it is still the one read); those forgotten."""
        rows = self._store.select(
            f"{queries.load('idempotency-expired')}\nLIMIT {int(limit)}",
            {"catalog": self._catalog.graph, "now": date_time(now())},
        )
        expired = [(NamedNode(row["record"].value), row["digest"].value) for row in rows]
        return [graph for graph, _ in expired] if expired and self._forget(expired) else []

    def _write(self, graph: NamedNode, expected: str | None, triples: list[Triple]) -> str | None:
        """Write ``triples`` as the whole of ``graph`` where its catalog digest is still ``expected`` (``None``:
        where it is absent); the new digest, or ``None`` when another request wrote it first."""
        digest = graph_digest(triples)
        entry = [
            Quad(graph, RDF_TYPE, _RECORD, self._catalog.graph),
            Quad(graph, _DIGEST, Literal(digest), self._catalog.graph),
        ]
        try:
            commit(
                self._store,
                self._catalog.graph,
                [GraphWrite(graph, expected, entry, insert=triples, replace=expected is not None)],
            )
        except (StaleWrite, ConcurrentWrite):
            return None
        return digest

    def _forget(self, records: Sequence[tuple[NamedNode, str]]) -> bool:
        """Empty each record graph and remove its catalog entry, where its digest is still the one read; whether
        they were (all or none)."""
        try:
            token = commit(
                self._store, self._catalog.graph, [GraphWrite(graph, digest, replace=True) for graph, digest in records]
            )
        except (StaleWrite, ConcurrentWrite):
            return False  # another request rewrote or purged one meanwhile: the rest stay for the next purge
        self._store.apply(
            ChangeSet(delete=[q for graph, _ in records for q in self._catalog.forget(graph, token).delete])
        )
        return True


def _remembered(graph: NamedNode, row: Row) -> Remembered:
    answer = None
    if "status" in row:
        headers = tuple((name, value) for name, value in json.loads(row["headers"].value))
        answer = Answer(int(row["status"].value), headers, row["body"].value.encode("utf-8"))
    return Remembered(
        graph,
        row["digest"].value,
        datetime.fromisoformat(row["keptUntil"].value),
        row["requestDigest"].value if "requestDigest" in row else None,
        answer,
    )
