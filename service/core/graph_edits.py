"""The values a graph write is made of: a graph by kind and identifier, and one graph's part of a multi-graph
write. Apart from :mod:`.graphs`, so that :mod:`.appends` (its base class) needs them without importing it."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyoxigraph import NamedNode, Triple

from .catalog import GraphKind


@dataclass(frozen=True)
class GraphRef:
    kind: GraphKind
    identifier: str
    """The graph's path under its kind (its catalog ``dcterms:identifier``), e.g. ``e1/judgments/3``."""
    iri: NamedNode

    @property
    def key(self) -> str:
        """The last segment of :attr:`identifier`: a batch's number or key under its record."""
        return self.identifier.rsplit("/", 1)[-1]


@dataclass
class GraphEdit:
    """One graph's part of a multi-graph write: triples to delete, then to insert (``replace`` drops it first)."""

    ref: GraphRef
    insert: list[Triple] = field(default_factory=list)
    delete: list[Triple] = field(default_factory=list)
    replace: bool = False
    title: str | None = None
    batch_of: str | None = None
    expected_digest: str | None | object = ...
    """The catalog digest the caller's decision rested on (``None``: the graph must not exist yet); left out
    (``...``), the digest :meth:`.graphs.GraphService.apply_edits` reads itself."""
