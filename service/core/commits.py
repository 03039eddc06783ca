"""Conditional writes of graphs and their catalog entries: optimistic concurrency for replicas sharing a store.

A write names, for each graph it changes, the catalog digest it read (``None``: the graph must be new); a
*guard* names a graph that must keep its digest. Stores run each SPARQL update on its own snapshot without
detecting conflicts between concurrent ones (Oxigraph: 3 writers x 150 conditional updates on one key lost 17),
so a condition inside one update cannot exclude a writer whose update runs at the same moment: both would
commit, and the graph would hold both writes. A write therefore marks its graphs before it checks them:

1. *intent*: an update marks every graph of the write with the write's token (``cat:writing``, or
   ``cat:guarding`` on a guarded graph) and the time, unconditionally;
2. *check*: one read of the graphs' digests and intents. A digest that is not the one read ends the write
   (:class:`StaleWrite`: nothing changed). Another writer's live intent on a graph it writes (or a write
   intent on a graph it guards) makes it withdraw its intents and try again after a random pause. Of two
   writers on one graph at least one sees the other's intent (each reads after its own intent landed; if
   neither saw the other's, each read came before the other's intent landed: a cycle), so two never both go
   on; both may withdraw, and a few tries settle it (:class:`ConcurrentWrite` if they do not);
3. *commit*: one update writes the content, the new catalog entries and the write's commit token, where the
   write's intents still stand, and removes them;
4. *outcome*: one read of the commit token on the changed graphs.

Four requests whatever the number of graphs, and each request's text grows linearly with them. An intent older
than :data:`INTENT_EXPIRY_S` is a dead writer's (a write takes milliseconds): it is ignored and removed. The protocol
assumes no writer stalls that long between its check and its commit: one that did could commit at the same
moment as a writer that took its graphs over.

*New graphs on a store that runs a check and an insert with no write between them* (the embedded store's
``load_if``, declared by ``Store.checked_load``: only its own process writes its directory, and every write takes one lock) need no intents: a
write that only adds new graphs (and guards others) reads the digests and intents under that lock and, if every
graph is as expected and no other writer's intent is on them, inserts the content and the catalog entries in
one transaction. A writer using the protocol above on the same graphs either marked them before that read (the
write sees the intent and goes through the protocol itself) or reads the new digests after the insert (and
finds its write stale), so the two never both commit.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, Triple, serialize

from .errors import Conflict
from .formats import written
from .namespaces import CATALOG, XSD
from .store import Row, Store, iri_term, subject_term

_WRITING = NamedNode(CATALOG + "writing")
_GUARDING = NamedNode(CATALOG + "guarding")
_SINCE = NamedNode(CATALOG + "intentSince")
_COMMIT = NamedNode(CATALOG + "commit")
_DIGEST = NamedNode(CATALOG + "digest")
_DATETIME = NamedNode(XSD + "dateTime")

INTENT_EXPIRY_S = 60.0
"""Age past which another writer's intent is taken for a dead writer's (or one whose store failed mid-write):
far longer than a write's check and commit take, short enough that a graph is not blocked for long. Replicas'
clocks must agree to well within it, as for the catalog's leases."""
ATTEMPTS = 8
"""Tries of a write whose graphs another writer marked at the same moment."""
BACKOFF_S = 0.005
"""The first random pause after such a try; it doubles with each try."""


@dataclass
class GraphWrite:
    """One graph's part of a conditional write.

    ``expected_digest`` is the catalog digest the writer read, ``None`` for a graph that must be new;
    ``entry`` is the graph's new catalog entry (it holds the new digest); ``replace`` empties the graph
    before ``insert``; ``delete`` lists triples to remove (no blank nodes: SPARQL cannot name them).
    A ``guard`` changes nothing: the write only requires the graph to still have ``expected_digest``.
    ``staged`` names a staging graph already holding more content to insert (written in chunks before
    the commit, for stores that refuse large requests); the commit copies it and drops it.
    """

    graph: NamedNode
    expected_digest: str | None
    entry: list[Quad] = field(default_factory=list)
    insert: list[Triple] = field(default_factory=list)
    delete: list[Triple] = field(default_factory=list)
    replace: bool = False
    guard: bool = False
    staged: NamedNode | None = None


def guard(graph: NamedNode, digest: str | None) -> GraphWrite:
    """A write that changes nothing but holds only while ``graph`` still has ``digest`` (``None``: is still absent)."""
    return GraphWrite(graph, digest, guard=True)


