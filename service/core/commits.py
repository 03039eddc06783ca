"""Conditional writes of graphs and their catalog entries: optimistic concurrency for replicas sharing a store.

A write names, for each graph it changes, the catalog digest it read (or that the graph is new). It is
one SPARQL 1.1 Update request (one transaction on both backends):

1. *claim*: for each graph, swap the digest read for a claim token, only where that digest is still
   current (``DELETE … INSERT … WHERE`` on the digest; for a new graph, where no entry exists);
2. every content and catalog operation runs ``WHERE`` all claims stand, so a write whose read is
   stale changes nothing;
3. claims are released; a graph claimed but not committed gets its digest back.

A read-back then tells what happened: the write's commit token alone on every graph means committed;
no token means the write was stale (409, nothing changed). Oxigraph runs updates under snapshot
isolation without write-conflict detection (measured: 3 writers x 150 conditional updates on one key
lost 17), so two writers that read the same state can both claim. The read-back sees two commit
tokens; the entry is then repaired from the graph's actual content (a new graph is dropped) and both
writers get 409, so the catalog never keeps two digests for one graph.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode, Quad, Triple

from .errors import Conflict
from .namespaces import CATALOG
from .store import Store

_CLAIM = NamedNode(CATALOG + "claim")
_COMMIT = NamedNode(CATALOG + "commit")
_DIGEST = NamedNode(CATALOG + "digest")


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


def guard(graph: NamedNode, digest: str) -> GraphWrite:
    """A write that changes nothing but holds only while ``graph`` still has ``digest``."""
    return GraphWrite(graph, digest, guard=True)


class StaleWrite(Conflict):
    """The graph changed between the writer's read and its write; nothing was written."""


class ConcurrentWrite(Conflict):
    """Two writers committed on the same state at once; the catalog was repaired, the write must be checked again."""


def _triples(triples: Sequence[Triple]) -> str:
    return "\n".join(f"    {t.subject} {t.predicate} {t.object} ." for t in triples)


def _quads(catalog: NamedNode, quads: Sequence[Quad]) -> str:
    return f"GRAPH {catalog} {{\n" + "\n".join(f"    {q.subject} {q.predicate} {q.object} ." for q in quads) + "\n  }"


def update_text(catalog: NamedNode, writes: Sequence[GraphWrite], token: str) -> str:
    """The one SPARQL Update request performing ``writes`` under claim ``token`` (see the module docstring)."""
    tok = Literal(token)
    claims = " ".join(f"{w.graph} {_CLAIM} {tok} ." for w in writes)
    held = f"GRAPH {catalog} {{ {claims} }}"
    operations = []
    for w in writes:
        if w.expected_digest is None:
            condition = f"FILTER NOT EXISTS {{ GRAPH {catalog} {{ {w.graph} {_DIGEST} ?any }} }}"
            operations.append(f"INSERT {{ GRAPH {catalog} {{ {w.graph} {_CLAIM} {tok} }} }} WHERE {{ {condition} }}")
        else:
            old = Literal(w.expected_digest)
            operations.append(
                f"DELETE {{ GRAPH {catalog} {{ {w.graph} {_DIGEST} {old} }} }} "
                f"INSERT {{ GRAPH {catalog} {{ {w.graph} {_CLAIM} {tok} }} }} "
                f"WHERE {{ GRAPH {catalog} {{ {w.graph} {_DIGEST} {old} }} }}"
            )
    for w in (w for w in writes if not w.guard):
        if w.replace:
            operations.append(f"DELETE {{ GRAPH {w.graph} {{ ?s ?p ?o }} }} WHERE {{ {held} GRAPH {w.graph} {{ ?s ?p ?o }} }}")
        if w.delete:
            operations.append(f"DELETE {{ GRAPH {w.graph} {{\n{_triples(w.delete)}\n  }} }} WHERE {{ {held} }}")
        if w.insert:
            operations.append(f"INSERT {{ GRAPH {w.graph} {{\n{_triples(w.insert)}\n  }} }} WHERE {{ {held} }}")
        if w.staged is not None:
            operations.append(f"INSERT {{ GRAPH {w.graph} {{ ?s ?p ?o }} }} WHERE {{ {held} GRAPH {w.staged} {{ ?s ?p ?o }} }}")
        operations.append(
            f"DELETE {{ GRAPH {catalog} {{ {w.graph} ?p ?o }} }} "
            f"WHERE {{ {held} GRAPH {catalog} {{ {w.graph} ?p ?o }} FILTER(?p != {_CLAIM}) }}"
        )
        entry = [*w.entry, Quad(w.graph, _COMMIT, tok, catalog)]
        operations.append(f"INSERT {{ {_quads(catalog, entry)} }} WHERE {{ {held} }}")
    for w in writes:
        restore = "" if w.expected_digest is None else f"INSERT {{ GRAPH {catalog} {{ {w.graph} {_DIGEST} {Literal(w.expected_digest)} }} }} "
        operations.append(
            f"DELETE {{ GRAPH {catalog} {{ {w.graph} {_CLAIM} {tok} }} }} {restore}"
            f"WHERE {{ GRAPH {catalog} {{ {w.graph} {_CLAIM} {tok} }} "
            f"FILTER NOT EXISTS {{ GRAPH {catalog} {{ {w.graph} {_COMMIT} {tok} }} }} }}"
        )
    operations.append(f"DELETE WHERE {{ GRAPH {catalog} {{ ?claimed {_CLAIM} {tok} }} }}")
    for staged in (w.staged for w in writes if w.staged is not None):
        # Committed or not, the staging graph and its journal marker go with this request.
        operations.append(f"DROP SILENT GRAPH {staged}")
        operations.append(f"DELETE WHERE {{ GRAPH {catalog} {{ {staged} ?p ?o }} }}")
    return " ;\n".join(operations)


_OUTCOME = """
SELECT ?digest ?commit WHERE {
  GRAPH ?catalog {
    { ?graph <https://w3id.org/ob-caie/catalog/digest> ?digest }
    UNION
    { ?graph <https://w3id.org/ob-caie/catalog/commit> ?commit }
  }
}
"""

Repair = Callable[[GraphWrite], None]
"""Restores one graph's catalog entry from its content after two writers committed on it at once."""


def commit(store: Store, catalog: NamedNode, writes: Sequence[GraphWrite], repair: Repair) -> str:
    """Perform ``writes`` as one conditional update and check its outcome; the commit token.

    Raises :class:`StaleWrite` (nothing changed) when a graph's digest is no longer the one read, and
    :class:`ConcurrentWrite` after repairing the catalog when another writer committed on the same state.
    """
    token = uuid.uuid4().hex
    store.run_update(update_text(catalog, writes, token))
    changed = [w for w in writes if not w.guard]
    found: dict[str, tuple[set[str], set[str]]] = {}
    for w in writes:
        rows = store.select(_OUTCOME, {"catalog": catalog, "graph": w.graph})
        found[w.graph.value] = ({r["digest"].value for r in rows if "digest" in r},
                                {r["commit"].value for r in rows if "commit" in r})
    if changed and not any(token in found[w.graph.value][1] for w in changed):
        stale = ", ".join(w.graph.value for w in writes)
        raise StaleWrite(f"<{stale}> changed since it was read (another request wrote it): read it again and retry")
    raced = [w for w in writes if len(found[w.graph.value][0]) > 1 or len(found[w.graph.value][1]) > 1]
    for w in raced:
        repair(w)
    if any(not w.guard for w in raced):
        names = ", ".join(w.graph.value for w in raced)
        raise ConcurrentWrite(f"another request wrote <{names}> at the same moment; the record was checked and "
                              "repaired: read it again and resend the change if it is still needed")
    return token