class WriteConflict(Conflict):
    """A conditional write that wrote nothing; ``graphs``: the IRIs of the graphs it was refused on."""

    def __init__(self, message: str, graphs: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.graphs = tuple(graphs)


class StaleWrite(WriteConflict):
    """The graph changed between the writer's read and its write; nothing was written. ``graphs``: those whose
    digest was not the one read (a graph expected new: one that exists)."""


class ConcurrentWrite(WriteConflict):
    """Another writer kept writing the same graphs at the same moment; nothing was written: read again and retry.
    ``graphs``: those another writer held."""


def _triples(triples: Sequence[Triple]) -> str:
    return "\n".join(f"    {t.subject} {t.predicate} {t.object} ." for t in triples)


def _values(graphs: Sequence[NamedNode]) -> str:
    return "VALUES ?graph { " + " ".join(str(g) for g in graphs) + " }"


def _marks(intent: NamedNode, writes: Sequence[GraphWrite]) -> str:
    return " ".join(f"{w.graph} {_GUARDING if w.guard else _WRITING} {intent} ." for w in writes)


def intent_text(catalog: NamedNode, writes: Sequence[GraphWrite], intent: NamedNode, since: datetime) -> str:
    """Step 1: mark every graph of ``writes`` with ``intent``, dated ``since``."""
    stamp = Literal(since.isoformat(), datatype=_DATETIME)
    return f"INSERT DATA {{ GRAPH {catalog} {{ {_marks(intent, writes)} {intent} {_SINCE} {stamp} . }} }}"


def withdraw_text(
    catalog: NamedNode, writes: Sequence[GraphWrite], intent: NamedNode, expired: Sequence[Quad] = ()
) -> str:
    """Remove ``intent`` from the graphs of ``writes`` (and the ``expired`` intents of dead writers)."""
    gone = " ".join(f"{q.subject} {q.predicate} {q.object} ." for q in expired)
    return (
        f"DELETE WHERE {{ GRAPH {catalog} {{ {intent} {_SINCE} ?since }} }} ;\n"
        f"DELETE DATA {{ GRAPH {catalog} {{ {_marks(intent, writes)} {gone} }} }}"
    )


def commit_text(
    catalog: NamedNode, writes: Sequence[GraphWrite], intent: NamedNode, token: str, expired: Sequence[Quad] = ()
) -> str:
    """Step 3: the one SPARQL Update performing ``writes`` where ``intent`` still marks every graph of them,
    then removing the intent. A fixed number of operations (one more per staged graph)."""
    held = f"GRAPH {catalog} {{ {_marks(intent, writes)} }}"
    changed = [w for w in writes if not w.guard]
    operations = []
    if replaced := [w.graph for w in changed if w.replace]:
        operations.append(
            f"DELETE {{ GRAPH ?graph {{ ?s ?p ?o }} }} WHERE {{ {held} {_values(replaced)} "
            "GRAPH ?graph { ?s ?p ?o } }"
        )
    if deleted := [w for w in changed if w.delete]:
        blocks = "\n".join(f"  GRAPH {w.graph} {{\n{_triples(w.delete)}\n  }}" for w in deleted)
        operations.append(f"DELETE {{\n{blocks}\n}} WHERE {{ {held} }}")
    if changed:
        operations.append(
            f"DELETE {{ GRAPH {catalog} {{ ?graph ?p ?o }} }} WHERE {{ {held} "
            f"{_values([w.graph for w in changed])} GRAPH {catalog} {{ ?graph ?p ?o }} "
            f"FILTER(?p != {_WRITING} && ?p != {_GUARDING}) }}"
        )
        tok = Literal(token)
        blocks = "\n".join(f"  GRAPH {w.graph} {{\n{_triples(w.insert)}\n  }}" for w in changed if w.insert)
        # entries share some statements (the catalog's type, the agent's): each is written once
        entries = "\n".join(
            dict.fromkeys(
                f"    {q.subject} {q.predicate} {q.object} ."
                for w in changed
                for q in [*w.entry, Quad(w.graph, _COMMIT, tok, catalog)]
            )
        )
        operations.append(f"INSERT {{\n{blocks}\n  GRAPH {catalog} {{\n{entries}\n  }}\n}} WHERE {{ {held} }}")
    for w in changed:
        if w.staged is not None:
            operations.append(
                f"INSERT {{ GRAPH {w.graph} {{ ?s ?p ?o }} }} WHERE {{ {held} GRAPH {w.staged} {{ ?s ?p ?o }} }}"
            )
    operations.append(withdraw_text(catalog, writes, intent, expired))
    for staged in (w.staged for w in writes if w.staged is not None):
        # Committed or not, the staging graph and its journal marker go with this request.
        operations.append(f"DROP SILENT GRAPH {staged}")
        operations.append(f"DELETE WHERE {{ GRAPH {catalog} {{ {staged} ?p ?o }} }}")
    return " ;\n".join(operations)


def _state(store: Store, catalog: NamedNode, writes: Sequence[GraphWrite]) -> list[Row]:
    """Step 2's read: each graph's digests and intents, with each intent's date."""
    return store.select(
        f"SELECT ?graph ?p ?o ?since WHERE {{ {_values([w.graph for w in writes])} GRAPH {catalog} {{ ?graph ?p ?o "
        f"FILTER(?p IN ({_DIGEST}, {_WRITING}, {_GUARDING})) OPTIONAL {{ ?o {_SINCE} ?since }} }} }}"
    )


def _check(
    catalog: NamedNode, writes: Sequence[GraphWrite], rows: Sequence[Row], intent: NamedNode, at: datetime
) -> tuple[list[str], list[Quad]]:
    """The graphs another live writer holds against this write, and the dead writers' intents; raises
    :class:`StaleWrite` if a digest is not the one read."""
    digests: dict[str, set[str]] = {}
    intents: dict[str, list[Row]] = {}
    for row in rows:
        if row["p"] == _DIGEST:
            digests.setdefault(row["graph"].value, set()).add(row["o"].value)
        elif row["o"] != intent:
            intents.setdefault(row["graph"].value, []).append(row)
    stale = [
        w.graph.value
        for w in writes
        if digests.get(w.graph.value, set()) != ({w.expected_digest} if w.expected_digest is not None else set())
    ]
    if stale:
        raise StaleWrite(
            f"<{', '.join(stale)}> changed since it was read (another request wrote it): read it again and retry", stale
        )
    oldest = at - timedelta(seconds=INTENT_EXPIRY_S)
    blocked, expired = [], []
    for w in writes:
        for row in intents.get(w.graph.value, []):
            if "since" not in row or datetime.fromisoformat(row["since"].value) <= oldest:
                expired.append(Quad(w.graph, iri_term(row["p"]), row["o"], catalog))
                if "since" in row:
                    expired.append(Quad(subject_term(row["o"]), _SINCE, row["since"], catalog))
            elif not w.guard or row["p"] == _WRITING:
                blocked.append(w.graph.value)
    return blocked, expired


def _new_graphs_only(writes: Sequence[GraphWrite]) -> bool:
    """Whether ``writes`` only add new graphs (and guard others)."""
    return all(
        w.guard or (w.expected_digest is None and not w.delete and not w.replace and w.staged is None) for w in writes
    )


def _insert_new(store: Store, catalog: NamedNode, writes: Sequence[GraphWrite], token: str) -> bool:
    """The write of new graphs in one checked load, on a store with ``checked_load``; ``False`` when another
    writer's intent (live or expired) is on one of its graphs: the protocol then sorts it out.

    The content goes as N-Quads: each graph's triples serialized (in native code) with the graph's name put
    before each statement's final `` .`` (N-Triples escapes every line break inside a term, so a statement is one
    line): a fraction of the interpreter's time that building a ``Quad`` per statement takes."""
    changed = [w for w in writes if not w.guard]
    parts = [
        written(serialize(w.insert, format=RdfFormat.N_TRIPLES)).replace(b" .\n", f" {w.graph} .\n".encode())
        for w in changed
        if w.insert
    ]
    tok = Literal(token)
    entries = dict.fromkeys(q for w in changed for q in [*w.entry, Quad(w.graph, _COMMIT, tok, catalog)])
    parts.append(written(serialize(list(entries), format=RdfFormat.N_QUADS)))

    def unmarked() -> bool:
        rows = _state(store, catalog, writes)
        # no intent of this write exists: every one found is another writer's; a stale digest raises here
        _check(catalog, writes, rows, NamedNode(f"urn:uuid:{uuid.UUID(token)}"), datetime.now(UTC))
        return not any(row["p"] != _DIGEST for row in rows)

    return store.load_if(unmarked, b"".join(parts))


def commit(store: Store, catalog: NamedNode, writes: Sequence[GraphWrite]) -> str:
    """Perform ``writes`` as one conditional write (see the module docstring); the commit token.

    Raises :class:`StaleWrite` (nothing changed) when a graph's digest is no longer the one read, and
    :class:`ConcurrentWrite` (nothing changed) when other writers kept marking the same graphs.
    """
    if store.checked_load and _new_graphs_only(writes):
        token = uuid.uuid4().hex
        if _insert_new(store, catalog, writes, token):
            return token
    blocked: list[str] = []
    for attempt in range(ATTEMPTS):
        token = uuid.uuid4().hex
        intent = NamedNode(f"urn:uuid:{uuid.UUID(token)}")
        at = datetime.now(UTC)
        try:
            store.run_update(intent_text(catalog, writes, intent, at))
            blocked, expired = _check(catalog, writes, _state(store, catalog, writes), intent, at)
        except BaseException:
            with suppress(Exception):  # a store that failed may not take this either: the intent then lapses
                store.run_update(withdraw_text(catalog, writes, intent))
            raise
        if blocked:
            store.run_update(withdraw_text(catalog, writes, intent))
            time.sleep(random.uniform(0, BACKOFF_S * 2**attempt))
            continue
        store.run_update(commit_text(catalog, writes, intent, token, expired))
        changed = [w.graph for w in writes if not w.guard]
        if changed:
            committed = {
                row["graph"].value
                for row in store.select(
                    f"SELECT ?graph WHERE {{ {_values(changed)} GRAPH {catalog} {{ ?graph {_COMMIT} {Literal(token)} }} }}"
                )
            }
            if len(committed) < len(changed):
                lost = [g.value for g in changed if g.value not in committed]
                raise StaleWrite(
                    f"<{', '.join(lost)}>: the write stalled past {INTENT_EXPIRY_S:.0f} s and another "
                    "request took its graphs over; nothing was written: read them again and retry",
                    lost,
                )
        return token
    busy = sorted(set(blocked))
    raise ConcurrentWrite(
        f"other requests kept writing <{', '.join(busy)}> at the same moment; nothing was written: "
        "read it again and resend the change if it is still needed",
        busy,
    )
